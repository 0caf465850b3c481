"""The Swarm driver on real container nodes, driven once through the REST API with the
real `openstack coe` CLI and once with plain `ansible-playbook`, checked with the real
docker client over TLS: create 1 manager + 2 workers, `docker node ls`, a service of 3
replicas spread over the workers, resize up, resize down naming a worker (drained first),
ca sign, ca rotate, delete (nothing left). Also: a 3-manager cluster behind its load
balancer survives a manager stopping; a create that loses a node midway ends
CREATE_FAILED and is completed by a retry."""

import json
import os
import signal
import shutil
import subprocess
import time

import pytest

from conftest import BIN, ApiServer, REPO, ansible_env, api_settled, wait_for
from test_infra_docker import (docker_inspect, docker_ls, docker_ok, host_addresses, nothing_left,
                               refused_from, remove_leftovers)

OPENSTACK = str(BIN / 'openstack')
pytestmark = [pytest.mark.real_node, pytest.mark.skipif(
    not docker_ok(), reason='needs a running Docker engine (dockerd) and debootstrap; '
                            '.ci/run installs and starts them')]
TEMPLATE = ['--coe', 'swarm', '--image', 'debian-12', '--external-network', 'public',
            '--keypair', 'default', '--flavor', 'm1.tiny', '--master-flavor', 'm1.tiny',
            '--docker-storage-driver', 'overlay2']
BUSYBOX = 'magnum-test/busybox:1'


class Rest:
    """Operations through the API with the real `openstack coe` client."""

    def __init__(self, server):
        self.server = server

    def coe(self, *args, check=True):
        """The command's output; with check=False, the finished process."""
        proc = subprocess.run(
            [OPENSTACK, '--os-auth-type', 'none', '--os-endpoint', self.server.url + '/v1',
             'coe'] + list(args), capture_output=True, text=True, timeout=120,
            # python-magnumclient's `cluster config` reads $SHELL
            env=dict(os.environ, SHELL=os.environ.get('SHELL', '/bin/sh')))
        if not check:
            return proc
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def show(self, name):
        proc = subprocess.run(
            [OPENSTACK, '--os-auth-type', 'none', '--os-endpoint', self.server.url + '/v1',
             'coe', 'cluster', 'show', name, '-f', 'json'], capture_output=True, text=True)
        if proc.returncode != 0:
            assert 'could not be found' in proc.stderr, proc.stderr
            return None
        return json.loads(proc.stdout)

    def settled(self, name):
        """The cluster as `openstack coe cluster show` gives it once no operation runs
        ({'status': 'GONE'} once it is deleted); the wait asks the API (api_settled)."""
        if api_settled(self.server.url, '/v1/clusters/' + name, interval=2) == 'GONE':
            return {'status': 'GONE'}
        return self.show(name) or {'status': 'GONE'}

    def template(self, name, *extra):
        self.coe('cluster', 'template', 'create', name, *(TEMPLATE + list(extra)))

    def create(self, name, template, node_count, master_count=1):
        self.coe('cluster', 'create', name, '--cluster-template', template,
                 '--node-count', str(node_count), '--master-count', str(master_count))
        return self.settled(name)

    def resize(self, name, count, remove=()):
        self.coe('cluster', 'resize', name, str(count),
                 *(['--nodes-to-remove', ','.join(remove)] if remove else []))
        return self.settled(name)

    def client_certs(self, name, dest):
        dest.mkdir()
        self.coe('cluster', 'config', name, '--dir', str(dest), '--output-certs')
        assert sorted(p.name for p in dest.iterdir()) == ['ca.pem', 'cert.pem', 'key.pem']
        return dest

    def ca_show(self, name):
        return self.coe('ca', 'show', name)

    def ca_sign(self, name, csr_path):
        return self.coe('ca', 'sign', name, str(csr_path))

    def ca_rotate(self, name):
        self.coe('ca', 'rotate', name)
        return self.settled(name)

    def delete(self, name):
        self.coe('cluster', 'delete', name)
        return self.settled(name)


class Playbooks:
    """The same operations with `ansible-playbook` and the collection's modules,
    on the same kind of store, with no API running."""

    def __init__(self, db_url, project, env):
        self.project = project
        self.env = ansible_env(db_url, 'docker', project, **env)

    def playbook(self, name, extravars, check=True):
        run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/%s.yml' % name,
                              '-e', json.dumps(extravars)], cwd=str(self.project),
                             env=self.env, capture_output=True, text=True, timeout=900)
        assert not check or run.returncode == 0, run.stdout[-3000:]
        return run

    def module(self, module_name, **args):
        run = subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                              'openstack.magnum.' + module_name]
                             + (['-a', json.dumps(args)] if args else []), cwd=str(self.project),
                             env=dict(self.env, ANSIBLE_CALLBACK_RESULT_FORMAT='json'),
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        return json.loads(run.stdout.split('=>', 1)[1])

    def show(self, name):
        found = self.module('cluster_info')['clusters']
        return next((c for c in found if c['name'] == name), None)

    def settled(self, name):
        return self.show(name) or {'status': 'GONE'}

    def template(self, name, *extra):
        args = dict(zip(TEMPLATE[::2], TEMPLATE[1::2]))
        self.module('cluster_template', name=name, coe=args['--coe'], image_id=args['--image'],
                    external_network_id=args['--external-network'],
                    keypair_id=args['--keypair'], flavor_id=args['--flavor'],
                    master_flavor_id=args['--master-flavor'],
                    docker_storage_driver=args['--docker-storage-driver'])

    def create(self, name, template, node_count, master_count=1):
        self.playbook('cluster_create', {'cluster': {
            'name': name, 'cluster_template_id': template, 'node_count': node_count,
            'master_count': master_count}})
        return self.settled(name)

    def resize(self, name, count, remove=()):
        self.playbook('cluster_resize', {'cluster': name, 'node_count': count,
                                         'nodes_to_remove': list(remove)})
        return self.settled(name)

    def client_certs(self, name, dest):
        dest.mkdir()
        issued = self.module('cluster_ca', cluster=name, action='issue', common_name='admin')
        for filename, field in (('ca.pem', 'pem'), ('cert.pem', 'cert'), ('key.pem', 'key')):
            (dest / filename).write_text(issued[field])
        return dest

    def ca_show(self, name):
        return self.module('cluster_ca', cluster=name)['pem']

    def ca_sign(self, name, csr_path):
        return self.module('cluster_ca', cluster=name, action='sign',
                           csr=csr_path.read_text())['pem']

    def ca_rotate(self, name):
        self.playbook('ca_rotate', {'cluster': name})
        return self.settled(name)

    def delete(self, name):
        self.playbook('cluster_delete', {'cluster': name})
        return self.settled(name)


def docker(api_address, cert_dir, *args, check=False):
    env = dict(os.environ, DOCKER_HOST=api_address, DOCKER_TLS_VERIFY='1',
               DOCKER_CERT_PATH=str(cert_dir))
    out = subprocess.run(['docker'] + list(args), env=env, capture_output=True, text=True,
                         timeout=60)
    assert not check or out.returncode == 0, out.stderr
    return out


def ready_nodes(api_address, cert_dir):
    out = docker(api_address, cert_dir, 'node', 'ls', '--format', '{{.Hostname}} {{.Status}}',
                 check=True)
    return sorted(line.split()[0] for line in out.stdout.splitlines()
                  if line.split()[1] == 'Ready')


def running_tasks(api_address, cert_dir, service):
    out = docker(api_address, cert_dir, 'service', 'ps', service, '--filter',
                 'desired-state=running', '--format', '{{.Node}} {{.CurrentState}}', check=True)
    return sorted(line.split()[0] for line in out.stdout.splitlines()
                  if line.split()[1] == 'Running')


def seed_busybox(uuid):
    """No registry here: give each node's engine a one-binary image (the node image's
    busybox-static) for services to run."""
    for cid in docker_ls('container', uuid):
        subprocess.run(['docker', 'exec', cid, 'sh', '-c',
                        'docker image inspect %s >/dev/null 2>&1 || (d=$(mktemp -d) && '
                        'cp /bin/busybox $d/ && tar -C $d -c busybox | docker import '
                        '--change \'ENTRYPOINT ["/busybox"]\' - %s)' % (BUSYBOX, BUSYBOX)],
                       check=True, capture_output=True)


def make_csr(dest):
    dest.mkdir()
    subprocess.run(['openssl', 'req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout',
                    str(dest / 'key.pem'), '-subj', '/CN=someone', '-out',
                    str(dest / 'client.csr')], check=True, capture_output=True)
    return dest / 'client.csr'


@pytest.fixture
def data_env(tmp_path):
    env = {'XDG_DATA_HOME': str(tmp_path / 'data')}
    yield env
    shutil.rmtree(tmp_path / 'data', ignore_errors=True)


@pytest.fixture
def rest(tmp_path, data_env):
    server = ApiServer('sqlite:///%s' % (tmp_path / 'm.sqlite'), REPO, tmp_path,
                       provider='docker', env=data_env)
    yield Rest(server.start())
    server.stop()


def test_swarm_lifecycle(rest, tmp_path):
    """A Swarm cluster's life on container nodes, each operation through one of the two
    entry points on one store: `openstack coe` (the API) and, for the shrink by name and
    the CA rotation, `ansible-playbook` with the collection's modules and no API call -
    the same roles, so one run shows both (the playbooks' own start checks are
    tests/test_parity.py's)."""
    playbooks = Playbooks(rest.server.db_url, REPO, rest.server.env)
    rest.template('st')
    cluster = rest.create('sw', 'st', 2)
    assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
    api = cluster['api_address']
    assert api.startswith('tcp://') and api.endswith(':2376')
    uuid = cluster['uuid']
    try:
        cfg = rest.client_certs('sw', tmp_path / 'cfg')
        env_lines = rest.coe('cluster', 'config', 'sw', '--dir', str(cfg), '--force')
        assert 'export DOCKER_HOST=%s' % api in env_lines
        assert 'export DOCKER_TLS_VERIFY=True' in env_lines
        nodes = ready_nodes(api, cfg)
        assert len(nodes) == 3 and sum('-master-' in n for n in nodes) == 1
        workers = [n for n in nodes if '-node-' in n]

        # A service spread over the workers, health, a grow and a repair.
        seed_busybox(uuid)
        docker(api, cfg, 'service', 'create', '--detach', '--name', 'web', '--replicas',
               '3', '--constraint', 'node.role==worker', '--no-resolve-image', BUSYBOX,
               'sleep', '3600', check=True)
        placed = wait_for(lambda: (lambda t: t if len(t) == 3 else None)(
            running_tasks(api, cfg, 'web')), timeout=120, interval=2)
        assert sorted(set(placed)) == workers, placed
        check_health_follows_a_stopped_worker(rest, workers[-1])

        cluster = rest.resize('sw', 3)
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        assert len(ready_nodes(api, cfg)) == 4 and len(cluster['node_addresses']) == 3
        seed_busybox(uuid)
        workers = check_a_worker_is_replaced_as_the_auto_healer_asks(rest, api, cfg, uuid)

        # The shrink by name with ansible-playbook: the leaving workers are drained, every
        # replica moves to the one left.
        leaving = workers[0]
        cluster = playbooks.resize('sw', 1, [leaving])
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        nodes = ready_nodes(api, cfg)
        assert len(nodes) == 2 and leaving not in nodes
        wait_for(lambda: running_tasks(api, cfg, 'web') == [workers[1]] * 3, timeout=300)

        signed = tmp_path / 'signed'
        csr = make_csr(signed)
        (signed / 'cert.pem').write_text(rest.ca_sign('sw', csr))
        (signed / 'ca.pem').write_text(rest.ca_show('sw'))
        assert len(ready_nodes(api, signed)) == 2

        assert playbooks.ca_rotate('sw')['status'] == 'UPDATE_COMPLETE'
        assert docker(api, signed, 'node', 'ls').returncode != 0, 'old client cert still works'
        assert len(ready_nodes(api, rest.client_certs('sw', tmp_path / 'fresh'))) == 2

        assert rest.delete('sw')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        remove_leftovers(uuid)


def check_a_worker_is_replaced_as_the_auto_healer_asks(ops, api, cfg, uuid):
    """magnum-auto-healer repairs a worker with the resize call its source makes
    (gophercloud clusters.Resize, microversion "latest"): the node group's unchanged
    count and the node's server UUID (its machine ID) in nodes_to_remove. The node goes,
    a new one takes its place; the others stay."""
    import requests
    before = ready_nodes(api, cfg)
    workers = sorted(n for n in before if '-node-' in n)
    broken = workers[0]
    server_id = docker_inspect('{{.Id}}', broken)[0]
    answer = requests.post(
        '%s/v1/clusters/sw/actions/resize' % ops.server.url,
        json={'node_count': 3, 'nodes_to_remove': [server_id], 'nodegroup': 'default-worker'},
        headers={'OpenStack-API-Version': 'container-infra latest'}, timeout=30)
    assert answer.status_code == 202, answer.text
    assert answer.json() == {'uuid': uuid}
    cluster = ops.settled('sw')
    assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
    after = ready_nodes(api, cfg)
    assert broken not in after and len(after) == len(before)
    assert set(workers[1:]) < set(after)
    seed_busybox(uuid)
    return sorted(n for n in after if '-node-' in n)


def health_round(rest, name):
    """cluster_health.yml's round on the cluster ``name``, then the conductor's read without
    a playbook (api/health_check.py, each manager's Docker API): both find the same health
    and reason (asked again, a few times, while the cluster is changing); returns it."""
    from api.core import store as store_mod
    from api.health_check import HealthChecks
    checks = HEALTH_CHECKS.setdefault(rest.server.db_url, HealthChecks(
        store_mod.Store(rest.server.db_url)))
    for _ in range(5):
        run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_health.yml',
                              '-e', 'cluster=%s' % name], cwd=str(REPO),
                             env=ansible_env(rest.server.db_url, 'docker', **rest.server.env),
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-2000:]
        shown = rest.show(name)
        found = shown['health_status'], shown['health_status_reason']
        read = checks.check(checks.store.get('cluster', shown['uuid']))
        if (read['status'], read['reason']) == found:
            return found
        time.sleep(3)
    assert (read['status'], read['reason']) == found, (read, found)


HEALTH_CHECKS = {}  # the conductor's reads, one per store: kept connections and certificates


def conductor_health(rest, name):
    """The conductor's read of the cluster ``name``'s health (no playbook): (status, reason)."""
    from api.core import store as store_mod
    from api.health_check import HealthChecks
    checks = HEALTH_CHECKS.setdefault(rest.server.db_url, HealthChecks(
        store_mod.Store(rest.server.db_url)))
    read = checks.check(checks.store.get('cluster', name)) or {}
    return read.get('status'), read.get('reason')


def health_becomes(rest, name, status, timeout):
    """Wait until the cluster's health is ``status``: polled with the conductor's read (a
    playbook a poll would take seconds of CPU each), then confirmed by health_round (the
    playbook and the read agree); returns (status, reason)."""
    wait_for(lambda: conductor_health(rest, name)[0] == status, timeout=timeout, interval=3)
    return wait_for(lambda: (lambda h: h if h[0] == status else None)(
        health_round(rest, name)), timeout=120, interval=3)


def check_health_follows_a_stopped_worker(ops, worker):
    def health():
        return health_round(ops, 'sw')

    assert health() == ('HEALTHY', {'api': 'ok'})
    subprocess.run(['docker', 'stop', worker], check=True, capture_output=True)
    status, reason = health_becomes(ops, 'sw', 'UNHEALTHY', timeout=120)
    assert '%s.status' % worker in reason and reason['api'] == 'ok'
    subprocess.run(['docker', 'start', worker], check=True, capture_output=True)
    health_becomes(ops, 'sw', 'HEALTHY', timeout=300)

    # A node whose processes die (as in a crash, or a host reboot) comes back by itself,
    # as the same container, and rejoins.
    def inspect(fmt):
        return docker_inspect(fmt, worker)[0]
    node_id, pid = inspect('{{.Id}}'), inspect('{{.State.Pid}}')
    os.kill(int(pid), signal.SIGKILL)
    wait_for(lambda: inspect('{{.State.Running}}') == 'true' and
             inspect('{{.State.Pid}}') not in (pid, '0'), timeout=300)
    assert inspect('{{.Id}}') == node_id and int(inspect('{{.RestartCount}}')) >= 1
    health_becomes(ops, 'sw', 'HEALTHY', timeout=300)


def test_three_managers_behind_the_load_balancer_survive_one_stopping(rest, tmp_path):
    """3 managers behind the load balancer: the swarm answers through it while one is
    stopped. Its master_lb_allowed_cidrs names a network the host is not on: the cluster's own
    subnet is let in all the same (as Magnum adds it: the nodes, and here the host's
    bridge address, reach the API through the load balancer), any other source is not."""
    rest.template('ha', '--master-lb-enabled', '--insecure-registry', 'http://registry.local:5000',
                  '--labels', 'master_lb_allowed_cidrs=198.51.100.0/24')
    cluster = rest.create('ha', 'ha', 1, master_count=3)
    assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
    uuid = cluster['uuid']
    try:
        api = cluster['api_address']
        assert len(cluster['master_addresses']) == 3
        lb_address, lb_port = api.split('//')[1].split(':')
        assert lb_address not in cluster['master_addresses']
        cfg = rest.client_certs('ha', tmp_path / 'cfg')
        nodes = ready_nodes(api, cfg)
        inside, outside = host_addresses(lb_address, '198.51.100.0/24')
        assert not refused_from(inside, lb_address, int(lb_port)), inside
        assert refused_from(outside, lb_address, int(lb_port)), outside
        managers = [n for n in nodes if '-master-' in n]
        assert len(nodes) == 4 and len(managers) == 3
        # The template's insecure registry (as host:port) is every engine's.
        for node in nodes:
            info = subprocess.run(['docker', 'exec', node, 'docker', 'info', '--format',
                                   '{{json .RegistryConfig.IndexConfigs}}'],
                                  capture_output=True, text=True, check=True).stdout
            assert json.loads(info)['registry.local:5000']['Secure'] is False, info

        # The first manager initialised the swarm (the Raft leader): stop it.
        stopped = managers[0]
        subprocess.run(['docker', 'stop', stopped], check=True, capture_output=True)
        status, reason = health_becomes(rest, 'ha', 'UNHEALTHY', timeout=120)
        assert any(key.startswith(stopped + '.') for key in reason), reason
        # The swarm still answers through the load balancer, with a new leader.
        answer = wait_for(lambda: (lambda out: out if out.returncode == 0 else None)(
            docker(api, cfg, 'node', 'ls', '--format', '{{.Hostname}} {{.ManagerStatus}}')),
            timeout=60, interval=2)
        assert 'Leader' in answer.stdout and stopped in answer.stdout
        subprocess.run(['docker', 'start', stopped], check=True, capture_output=True)
        health_becomes(rest, 'ha', 'HEALTHY', timeout=300)
        assert len(ready_nodes(api, cfg)) == 4

        assert rest.delete('ha')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        remove_leftovers(uuid)


def test_create_that_loses_a_node_fails_then_retry_completes_it(rest, tmp_path):
    """A worker's container disappears while the cluster is being built: CREATE_FAILED
    with a reason; `ansible-playbook cluster_create.yml -e cluster_uuid=...` (the retry)
    rebuilds what is missing and completes; delete leaves nothing. The template also
    has tls_disabled (the API on 2375 without TLS) and network_driver flannel with
    flannel_network_cidr (the address pool of the swarm's overlay networks)."""
    rest.template('plain', '--tls-disabled', '--network-driver', 'flannel',
                  '--labels', 'flannel_network_cidr=10.123.0.0/16,flannel_network_subnetlen=26')
    rest.coe('cluster', 'create', 'sw', '--cluster-template', 'plain', '--node-count', '2')
    uuid = rest.show('sw')['uuid']
    try:
        def victim():
            out = subprocess.run(['docker', 'ps', '-q', '--filter',
                                  'label=magnum.openstack.org/cluster=' + uuid, '--filter',
                                  'label=magnum.openstack.org/role=worker'],
                                 capture_output=True, text=True).stdout.split()
            return out[0] if out else None
        killed = wait_for(victim, timeout=300, interval=0.2)
        # Let it come up, as a node that dies after it was reached would.
        time.sleep(3)
        subprocess.run(['docker', 'rm', '-f', killed], check=True, capture_output=True)
        cluster = rest.settled('sw')
        assert cluster['status'] == 'CREATE_FAILED'
        assert cluster['status_reason'], cluster

        retry = Playbooks(rest.server.db_url, REPO, rest.server.env)
        retry.playbook('cluster_create', {'cluster_uuid': uuid})
        cluster = rest.show('sw')
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        api = cluster['api_address']
        assert api.startswith('tcp://') and api.endswith(':2375')
        env_lines = rest.coe('cluster', 'config', 'sw', '--dir', str(tmp_path))
        assert 'export DOCKER_HOST=%s' % api in env_lines and 'TLS_VERIFY=True' not in env_lines
        plain = dict(os.environ, DOCKER_HOST=api)
        out = subprocess.run(['docker', 'node', 'ls', '--format', '{{.Status}}'], env=plain,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.split() == ['Ready'] * 3, out.stderr
        subprocess.run(['docker', 'network', 'create', '-d', 'overlay', 'app'], env=plain,
                       check=True, capture_output=True, timeout=60)
        subnet = subprocess.run(['docker', 'network', 'inspect', 'app', '--format',
                                 '{{(index .IPAM.Config 0).Subnet}}'], env=plain,
                                capture_output=True, text=True, timeout=60).stdout.strip()
        assert subnet.startswith('10.123.') and subnet.endswith('/26'), subnet

        assert rest.delete('sw')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        remove_leftovers(uuid)
