"""The REST API in-process (Flask test client) on a real store, with the job executor:
Magnum's wire format, errors, microversions, paging, JSON-patch, scoping."""

import base64
import shutil
import time

import pytest

from api.app import create_app
from api.settings import Settings
from conftest import STORE_BACKENDS, store_url, wait_for

LATEST = {'OpenStack-API-Version': 'container-infra latest'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp'}


def make_app(db_url, project, tmp_path, **settings):
    return create_app(Settings(**dict(
        dict(db_url=db_url, runner_dir=tmp_path / 'jobs', project_dir=project,
             playbooks_dir=project / 'playbooks', heartbeat_interval=1, provider='none',
             # the fixture driver's health is its role's (the project swaps the kubernetes
             # role; the registry's reader without a playbook is the real driver's)
             health_interval=2, health_direct=False), **settings)))


# The API's rules run on a SQLite store: the store is the same on both backends
# (tests/test_store.py, tests/test_hardening.py's concurrent writers show it). The tests
# whose jobs, heartbeats and health rounds write beside the requests run on each backend.
EACH_STORE = pytest.mark.parametrize('client', STORE_BACKENDS, indirect=True)


@pytest.fixture
def client(request, project, tmp_path):
    with store_url(getattr(request, 'param', 'sqlite'), tmp_path) as url:
        app = make_app(url, project, tmp_path)
        yield app.test_client()
        app.extensions['magnum_executor'].shutdown(wait=True)


def call(client, method, path, body=None, headers=None, expect=None):
    hdrs = dict(LATEST, **(headers or {}))
    resp = client.open(path, method=method, json=body, headers=hdrs)
    if expect is not None:
        assert resp.status_code == expect, resp.get_data(as_text=True)
    return resp


def error_of(resp, status):
    assert resp.status_code == status, resp.get_data(as_text=True)
    err = resp.json['errors'][0]
    assert set(err) >= {'request_id', 'code', 'status', 'title', 'detail', 'links'}
    assert err['status'] == status and err['code'] == ('client' if status < 500 else 'server')
    assert err['detail'].startswith(err['title'])
    return err['detail']


def wait_status(client, ident, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        resp = call(client, 'GET', '/v1/clusters/%s' % ident)
        if resp.status_code == 404 or 'IN_PROGRESS' not in resp.json['status']:
            return resp
        time.sleep(0.3)
    raise AssertionError('cluster %s still in progress' % ident)


def test_versions_and_headers(client):
    root = client.get('/').json
    assert root['versions'][0]['min_version'] == '1.1'
    assert root['versions'][0]['max_version'] == '1.14'
    v1 = client.get('/v1/')
    assert v1.json['id'] == 'v1' and 'clustertemplates' in v1.json
    host = 'http://localhost/'
    assert v1.json['clusters'] == [{'href': host + 'v1/clusters/', 'rel': 'self'},
                                   {'href': host + 'clusters/', 'rel': 'bookmark'}]
    # node groups are a cluster's: Magnum's link names the cluster placeholder
    assert v1.json['nodegroups'] == [
        {'href': host + 'v1/clusters/{cluster_id}/nodegroups', 'rel': 'self'},
        {'href': host + 'clusters/{cluster_id}/nodegroups', 'rel': 'bookmark'}]
    assert v1.headers['OpenStack-API-Minimum-Version'] == \
        'container-infrastructure-management 1.1'
    assert v1.headers['OpenStack-API-Maximum-Version'] == \
        'container-infrastructure-management 1.14'
    assert v1.headers['Vary'] == 'OpenStack-API-Version'
    resp = client.get('/v1/clusters', headers={'OpenStack-API-Version': 'container-infra 1.9'})
    assert resp.headers['OpenStack-API-Version'] == 'container-infrastructure-management 1.9'
    resp = client.get('/v1/clusters')
    assert resp.headers['OpenStack-API-Version'].endswith(' 1.1')


@pytest.mark.parametrize('header', ['container-infra 1.15', 'container-infra 2.0',
                                    'container-infra 1.0'])
def test_unsupported_microversion_is_406(client, header):
    resp = client.get('/v1/clusters', headers={'OpenStack-API-Version': header})
    assert resp.status_code == 406
    err = resp.json['errors'][0]
    assert err['code'] == 'magnum.microversion-unsupported'
    assert (err['min_version'], err['max_version']) == ('1.1', '1.14')


def test_malformed_microversion_is_406(client):
    resp = client.get('/v1/clusters', headers={'OpenStack-API-Version': 'container-infra x.y'})
    assert resp.status_code == 406


def test_feature_below_its_microversion_is_refused(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    hdr = {'OpenStack-API-Version': 'container-infra 1.8'}
    assert client.get('/v1/clusters/x/nodegroups', headers=hdr).status_code == 406
    # The words come with a client that prefers JSON (python-magnumclient, openstacksdk),
    # naming the method Magnum has from 1.9 on; a curl-like */* gets none, as from Magnum.
    for path, method, api in (('/v1/clusters/x/nodegroups', 'GET', 'get_all'),
                              ('/v1/clusters/x/nodegroups/y', 'PATCH', 'patch')):
        said = client.open(path, method=method, headers=dict(hdr, Accept='application/json'))
        assert said.json['errors'][0]['title'] == 'Not Acceptable'
        assert said.json['errors'][0]['detail'] == (
            'Version 1.8 was requested but the requested API %s is not supported for this '
            'version.' % api)
        bare = client.open(path, method=method, headers=dict(hdr, Accept='*/*'))
        assert (bare.json['errors'][0]['title'], bare.json['errors'][0]['detail']) == ('', '')
    hdr = {'OpenStack-API-Version': 'container-infra 1.7'}
    call(client, 'POST', '/v1/clusters', {'name': 'c', 'cluster_template_id': 'tpl'},
         expect=202)
    resp = client.post('/v1/clusters/c/actions/upgrade', json={'cluster_template': 'tpl'},
                       headers=hdr)
    assert 'Cluster upgrade is not supported in the provided microversion' in \
        error_of(resp, 400)


def test_template_crud_and_links(client):
    resp = call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    tpl = resp.json
    assert resp.headers['Location'].endswith('/v1/clustertemplates/%s' % tpl['uuid'])
    assert tpl['links'][0]['rel'] == 'self' and tpl['links'][1]['rel'] == 'bookmark'
    assert '/v1/' not in tpl['links'][1]['href']
    assert tpl['cluster_distro'] == 'debian' and tpl['network_driver'] == 'flannel'
    shown = call(client, 'GET', '/v1/clustertemplates/tpl', expect=200).json
    assert shown == tpl
    patched = call(client, 'PATCH', '/v1/clustertemplates/tpl',
                   [{'op': 'replace', 'path': '/flavor_id', 'value': 'm1.large'},
                    {'op': 'add', 'path': '/labels/kube_tag', 'value': 'v1.30.1'}],
                   expect=200).json
    assert patched['flavor_id'] == 'm1.large' and patched['labels'] == {'kube_tag': 'v1.30.1'}
    call(client, 'DELETE', '/v1/clustertemplates/tpl', expect=204)
    assert 'could not be found' in error_of(call(client, 'GET', '/v1/clustertemplates/tpl'), 404)


@pytest.mark.parametrize('body,message', [
    ({k: v for k, v in TPL.items() if k != 'coe'}, 'Requested COE type Unset is not supported'),
    (dict(TPL, coe='swarm', network_driver='calico'), 'Network driver type calico'),
    (dict(TPL, docker_volume_size='ten'), "cluster_template. Value: '{"),
    (dict(TPL, image_id='fedora-atomic-29'), 'Cluster type (vm, fedora-atomic, kubernetes) not'),
    (dict(TPL, labels={'prometheus_adapter_enabled': 'true'}), 'monitoring_enabled'),
    (dict(TPL, labels={'cinder_csi_enabled': 'true'}), 'volume_driver=cinder'),
    (dict(TPL, unknown_field=1), 'Unknown attribute'),
    # An add-on the driver does not deploy is refused, never accepted and ignored.
    (dict(TPL, labels={'auto_healing_enabled': 'true', 'ingress_controller': 'nginx',
                       'auto_healing_controller': 'draino', 'auto_scaling_enabled': 'false'}),
     'does not deploy these add-ons yet: ingress_controller=nginx (ingress-nginx, retired '
     'upstream in March 2026; ingress_controller=traefik serves the same Ingress resources), '
     'auto_healing_controller=draino (draino, archived upstream; magnum-auto-healer, the '
     'default, replaces broken workers). Unset them'),
    (dict(TPL, labels={'cert_manager_api': 'false'}), 'cert_manager_api=false cannot be'),
    (dict(TPL, insecure_registry='my registry:5000'),
     "insecure_registry. Value: 'my registry:5000'. Value should be a registry's host[:port]"),
])
def test_template_bad_input(client, body, message):
    assert message in error_of(call(client, 'POST', '/v1/clustertemplates', body), 400)
    assert call(client, 'GET', '/v1/clustertemplates').json['clustertemplates'] == []


def test_cinder_volumes_without_cluster_user_trust_record_cinder_csi_off(client):
    """Horizon's template form picks volume_driver Cinder by default and Magnum 23 takes
    it: accepted here too; Cinder CSI (handed the cluster's credential) then follows the
    service's cluster_user_trust, recorded on the cluster."""
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, volume_driver='cinder'), expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
         expect=202)
    shown = call(client, 'GET', '/v1/clusters/c1').json
    assert shown['labels'] == {'cinder_csi_enabled': 'false'}


def test_labels_kubeadm_honours_by_nature_are_accepted(client):
    """cert_manager_api=True (Terraform templates commonly set it): kubeadm's controller
    manager signs CSRs with the cluster CA; ingress_controller=traefik is deployed."""
    made = call(client, 'POST', '/v1/clustertemplates', dict(TPL, labels={
        'cert_manager_api': 'True', 'ingress_controller': 'traefik'}), expect=201).json
    assert made['labels'] == {'cert_manager_api': 'True', 'ingress_controller': 'traefik'}


def test_not_json_body(client):
    resp = client.post('/v1/clustertemplates', data='{nope', headers=dict(
        LATEST, **{'Content-Type': 'application/json'}))
    error_of(resp, 400)


@pytest.mark.parametrize('patch,message', [
    ([{'op': 'replace', 'path': '/uuid', 'value': 'x'}], 'internal attribute'),
    ([{'op': 'replace', 'path': '/flavor_id'}], 'operations needs value'),
    ([{'op': 'move', 'path': '/flavor_id', 'value': 'x'}], 'op'),
    ([{'op': 'add', 'path': '/nonexistent', 'value': 'x'}], 'not allowed'),
    ([{'op': 'add', 'path': '/keypair_id', 'value': 'x'}], "use 'replace'"),
    ([{'op': 'replace', 'path': 'flavor_id', 'value': 'x'}], 'Value should match the pattern'),
    ([{'op': 'remove', 'path': '/coe'}], 'can not be removed'),
    ({'op': 'replace'}, 'Value not a valid list'),
    ([{'op': 'replace', 'path': '/insecure_registry', 'value': 'http://'}],
     'Value should be a registry'),
])
def test_bad_json_patch(client, patch, message):
    before = call(client, 'POST', '/v1/clustertemplates', TPL, expect=201).json
    assert message in error_of(call(client, 'PATCH', '/v1/clustertemplates/tpl', patch), 400)
    assert call(client, 'GET', '/v1/clustertemplates/tpl').json == before


def test_template_in_use_protected(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
         expect=202)
    assert 'referenced' in error_of(call(client, 'DELETE', '/v1/clustertemplates/tpl'), 400)
    assert 'referenced' in error_of(call(client, 'PATCH', '/v1/clustertemplates/tpl', [
        {'op': 'replace', 'path': '/flavor_id', 'value': 'm1.large'}]), 400)
    renamed = call(client, 'PATCH', '/v1/clustertemplates/tpl', [
        {'op': 'replace', 'path': '/name', 'value': 'tpl2'}], expect=200).json
    assert renamed['name'] == 'tpl2'


@pytest.mark.parametrize('body,status,message', [
    ({'name': 'c'}, 400, "cluster_template_id. Value: 'None'"),
    ({'name': 'c', 'cluster_template_id': 'missing'}, 400, 'could not be found'),
    ({'name': 'c', 'cluster_template_id': 'tpl', 'node_count': 'x'}, 400,
     "invalid literal for int() with base 10: 'x'"),
    ({'name': 'c', 'cluster_template_id': 'tpl', 'create_timeout': 0}, 400, 'create_timeout'),
    ({'name': 'c', 'cluster_template_id': 'tpl', 'master_count': 3}, 400, 'master_lb_enabled'),
    ({'name': '-c', 'cluster_template_id': 'tpl'}, 400, 'Value should match the pattern'),
    ({'name': 'c', 'cluster_template_id': 'tpl',
      'labels': {'auto_healing_enabled': 'true', 'auto_healing_controller': 'draino'}},
     400, 'auto_healing_controller=draino (draino, archived'),
])
def test_cluster_bad_input(client, body, status, message):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    assert message in error_of(call(client, 'POST', '/v1/clusters', body), status)
    assert call(client, 'GET', '/v1/clusters').json['clusters'] == []


@EACH_STORE
def test_cluster_lifecycle_through_jobs(client):
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, labels={'kube_tag': 'v1.30.1'}),
         expect=201)
    uuid = call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl',
                                                 'node_count': 2}, expect=202).json['uuid']
    shown = call(client, 'GET', '/v1/clusters/c1', expect=200).json
    assert shown['uuid'] == uuid and shown['status'] == 'CREATE_IN_PROGRESS'
    assert 'cluster_id' in shown and 'stack_id' not in shown  # 1.13+
    done = wait_status(client, 'c1').json
    assert done['status'] == 'CREATE_COMPLETE', done
    assert done['api_address'] == 'https://c1.test:6443'
    assert done['node_addresses'] == ['10.0.1.10', '10.0.1.11']
    assert done['coe_version'] == 'v1.30.1'
    deadline = time.time() + 30
    while call(client, 'GET', '/v1/clusters/c1/jobs?active=1').json['jobs']:
        assert time.time() < deadline
        time.sleep(0.2)
    jobs = call(client, 'GET', '/v1/clusters/c1/jobs').json['jobs']
    assert jobs[0]['status'] == 'SUCCESSFUL' and jobs[0]['tasks_done'] > 3
    # a finished job reports no field it never fills
    assert {k for k, v in jobs[0].items() if v is None} <= {'status_reason', 'resource_id',
                                                            'current_task'}
    job = call(client, 'GET', '/v1/jobs/%s' % jobs[0]['uuid']).json
    assert any(e['task'] == "Run the provider's and the driver's roles"
               for e in job['events'])
    # update: only node_count; busy clusters refuse
    assert 'not supported' in error_of(call(client, 'PATCH', '/v1/clusters/c1', [
        {'op': 'replace', 'path': '/master_count', 'value': 3}]), 400)
    call(client, 'PATCH', '/v1/clusters/c1', [
        {'op': 'replace', 'path': '/node_count', 'value': 3}], expect=202)
    assert 'not allowed until' in error_of(call(client, 'POST', '/v1/clusters/c1/actions/resize',
                                                {'node_count': 1}), 409)
    done = wait_status(client, 'c1').json
    assert done['status'] == 'UPDATE_COMPLETE' and done['node_count'] == 3
    ngs = call(client, 'GET', '/v1/clusters/c1/nodegroups').json['nodegroups']
    assert {n['name']: n['node_count'] for n in ngs} == {'default-master': 1,
                                                         'default-worker': 3}
    call(client, 'POST', '/v1/clusters/c1/actions/resize', {'node_count': 1}, expect=202)
    assert wait_status(client, 'c1').json['node_count'] == 1
    # upgrade: downgrade refused, upgrade switches the template
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, name='old', labels={
        'kube_tag': 'v1.29.0'}), expect=201)
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, name='new', labels={
        'kube_tag': 'v1.31.0'}), expect=201)
    assert 'Downgrading' in error_of(call(client, 'POST', '/v1/clusters/c1/actions/upgrade',
                                          {'cluster_template': 'old'}), 400)
    call(client, 'POST', '/v1/clusters/c1/actions/upgrade', {'cluster_template': 'new',
                                                             'max_batch_size': 1}, expect=202)
    done = wait_status(client, 'c1').json
    new_uuid = call(client, 'GET', '/v1/clustertemplates/new').json['uuid']
    assert done['status'] == 'UPDATE_COMPLETE' and done['cluster_template_id'] == new_uuid
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert wait_status(client, 'c1').status_code == 404
    assert call(client, 'GET', '/v1/clusters/%s/nodegroups' % uuid).status_code == 404


def test_failure_reason_and_retry_of_a_failed_cluster(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl',
                                          'labels': {'test_fail': 'disk full'}}, expect=202)
    failed = wait_status(client, 'c1').json
    assert failed['status'] == 'CREATE_FAILED'
    assert failed['status_reason'] == 'test driver failure: disk full'
    assert failed['faults']['default-worker'] == 'test driver failure: disk full'
    # unlike Magnum, a failed cluster can be resized (and deleted)
    call(client, 'POST', '/v1/clusters/c1/actions/resize', {'node_count': 2}, expect=202)
    assert wait_status(client, 'c1').json['status'] == 'UPDATE_FAILED'
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert wait_status(client, 'c1').status_code == 404


def test_uninstalled_driver_ends_failed_with_reason(client, project):
    # A collection installed without the Mesos driver's role.
    shutil.rmtree(project / 'collections/ansible_collections/openstack/magnum/roles/mesos')
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, coe='mesos'), expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 's1', 'cluster_template_id': 'tpl'},
         expect=202)
    failed = wait_status(client, 's1').json
    assert failed['status'] == 'CREATE_FAILED'
    assert failed['status_reason'] == (
        'Cluster type (vm, debian, mesos) is not supported here: driver mesos_debian on '
        'provider none is not installed (missing roles: mesos).')


def test_swarm_without_nodes_fails_clearly(client):
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, coe='swarm'), expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 's1', 'cluster_template_id': 'tpl'},
         expect=202)
    failed = wait_status(client, 's1').json
    assert failed['status'] == 'CREATE_FAILED'
    assert failed['status_reason'] == (
        "The Swarm driver needs the cluster's servers from an infrastructure provider, and "
        "provider none gave none.")


@EACH_STORE
def test_delete_supersedes_a_running_create(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl',
                                          'labels': {'test_sleep': '30'}}, expect=202)
    time.sleep(4)
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert call(client, 'GET', '/v1/clusters/c1').json['status'] == 'DELETE_IN_PROGRESS'
    assert wait_status(client, 'c1', timeout=60).status_code == 404


def test_nodegroups(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
         expect=202)
    wait_status(client, 'c1')
    ng = call(client, 'POST', '/v1/clusters/c1/nodegroups', {
        'name': 'ng1', 'node_count': 2, 'role': 'test', 'max_node_count': 4,
        'node_taints': [{'key': 'k', 'value': 'v', 'effect': 'NoSchedule'}]}, expect=202).json
    assert ng['name'] == 'ng1' and ng['links'][0]['href'].endswith(
        '/nodegroups/%s' % ng['uuid'])
    assert 'master' in error_of(call(client, 'POST', '/v1/clusters/c1/nodegroups', {
        'name': 'bad', 'role': 'master'}), 400)
    wait_status(client, 'c1')
    assert 'already exists' in error_of(call(client, 'POST', '/v1/clusters/c1/nodegroups',
                                             {'name': 'ng1'}), 409)
    only = call(client, 'GET', '/v1/clusters/c1/nodegroups/?role=test').json['nodegroups']
    assert [n['name'] for n in only] == ['ng1'] and only[0]['status'] == 'CREATE_COMPLETE'
    upd = call(client, 'PATCH', '/v1/clusters/c1/nodegroups/ng1', [
        {'op': 'replace', 'path': '/max_node_count', 'value': 5}], expect=202).json
    assert upd['max_node_count'] == 5
    assert 'not supported' in error_of(call(client, 'PATCH', '/v1/clusters/c1/nodegroups/ng1', [
        {'op': 'replace', 'path': '/flavor_id', 'value': 'x'}]), 400)
    assert 'default nodegroup' in error_of(
        call(client, 'DELETE', '/v1/clusters/c1/nodegroups/default-worker'), 400)
    call(client, 'DELETE', '/v1/clusters/c1/nodegroups/ng1', expect=204)
    # The group is DELETE_IN_PROGRESS at once, then gone when its job has run (the
    # cluster's own status may not have changed yet when the job has not started).
    shown = call(client, 'GET', '/v1/clusters/c1/nodegroups/ng1')
    assert shown.status_code == 404 or shown.json['status'] == 'DELETE_IN_PROGRESS', shown.json
    wait_for(lambda: call(client, 'GET', '/v1/clusters/c1/nodegroups/ng1').status_code == 404,
             timeout=300, interval=0.3)
    wait_status(client, 'c1')
    names = [n['name'] for n in call(client, 'GET', '/v1/clusters/c1/nodegroups').json[
        'nodegroups']]
    assert names == ['default-master', 'default-worker']


def test_paging_and_next_links(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    for i in range(3):
        call(client, 'POST', '/v1/clustertemplates', dict(TPL, name='t%d' % i), expect=201)
    page = call(client, 'GET', '/v1/clustertemplates?limit=2', expect=200).json
    assert len(page['clustertemplates']) == 2
    assert 'sort_key=id&sort_dir=asc&limit=2&marker=' in page['next']
    rest = call(client, 'GET', page['next'].split('localhost')[1]).json
    assert len(rest['clustertemplates']) == 2
    assert 'Limit must be positive' in error_of(
        call(client, 'GET', '/v1/clustertemplates?limit=0'), 400)
    error_of(call(client, 'GET', '/v1/clustertemplates?sort_dir=up'), 400)
    error_of(call(client, 'GET', '/v1/clustertemplates?sort_key=nope'), 400)


def test_project_scoping_and_admin_endpoints(client):
    alice = {'X-Project-Id': 'alice', 'X-Roles': 'member'}
    bob = {'X-Project-Id': 'bob', 'X-Roles': 'member'}
    call(client, 'POST', '/v1/clustertemplates', TPL, headers=alice, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
         headers=alice, expect=202)
    assert call(client, 'GET', '/v1/clusters', headers=bob).json['clusters'] == []
    error_of(call(client, 'GET', '/v1/clusters/c1', headers=bob), 404)
    error_of(call(client, 'GET', '/v1/clustertemplates/tpl', headers=bob), 404)
    assert len(call(client, 'GET', '/v1/clusters', headers={'X-Roles': 'admin'}).json[
        'clusters']) == 1
    error_of(call(client, 'GET', '/v1/mservices', headers=alice), 403)
    services = call(client, 'GET', '/v1/mservices', expect=200).json['mservices']
    assert services[0]['binary'] == 'magnum-conductor' and services[0]['state'] == 'up'
    error_of(call(client, 'POST', '/v1/quotas', {'project_id': 'alice', 'resource': 'Cluster',
                                                 'hard_limit': 1}, headers=alice), 403)
    error_of(call(client, 'GET', '/v1/stats?project_id=bob', headers=alice), 403)
    assert call(client, 'GET', '/v1/stats', headers=alice).json == {'clusters': 1, 'nodes': 2}


def test_quotas(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    assert call(client, 'GET', '/v1/quotas/default/Cluster').json['hard_limit'] == 20
    created = call(client, 'POST', '/v1/quotas', {'project_id': 'default',
                                                  'resource': 'Cluster', 'hard_limit': 1},
                   expect=201).json
    assert created['hard_limit'] == 1
    error_of(call(client, 'POST', '/v1/quotas', {'project_id': 'default',
                                                 'resource': 'Cluster', 'hard_limit': 1}), 409)
    error_of(call(client, 'POST', '/v1/quotas', {'project_id': 'x', 'resource': 'Pod',
                                                 'hard_limit': 1}), 400)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
         expect=202)
    assert 'hard_limit' in error_of(call(client, 'POST', '/v1/clusters', {
        'name': 'c2', 'cluster_template_id': 'tpl'}), 403)
    call(client, 'PATCH', '/v1/quotas/default/Cluster', {'hard_limit': 5}, expect=202)
    call(client, 'POST', '/v1/clusters', {'name': 'c2', 'cluster_template_id': 'tpl'},
         expect=202)
    call(client, 'DELETE', '/v1/quotas/default/Cluster', expect=204)
    assert call(client, 'GET', '/v1/quotas').json['quotas'] == []


def test_certificates(client):
    from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    uuid = call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
                expect=202).json['uuid']
    wait_status(client, 'c1')
    ca = call(client, 'GET', '/v1/certificates/c1', expect=200).json
    assert ca['cluster_uuid'] == uuid and 'BEGIN CERTIFICATE' in ca['pem']
    csr, _key = tls.make_csr('admin', 'system:masters')
    signed = call(client, 'POST', '/v1/certificates', {'cluster_uuid': 'c1', 'csr': csr},
                  expect=201).json
    assert tls.verify_signed_by(signed['pem'], ca['pem'])
    assert 'Invalid CSR' in error_of(call(client, 'POST', '/v1/certificates', {
        'cluster_uuid': 'c1', 'csr': 'garbage'}), 400)
    call(client, 'PATCH', '/v1/certificates/c1', expect=202)
    rotated = wait_status(client, 'c1').json
    assert rotated['status'] == 'UPDATE_COMPLETE'


def test_the_api_and_its_jobs_seal_secrets_with_its_key_file(db_url, project, tmp_path):
    """--secret-key-file: the CA that a create job makes, and the one a rotation job
    stages and promotes, lie sealed in the store; the API reads them to sign."""
    from ansible_collections.openstack.magnum.plugins.module_utils.core import secrets, tls
    from test_store import raw_secrets
    keys = tmp_path / 'secret.keys'
    keys.write_text(secrets.new_key() + '\n')
    app = make_app(db_url, project, tmp_path, secret_key_file=str(keys))
    client = app.test_client()
    try:
        call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
        call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
             expect=202)
        assert wait_status(client, 'c1').json['status'] == 'CREATE_COMPLETE'
        store = app.extensions['magnum_store']
        first = raw_secrets(store)
        assert len(first) == 1 and secrets.is_sealed(first[0])
        call(client, 'PATCH', '/v1/certificates/c1', expect=202)
        assert wait_status(client, 'c1').json['status'] == 'UPDATE_COMPLETE'
        rotated = raw_secrets(store)
        assert len(rotated) == 1 and secrets.is_sealed(rotated[0]) and rotated != first
        ca = call(client, 'GET', '/v1/certificates/c1', expect=200).json
        csr, _key = tls.make_csr('admin', 'system:masters')
        signed = call(client, 'POST', '/v1/certificates', {'cluster_uuid': 'c1', 'csr': csr},
                      expect=201).json
        assert tls.verify_signed_by(signed['pem'], ca['pem'])
    finally:
        app.extensions['magnum_executor'].shutdown(wait=True)
    # the same store served without its keys (a key file of its own is made): the API
    # refuses to start, saying why, rather than fail every request that needs a secret
    with pytest.raises(secrets.SecretsUnavailable, match='sealed with a key that is not'):
        make_app(db_url, project, tmp_path, start_executor=False)


def test_credential_rotation_needs_clusters_with_credentials(client):
    """Without Keystone and a cloud, clusters have no credential of their own: rotation
    is Magnum's 400 (not supported by driver); 1.12 is its microversion; the cluster
    is looked up first. (With them: tests/test_keystone_auth.py.)"""
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl'},
         expect=202)
    wait_status(client, 'c1')
    assert 'not supported by driver' in error_of(
        call(client, 'PATCH', '/v1/credentials/c1'), 400)
    call(client, 'PATCH', '/v1/credentials/c1',
         headers={'OpenStack-API-Version': 'container-infra 1.11'}, expect=406)
    assert 'could not be found' in error_of(call(client, 'PATCH', '/v1/credentials/nope'), 404)


EXTERNAL_KUBECONFIG = '''apiVersion: v1
kind: Config
current-context: aws
clusters:
- name: aws
  cluster:
    server: https://203.0.113.7:6443
    certificate-authority-data: %s
users:
- name: aws
  user:
    token: abc
contexts:
- name: aws
  context: {cluster: aws, user: aws}
''' % base64.b64encode(b'-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').decode()


def wait_federation(client, ident, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        resp = call(client, 'GET', '/v1/federations/%s' % ident)
        if resp.status_code == 404 or 'IN_PROGRESS' not in resp.json['status']:
            return resp
        time.sleep(0.3)
    raise AssertionError('federation still in progress')


# Federations' store writes on both backends are test_hardening's (a host's and a
# member's delete refused, members the caller may update); this one waits on the role's
# runs.
def test_federations(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    for name in ('host', 'm1'):
        call(client, 'POST', '/v1/clusters', {'name': name, 'cluster_template_id': 'tpl'},
             expect=202)
        assert wait_status(client, name).json['status'] == 'CREATE_COMPLETE'
    error_of(call(client, 'POST', '/v1/federations', {'name': 'f', 'hostcluster_id': 'nope'}),
             404)
    error_of(call(client, 'POST', '/v1/federations', {'name': 'f'}), 400)
    fed = call(client, 'POST', '/v1/federations', {'name': 'f', 'hostcluster_id': 'host',
                                                   'properties': {'dns': 'cluster.local'}},
               expect=202).json
    shown = wait_federation(client, fed['uuid']).json
    # The fixture driver's clusters have no API to install Karmada on: said, and failed.
    assert shown['status'] == 'CREATE_FAILED'
    assert shown['status_reason'].startswith(
        'Host cluster host (https://host.test:6443) did not answer'), shown['status_reason']
    assert shown['properties'] == {'dns': 'cluster.local'}
    # An external cluster (the spec's phase 4) is registered with a kubeconfig, which
    # is never shown; a bad one is Magnum's 400, a name taken a 409.
    ext_url = '/v1/federations/f/external_clusters'
    kubeconfig = {'name': 'aws', 'kubeconfig': EXTERNAL_KUBECONFIG}
    assert 'user sets' in error_of(call(client, 'POST', ext_url, dict(
        kubeconfig, kubeconfig=EXTERNAL_KUBECONFIG.replace('token: abc', 'tokenFile: /x'))),
        400)
    assert 'exactly a name and a kubeconfig' in error_of(
        call(client, 'POST', ext_url, {'name': 'aws'}), 400)
    ext = call(client, 'POST', ext_url, kubeconfig, expect=201).json
    assert ext == {'uuid': ext['uuid'], 'name': 'aws', 'server': 'https://203.0.113.7:6443',
                   'federation_id': fed['uuid'], 'created_at': ext['created_at']}
    assert 'already has' in error_of(call(client, 'POST', ext_url, kubeconfig), 409)
    assert call(client, 'GET', ext_url).json == {'external_clusters': [ext]}
    # join: membership is recorded; a member cannot be deleted until unjoined
    call(client, 'PATCH', '/v1/federations/f', [
        {'op': 'replace', 'path': '/member_ids', 'value': ['m1', 'aws']}], expect=202)
    shown = wait_federation(client, 'f').json
    m1 = call(client, 'GET', '/v1/clusters/m1').json['uuid']
    assert shown['member_ids'] == [m1, ext['uuid']] and shown['status'] == 'UPDATE_FAILED'
    assert 'unjoin' in error_of(call(client, 'DELETE', '/v1/clusters/m1'), 409)
    assert 'unjoin it first' in error_of(call(client, 'DELETE', ext_url + '/aws'), 409)
    assert 'internal attribute' in error_of(call(client, 'PATCH', '/v1/federations/f', [
        {'op': 'replace', 'path': '/hostcluster_id', 'value': 'm1'}]), 400)
    call(client, 'PATCH', '/v1/federations/f', [
        {'op': 'replace', 'path': '/member_ids', 'value': []}], expect=202)
    wait_federation(client, 'f')
    call(client, 'DELETE', ext_url + '/' + ext['uuid'], expect=204)
    assert call(client, 'GET', ext_url).json == {'external_clusters': []}
    call(client, 'DELETE', '/v1/clusters/m1', expect=204)
    call(client, 'DELETE', '/v1/federations/f', expect=204)
    gone = wait_federation(client, 'f')
    assert gone.status_code == 404, (gone.json['status'], gone.json['status_reason'])


@EACH_STORE
def test_health_is_refreshed_periodically(client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'ok', 'cluster_template_id': 'tpl'},
         expect=202)
    call(client, 'POST', '/v1/clusters', {'name': 'sick', 'cluster_template_id': 'tpl',
                                          'labels': {'test_unhealthy': 'NotReady'}},
         expect=202)
    assert wait_status(client, 'ok').json['health_status'] == 'UNKNOWN'
    wait_status(client, 'sick')
    deadline = time.time() + 60
    while time.time() < deadline:
        ok = call(client, 'GET', '/v1/clusters/ok').json
        sick = call(client, 'GET', '/v1/clusters/sick').json
        if ok['health_status'] != 'UNKNOWN' and sick['health_status'] != 'UNKNOWN':
            break
        time.sleep(0.5)
    assert ok['health_status'] == 'HEALTHY' and ok['health_status_reason'] == {'api': 'ok'}
    assert sick['health_status'] == 'UNHEALTHY'
    assert sick['health_status_reason'] == {'node-0.status': 'NotReady'}
    assert sick['status'] == 'CREATE_COMPLETE'  # health never changes the status


def test_the_auto_healers_health_update_is_answered_as_magnum_answers_it(client):
    """magnum-auto-healer's UpdateHealthStatus, as its source makes it (gophercloud
    clusters.Update at microversion "latest": health_status and a health_status_reason
    JSON-encoded with its double quotes turned single): Magnum 23 refuses the reason,
    a string where its field is a mapping, with a 400 naming the field, and records
    nothing; a mapping (what the field takes) is recorded."""
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c', 'cluster_template_id': 'tpl'},
         expect=202)
    wait_status(client, 'c')
    healer = [{'op': 'replace', 'path': '/health_status', 'value': 'UNHEALTHY'},
              {'op': 'replace', 'path': '/health_status_reason',
               'value': "{'updated_at': '2026-11-26 10:00:00', 'c-node-0.Ready': 'error'}"}]
    detail = error_of(call(client, 'PATCH', '/v1/clusters/c', healer), 400)
    assert 'health_status_reason' in detail and 'Wrong type' in detail
    assert call(client, 'GET', '/v1/clusters/c').json['health_status'] == 'UNKNOWN'
    healer[1]['value'] = {'c-node-0.Ready': 'error'}
    call(client, 'PATCH', '/v1/clusters/c', healer, expect=202)
    shown = call(client, 'GET', '/v1/clusters/c').json
    assert (shown['health_status'], shown['health_status_reason']) == (
        'UNHEALTHY', {'c-node-0.Ready': 'error'})


@EACH_STORE
def test_health_checks_run_side_by_side(client, tmp_path):
    """Health checks of several clusters run at the same time (--health-workers, 2 by
    default): each check of the fixture driver waits for the other's; one that runs alone
    reports UNHEALTHY."""
    meet = tmp_path / 'meet'
    meet.mkdir()
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    for name in ('a', 'b'):
        call(client, 'POST', '/v1/clusters', {
            'name': name, 'cluster_template_id': 'tpl',
            'labels': {'test_health_meet': '2:%s' % meet}}, expect=202)
    for name in ('a', 'b'):
        wait_status(client, name)
    deadline = time.time() + 120
    while time.time() < deadline:
        health = {name: call(client, 'GET', '/v1/clusters/%s' % name).json
                  for name in ('a', 'b')}
        if all(c['health_status'] != 'UNKNOWN' for c in health.values()):
            break
        time.sleep(0.5)
    assert sorted(p.name for p in meet.iterdir()) == ['a', 'b']
    for name, cluster in health.items():
        assert (cluster['health_status'], cluster['health_status_reason']) == (
            'HEALTHY', {'api': 'ok'}), name
