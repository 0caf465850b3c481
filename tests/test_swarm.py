"""The Swarm driver on real container nodes, through the real `openstack coe` CLI and
the real docker client over TLS: create 1 manager + 2 workers, `docker node ls`,
resize up, resize down naming a worker, ca sign, ca rotate, delete (nothing left)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ApiServer, wait_for
from test_infra_docker import docker_ls, docker_ok

OPENSTACK = str(Path(sys.executable).parent / 'openstack')
pytestmark = [pytest.mark.docker, pytest.mark.skipif(
    not docker_ok(), reason='needs a running Docker engine (dockerd) and debootstrap; '
                            '.ci/run installs and starts them')]


@pytest.fixture
def swarm_api(tmp_path):
    from conftest import REPO
    server = ApiServer('sqlite:///%s' % (tmp_path / 'm.sqlite'), REPO, tmp_path,
                       provider='docker', env={'XDG_DATA_HOME': str(tmp_path / 'data')})
    yield server.start()
    server.stop()


def test_swarm_lifecycle_through_the_cli(swarm_api, tmp_path):
    def coe(*args, check=True):
        proc = subprocess.run([OPENSTACK, '--os-auth-type', 'none', '--os-endpoint',
                               swarm_api.url + '/v1', 'coe'] + list(args),
                              capture_output=True, text=True, timeout=120,
                              # python-magnumclient's `cluster config` reads $SHELL
                              env=dict(os.environ, SHELL=os.environ.get('SHELL', '/bin/sh')))
        assert not check or proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def settled():
        def done():
            out = subprocess.run([OPENSTACK, '--os-auth-type', 'none', '--os-endpoint',
                                  swarm_api.url + '/v1', 'coe', 'cluster', 'show', 'sw',
                                  '-f', 'json'], capture_output=True, text=True)
            if out.returncode != 0:
                return {'status': 'GONE'} if 'could not be found' in out.stderr else None
            body = json.loads(out.stdout)
            return body if 'IN_PROGRESS' not in body['status'] else None
        return wait_for(done, timeout=600, interval=2)

    def docker(cert_dir, *args):
        env = dict(os.environ, DOCKER_HOST=cluster['api_address'], DOCKER_TLS_VERIFY='1',
                   DOCKER_CERT_PATH=str(cert_dir))
        return subprocess.run(['docker'] + list(args), env=env, capture_output=True,
                              text=True, timeout=60)

    def ready_nodes(cert_dir):
        out = docker(cert_dir, 'node', 'ls', '--format', '{{.Hostname}} {{.Status}}')
        assert out.returncode == 0, out.stderr
        return sorted(line.split()[0] for line in out.stdout.splitlines()
                      if line.split()[1] == 'Ready')

    coe('cluster', 'template', 'create', 'st', '--coe', 'swarm', '--image', 'debian-12',
        '--external-network', 'public', '--keypair', 'default', '--flavor', 'm1.tiny',
        '--master-flavor', 'm1.tiny', '--docker-storage-driver', 'overlay2')
    coe('cluster', 'create', 'sw', '--cluster-template', 'st', '--node-count', '2')
    cluster = settled()
    assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
    assert cluster['api_address'].startswith('tcp://') and \
        cluster['api_address'].endswith(':2376')
    uuid = cluster['uuid']
    try:
        cfg = tmp_path / 'cfg'
        cfg.mkdir()
        env_lines = coe('cluster', 'config', 'sw', '--dir', str(cfg), '--output-certs')
        assert 'export DOCKER_HOST=%s' % cluster['api_address'] in env_lines
        assert 'export DOCKER_TLS_VERIFY=True' in env_lines
        assert sorted(p.name for p in cfg.iterdir()) == ['ca.pem', 'cert.pem', 'key.pem']
        nodes = ready_nodes(cfg)
        assert len(nodes) == 3 and sum('-master-' in n for n in nodes) == 1

        def health():
            env = dict(os.environ, MAGNUM_DB_URL=swarm_api.db_url, MAGNUM_PROVIDER='docker',
                       PATH='%s:%s' % (Path(sys.executable).parent, os.environ['PATH']),
                       **swarm_api.env)
            run = subprocess.run([str(Path(sys.executable).parent / 'ansible-playbook'),
                                  'playbooks/cluster_health.yml', '-e', 'cluster=sw'],
                                 cwd=str(swarm_api.project_dir), env=env,
                                 capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, run.stdout[-2000:]
            shown = json.loads(coe('cluster', 'show', 'sw', '-f', 'json'))
            return shown['health_status'], shown['health_status_reason']

        assert health() == ('HEALTHY', {'api': 'ok'})
        worker = sorted(n for n in nodes if '-node-' in n)[-1]
        subprocess.run(['docker', 'stop', worker], check=True, capture_output=True)
        status, reason = wait_for(lambda: (lambda h: h if h[0] == 'UNHEALTHY' else None)(
            health()), timeout=120, interval=3)
        assert '%s.status' % worker in reason and reason['api'] == 'ok'
        subprocess.run(['docker', 'start', worker], check=True, capture_output=True)
        wait_for(lambda: health()[0] == 'HEALTHY', timeout=180, interval=3)

        coe('cluster', 'resize', 'sw', '3')
        cluster = settled()
        assert cluster['status'] == 'UPDATE_COMPLETE' and len(ready_nodes(cfg)) == 4
        leaving = sorted(n for n in ready_nodes(cfg) if '-node-' in n)[0]
        coe('cluster', 'resize', 'sw', '1', '--nodes-to-remove', leaving)
        cluster = settled()
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        nodes = ready_nodes(cfg)
        assert len(nodes) == 2 and leaving not in nodes

        signed = tmp_path / 'signed'
        signed.mkdir()
        subprocess.run(['openssl', 'req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout',
                        str(signed / 'key.pem'), '-subj', '/CN=someone', '-out',
                        str(signed / 'client.csr')], check=True, capture_output=True)
        (signed / 'cert.pem').write_text(coe('ca', 'sign', 'sw', str(signed / 'client.csr')))
        (signed / 'ca.pem').write_text(coe('ca', 'show', 'sw'))
        assert len(ready_nodes(signed)) == 2

        coe('ca', 'rotate', 'sw')
        assert settled()['status'] == 'UPDATE_COMPLETE'
        assert docker(signed, 'node', 'ls').returncode != 0, 'old client cert still works'
        fresh = tmp_path / 'fresh'
        fresh.mkdir()
        coe('cluster', 'config', 'sw', '--dir', str(fresh), '--output-certs')
        assert len(ready_nodes(fresh)) == 2

        coe('cluster', 'delete', 'sw')
        assert settled()['status'] == 'GONE'
        for kind in ('container', 'volume', 'network'):
            assert docker_ls(kind, uuid) == [], kind
    finally:
        for cid in docker_ls('container', uuid):
            subprocess.run(['docker', 'rm', '-f', cid], capture_output=True)
        for vol in docker_ls('volume', uuid):
            subprocess.run(['docker', 'volume', 'rm', vol], capture_output=True)
        for net in docker_ls('network', uuid):
            subprocess.run(['docker', 'network', 'rm', net], capture_output=True)
        shutil.rmtree(tmp_path / 'data', ignore_errors=True)
