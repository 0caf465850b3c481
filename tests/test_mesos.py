"""Mesos clusters (driver mesos_debian, role mesos) on local container nodes.

Mesos and Marathon are in no package repository these machines reach (Apache retired
Mesos), so in CI a Mesos cluster made with the real `openstack coe` client fails - before
any node is touched - naming what is missing, and is deleted to nothing; the role's
ZooKeeper ensemble (Debian's packages) is proven on the same cluster's three masters: a
real quorum that survives a master stopping. The whole driver (masters, agents, a Marathon
app, resize with a drained agent, health, delete) runs when MAGNUM_MESOS_ARTIFACTS names a
directory of Mesos' and Marathon's .debs (or bin/mesos-master, bin/mesos-agent and
marathon-<version>.tgz); skipped, saying so, otherwise."""

import hashlib
import http.server
import json
import os
import subprocess
import threading
import time
from functools import partial

import pytest

from conftest import BIN, ApiServer, REPO, wait_for
from test_infra_docker import docker_ls, docker_ok, nothing_left, remove_leftovers
from test_swarm import Rest

NEEDS_DOCKER = pytest.mark.skipif(
    not docker_ok(), reason='needs a running Docker engine (dockerd) and debootstrap; '
                            '.ci/run installs and starts them')
ARTIFACTS = os.environ.get('MAGNUM_MESOS_ARTIFACTS', '')
TEMPLATE = ['--coe', 'mesos', '--image', 'debian-12', '--external-network', 'public',
            '--keypair', 'default', '--flavor', 'm1.tiny', '--master-flavor', 'm1.tiny']


def on_node(name, *argv, check=True):
    run = subprocess.run(['docker', 'exec', name] + list(argv), capture_output=True, text=True)
    assert not check or run.returncode == 0, run.stdout + run.stderr
    return run


def node_names(uuid, role):
    """The cluster's node containers of a role (master, worker), by the provider's labels."""
    found = []
    for cid in docker_ls('container', uuid):
        name, kind = subprocess.run(
            ['docker', 'inspect', '-f',
             '{{.Name}} {{index .Config.Labels "magnum.openstack.org/role"}}', cid],
            check=True, capture_output=True, text=True).stdout.split()
        if (kind == 'master') == (role == 'master') and kind != 'lb':
            found.append(name.lstrip('/'))
    return sorted(found)


def zk_mode(node):
    run = on_node(node, '/usr/share/zookeeper/bin/zkServer.sh', 'status', check=False)
    for line in (run.stdout + run.stderr).splitlines():
        if line.startswith('Mode:'):
            return line.split(':', 1)[1].strip()
    return None


def api(tmp_path, args=(), **env):
    data = {'XDG_DATA_HOME': str(tmp_path / 'data')}
    data.update(env)
    return ApiServer('sqlite:///%s' % (tmp_path / 'm.sqlite'), REPO, tmp_path,
                     provider='docker', env=data, args=list(args))


@pytest.mark.real_node
@NEEDS_DOCKER
def test_without_artifacts_a_cluster_fails_before_its_nodes_then_zookeeper_forms_a_quorum(
        tmp_path):
    """`openstack coe` with the client's defaults: the template (overlay2 storage driver)
    and a cluster of 3 masters and 1 agent; with a Mesos mirror the service cannot reach,
    the create ends CREATE_FAILED naming it, its error and the other sources before the
    provider makes any node. The infrastructure alone
    (playbooks/cluster_infra.yml) then makes them, and the role's ZooKeeper step makes the
    3 masters an ensemble (one leader, two followers) that keeps serving with its leader's
    master stopped; delete leaves nothing."""
    server = api(tmp_path, MAGNUM_MESOS_ARTIFACTS='',
                 MAGNUM_MESOS_MIRROR='http://127.0.0.1:9/mesos').start()
    rest = Rest(server)
    uuid = None
    try:
        # three masters stand behind a load balancer (Magnum's rule for several masters)
        rest.coe('cluster', 'template', 'create', 'mt', *TEMPLATE, '--master-lb-enabled')
        cluster = rest.create('m', 'mt', 1, master_count=3)
        uuid = cluster['uuid']
        reason = cluster['status_reason']
        assert cluster['status'] == 'CREATE_FAILED', cluster
        assert reason.startswith('The Mesos mirror MAGNUM_MESOS_MIRROR=http://127.0.0.1:9/mesos '
                                 'could not be read (http://127.0.0.1:9/mesos/SHA256SUMS: '), reason
        assert 'Connection refused' in reason and 'MAGNUM_MESOS_ARTIFACTS' in reason, reason
        assert node_names(uuid, 'master') + node_names(uuid, 'worker') == []

        env = dict(os.environ, MAGNUM_DB_URL='sqlite:///%s' % (tmp_path / 'm.sqlite'),
                   XDG_DATA_HOME=str(tmp_path / 'data'),
                   ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'))
        made = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_infra.yml',
                               '-e', json.dumps({'cluster': 'm'})], cwd=str(REPO), env=env,
                              capture_output=True, text=True, timeout=900)
        assert made.returncode == 0, made.stdout[-3000:]
        masters = node_names(uuid, 'master')
        assert len(masters) == 3 and len(node_names(uuid, 'worker')) == 1, subprocess.run(
            ['docker', 'ps', '-a', '--format', '{{.Names}} {{.Status}} {{.Labels}}'],
            capture_output=True, text=True).stdout
        for master in masters:   # the node image's Debian default: no ensemble configured
            cfg = on_node(master, 'cat', '/etc/zookeeper/conf/zoo.cfg', check=False).stdout
            assert 'server.1=' not in cfg

        run = subprocess.run([str(BIN / 'ansible-playbook'), 'tests/fixtures/mesos_zookeeper.yml',
                              '-e', json.dumps({'cluster': 'm'})], cwd=str(REPO), env=env,
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stdout[-3000:]
        modes = sorted(zk_mode(m) for m in masters)
        assert modes == ['follower', 'follower', 'leader'], modes

        # One master stops (the leader: the others elect a new one); the remaining two
        # still make a majority, and a write goes through them.
        leader = next(m for m in masters if zk_mode(m) == 'leader')
        subprocess.run(['docker', 'stop', leader], check=True, capture_output=True)
        rest_of = [m for m in masters if m != leader]
        assert wait_for(lambda: sorted(zk_mode(m) or '' for m in rest_of)
                        == ['follower', 'leader'], timeout=180, interval=3)
        wrote = on_node(rest_of[0], '/usr/share/zookeeper/bin/zkCli.sh', '-server',
                        '127.0.0.1:2181', 'create', '/magnum-test', 'quorum', check=False)
        assert 'Created /magnum-test' in wrote.stdout + wrote.stderr, wrote.stdout + wrote.stderr
        read = on_node(rest_of[1], '/usr/share/zookeeper/bin/zkCli.sh', '-server',
                       '127.0.0.1:2181', 'get', '/magnum-test', check=False)
        assert 'quorum' in read.stdout.splitlines(), read.stdout

        assert rest.delete('m')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        if uuid:
            remove_leftovers(uuid)
        server.stop()


@pytest.mark.real_node
@NEEDS_DOCKER
@pytest.mark.skipif(not ARTIFACTS, reason='needs Mesos and Marathon: set MAGNUM_MESOS_ARTIFACTS '
                    'to a directory of their .debs (or bin/mesos-master, bin/mesos-agent and '
                    'marathon-<version>.tgz); no repository these machines reach has them')
def test_a_mesos_cluster_runs_a_marathon_app_resizes_and_deletes(tmp_path):
    """1 master and 2 agents from MAGNUM_MESOS_ARTIFACTS: a Marathon app of 3 instances
    spread over both agents; a grow; a shrink naming an agent, whose tasks move to the
    others; health UNHEALTHY with an agent stopped, naming it; delete leaves nothing."""
    import requests
    server = api(tmp_path, args=['--health-interval', '10'],
                 MAGNUM_MESOS_ARTIFACTS=ARTIFACTS).start()
    rest = Rest(server)
    uuid = None
    try:
        rest.coe('cluster', 'template', 'create', 'mt', *TEMPLATE)
        cluster = rest.create('m', 'mt', 2)
        uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        marathon = cluster['api_address']
        assert marathon.startswith('http://') and marathon.endswith(':8080')
        app = {'id': '/sleeper', 'cmd': 'sleep 3600', 'cpus': 0.01, 'mem': 16, 'instances': 3}
        assert requests.post(marathon + '/v2/apps', json=app, timeout=30).status_code == 201

        def hosts():
            tasks = requests.get(marathon + '/v2/apps/sleeper/tasks', timeout=30).json()['tasks']
            running = [t['host'] for t in tasks if t.get('state') == 'TASK_RUNNING']
            return running if len(running) == 3 else None
        placed = wait_for(hosts, timeout=300, interval=3)
        assert len(set(placed)) == 2, placed

        grown = rest.resize('m', 3)
        assert grown['status'] == 'UPDATE_COMPLETE', grown['status_reason']
        leaving = node_names(uuid, 'worker')[0]
        leaving_address = subprocess.run(
            ['docker', 'inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
             leaving], check=True, capture_output=True, text=True).stdout.strip()
        shrunk = rest.resize('m', 2, [leaving])
        assert shrunk['status'] == 'UPDATE_COMPLETE', shrunk['status_reason']
        assert wait_for(lambda: (lambda h: h if h and leaving_address not in h else None)(
            hosts()), timeout=300, interval=3)

        on_node(node_names(uuid, 'worker')[0], 'systemctl', 'stop', 'mesos-slave')
        deadline = time.time() + 300
        while time.time() < deadline:
            shown = rest.show('m')
            if shown['health_status'] == 'UNHEALTHY':
                break
            time.sleep(5)
        assert shown['health_status'] == 'UNHEALTHY', shown
        assert any(k.endswith('.status') for k in shown['health_status_reason']), shown

        assert rest.delete('m')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        if uuid:
            remove_leftovers(uuid)
        server.stop()


def test_mesos_comes_from_a_download_mirror_checked_against_its_sha256(tmp_path):
    """MAGNUM_MESOS_MIRROR: the role reads the mirror's SHA256SUMS, downloads the files it
    lists into a directory of that listing and uses it as the offline directory; a file
    whose checksum differs fails the step naming it, and nothing is used."""
    mirror = tmp_path / 'mirror'
    (mirror / 'bin').mkdir(parents=True)
    files = {'bin/mesos-master': b'master', 'bin/mesos-agent': b'agent',
             'marathon-1.11.24.tgz': b'tarball', 'README': b'not listed'}
    for name, data in files.items():
        (mirror / name).write_bytes(data)
    sums = ''.join('%s  %s\n' % (hashlib.sha256(data).hexdigest(), name)
                   for name, data in files.items() if name != 'README')
    (mirror / 'SHA256SUMS').write_text(sums)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(mirror))
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = 'http://127.0.0.1:%d/' % httpd.server_address[1]

    def run(name):
        result = tmp_path / (name + '.json')
        env = dict(os.environ, MAGNUM_MESOS_MIRROR=url, XDG_CACHE_HOME=str(tmp_path / name),
                   ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'))
        proc = subprocess.run([str(BIN / 'ansible-playbook'), 'tests/fixtures/mesos_download.yml',
                               '-e', json.dumps({'result': str(result)})], cwd=str(REPO),
                              env=env, capture_output=True, text=True, timeout=300)
        return proc, result

    try:
        proc, result = run('good')
        assert proc.returncode == 0, proc.stdout[-3000:]
        found = json.loads(result.read_text())
        assert found['mode'] == 'binaries'
        downloads = os.path.dirname(found['marathon'])
        assert downloads.startswith(str(tmp_path / 'good' / 'openstack-magnum' / 'mesos'))
        assert open(found['bin']['mesos-agent'], 'rb').read() == b'agent'
        assert not os.path.exists(os.path.join(downloads, 'README'))

        (mirror / 'bin' / 'mesos-agent').write_bytes(b'tampered')
        proc, result = run('bad')
        assert proc.returncode != 0 and not result.exists()
        assert 'bin/mesos-agent' in proc.stdout and 'checksum' in proc.stdout.lower(), \
            proc.stdout[-3000:]
    finally:
        httpd.shutdown()
