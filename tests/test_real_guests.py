"""Clusters on real OpenStack guests (issue #44): the lab in its real-guest mode
(`LAB_VIRT=libvirt LAB_NET=ovs ../shared/openstack-lab/up.sh`: Nova's libvirt driver on
QEMU TCG, real OVS/DHCP/L3 agents), the node image built here and uploaded
(`playbooks/cloud_image.yml`), the OpenStack provider and the Swarm driver through
`ansible-playbook`: servers boot, cloud-init lets the provider in, Docker on the guests
forms the swarm, `docker node ls` answers through TLS at the cluster's floating IP, and
the delete leaves nothing. Skipped, saying so, on the fake-virt lab (no guest boots there)
and without a lab. docs: README "Clusters on an OpenStack cloud"."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAB_CLOUD, LAB_CLOUDS_YAML, NEEDS_LAB, REPO
from conftest import lab_connect as connect

BIN = Path(sys.executable).parent
pytestmark = NEEDS_LAB + [pytest.mark.real_guests]
GUEST_FLAVOR = 'g1.small'   # the lab's flavor for real guests (768 MiB)
IMAGE = 'debian-12-magnum'


@pytest.fixture(scope='module')
def cloud():
    conn = connect(LAB_CLOUDS_YAML)
    if conn.compute.find_flavor(GUEST_FLAVOR) is None:
        pytest.skip('needs the lab in its real-guest mode (LAB_VIRT=libvirt LAB_NET=ovs '
                    'up.sh): the fake-virt lab boots no guest')
    return conn


def run(env, *args, timeout=3600):
    proc = subprocess.run([str(BIN / args[0])] + list(args[1:]), cwd=str(REPO), env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc


def module(env, module_name, **args):
    proc = run(dict(env, ANSIBLE_CALLBACK_RESULT_FORMAT='json'), 'ansible', 'localhost', '-m',
               'openstack.magnum.' + module_name, '-a', json.dumps(args), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.split('=>', 1)[1])


def test_swarm_on_real_guests_from_create_to_delete(cloud, tmp_path):
    env = dict(os.environ, MAGNUM_DB_URL='sqlite:///%s' % (tmp_path / 'm.sqlite'),
               MAGNUM_PROVIDER='openstack', MAGNUM_CLOUD=LAB_CLOUD,
               OS_CLIENT_CONFIG_FILE=LAB_CLOUDS_YAML, XDG_DATA_HOME=str(tmp_path / 'data'),
               ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'),
               PATH='%s:%s' % (BIN, os.environ['PATH']))
    built = run(env, 'ansible-playbook', 'playbooks/cloud_image.yml',
                '-e', json.dumps({'cloud_image_cloud': LAB_CLOUD, 'cloud_image_name': IMAGE}))
    assert built.returncode == 0, built.stdout[-3000:]
    image = cloud.image.find_image(IMAGE)
    assert image.os_distro == 'debian' and image.kernel_id and image.ramdisk_id
    if cloud.compute.find_keypair('magnum-real') is None:
        cloud.compute.create_keypair(name='magnum-real')
    module(env, 'cluster_template', name='swarm-real', coe='swarm', image_id=IMAGE,
           external_network_id='public', keypair_id='magnum-real', flavor_id=GUEST_FLAVOR,
           master_flavor_id=GUEST_FLAVOR, docker_storage_driver='overlay2',
           floating_ip_enabled=True)
    created = run(env, 'ansible-playbook', 'playbooks/cluster_create.yml', '-e', json.dumps(
        {'cluster': {'name': 'real', 'cluster_template_id': 'swarm-real', 'node_count': 1,
                     'master_count': 1, 'create_timeout': 40}}))
    try:
        cluster = module(env, 'cluster_info', name='real')['cluster']
        assert created.returncode == 0 and cluster['status'] == 'CREATE_COMPLETE', (
            cluster['status_reason'], created.stdout[-3000:])
        issued = module(env, 'cluster_ca', cluster='real', action='issue', common_name='admin')
        certs = tmp_path / 'certs'
        certs.mkdir()
        for filename, field in (('ca.pem', 'pem'), ('cert.pem', 'cert'), ('key.pem', 'key')):
            (certs / filename).write_text(issued[field])
        nodes = subprocess.run(['docker', 'node', 'ls', '--format', '{{.Hostname}} {{.Status}}'],
                               env=dict(os.environ, DOCKER_HOST=cluster['api_address'],
                                        DOCKER_TLS_VERIFY='1', DOCKER_CERT_PATH=str(certs)),
                               capture_output=True, text=True, timeout=120)
        assert nodes.returncode == 0, nodes.stderr
        listed = sorted(nodes.stdout.split('\n')[:-1])
        assert len(listed) == 2 and all(line.endswith(' Ready') for line in listed), listed
    finally:
        deleted = run(env, 'ansible-playbook', 'playbooks/cluster_delete.yml', '-e', 'cluster=real')
        assert deleted.returncode == 0, deleted.stdout[-3000:]
    left = [s.name for s in cloud.compute.servers() if s.name.startswith('real-')]
    left += [n.name for n in cloud.network.networks() if n.name.startswith('real-')]
    left += [g.name for g in cloud.network.security_groups() if g.name.startswith('real-')]
    left += [r.name for r in cloud.network.routers() if r.name.startswith('real-')]
    assert left == [], left
