"""A cluster created through REST and the same cluster created with
`ansible-playbook playbooks/cluster_create.yml -e ...` leave identical records."""

import json
import subprocess

import requests

from ansible_collections.openstack.magnum.plugins.module_utils.core import store as store_mod
from conftest import BIN, ApiServer, ansible_env, wait_for

LATEST = {'OpenStack-API-Version': 'container-infra latest'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp',
       'labels': {'kube_tag': 'v1.30.1', 'flannel_backend': 'vxlan'}}
CLUSTER = {'name': 'c1', 'cluster_template_id': 'tpl', 'node_count': 2, 'master_count': 1,
           'labels': {'availability_zone': 'az1'}, 'merge_labels': True,
           'flavor_id': 'm1.medium', 'create_timeout': 30}
NODEGROUP = {'name': 'big', 'node_count': 2, 'min_node_count': 1, 'max_node_count': 3,
             'flavor_id': 'm1.large', 'labels': {'availability_zone': 'az2'},
             'merge_labels': True, 'node_labels': {'tier': 'big'}}
VOLATILE = ('id', 'uuid', 'created_at', 'updated_at', 'cluster_id', 'cluster_template_id',
            'status_reason', 'row_version')  # row_version: how many writes, not what


def normalise(store):
    cluster = store.get('cluster', 'c1')
    groups = store.find('nodegroup', cluster_id=cluster['uuid'])
    template = store.get('cluster_template', cluster['cluster_template_id'])
    out = {'cluster': dict((k, v) for k, v in cluster.items() if k not in VOLATILE),
           'template': dict((k, v) for k, v in template.items() if k not in VOLATILE),
           'nodegroups': sorted([dict((k, v) for k, v in g.items() if k not in VOLATILE)
                                 for g in groups], key=lambda g: g['name']),
           'ca': store.certificate(cluster['uuid']) is not None}
    return out


def test_rest_and_ansible_playbook_leave_identical_records(project, tmp_path):
    rest_db = 'sqlite:///%s' % (tmp_path / 'rest.sqlite')
    server = ApiServer(rest_db, project, tmp_path).start()
    try:
        assert requests.post(server.url + '/v1/clustertemplates', json=TPL, headers=LATEST,
                             timeout=30).status_code == 201
        assert requests.post(server.url + '/v1/clusters', json=CLUSTER, headers=LATEST,
                             timeout=30).status_code == 202
        wait_for(lambda: 'IN_PROGRESS' not in requests.get(
            server.url + '/v1/clusters/c1', headers=LATEST, timeout=30).json()['status'])
        assert requests.post(server.url + '/v1/clusters/c1/nodegroups', json=NODEGROUP,
                             headers=LATEST, timeout=30).status_code == 202
        wait_for(lambda: 'IN_PROGRESS' not in requests.get(
            server.url + '/v1/clusters/c1/nodegroups/big', headers=LATEST,
            timeout=30).json()['status'])
    finally:
        server.stop()

    pb_db = 'sqlite:///%s' % (tmp_path / 'playbook.sqlite')
    env = ansible_env(pb_db, project=project)
    tpl_args = dict(TPL, labels='kube_tag=v1.30.1,flannel_backend=vxlan')
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps(tpl_args)], cwd=project, env=env, check=True,
                   capture_output=True)
    run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
                          '-e', json.dumps({'cluster': CLUSTER})],
                         cwd=project, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:]
    run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/nodegroup_create.yml',
                          '-e', json.dumps({'cluster': 'c1', 'nodegroup': NODEGROUP})],
                         cwd=project, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:]

    rest, playbook = normalise(store_mod.Store(rest_db)), normalise(store_mod.Store(pb_db))
    assert rest['cluster']['status'] == 'UPDATE_COMPLETE'     # the node group's create
    big = next(g for g in rest['nodegroups'] if g['name'] == 'big')
    assert (big['status'], big['node_count'], big['flavor_id'], big['node_labels']) == (
        'CREATE_COMPLETE', 2, 'm1.large', {'tier': 'big'}), big
    assert rest['cluster']['labels'] == {'kube_tag': 'v1.30.1', 'flannel_backend': 'vxlan',
                                         'availability_zone': 'az1'}
    assert rest == playbook


def test_playbook_run_twice_changes_nothing(project, tmp_path):
    """Re-running a finished create is refused by the state machine and changes no record."""
    db = 'sqlite:///%s' % (tmp_path / 'pb.sqlite')
    env = ansible_env(db, project=project)
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps(dict(TPL, labels='kube_tag=v1.30.1'))], cwd=project,
                   env=env, check=True, capture_output=True)
    cmd = [str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
           '-e', json.dumps({'cluster': CLUSTER})]
    assert subprocess.run(cmd, cwd=project, env=env, capture_output=True).returncode == 0
    before = normalise(store_mod.Store(db))
    again = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
    assert again.returncode != 0 and 'CREATE_COMPLETE: create is not allowed' in again.stdout
    assert normalise(store_mod.Store(db)) == before


def test_playbook_upgrade_is_checked_like_the_api(project, tmp_path):
    """`ansible-playbook playbooks/cluster_upgrade.yml` refuses what the API refuses
    (a kube_tag downgrade, an unknown node group) before the cluster changes."""
    db = 'sqlite:///%s' % (tmp_path / 'pb.sqlite')
    env = ansible_env(db, project=project)

    def template(name, kube_tag):
        subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                        'openstack.magnum.cluster_template', '-a',
                        json.dumps(dict(TPL, name=name, labels='kube_tag=' + kube_tag))],
                       cwd=project, env=env, check=True, capture_output=True)

    def upgrade(**extravars):
        return subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_upgrade.yml',
                               '-e', json.dumps(dict(cluster='c1', **extravars))],
                              cwd=project, env=env, capture_output=True, text=True)

    template('tpl', 'v1.30.1')
    template('older', 'v1.29.4')
    template('newer', 'v1.31.0')
    assert subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
                           '-e', json.dumps({'cluster': CLUSTER})], cwd=project, env=env,
                          capture_output=True).returncode == 0
    before = normalise(store_mod.Store(db))

    refused = upgrade(cluster_template='older')
    assert refused.returncode != 0
    assert 'Downgrading a cluster is not supported: kube_tag v1.30.1 -> v1.29.4' in refused.stdout
    refused = upgrade(cluster_template='newer', nodegroup='no-such-group')
    assert refused.returncode != 0 and 'no-such-group' in refused.stdout
    refused = upgrade(cluster_template='newer', max_batch_size=0)
    assert refused.returncode != 0 and 'max_batch_size should be greater than 0' in refused.stdout
    assert normalise(store_mod.Store(db)) == before

    done = upgrade(cluster_template='newer', max_batch_size=2)
    assert done.returncode == 0, done.stdout[-3000:]
    store = store_mod.Store(db)
    cluster = store.get('cluster', 'c1')
    assert cluster['status'] == 'UPDATE_COMPLETE'
    assert cluster['cluster_template_id'] == store.get('cluster_template', 'newer')['uuid']


def test_playbook_operations_are_refused_as_the_api_refuses_them(project, tmp_path):
    """A resize, a delete, a node group delete and a create with a field Magnum does not
    have, started with `ansible-playbook` (or an AWX job template), meet the checks the
    API runs when it accepts them - the same refusal, word for word - and change nothing
    (issues #43, #46)."""
    from api.app import create_app
    from api.core import federations, lifecycle
    from api.settings import Settings

    db = 'sqlite:///%s' % (tmp_path / 'pb.sqlite')
    env = ansible_env(db, project=project)
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps(dict(TPL, labels='kube_tag=v1.30.1'))], cwd=project,
                   env=env, check=True, capture_output=True)
    assert subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
                           '-e', json.dumps({'cluster': CLUSTER})], cwd=project, env=env,
                          capture_output=True).returncode == 0
    store = store_mod.Store(db)
    cluster = store.get('cluster', 'c1')
    workers = lifecycle.default_worker_group(store, cluster)
    store.update('nodegroup', workers['uuid'], {
        'min_node_count': 1, 'max_node_count': 3,
        'nodes': [{'name': 'c1-node-0', 'id': 'a' * 32}, {'name': 'c1-node-1', 'id': 'b' * 32}]})
    scope = lifecycle.Scope(project_id=cluster['project_id'], is_admin=True)
    federations.create_federation(store, {'name': 'f1', 'hostcluster_id': 'c1'}, scope)
    before = normalise(store_mod.Store(db))

    app = create_app(Settings(db_url=db, runner_dir=tmp_path / 'jobs', project_dir=project,
                              playbooks_dir=project / 'playbooks', provider='none'))
    app.extensions['magnum_executor'].shutdown(wait=True)   # nothing is to run
    client = app.test_client()

    def api(method, path, body=None):
        resp = client.open(path, method=method, json=body, headers=LATEST)
        assert resp.status_code in (400, 409), resp.get_data(as_text=True)
        return resp.json['errors'][0]['detail']

    def playbook(name, **extravars):
        run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/%s.yml' % name,
                              '-e', json.dumps(dict(cluster='c1', **extravars))],
                             cwd=project, env=env, capture_output=True, text=True)
        assert run.returncode != 0, run.stdout[-2000:]
        return run.stdout

    resize = '/v1/clusters/c1/actions/resize'
    for body, message in (
            ({'node_count': 2, 'nodegroup': 'default-master'}, 'role master is not supported'),
            ({'node_count': 4}, 'outside the allowed range: min_node_count = 1, '
                                'max_node_count = 3'),
            ({'node_count': 0}, 'outside the allowed range: min_node_count = 1, '
                                'max_node_count = 3'),
            ({'node_count': 2, 'nodes_to_remove': ['c1-node-7']}, 'c1-node-7')):
        refusal = api('POST', resize, body)
        assert message in refusal
        assert refusal in playbook('cluster_resize', **body)
    refusal = api('DELETE', '/v1/clusters/c1')
    assert 'hosts federation f1' in refusal and refusal in playbook('cluster_delete')
    refusal = api('DELETE', '/v1/clusters/c1/nodegroups/default-master')
    assert 'Deleting a default nodegroup is not supported' in refusal
    assert refusal in playbook('nodegroup_delete', nodegroup='default-master')
    unknown = dict(CLUSTER, name='c2', colour='red')
    refusal = api('POST', '/v1/clusters', unknown)
    assert refusal == 'Unknown attribute for argument cluster: colour'
    created = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
                              '-e', json.dumps({'cluster': unknown})], cwd=project, env=env,
                             capture_output=True, text=True)
    assert created.returncode != 0 and refusal in created.stdout, created.stdout[-2000:]
    assert [c['name'] for c in store_mod.Store(db).find('cluster')] == ['c1']
    refusal = api('POST', '/v1/clusters/c1/nodegroups', {'name': 'ng2', 'colour': 'red'})
    assert refusal == 'Unknown attribute for argument nodegroup: colour'
    assert refusal in playbook('nodegroup_create', nodegroup={'name': 'ng2', 'colour': 'red'})
    assert normalise(store_mod.Store(db)) == before
