"""Real clients against a running magnum-ansible-api: the `openstack coe` CLI
(python-openstackclient + python-magnumclient) and openstacksdk's
container_infrastructure_management proxy. The server runs the test driver, so
operations complete; everything else is the real stack."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import api_settled, wait_for

pytestmark = pytest.mark.client
OPENSTACK = str(Path(sys.executable).parent / 'openstack')


@pytest.fixture
def coe(api_server):
    def run(*args, ok=True, fmt_json=False):
        cmd = [OPENSTACK, '--os-auth-type', 'none', '--os-endpoint', api_server.url + '/v1',
               'coe'] + list(args)
        if fmt_json:
            cmd += ['-f', 'json']
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if ok:
            assert proc.returncode == 0, (cmd, proc.stdout, proc.stderr)
        return _json(proc.stdout) if fmt_json and ok else proc
    run.url = api_server.url
    return run


def _json(text):
    """The JSON document of a command's output (some print a sentence before it)."""
    starts = [i for i in (text.find('{'), text.find('[')) if i >= 0]
    return json.loads(text[min(starts):])


def settled(coe, name):
    return api_settled(coe.url, '/v1/clusters/' + name, timeout=120, interval=0.5)


def test_openstack_coe_cli(coe, tmp_path):
    # cluster templates
    out = coe('cluster', 'template', 'create', 'tpl', '--coe', 'kubernetes', '--image',
              'debian-12', '--external-network', 'public', '--keypair', 'kp',
              '--labels', 'kube_tag=v1.30.1', fmt_json=True)
    assert out['coe'] == 'kubernetes' and out['labels'] == {'kube_tag': 'v1.30.1'}
    assert [t['name'] for t in coe('cluster', 'template', 'list', fmt_json=True)] == ['tpl']
    assert coe('cluster', 'template', 'show', 'tpl', fmt_json=True)['network_driver'] == 'flannel'
    coe('cluster', 'template', 'update', 'tpl', '--flavor', 'm1.large')
    assert coe('cluster', 'template', 'show', 'tpl', fmt_json=True)['flavor_id'] == 'm1.large'
    bad = coe('cluster', 'template', 'create', 'bad', '--coe', 'swarm', '--image', 'debian-12',
              '--external-network', 'public', '--network-driver', 'calico', ok=False)
    assert bad.returncode != 0 and 'Network driver type calico' in bad.stdout + bad.stderr
    # A Mesos template with the client's defaults (it sends docker_storage_driver overlay2,
    # the agents' Docker's).
    mesos = coe('cluster', 'template', 'create', 'mesos-tpl', '--coe', 'mesos', '--image',
                'debian-12', '--external-network', 'public', fmt_json=True)
    assert (mesos['coe'], mesos['docker_storage_driver'], mesos['network_driver']) == (
        'mesos', 'overlay2', 'docker')
    coe('cluster', 'template', 'delete', 'mesos-tpl')

    # clusters
    proc = coe('cluster', 'create', 'c1', '--cluster-template', 'tpl', '--node-count', '2')
    assert 'Request to create cluster' in proc.stdout
    assert settled(coe, 'c1') == 'CREATE_COMPLETE'
    listed = coe('cluster', 'list', fmt_json=True)
    assert [(c['name'], c['node_count'], c['status']) for c in listed] == [
        ('c1', 2, 'CREATE_COMPLETE')]
    shown = coe('cluster', 'show', 'c1', fmt_json=True)
    assert shown['api_address'] == 'https://c1.test:6443' and shown['keypair'] == 'kp'
    busy = coe('cluster', 'template', 'delete', 'tpl', ok=False)
    assert 'referenced by one or multiple clusters (HTTP 400)' in busy.stdout + busy.stderr
    coe('cluster', 'update', 'c1', '--node-count', '3')
    assert settled(coe, 'c1') == 'UPDATE_COMPLETE'
    assert coe('cluster', 'show', 'c1', fmt_json=True)['node_count'] == 3
    refused = coe('cluster', 'update', 'c1', '--master-count', '3', ok=False)
    assert refused.returncode != 0 and 'not supported' in refused.stdout + refused.stderr
    assert 'has been accepted' in coe('cluster', 'resize', 'c1', '1').stdout
    assert settled(coe, 'c1') == 'UPDATE_COMPLETE'
    coe('cluster', 'resize', 'c1', '--nodegroup', 'default-worker', '2')
    settled(coe, 'c1')
    assert coe('cluster', 'show', 'c1', fmt_json=True)['node_count'] == 2
    coe('cluster', 'template', 'create', 'tpl2', '--coe', 'kubernetes', '--image', 'debian-12',
        '--external-network', 'public', '--labels', 'kube_tag=v1.31.0')
    assert 'has been accepted' in coe('cluster', 'upgrade', 'c1', 'tpl2').stdout
    assert settled(coe, 'c1') == 'UPDATE_COMPLETE'
    assert coe('cluster', 'show', 'c1', fmt_json=True)['coe_version'] == 'v1.31.0'

    # node groups
    coe('nodegroup', 'create', 'c1', 'ng1', '--node-count', '2', '--role', 'test')
    settled(coe, 'c1')
    only = coe('nodegroup', 'list', 'c1', '--role', 'test', fmt_json=True)
    assert [(n['name'], n['status']) for n in only] == [('ng1', 'CREATE_COMPLETE')]
    assert coe('nodegroup', 'show', 'c1', 'ng1', fmt_json=True)['node_count'] == 2
    coe('nodegroup', 'update', 'c1', 'ng1', '--max-nodes', '5')
    assert coe('nodegroup', 'show', 'c1', 'ng1', fmt_json=True)['max_node_count'] == 5
    master = coe('nodegroup', 'create', 'c1', 'bad', '--role', 'master', ok=False)
    assert 'master' in master.stdout + master.stderr and '400' in master.stdout + master.stderr
    default = coe('nodegroup', 'delete', 'c1', 'default-worker', ok=False)
    assert 'default nodegroup' in default.stdout + default.stderr
    coe('nodegroup', 'delete', 'c1', 'ng1')
    settled(coe, 'c1')
    assert [n['name'] for n in coe('nodegroup', 'list', 'c1', fmt_json=True)] == [
        'default-master', 'default-worker']

    # certificates
    ca = coe('ca', 'show', 'c1').stdout
    assert 'BEGIN CERTIFICATE' in ca
    key, csr = tmp_path / 'key.pem', tmp_path / 'client.csr'
    subprocess.run(['openssl', 'req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout',
                    str(key), '-subj', '/O=system:masters/CN=admin', '-out', str(csr)],
                   check=True, capture_output=True)
    cert = tmp_path / 'cert.pem'
    cert.write_text(coe('ca', 'sign', 'c1', str(csr)).stdout)
    (tmp_path / 'ca.pem').write_text(ca)
    verify = subprocess.run(['openssl', 'verify', '-CAfile', str(tmp_path / 'ca.pem'),
                             str(cert)], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert 'has been accepted' in coe('ca', 'rotate', 'c1').stdout
    assert settled(coe, 'c1') == 'UPDATE_COMPLETE'
    assert coe('ca', 'show', 'c1').stdout != ca

    # quotas, stats, services
    coe('quotas', 'create', '--project-id', 'p2', '--resource', 'Cluster', '--hard-limit', '3')
    shown = coe('quotas', 'show', '--project-id', 'p2', '--resource', 'Cluster').stdout
    assert re.search(r'\|\s*hard_limit\s*\|\s*3\s*\|', shown), shown
    coe('quotas', 'update', '--project-id', 'p2', '--resource', 'Cluster', '--hard-limit', '4')
    listed = coe('quotas', 'list', '--all-tenants').stdout
    assert re.search(r'\|\s*p2\s*\|\s*Cluster\s*\|\s*4\s*\|', listed), listed
    coe('quotas', 'delete', '--project-id', 'p2', '--resource', 'Cluster')
    stats = coe('stats', 'list', 'default').stdout
    assert re.search(r'\|\s*clusters\s*\|\s*1\s*\|', stats) and \
        re.search(r'\|\s*nodes\s*\|\s*3\s*\|', stats), stats
    services = coe('service', 'list', fmt_json=True)
    assert services[0]['binary'] == 'magnum-conductor' and services[0]['state'] == 'up'

    # delete
    coe('cluster', 'delete', 'c1')
    assert settled(coe, 'c1') == 'GONE'
    coe('cluster', 'template', 'delete', 'tpl')
    assert [t['name'] for t in coe('cluster', 'template', 'list', fmt_json=True)] == ['tpl2']


def test_openstacksdk(api_server):
    import openstack
    conn = openstack.connection.Connection(
        auth_type='none', auth={'endpoint': api_server.url + '/v1'},
        container_infrastructure_management_endpoint_override=api_server.url + '/v1')
    proxy = conn.container_infrastructure_management
    tpl = proxy.create_cluster_template(name='sdk', coe='kubernetes', image_id='debian-12',
                                        external_network_id='public', keypair_id='kp')
    assert [t.name for t in proxy.cluster_templates()] == ['sdk']
    assert proxy.get_cluster_template(tpl.id).cluster_distro == 'debian'
    cluster = proxy.create_cluster(name='sdkc', cluster_template_id=tpl.id, node_count=1)

    def status():
        current = proxy.get_cluster(cluster.id)
        return current if 'IN_PROGRESS' not in current.status else None
    assert wait_for(status).status == 'CREATE_COMPLETE'
    assert [c.name for c in proxy.clusters()] == ['sdkc']
    assert 'BEGIN CERTIFICATE' in proxy.get_cluster_certificate(cluster.id).pem
    assert [s.binary for s in proxy.services()] == ['magnum-conductor']
    found = proxy.find_cluster('sdkc')
    assert found.name == 'sdkc' and found.uuid == cluster.id
    from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
    csr, _key = tls.make_csr('admin', 'system:masters')
    signed = proxy.create_cluster_certificate(cluster_uuid=cluster.id, csr=csr)
    assert 'BEGIN CERTIFICATE' in signed.pem
    # the proxy has no resize (Cluster.resize sends no microversion and is refused with
    # 406, as Magnum does below 1.7); node_count changes through update (JSON-patch)
    proxy.update_cluster(proxy.get_cluster(cluster.id), node_count=2)
    assert wait_for(status).node_count == 2
    proxy.update_cluster_template(proxy.get_cluster_template(tpl.id), name='sdk-renamed')
    assert proxy.get_cluster_template(tpl.id).name == 'sdk-renamed'
    proxy.delete_cluster(cluster.id)
    wait_for(lambda: not list(proxy.clusters()))
    proxy.delete_cluster_template(tpl.id)
    assert list(proxy.cluster_templates()) == []


GOPHERCLOUD = Path('/usr/share/gocode/src/github.com/gophercloud/gophercloud')


def go_program(name, tmp_path):
    """tests/gophercloud/<name>.go built against Debian's gophercloud."""
    go = shutil.which('go')
    if not go or not GOPHERCLOUD.is_dir():
        pytest.skip('needs Debian\'s golang-go and golang-github-gophercloud-gophercloud-dev '
                    '(.ci/run installs them)')
    program = tmp_path / name
    env = dict(os.environ, GOPATH=str(GOPHERCLOUD.parents[3]), GO111MODULE='off',
               GOFLAGS='', GOCACHE=os.environ.get('GOCACHE', str(Path.home() / '.cache/go-build')))
    build = subprocess.run([go, 'build', '-o', str(program), name + '.go'],
                           cwd=Path(__file__).parent / 'gophercloud', env=env,
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    return str(program)


def test_gophercloud_as_terraform_calls_it(api_server, tmp_path):
    """gophercloud (the Go SDK under Terraform's OpenStack provider), from Debian,
    drives templates, a cluster, node groups, the kubeconfig credential, CA
    rotation and delete the way the provider's containerinfra resources do."""
    program = go_program('lifecycle', tmp_path)
    run = subprocess.run([program, api_server.url], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == 'ok template gone', run.stdout


def test_the_cluster_autoscalers_magnum_provider_finds_a_groups_nodes_through_heat(
        api_server, coe, tmp_path):
    """The cluster-autoscaler's magnum provider (tests/gophercloud/autoscaler.go: its
    calls, in its order) finds a node group's servers through the node group's Heat
    stack (/heat/v1/<project>, read from the group's record) and removes one by its
    system UUID with a resize; another project's stacks are not found."""
    import uuid as uuidlib
    import requests
    from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle
    from ansible_collections.openstack.magnum.plugins.module_utils.core import store as store_mod
    program = go_program('autoscaler', tmp_path)
    coe('cluster', 'template', 'create', 'tpl', '--coe', 'kubernetes', '--image', 'debian-12',
        '--external-network', 'public', '--keypair', 'kp')
    coe('cluster', 'create', 'c1', '--cluster-template', 'tpl', '--node-count', '3')
    assert settled(coe, 'c1') == 'CREATE_COMPLETE'
    store = store_mod.Store(api_server.db_url)
    (cluster,) = store.find('cluster', name='c1')
    groups = dict((g['role'], g) for g in store.find('nodegroup', cluster_id=cluster['uuid']))
    servers = [str(uuidlib.uuid4()) for _ in range(3)]
    lifecycle.set_facts(store, cluster['uuid'], {'nodegroup_nodes': {
        groups['worker']['uuid']: [{'name': 'c1-abc-node-%d' % i, 'address': '10.0.1.%d' % i,
                                    'id': server} for i, server in enumerate(servers)],
        groups['master']['uuid']: [{'name': 'c1-abc-master-0', 'address': '10.0.0.1',
                                    'id': str(uuidlib.uuid4())}]}})
    run = subprocess.run([program, api_server.url, cluster['project_id'], 'c1',
                          groups['worker']['name']], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == ['instance openstack:///%s' % s for s in servers] + [
        'resized %s' % cluster['uuid']]
    assert settled(coe, 'c1') in ('UPDATE_COMPLETE', 'UPDATE_FAILED')
    heat = '%s/heat/v1/%s/stacks/' % (api_server.url, cluster['project_id'])
    missing = requests.get(heat + 'no-such-stack', timeout=30)
    assert missing.status_code == 404
    assert missing.json()['error']['type'] == 'EntityNotFound'
    other = {'X-Project-Id': 'other', 'X-Roles': 'member'}
    for url in ('%s/heat/v1/other/stacks/%s' % (api_server.url, groups['worker']['uuid']),
                heat + groups['worker']['uuid']):
        assert requests.get(url, headers=other, timeout=30).status_code == 404
    assert requests.get(heat + groups['worker']['uuid'], timeout=30).json()['stack'][
        'stack_name'] == 'c1-%s' % groups['worker']['name']


def test_openstack_cloud_collection(api_server, tmp_path):
    """The openstack.cloud collection's coe_cluster_template and coe_cluster modules
    (from the ansible package) create, find again without change, and delete."""
    clouds = tmp_path / 'clouds.yaml'
    clouds.write_text(
        'clouds:\n  magnum:\n    auth_type: none\n    auth: {endpoint: %(url)s/v1}\n'
        '    container_infrastructure_management_endpoint_override: %(url)s/v1\n'
        % {'url': api_server.url})
    play = subprocess.run(
        [str(Path(sys.executable).parent / 'ansible-playbook'), '-i', 'localhost,',
         '-c', 'local', '-e', 'ansible_python_interpreter=' + sys.executable,
         str(Path(__file__).parent / 'fixtures' / 'openstack_cloud_coe.yml')],
        env=dict(os.environ, OS_CLIENT_CONFIG_FILE=str(clouds)),
        capture_output=True, text=True, timeout=600)
    assert play.returncode == 0, play.stdout[-4000:] + play.stderr[-2000:]
    assert 'ok=7 ' in play.stdout and 'failed=0' in play.stdout, play.stdout[-2000:]
