"""The core as a hostile tenant meets it (issue #25): request data is never evaluated,
concurrent updates are never lost, one project learns nothing of another, roles and
policy are Magnum's, bad input is a 400 that stores nothing, repeated and cancelled work
does not linger."""

import os
import threading
import uuid as uuidlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import ApiServer, processes_holding, wait_for
from test_api import LATEST, call, error_of, make_app, wait_status

TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp'}


@pytest.fixture
def app(db_url, project, tmp_path):
    application = make_app(db_url, project, tmp_path)
    yield application
    application.extensions['magnum_executor'].shutdown(wait=True)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def sqlite_client(sqlite_url, project, tmp_path):
    """For tests where the store's backend makes no difference."""
    application = make_app(sqlite_url, project, tmp_path)
    yield application.test_client()
    application.extensions['magnum_executor'].shutdown(wait=True)


# ------------------------------------------------ 1. request data is data

def hostile_strings(marker):
    """Strings that would run something (touch ``marker``) if Jinja, a shell or a YAML
    loader ever evaluated them."""
    touch = "touch %s" % marker
    return [
        "{{ lookup('pipe', '%s') }}" % touch,
        "{%% if lookup('ansible.builtin.pipe', '%s') %%}x{%% endif %%}" % touch,
        "$(%s)" % touch,
        "`%s`" % touch,
        "'; %s; echo '" % touch,
        '"; %s; echo "' % touch,
        "line one\n{{ lookup('pipe', '%s') }}\nline three" % touch,
        "!!python/object/apply:os.system ['%s']" % touch,
        "!unsafe {{ lookup('pipe', '%s') }}" % touch,
        "{{ query('pipe', '%s') }}" % touch,
    ]


# Free-text fields of a template that the API stores as they are sent (those that reach a
# node's files are checked for what they are: tests/unit/test_node_values.py).
TEMPLATE_TEXT = ('keypair_id', 'external_network_id', 'fixed_network', 'fixed_subnet',
                 'flavor_id', 'master_flavor_id', 'tags', 'name')


def test_request_strings_are_never_evaluated(sqlite_client, tmp_path):
    """Every free string of every resource, through every operation that runs a playbook:
    stored and shown as sent, and nothing they name ever runs."""
    client = sqlite_client
    marker = tmp_path / 'evaluated'
    bad = hostile_strings(marker)
    # (a label's value has no control character: the one below is refused, in Magnum's shape)
    labels = dict(('hostile_%d' % i, s) for i, s in enumerate(bad) if '\n' not in s)
    for field, value in (('http_proxy', 'http://p:3128"\nExecStartPre=/bin/sh -c "id"\nX="'),
                         ('labels', {'hostile': bad[6]})):
        assert 'Invalid input for field/attribute %s.' % field in error_of(
            call(client, 'POST', '/v1/clustertemplates', dict(TPL, name='t', **{field: value})),
            400)

    def template(name, extra=None):
        body = dict(TPL, name=name, labels=dict(labels, kube_tag=extra or 'v1.30.0'))
        for i, field in enumerate(TEMPLATE_TEXT[:-1]):
            body[field] = bad[i % len(bad)]
        return body

    # A client-chosen uuid that is not a UUID is refused (it used to reach the extravars).
    for kind, body in (('clustertemplates', template('t0')),
                       ('clusters', {'name': 'c0', 'cluster_template_id': 't0'}),
                       ('federations', {'name': 'f0', 'hostcluster_id': 'c0'})):
        for value in bad[:2] + ['0e2c8a5c-9d6a-4c5b-8e8f-1234567890ab\n']:
            detail = error_of(call(client, 'POST', '/v1/%s' % kind, dict(body, uuid=value)), 400)
            assert 'Expected a uuid' in detail
    tpl = call(client, 'POST', '/v1/clustertemplates', template('t1'), expect=201).json
    for field in TEMPLATE_TEXT[:-1]:
        assert tpl[field] == template('t1')[field]
    assert tpl['labels'] == template('t1')['labels']
    call(client, 'POST', '/v1/clustertemplates', template('t2', 'v1.30.1'), expect=201)

    cluster_uuid = str(uuidlib.uuid4())
    call(client, 'POST', '/v1/clusters', {
        'name': 'c1', 'uuid': cluster_uuid, 'cluster_template_id': 't1', 'node_count': 2,
        'keypair': bad[0], 'labels': dict(labels, kube_tag='v1.30.0'),
        'discovery_url': bad[2], 'fixed_network': bad[6], 'flavor_id': bad[7]}, expect=202)
    assert wait_status(client, 'c1').json['status'] == 'CREATE_COMPLETE'
    shown = call(client, 'GET', '/v1/clusters/c1', expect=200).json
    assert shown['uuid'] == cluster_uuid and shown['keypair'] == bad[0]
    assert shown['labels'] == dict(labels, kube_tag='v1.30.0')
    assert shown['fixed_network'] == bad[6] and shown['discovery_url'] == bad[2]

    # Resize with hostile node names, a node group with hostile labels, CA rotation,
    # upgrade to a hostile template, then the federation's operations and the deletes.
    call(client, 'POST', '/v1/clusters/c1/actions/resize',
         {'node_count': 1, 'nodes_to_remove': [bad[0]]}, expect=202)
    wait_status(client, 'c1')  # the node is not there: the resize may fail, saying so
    call(client, 'POST', '/v1/clusters/c1/nodegroups', {
        'name': 'ng1', 'node_count': 1, 'labels': labels, 'flavor_id': bad[3],
        'image_id': 'debian-12', 'node_labels': {'k': bad[4]}}, expect=202)
    assert wait_status(client, 'c1').json['status'] == 'UPDATE_COMPLETE'
    group = call(client, 'GET', '/v1/clusters/c1/nodegroups/ng1', expect=200).json
    assert group['flavor_id'] == bad[3] and group['node_labels'] == {'k': bad[4]}
    call(client, 'PATCH', '/v1/certificates/c1', None, expect=202)
    assert wait_status(client, 'c1').json['status'] == 'UPDATE_COMPLETE'
    call(client, 'POST', '/v1/clusters/c1/actions/upgrade', {'cluster_template': 't2'},
         expect=202)
    assert wait_status(client, 'c1').json['status'] == 'UPDATE_COMPLETE'

    fed_uuid = str(uuidlib.uuid4())
    call(client, 'POST', '/v1/federations', {
        'name': 'f1', 'uuid': fed_uuid, 'hostcluster_id': 'c1', 'properties': labels},
        expect=202)
    wait_for(lambda: 'IN_PROGRESS' not in call(
        client, 'GET', '/v1/federations/f1').json['status'])
    fed = call(client, 'GET', '/v1/federations/f1', expect=200).json
    assert fed['uuid'] == fed_uuid and fed['properties'] == labels
    call(client, 'PATCH', '/v1/federations/f1',
         [{'op': 'add', 'path': '/properties/more', 'value': bad[0]}], expect=202)
    wait_for(lambda: 'IN_PROGRESS' not in call(
        client, 'GET', '/v1/federations/f1').json['status'])
    call(client, 'DELETE', '/v1/federations/f1', expect=204)
    wait_for(lambda: call(client, 'GET', '/v1/federations/f1').status_code == 404)
    call(client, 'DELETE', '/v1/clusters/c1/nodegroups/ng1', expect=204)
    assert wait_status(client, 'c1').json['status'] == 'UPDATE_COMPLETE'
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert wait_status(client, 'c1').status_code == 404
    assert not marker.exists(), 'a request string was evaluated'


# ---------------------------------------- 5. one project learns nothing of another

def as_project(project, roles='member'):
    return {'X-Project-Id': project, 'X-Roles': roles}


def test_markers_and_jobs_stay_within_the_callers_project(client):
    other = as_project('project-b')
    secret = call(client, 'POST', '/v1/clustertemplates',
                  dict(TPL, name='b-tpl', keypair_id='m-secret-kp'), other, expect=201).json
    mine = as_project('project-a')
    for name in ('a1', 'a2'):
        call(client, 'POST', '/v1/clustertemplates', dict(TPL, name=name, keypair_id='a'),
             mine, expect=201)
    # Another project's template is no marker: the page it would bound told its keypair.
    for sort_key in ('keypair_id', 'id', 'name'):
        resp = call(client, 'GET', '/v1/clustertemplates?sort_key=%s&marker=%s'
                    % (sort_key, secret['uuid']), headers=mine)
        assert 'ClusterTemplate %s could not be found' % secret['uuid'] in error_of(resp, 404)
    listed = call(client, 'GET', '/v1/clustertemplates?sort_key=keypair_id', headers=mine,
                  expect=200).json['clustertemplates']
    assert [t['name'] for t in listed] == ['a1', 'a2']
    first = listed[0]['uuid']
    page = call(client, 'GET', '/v1/clustertemplates?sort_key=name&marker=%s' % first,
                headers=mine, expect=200).json['clustertemplates']
    assert [t['name'] for t in page] == ['a2']
    # Only the fields Magnum sorts on: scalars of the resource.
    for kind, key in (('clustertemplates', 'labels'), ('clusters', 'node_addresses'),
                      ('clusters', 'facts'), ('clusters', 'driver'),
                      ('clustertemplates', 'nope')):
        assert 'invalid field for sorting' in error_of(
            call(client, 'GET', '/v1/%s?sort_key=%s' % (kind, key), headers=mine), 400)

    # Another project's job: a 404 that names nothing of it.
    call(client, 'POST', '/v1/clusters', {'name': 'bc', 'cluster_template_id': 'b-tpl'},
         other, expect=202)
    cluster = call(client, 'GET', '/v1/clusters/bc', headers=other, expect=200).json
    job = call(client, 'GET', '/v1/clusters/bc/jobs', headers=other,
               expect=200).json['jobs'][0]
    call(client, 'GET', '/v1/jobs/%s' % job['uuid'], headers=other, expect=200)
    resp = call(client, 'GET', '/v1/jobs/%s' % job['uuid'], headers=mine)
    assert error_of(resp, 404) == 'Job %s could not be found.' % job['uuid']
    assert cluster['uuid'] not in resp.get_data(as_text=True)
    wait_status(client, 'bc')


# --------------------------------------------------------- 2. no lost updates

@pytest.fixture
def two_apis(db_url, project, tmp_path):
    """Two API processes on one store."""
    servers = [ApiServer(db_url, project, tmp_path, workers=1,
                         args=['--health-interval', '0']).start() for _ in range(2)]
    yield servers
    for server in servers:
        server.stop()


def test_concurrent_patches_are_never_lost(two_apis):
    import requests
    first, second = two_apis
    requests.post(first.url + '/v1/clustertemplates', json=TPL, headers=LATEST,
                  timeout=60).raise_for_status()
    answers = {}

    def patch(i):
        server = two_apis[i % 2]
        resp = requests.patch(server.url + '/v1/clustertemplates/tpl', headers=LATEST,
                              json=[{'op': 'add', 'path': '/labels/k%d' % i, 'value': str(i)}],
                              timeout=120)
        answers[i] = resp.status_code

    with ThreadPoolExecutor(max_workers=24) as pool:
        list(pool.map(patch, range(200)))
    final = requests.get(first.url + '/v1/clustertemplates/tpl', headers=LATEST,
                         timeout=60).json()['labels']
    acknowledged = sorted(i for i, status in answers.items() if status == 200)
    assert set(answers.values()) <= {200, 409}, answers
    missing = [i for i in acknowledged if final.get('k%d' % i) != str(i)]
    assert not missing, 'acknowledged but lost: %s' % missing
    refused = [i for i, status in answers.items() if status == 409]
    assert not [i for i in refused if 'k%d' % i in final], 'a refused patch was written'
    assert len(acknowledged) >= 150, answers


# ------------------------- 3, 4, 8. references, one transaction, no repeated work

def jobs_of(app, operation):
    from api.core import jobs
    store = app.extensions['magnum_store']
    with store.read() as conn:
        table = jobs.Jobs(store).t
        return conn.execute(table.select().where(table.c.operation == operation)).fetchall()


def test_deletes_are_not_repeated_and_refused_for_a_host(app, client):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'host', 'cluster_template_id': 'tpl'},
         expect=202)
    assert wait_status(client, 'host').json['status'] == 'CREATE_COMPLETE'
    call(client, 'POST', '/v1/federations', {'name': 'f1', 'hostcluster_id': 'host'},
         expect=202)
    wait_for(lambda: 'IN_PROGRESS' not in call(client, 'GET', '/v1/federations/f1').json['status'])
    # The host of a federation stays while the federation does, as a member does.
    assert 'hosts federation f1' in error_of(call(client, 'DELETE', '/v1/clusters/host'), 409)
    assert call(client, 'GET', '/v1/clusters/host').json['status'] == 'CREATE_COMPLETE'

    # Ten DELETEs at once of one federation, then of one cluster: one job each.
    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(lambda _: call(client, 'DELETE', '/v1/federations/f1')
                                .status_code, range(10)))
    assert set(answers) <= {204, 404}, answers
    wait_for(lambda: call(client, 'GET', '/v1/federations/f1').status_code == 404)
    assert len(jobs_of(app, 'federation_delete')) == 1
    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(lambda _: call(client, 'DELETE', '/v1/clusters/host')
                                .status_code, range(10)))
    assert set(answers) <= {204, 404}, answers
    assert wait_status(client, 'host').status_code == 404
    assert len(jobs_of(app, 'delete')) == 1


def test_a_federation_and_the_delete_of_its_cluster_never_both_land(
        db_url, project, tmp_path, monkeypatch):
    """Two API processes: a federation's create on host X against X's delete, and a
    PATCH adding member M against M's delete, sent at once, round after round. One of
    each pair is refused: no federation ever names a cluster being deleted (on
    PostgreSQL both were accepted, leaving a federation no one could delete and a
    dangling member: issue #43)."""
    import threading

    from api.core import federations, lifecycle
    from api.executor import Executor
    # The jobs stay queued: what is looked at is what the requests recorded.
    monkeypatch.setattr(Executor, '_run_guarded', lambda self, job_uuid: None)
    apps = [make_app(db_url, project, tmp_path, health_interval=0) for _ in range(2)]
    clients = [app.test_client() for app in apps]
    store = apps[0].extensions['magnum_store']
    call(clients[0], 'POST', '/v1/clustertemplates', TPL, expect=201)
    scope = lifecycle.Scope(project_id='default', is_admin=True)

    def complete_cluster(name):
        cluster = lifecycle.record_cluster(store, {'name': name, 'cluster_template_id': 'tpl'},
                                           scope, settings={'check_quota': False})
        return store.update('cluster', cluster['uuid'], {'status': 'CREATE_COMPLETE'})

    def at_once(*requests_):
        barrier = threading.Barrier(len(requests_))

        def send(args):
            barrier.wait()
            return call(*args).status_code

        with ThreadPoolExecutor(max_workers=len(requests_)) as pool:
            return list(pool.map(send, requests_))

    staying = complete_cluster('staying')
    try:
        for i in range(24):
            host, member = complete_cluster('h%d' % i), complete_cluster('m%d' % i)
            created, deleted = at_once(
                (clients[0], 'POST', '/v1/federations', {'name': 'f%d' % i,
                                                         'hostcluster_id': host['uuid']}),
                (clients[1], 'DELETE', '/v1/clusters/%s' % host['uuid']))
            assert sorted([created, deleted]) in ([202, 409], [204, 400]), (created, deleted)

            fed = federations.create_federation(store, {'name': 'g%d' % i,
                                                        'hostcluster_id': staying['uuid']}, scope)
            store.update('federation', fed['uuid'], {'status': 'CREATE_COMPLETE'})
            patched, deleted = at_once(
                (clients[0], 'PATCH', '/v1/federations/%s' % fed['uuid'],
                 [{'op': 'add', 'path': '/member_ids/-', 'value': member['uuid']}]),
                (clients[1], 'DELETE', '/v1/clusters/%s' % member['uuid']))
            assert sorted([patched, deleted]) in ([202, 409], [204, 400]), (patched, deleted)
        # Every federation's clusters are there, and none is being deleted.
        for fed in store.find('federation'):
            for uuid in [fed['hostcluster_id']] + fed['member_ids']:
                assert store.get('cluster', uuid, by_name=False)['status'] == 'CREATE_COMPLETE'
    finally:
        for app in apps:
            app.extensions['magnum_executor'].shutdown(wait=True)


def test_a_federation_whose_host_is_gone_is_deleted(sqlite_client):
    """A delete always ends: a federation whose host cluster is gone (as the race above
    left them) deletes its record; it ended DELETE_FAILED "could not be found" for ever."""
    from api.core import federations, lifecycle
    client = sqlite_client
    store = client.application.extensions['magnum_store']
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    scope = lifecycle.Scope(project_id='default', is_admin=True)
    host = lifecycle.record_cluster(store, {'name': 'host', 'cluster_template_id': 'tpl'}, scope)
    store.update('cluster', host['uuid'], {'status': 'CREATE_COMPLETE'})
    fed = federations.create_federation(store, {'name': 'f1', 'hostcluster_id': 'host'}, scope)
    store.update('federation', fed['uuid'], {'status': 'CREATE_FAILED'})
    store.purge_cluster(host['uuid'])
    call(client, 'DELETE', '/v1/federations/f1', expect=204)
    wait_for(lambda: call(client, 'GET', '/v1/federations/%s' % fed['uuid']).status_code == 404)


def test_the_template_an_upgrade_moves_to_stays_until_the_upgrade_ends(sqlite_client):
    client = sqlite_client
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, labels={'kube_tag': 'v1.35.0'}),
         expect=201)
    call(client, 'POST', '/v1/clustertemplates',
         dict(TPL, name='newer', labels={'kube_tag': 'v1.36.0'}), expect=201)
    # The cluster's operations take 600 s (the test driver's label), but for the delete.
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl',
                                          'labels': {'test_sleep': '1'}}, expect=202)
    assert wait_status(client, 'c1').json['status'] == 'CREATE_COMPLETE'
    app = client.application
    store = app.extensions['magnum_store']
    cluster = call(client, 'GET', '/v1/clusters/c1', expect=200).json
    store.update('cluster', cluster['uuid'], {'labels': {'test_sleep': '600'}})
    call(client, 'POST', '/v1/clusters/c1/actions/upgrade', {'cluster_template': 'newer'},
         expect=202)
    # While the upgrade is queued or runs, its template is in use, as a cluster's is.
    assert 'is referenced by one or multiple clusters' in error_of(
        call(client, 'DELETE', '/v1/clustertemplates/newer'), 400)
    assert call(client, 'GET', '/v1/clustertemplates/newer').status_code == 200
    # Once the upgrade has ended (here cancelled by the cluster's delete), it can go.
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert wait_status(client, 'c1').status_code == 404
    call(client, 'DELETE', '/v1/clustertemplates/newer', expect=204)
    call(client, 'DELETE', '/v1/clustertemplates/tpl', expect=204)


def test_a_failed_request_changes_nothing(app, client, monkeypatch):
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl',
                                          'node_count': 2}, expect=202)
    assert wait_status(client, 'c1').json['status'] == 'CREATE_COMPLETE'
    executor = app.extensions['magnum_executor']

    def no_job(*_args, **_kwargs):
        raise RuntimeError('the job store is gone')

    # The job that would carry an operation out cannot be recorded: the operation's
    # status change is undone with it (it used to stay *_IN_PROGRESS for good).
    monkeypatch.setattr(executor.jobs, 'create', no_job)
    for method, path, body in (
            ('DELETE', '/v1/clusters/c1', None),
            ('POST', '/v1/clusters/c1/actions/resize', {'node_count': 1}),
            ('PATCH', '/v1/clusters/c1', [{'op': 'replace', 'path': '/node_count',
                                           'value': 3}]),
            ('POST', '/v1/clusters/c1/nodegroups', {'name': 'ng1'}),
            ('PATCH', '/v1/certificates/c1', None),
            ('POST', '/v1/clusters', {'name': 'c2', 'cluster_template_id': 'tpl'})):
        error_of(call(client, method, path, body), 500)
        shown = call(client, 'GET', '/v1/clusters/c1', expect=200).json
        assert shown['status'] == 'CREATE_COMPLETE' and shown['node_count'] == 2, path
    groups = call(client, 'GET', '/v1/clusters/c1/nodegroups', expect=200).json['nodegroups']
    assert sorted(g['name'] for g in groups) == ['default-master', 'default-worker']
    assert all(g['status'] == 'CREATE_COMPLETE' for g in groups), groups
    assert call(client, 'GET', '/v1/clusters/c2').status_code == 404
    monkeypatch.undo()

    # A cluster whose template is gone (a store from before deletes were checked
    # atomically) still deletes cleanly.
    store = app.extensions['magnum_store']
    store.delete('cluster_template', call(client, 'GET', '/v1/clustertemplates/tpl').json['uuid'])
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert wait_status(client, 'c1').status_code == 404


# ------------------------------------------------- 9. cancelled means stopped

def test_a_cancelled_job_leaves_no_process(sqlite_client):
    client = sqlite_client
    seconds = str(300 + uuidlib.uuid4().int % 600)  # a sleep no other test runs
    call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
    call(client, 'POST', '/v1/clusters', {'name': 'c1', 'cluster_template_id': 'tpl',
                                          'labels': {'test_sleep': seconds}}, expect=202)
    wait_for(lambda: processes_holding('sleep ' + seconds), timeout=120)
    create_job = call(client, 'GET', '/v1/clusters/c1/jobs', expect=200).json['jobs'][0]
    call(client, 'DELETE', '/v1/clusters/c1', expect=204)
    assert wait_status(client, 'c1').status_code == 404
    wait_for(lambda: not processes_holding('sleep ' + seconds), timeout=60)
    assert not processes_holding(create_job['uuid'])


def test_stopping_the_api_ends_its_jobs_processes(sqlite_url, project, tmp_path):
    import requests
    server = ApiServer(sqlite_url, project, tmp_path, workers=1,
                       args=['--health-interval', '0']).start()
    seconds = str(300 + uuidlib.uuid4().int % 600)
    try:
        requests.post(server.url + '/v1/clustertemplates', json=TPL, headers=LATEST,
                      timeout=60).raise_for_status()
        requests.post(server.url + '/v1/clusters', headers=LATEST, timeout=60, json={
            'name': 'c1', 'cluster_template_id': 'tpl',
            'labels': {'test_sleep': seconds}}).raise_for_status()
        wait_for(lambda: processes_holding('sleep ' + seconds), timeout=120)
    finally:
        server.stop()
    wait_for(lambda: not processes_holding('sleep ' + seconds), timeout=60)
    assert not processes_holding(str(tmp_path / 'jobs'))


def test_a_health_round_ends_with_its_clusters_delete_and_with_the_api(
        sqlite_url, project, tmp_path):
    """A health round blocked on nodes that stopped answering (on real guests a round held
    an SSH connection to a deleted server for 15 minutes, and outlived its API process)
    ends when its cluster's delete is accepted, and when the API stops; another cluster's
    round is left to run until then."""
    import subprocess
    import sys
    app = make_app(sqlite_url, project, tmp_path, health_interval=0)
    executor = app.extensions['magnum_executor']
    rounds = {}
    try:
        for cluster in ('c-deleted', 'c-other'):
            # stands for the round's ansible-playbook, which names its private directory
            rounds[cluster] = subprocess.Popen(
                [sys.executable, '-c', 'import time; time.sleep(600)', 'ansible-playbook',
                 '-e', '@%s/env/extravars' % (tmp_path / 'jobs' / 'health' / cluster)],
                start_new_session=True)
            executor._health_pending.add(cluster)
        executor.cancel_cluster_jobs('c-deleted')
        wait_for(lambda: rounds['c-deleted'].poll() is not None, timeout=60)
        assert rounds['c-other'].poll() is None
    finally:
        executor.shutdown(wait=True)
        wait_for(lambda: rounds['c-other'].poll() is not None, timeout=60)


def test_each_settled_clusters_health_round_is_one_conductors(
        sqlite_url, project, tmp_path, monkeypatch):
    """Two conductors (here: two API processes' embedded ones) on one store: each settled
    cluster's health round is started by exactly one of them, both have a share; when one
    stops, the other takes every cluster."""
    from api.core import lifecycle
    from api.executor import Executor
    started = []
    monkeypatch.setattr(Executor, '_run_health',
                        lambda self, cluster_uuid: started.append((self.service_id,
                                                                   cluster_uuid)))
    apps = [make_app(sqlite_url, project, tmp_path, health_interval=3600) for _ in range(2)]
    executors = [app.extensions['magnum_executor'] for app in apps]
    store = apps[0].extensions['magnum_store']
    call(apps[0].test_client(), 'POST', '/v1/clustertemplates', TPL, expect=201)
    scope = lifecycle.Scope(project_id='default', is_admin=True)
    settled = set()
    for i in range(30):
        cluster = lifecycle.record_cluster(store, {'name': 'c%d' % i, 'cluster_template_id':
                                                   'tpl'}, scope, settings={'check_quota': False})
        if i < 24:
            store.update('cluster', cluster['uuid'], {'status': 'CREATE_COMPLETE'})
            settled.add(cluster['uuid'])

    def round_of(*conductors):
        del started[:]
        for executor in conductors:
            executor._health_due = 0
            executor._schedule_health()
            executor._health_pool.shutdown(wait=True)
            executor._health_pending.clear()
            executor._health_pool = ThreadPoolExecutor(max_workers=1)
        return started[:]

    try:
        both = round_of(*executors)
        assert sorted(c for _s, c in both) == sorted(settled)   # each once, none in progress
        assert len(set(s for s, _c in both)) == 2
        executors[1].shutdown(wait=True)
        alone = round_of(executors[0])
        assert sorted(c for _s, c in alone) == sorted(settled)
    finally:
        for executor in executors:
            executor.shutdown(wait=True)


# ----------------------------------------------- 10. secrets sealed by default

def test_secrets_are_sealed_by_default(sqlite_url, project, tmp_path, monkeypatch):
    import os
    import stat

    from api.core import lifecycle, secrets, store as store_mod
    monkeypatch.delenv(secrets.ENV_KEY_FILE, raising=False)
    # A store from before: a CA key written in clear (no key file anywhere).
    before = store_mod.Store(sqlite_url, secrets=secrets.Secrets(None))
    scope = lifecycle.Scope(project_id='default', is_admin=True)
    lifecycle.create_template(before, TPL, scope)
    cluster = lifecycle.record_cluster(before, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       scope)
    lifecycle.ensure_ca(before, cluster)
    key_file = sqlite_url.split(':///', 1)[1] + '.key'
    assert not os.path.exists(key_file)

    app = make_app(sqlite_url, project, tmp_path, start_executor=False)
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    store = app.extensions['magnum_store']
    assert store.secrets.key_file == key_file
    with store.read() as conn:
        raw = [row[0] for row in conn.execute(store.t['certificates'].select().with_only_columns(
            store.t['certificates'].c.key_pem))]
    assert raw and all(secrets.is_sealed(value) for value in raw), 'a key lies in clear'
    # The modules (a playbook's, or ansible-playbook's own) find the same keys.
    assert 'PRIVATE KEY' in store_mod.Store(sqlite_url).certificate(cluster['uuid'])['key_pem']
    # A second start keeps the key file it made.
    with open(key_file) as handle:
        first = handle.read()
    make_app(sqlite_url, project, tmp_path, start_executor=False)
    with open(key_file) as handle:
        assert handle.read() == first


def test_no_kept_job_file_holds_the_stores_url(db_url, project, tmp_path, monkeypatch):
    """The store's URL (a PostgreSQL one holds its password) reaches a job through a file
    removed with the job, never its environment: ansible-runner keeps a run's
    environment in artifacts/*/command (and env/envvars of a failed run). Issue #43."""
    # An operator who started the API with MAGNUM_DB_URL: the jobs inherit it no more.
    monkeypatch.setenv('MAGNUM_DB_URL', db_url)
    app = make_app(db_url, project, tmp_path)
    client = app.test_client()
    try:
        call(client, 'POST', '/v1/clustertemplates', TPL, expect=201)
        call(client, 'POST', '/v1/clusters', {'name': 'ok', 'cluster_template_id': 'tpl'},
             expect=202)
        call(client, 'POST', '/v1/clusters', {'name': 'bad', 'cluster_template_id': 'tpl',
                                              'labels': {'test_fail': 'on purpose'}},
             expect=202)
        assert wait_status(client, 'ok').json['status'] == 'CREATE_COMPLETE'
        assert wait_status(client, 'bad').json['status'] == 'CREATE_FAILED'
        call(client, 'DELETE', '/v1/clusters/ok', expect=204)
        assert wait_status(client, 'ok').status_code == 404
    finally:
        app.extensions['magnum_executor'].shutdown(wait=True)
    secret = db_url.split('://', 1)[1]   # user:password@host/db, or the SQLite path
    kept = [path for path in (tmp_path / 'jobs').rglob('*') if path.is_file()]
    assert any(path.name == 'command' for path in kept)   # the runs' files are there
    holding = [str(path) for path in kept if secret in path.read_text(errors='replace')]
    assert holding == []


# ------------------------------------------- 6. roles and policy, as Magnum's

READ, WRITE, ADMIN_ONLY = 'read', 'write', 'admin'
# Each request, with what Magnum's default policy asks of it: READ needs the project's
# reader role, WRITE its member role, ADMIN_ONLY the admin role (magnum/common/policies).
POLICY_MATRIX = [
    ('GET', '/v1/clustertemplates', None, READ),
    ('GET', '/v1/clustertemplates/detail', None, READ),
    ('GET', '/v1/clustertemplates/t1', None, READ),
    ('POST', '/v1/clustertemplates', dict(TPL, name='t9'), WRITE),
    ('POST', '/v1/clustertemplates', dict(TPL, name='t9', public=True), ADMIN_ONLY),
    ('PATCH', '/v1/clustertemplates/t1', [{'op': 'replace', 'path': '/name', 'value': 't1'}],
     WRITE),
    # (values that change nothing: each request leaves the records as they were)
    ('PATCH', '/v1/clustertemplates/t1', [{'op': 'replace', 'path': '/public', 'value': False}],
     ADMIN_ONLY),
    ('PATCH', '/v1/clustertemplates/t1', [{'op': 'replace', 'path': '/hidden', 'value': False}],
     ADMIN_ONLY),
    ('DELETE', '/v1/clustertemplates/t1', None, WRITE),  # in use: refused after the policy
    ('GET', '/v1/clusters', None, READ),
    ('GET', '/v1/clusters/detail', None, READ),
    ('GET', '/v1/clusters/c1', None, READ),
    ('POST', '/v1/clusters', {'name': 'c9', 'cluster_template_id': 't1'}, WRITE),
    ('PATCH', '/v1/clusters/c1', [{'op': 'replace', 'path': '/node_count', 'value': 2}], WRITE),
    ('POST', '/v1/clusters/c1/actions/resize', {'node_count': 2}, WRITE),
    ('POST', '/v1/clusters/c1/actions/upgrade', {'cluster_template': 't1'}, WRITE),
    ('DELETE', '/v1/clusters/c1', None, WRITE),
    ('GET', '/v1/clusters/c1/nodegroups', None, READ),
    ('GET', '/v1/clusters/c1/nodegroups/default-worker', None, READ),
    ('POST', '/v1/clusters/c1/nodegroups', {'name': 'ng9'}, WRITE),
    ('PATCH', '/v1/clusters/c1/nodegroups/default-worker',
     [{'op': 'replace', 'path': '/max_node_count', 'value': 9}], WRITE),
    ('DELETE', '/v1/clusters/c1/nodegroups/default-worker', None, WRITE),
    ('GET', '/v1/certificates/c1', None, READ),
    ('POST', '/v1/certificates', {'cluster_uuid': 'c1', 'csr': 'not a csr'}, WRITE),
    ('PATCH', '/v1/certificates/c1', None, WRITE),
    ('GET', '/v1/federations', None, READ),
    ('GET', '/v1/federations/f1', None, READ),
    ('POST', '/v1/federations', {'name': 'f9', 'hostcluster_id': 'c1'}, WRITE),
    ('PATCH', '/v1/federations/f1', [{'op': 'add', 'path': '/properties/k', 'value': 'v'}],
     WRITE),
    ('DELETE', '/v1/federations/f1', None, WRITE),
    ('GET', '/v1/federations/f1/external_clusters', None, READ),
    ('POST', '/v1/federations/f1/external_clusters', {'name': 'x'}, WRITE),  # 400 once allowed
    ('DELETE', '/v1/federations/f1/external_clusters/nope', None, WRITE),
    ('GET', '/v1/stats', None, READ),
    ('GET', '/v1/quotas/p1/Cluster', None, READ),
    ('GET', '/v1/quotas', None, ADMIN_ONLY),
    ('POST', '/v1/quotas', {'project_id': 'p9', 'resource': 'Cluster', 'hard_limit': 1},
     ADMIN_ONLY),
    ('PATCH', '/v1/quotas/p1/Cluster', {'hard_limit': 5}, ADMIN_ONLY),
    ('DELETE', '/v1/quotas/p1/Cluster', None, ADMIN_ONLY),
    ('GET', '/v1/mservices', None, ADMIN_ONLY),
]
# Magnum's default for a resize is the project's member, admin or not (there is no
# cluster:resize_all_projects): an admin of another project is refused.
MEMBER_OF_THE_PROJECT_ONLY = (('POST', '/v1/clusters/c1/actions/resize'),)
# Magnum checks a create's body (and finds a cluster's template, a CSR's cluster) before
# its policy: a caller refused may first hear what is wrong with the body (400), as from
# Magnum - a CSR's cluster not found is its deliberate 400, not a 404.
VALIDATED_BEFORE_POLICY = (('POST', '/v1/clusters'), ('POST', '/v1/clustertemplates'),
                           ('POST', '/v1/certificates'))
ALLOWED = {'reader': (READ,), 'member': (READ, WRITE), 'admin': (READ, WRITE, ADMIN_ONLY),
           '': ()}


@pytest.fixture
def policy_app(db_url, project, tmp_path):
    """Project p1's template t1, cluster c1 (created by user u1),
    federation f1 and quota, written by the lifecycle calls; no job runs (no executor:
    an authorized operation ends in 503, and its transaction changes nothing)."""
    from api.core import federations, lifecycle
    app = make_app(db_url, project, tmp_path, start_executor=False)
    store = app.extensions['magnum_store']
    scope = lifecycle.Scope(project_id='p1', user_id='u1')
    lifecycle.create_template(store, dict(TPL, name='t1'), scope)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 't1'},
                                       scope)
    lifecycle.end_operation(store, cluster, 'create', True)
    lifecycle.ensure_ca(store, cluster)
    federations.create_federation(store, {'name': 'f1', 'hostcluster_id': 'c1'}, scope)
    store.set_quota('p1', 'Cluster', 10, create=True)
    return app


def test_roles_and_projects_meet_magnums_default_policy(policy_app):
    client = policy_app.test_client()
    for role, allowed in sorted(ALLOWED.items()):
        for project in ('p1', 'p2'):
            headers = {'X-Project-Id': project, 'X-Roles': role, 'X-User-Id': 'u1'}
            for method, path, body, needs in POLICY_MATRIX:
                status = call(client, method, path, body, headers).status_code
                own_or_admin = project == 'p1' or role == 'admin'
                where = (role or 'no role', project, method, path, status)
                if project == 'p2' and role == 'admin' and \
                        (method, path) in MEMBER_OF_THE_PROJECT_ONLY:
                    assert status == 403, where
                elif needs not in allowed:
                    # refused; another project's record is not even found
                    refused = (403,) if own_or_admin else (403, 404)
                    if (method, path) in VALIDATED_BEFORE_POLICY:
                        refused += (400,)
                    assert status in refused, where
                elif needs == ADMIN_ONLY or own_or_admin or path.count('/') == 2 or \
                        path.endswith('/detail'):
                    assert status not in (401, 403), where
                else:  # another project's record: refused, or not even found
                    assert status in (403, 404) + (
                        (400,) if (method, path) in VALIDATED_BEFORE_POLICY else ()), where
    # Nothing an authorized request started changed anything (no executor).
    admin = {'X-Project-Id': 'p1', 'X-Roles': 'admin'}
    assert call(client, 'GET', '/v1/clusters/c1', None, admin).json['status'] == \
        'CREATE_COMPLETE'


def test_a_federation_acts_only_on_clusters_the_caller_may_update(db_url, project, tmp_path):
    """The federation spec's special policy: creating a federation on a host, joining
    and unjoining a member need `federation:*` on the federation and `cluster:update` on
    each cluster it acts on (an operator's policy file tightens that one rule); another
    project's cluster is not even found but by an admin; the host and a joining member
    must be Kubernetes clusters whose last operation completed."""
    from api.core import federations, lifecycle
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text('"cluster:update": "role:admin or role:cluster-admin"\n')
    app = make_app(db_url, project, tmp_path, policy_file=str(policy_file),
                   start_executor=False)
    store = app.extensions['magnum_store']
    made = {}
    for project_id, name, coe, complete in (('p1', 'host', 'kubernetes', True),
                                            ('p1', 'm1', 'kubernetes', True),
                                            ('p1', 'busy', 'kubernetes', False),
                                            ('p1', 'sw', 'swarm', True),
                                            ('p2', 'other', 'kubernetes', True)):
        scope = lifecycle.Scope(project_id=project_id, user_id='u1')
        template = '%s-%s' % (project_id, coe)
        if not store.find('cluster_template', name=template):
            lifecycle.create_template(store, dict(TPL, name=template, coe=coe), scope)
        made[name] = lifecycle.record_cluster(
            store, {'name': name, 'cluster_template_id': template}, scope)
        if complete:
            lifecycle.end_operation(store, made[name], 'create', True)
    fed = federations.create_federation(store, {'name': 'f1', 'hostcluster_id': 'host'},
                                        lifecycle.Scope(project_id='p1', user_id='u1'))
    store.update('federation', fed['uuid'], {'status': 'CREATE_COMPLETE'})
    client = app.test_client()
    member = {'X-Project-Id': 'p1', 'X-Roles': 'member', 'X-User-Id': 'u1'}
    cluster_admin = dict(member, **{'X-Roles': 'member,cluster-admin'})
    admin = {'X-Project-Id': 'p1', 'X-Roles': 'admin', 'X-User-Id': 'u9'}

    def join(who, cluster):
        return call(client, 'PATCH', '/v1/federations/f1',
                    [{'op': 'add', 'path': '/member_ids/-', 'value': cluster}], who)

    # A member of the project may update the federation, not (by this policy) the cluster.
    assert 'cluster:update' in error_of(join(member, 'm1'), 403)
    assert 'cluster:update' in error_of(call(client, 'POST', '/v1/federations', {
        'name': 'f2', 'hostcluster_id': 'host'}, member), 403)
    assert call(client, 'PATCH', '/v1/federations/f1', [
        {'op': 'add', 'path': '/properties/dns', 'value': 'cluster.local'}],
        member).status_code == 503   # allowed: only the job runner is missing here
    assert join(cluster_admin, 'm1').status_code == 503
    # Another project's cluster: not found, but by an admin (cluster:update_all_projects).
    assert 'could not be found' in error_of(join(cluster_admin, 'other'), 404)
    assert join(admin, made['other']['uuid']).status_code == 503
    # What can host or join: Kubernetes clusters, done with their last operation.
    assert 'only Kubernetes clusters can host or join a federation' in error_of(
        join(cluster_admin, 'sw'), 400)
    assert 'Cluster busy is CREATE_IN_PROGRESS' in error_of(join(cluster_admin, 'busy'), 400)
    assert 'only Kubernetes clusters' in error_of(call(client, 'POST', '/v1/federations', {
        'name': 'f2', 'hostcluster_id': 'sw'}, cluster_admin), 400)
    # Nothing of the refused (or runner-less) requests was kept.
    fed = call(client, 'GET', '/v1/federations/f1', None, member).json
    assert fed['member_ids'] == [] and fed['properties'] == {}
    assert fed['status'] == 'CREATE_COMPLETE'


def within(seconds, fn):
    """fn()'s result, or its exception; a failure when it has not returned in ``seconds``
    (a daemon thread: a call that hangs does not hold the test run)."""
    outcome = {}

    def run():
        try:
            outcome['value'] = fn()
        except Exception as exc:
            outcome['error'] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, 'no answer within %d s' % seconds
    if 'error' in outcome:
        raise outcome['error']
    return outcome['value']


def test_a_policy_file_overrides_magnums_defaults(db_url, project, tmp_path):
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text('"cluster:create": "role:admin"\n'
                           '"clustertemplate:publish": "rule:admin_or_project_member"\n')
    app = make_app(db_url, project, tmp_path, policy_file=str(policy_file),
                   start_executor=False)
    client = app.test_client()
    member = {'X-Project-Id': 'p1', 'X-Roles': 'member'}
    call(client, 'POST', '/v1/clustertemplates', dict(TPL, public=True), member, expect=201)
    assert 'cluster:create' in error_of(call(client, 'POST', '/v1/clusters', {
        'name': 'c1', 'cluster_template_id': 'tpl'}, member), 403)
    with pytest.raises(Exception, match='cannot be read'):
        make_app(db_url, project, tmp_path, policy_file=str(tmp_path / 'missing.yaml'),
                 start_executor=False)
    for text, why in (('', 'is empty'), ('"cluster:create": [', 'not valid YAML'),
                      ('- a list', 'not a mapping')):
        policy_file.write_text(text)
        with pytest.raises(Exception, match=why):
            make_app(db_url, project, tmp_path, policy_file=str(policy_file),
                     start_executor=False)
    # only a regular file is read, never one that would hold the start (a FIFO)
    fifo = tmp_path / 'fifo.yaml'
    os.mkfifo(fifo)
    with pytest.raises(Exception, match='cannot be read'):
        within(30, lambda: make_app(db_url, project, tmp_path, policy_file=str(fifo),
                                    start_executor=False))


def test_a_policy_file_changed_at_run_time_never_widens_access(sqlite_url, project, tmp_path):
    """The file is read again when its content changes; gone, unreadable, empty or
    invalid, it never replaces the last good rules (the defaults would let a member
    list clusters): issue #43."""
    policy_file = tmp_path / 'policy.yaml'
    strict = '"cluster:get_all": "role:admin"\n'
    policy_file.write_text(strict)
    app = make_app(sqlite_url, project, tmp_path, policy_file=str(policy_file),
                   start_executor=False)
    client = app.test_client()
    member = {'X-Project-Id': 'p1', 'X-Roles': 'member'}

    def listing():
        return call(client, 'GET', '/v1/clusters', None, member).status_code

    assert listing() == 403
    moved = tmp_path / 'moved.yaml'
    policy_file.rename(moved)
    assert listing() == 403
    moved.rename(policy_file)
    assert listing() == 403
    for broken in ('', '"cluster:get_all": [', '- a list', '"cluster:get_all": 3'):
        policy_file.write_text(broken)
        assert listing() == 403, broken
    # A change keeping the file's size and time is still seen (content, not mtime).
    stamp = policy_file.stat().st_mtime_ns
    policy_file.write_text('"cluster:get_all": "role:member"\n')
    os.utime(policy_file, ns=(stamp, stamp))
    assert listing() == 200
    policy_file.write_text('"cluster:get_all": "role:admin"\n')
    os.utime(policy_file, ns=(stamp, stamp))
    assert listing() == 403
    # A FIFO, or a file too large, in its place: the last good rules, without waiting
    # (a FIFO opened for reading used to hold every request, GET /v1/ included).
    policy_file.unlink()
    os.mkfifo(policy_file)
    assert within(30, listing) == 403
    assert within(30, lambda: call(client, 'GET', '/v1/').status_code) == 200
    policy_file.unlink()
    policy_file.write_text('"cluster:get_all": "role:member"\n' + '#' * (1024 * 1024))
    assert listing() == 403
