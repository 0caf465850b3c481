"""Malformed requests get Magnum's 400 or 404, never a 500, and change nothing — on SQLite
and on PostgreSQL, whose columns are stricter (255-character strings, 32-bit integers, no
NUL characters): bodies that are not JSON objects, identifiers that are not strings,
values beyond the store's limits, label values that are not scalars, NULs in URLs."""

import pytest

from api.core import lifecycle
from test_api import LATEST, TPL, call, error_of, make_app

CREATES = ['/v1/clustertemplates', '/v1/clusters', '/v1/clusters/c1/nodegroups',
           '/v1/certificates', '/v1/quotas', '/v1/federations',
           '/v1/clusters/c1/actions/resize', '/v1/clusters/c1/actions/upgrade']

BAD_VALUES = [
    ('/v1/clusters', {'name': 'c2', 'cluster_template_id': [1]},
     "cluster_template_id. Value: '[1]'. Wrong type"),
    ('/v1/certificates', {'cluster_uuid': {'a': 1}, 'csr': 'x'}, 'identifier {"a": 1}'),
    ('/v1/clusters/c1/actions/resize', {'node_count': 1, 'nodegroup': [1]}, 'identifier'),
    ('/v1/clusters/c1/actions/resize', {'node_count': 1, 'nodegroup': 2 ** 40},
     'could not be found'),
    ('/v1/clusters/c1/actions/resize', {'node_count': 1, 'nodes_to_remove': [1]},
     'nodes_to_remove'),
    ('/v1/clusters/c1/actions/upgrade', {'cluster_template': [1]}, 'identifier'),
    ('/v1/clusters', {'name': 'c2', 'cluster_template_id': 'tpl', 'node_count': 2 ** 40},
     'out of range'),
    ('/v1/clusters', {'name': 'c2', 'cluster_template_id': 'tpl', 'create_timeout': 2 ** 31},
     'out of range'),
    ('/v1/clustertemplates', dict(TPL, name='t2', docker_volume_size=2 ** 40), 'out of range'),
    ('/v1/clustertemplates', dict(TPL, name='t2', flavor_id='x' * 256),
     'maximum character requirement of 255'),
    ('/v1/clustertemplates', dict(TPL, name='t2', keypair_id=True), "Expected 'str'"),
    ('/v1/clustertemplates', dict(TPL, name='t2', labels={'a': {'b': 1}}), 'Label values'),
    ('/v1/clustertemplates', dict(TPL, name='t2', external_network_id='a\x00b'), 'NUL'),
    ('/v1/quotas', {'project_id': 'p' * 256, 'resource': 'Cluster', 'hard_limit': 1},
     'maximum character requirement'),
    ('/v1/clusters/c1/nodegroups', {'name': 'ng', 'node_count': 2 ** 31}, 'out of range'),
    # a plan of that many nodes would exhaust the playbook's memory
    ('/v1/clusters', {'name': 'c2', 'cluster_template_id': 'tpl', 'node_count': 5001},
     'at most 5000 nodes'),
    ('/v1/clusters/c1/actions/resize', {'node_count': 2 ** 31 - 1}, 'at most 5000 nodes'),
    ('/v1/clusters/c1/nodegroups', {'name': 'ng', 'node_count': 5001}, 'at most 5000 nodes'),
]


@pytest.fixture
def client(db_url, project, tmp_path):
    """The API on a store holding template tpl and cluster c1 as a finished create leaves
    them (written by the lifecycle calls the create's playbook makes, without the run)."""
    app = make_app(db_url, project, tmp_path, health_interval=0)
    store = app.extensions['magnum_store']
    scope = lifecycle.Scope(project_id='default', is_admin=True)
    lifecycle.create_template(store, TPL, scope)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       scope)
    lifecycle.end_operation(store, cluster, 'create', True)
    yield app.test_client()
    app.extensions['magnum_executor'].shutdown(wait=True)


def snapshot(client):
    return [call(client, 'GET', path, expect=200).json for path in (
        '/v1/clustertemplates', '/v1/clusters', '/v1/clusters/c1/nodegroups',
        '/v1/quotas?all_tenants=1', '/v1/federations')]


def test_malformed_bodies_change_nothing(client):
    before = snapshot(client)
    assert before[1]['clusters'][0]['status'] == 'CREATE_COMPLETE'
    for path in CREATES:
        for body in (0, 1.5, True, 'text', [], [1]):
            assert 'a JSON object is expected' in error_of(call(client, 'POST', path, body),
                                                           400), (path, body)
    assert 'a JSON object is expected' in error_of(
        call(client, 'PATCH', '/v1/quotas/p/Cluster', 3), 400)
    for path, body, message in BAD_VALUES:
        resp = call(client, 'POST', path, body)
        assert resp.status_code in (400, 404), (path, body, resp.get_data(as_text=True))
        assert message in error_of(resp, resp.status_code), (path, body)
    assert snapshot(client) == before


MALFORMED_URLS = [
    ('GET', '/v1/clusters/a%00b', None, 400, 'NUL'),
    ('DELETE', '/v1/clustertemplates/a%00b', None, 400, 'NUL'),
    ('GET', '/v1/quotas/p/a%00b', None, 400, 'NUL'),
    ('GET', '/v1/jobs/a%00b', None, 400, 'NUL'),
    ('GET', '/v1/clusters?sort_key=a%00b', None, 400, 'NUL'),
    ('GET', '/v1/clusters/' + 'a' * 3000, None, 404, 'could not be found'),
    ('DELETE', '/v1/clusters/c1/nodegroups/' + '9' * 30, None, 404, 'could not be found'),
    ('GET', '/v1/quotas?marker=zzz', None, 400, 'Invalid marker zzz'),
    ('GET', '/v1/quotas?marker=2147483648', None, 400, 'Invalid marker 2147483648'),
    ('GET', '/v1/quotas?marker=%C2%B2', None, 400, 'Invalid marker'),
    ('DELETE', '/v1/clusters/c1/nodegroups/%C2%B2', None, 404, 'could not be found'),
    ('GET', '/v1/clusters', {'X-Project-Id': 'p' * 256}, 400, 'X-Project-Id'),
]


def test_malformed_urls_change_nothing(client):
    before = snapshot(client)
    for method, path, headers, status, message in MALFORMED_URLS:
        resp = call(client, method, path, headers=headers)
        assert message in error_of(resp, status), (method, path)
    assert snapshot(client) == before


# Text no store keeps (a lone surrogate), in every string a create or a patch carries.
SURROGATE_BODIES = [
    ('POST', '/v1/clustertemplates', dict(TPL, name='t\ud800')),
    ('POST', '/v1/clustertemplates', dict(TPL, name='t3', labels={'k': 'v\udfff'})),
    ('POST', '/v1/clustertemplates', dict(TPL, name='t3', labels={'k\ud800': 'v'})),
    ('POST', '/v1/clusters', {'name': 'c2', 'cluster_template_id': 'tpl',
                              'keypair': '\ud800'}),
    ('POST', '/v1/clusters/c1/nodegroups', {'name': 'ng\ud800'}),
    ('POST', '/v1/federations', {'name': 'f\ud800', 'hostcluster_id': 'c1'}),
    ('POST', '/v1/quotas', {'project_id': '\ud800', 'resource': 'Cluster', 'hard_limit': 1}),
    ('POST', '/v1/certificates', {'cluster_uuid': 'c1', 'csr': '\ud800'}),
    ('PATCH', '/v1/clustertemplates/tpl', [{'op': 'replace', 'path': '/name',
                                            'value': '\ud800'}]),
    ('PATCH', '/v1/clusters/c1', [{'op': 'replace', 'path': '/node_count', 'value': '\ud800'}]),
]

OVER_LIMITS = [
    ('/v1/clustertemplates', dict(TPL, name='t4', labels=dict(
        ('k%d' % i, 'v') for i in range(1001))), 'At most 1000 labels'),
    ('/v1/clustertemplates', dict(TPL, name='t4', labels={'k': 'v' * 4097}),
     'at most 4096 characters'),
    ('/v1/clustertemplates', dict(TPL, name='t4', labels={'k' * 256: 'v'}), '1 to 255'),
    ('/v1/certificates', {'cluster_uuid': 'c1', 'csr': 'x', 'ca_cert_type': 5},
     'ca_cert_type'),
    ('/v1/certificates', {'cluster_uuid': 'c1', 'csr': ['x']}, 'csr'),
    ('/v1/clustertemplates', dict(TPL, name='t4', uuid='0e2c8a5c-9d6a-4c5b-8e8f-12345\n'),
     'Expected a uuid'),
]


def test_bad_text_depth_and_size_are_400_and_store_nothing(client):
    before = snapshot(client)
    for method, path, body in SURROGATE_BODIES:
        assert 'not valid Unicode' in error_of(call(client, method, path, body), 400), path
    for path, body, message in OVER_LIMITS:
        assert message in error_of(call(client, 'POST', path, body), 400), (path, message)
    deep = '[' * 100000 + ']' * 100000
    for depth_body in (deep[:200000], '{"labels": ' * 50 + '1' + '}' * 50):
        resp = client.post('/v1/clustertemplates', data=depth_body, headers=dict(
            LATEST, **{'Content-Type': 'application/json'}))
        assert resp.status_code in (400, 413), resp.status_code
        error_of(resp, resp.status_code)
    nested = client.post('/v1/clusters', data='{"labels": ' * 20 + '1' + '}' * 20,
                         headers=dict(LATEST, **{'Content-Type': 'application/json'}))
    assert 'nested deeper' in error_of(nested, 400)
    big = call(client, 'POST', '/v1/clustertemplates',
               dict(TPL, name='t5', labels={'k': 'v' * (200 * 1024)}))
    error_of(big, 413)
    assert snapshot(client) == before


def test_a_server_error_says_nothing_of_the_internals(db_url, project, tmp_path):
    app = make_app(db_url, project, tmp_path, start_executor=False)

    @app.get('/v1/explode')
    def explode():
        raise RuntimeError('SELECT key_pem FROM certificates -- secret')

    resp = app.test_client().get('/v1/explode', headers=LATEST)
    detail = error_of(resp, 500)
    assert 'key_pem' not in resp.get_data(as_text=True) and 'RuntimeError' not in detail
    assert detail.startswith('The server has either erred')
