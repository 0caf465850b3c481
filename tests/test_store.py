"""The store on SQLite and PostgreSQL: migrations, CRUD, paging, atomic transitions,
concurrent writers in separate processes."""

import multiprocessing

import pytest
import sqlalchemy as sa

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    jobs, lifecycle, secrets, states, store as store_mod, tls)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, NotFound, OperationNotAllowed, ResourceLimitExceeded)
# The writers spawned below import this module, not conftest: the driver registry's import
# hands their core its drivers, as every entry point's does.
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import DRIVERS

SCOPE = lifecycle.Scope('p1')
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'k'}


def make(url):
    store = store_mod.Store(url)
    tpl = lifecycle.create_template(store, dict(TPL), SCOPE)
    assert tpl['driver'] == DRIVERS.find('kubernetes', 'vm', 'debian').name
    return store, tpl


def settle(store, cluster_uuid, operation):
    """The operation's success written as its playbook's last step writes it."""
    store.update('cluster', cluster_uuid, {'status': states.final_status(operation, True),
                                           'status_reason': None})


def test_migrations_are_versioned_and_idempotent(db_url):
    store = store_mod.Store(db_url)
    assert store.schema_version() == store_mod.MIGRATIONS[-1][0]
    again = store_mod.Store(db_url)  # a second process start does nothing more
    assert again.schema_version() == store.schema_version()
    inspector = sa.inspect(store.engine)
    tables = set(inspector.get_table_names())
    assert {'cluster_templates', 'clusters', 'nodegroups', 'federations', 'quotas',
            'certificates', 'credentials', 'jobs', 'job_events', 'services',
            'schema_version'} <= tables
    cols = set(c['name'] for c in inspector.get_columns('clusters'))
    assert {'uuid', 'status', 'labels', 'health_status_reason', 'driver'} <= cols
    # what the API looks up by is indexed (a show stays flat as the store grows)
    indexed = dict((t, set(i['column_names'][0] for i in inspector.get_indexes(t)))
                   for t in ('clusters', 'cluster_templates', 'nodegroups', 'jobs'))
    assert {'project_id', 'name', 'cluster_template_id'} <= indexed['clusters']
    assert {'project_id', 'name'} <= indexed['cluster_templates']
    assert 'cluster_id' in indexed['nodegroups'] and 'cluster_id' in indexed['jobs']


def test_records_roundtrip_types(db_url):
    store, tpl = make(db_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl',
                                               'labels': {'a': 'b'}, 'node_count': 3}, SCOPE)
    got = store.get('cluster', 'c1')
    assert got['labels'] == {'a': 'b'} and got['node_count'] == 3
    assert got['floating_ip_enabled'] is True and got['uuid'] == cluster['uuid']
    groups = store.find('nodegroup', cluster_id=cluster['uuid'])
    assert sorted(g['name'] for g in groups) == ['default-master', 'default-worker']
    assert store.get('cluster_template', tpl['uuid'])['labels'] == {}


def test_names_and_uuids(db_url):
    store, tpl = make(db_url)
    lifecycle.create_template(store, dict(TPL), SCOPE)
    with pytest.raises(Conflict, match='Multiple'):
        store.get('cluster_template', 'tpl')
    assert store.get('cluster_template', tpl['uuid'])['uuid'] == tpl['uuid']
    with pytest.raises(NotFound, match='ClusterTemplate nope could not be found'):
        store.get('cluster_template', 'nope')


def test_paging_with_marker_and_sort(db_url):
    store, _tpl = make(db_url)
    for i in range(5):
        lifecycle.record_cluster(store, {'name': 'c%d' % i, 'cluster_template_id': 'tpl',
                                         'node_count': 5 - i}, SCOPE)
    first = store.page('cluster', limit=2)
    assert [c['name'] for c in first] == ['c0', 'c1']
    rest = store.page('cluster', limit=10, marker=first[-1]['uuid'])
    assert [c['name'] for c in rest] == ['c2', 'c3', 'c4']
    by_count = store.page('cluster', sort_key='node_count', sort_dir='asc', limit=2)
    assert [c['name'] for c in by_count] == ['c4', 'c3']
    after = store.page('cluster', sort_key='node_count', sort_dir='asc', limit=2,
                       marker=by_count[-1]['uuid'])
    assert [c['name'] for c in after] == ['c2', 'c1']


def test_quota_enforced(db_url):
    store, _tpl = make(db_url)
    store.set_quota('p1', 'Cluster', 1, create=True)
    lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'}, SCOPE)
    with pytest.raises(ResourceLimitExceeded):
        lifecycle.record_cluster(store, {'name': 'c2', 'cluster_template_id': 'tpl'}, SCOPE)
    assert len(store.find('cluster')) == 1 and len(store.find('nodegroup')) == 2


def test_transitions_are_compare_and_set(db_url):
    store, _tpl = make(db_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    settle(store, cluster['uuid'], 'create')
    store.start_operation(cluster['uuid'], 'resize')
    with pytest.raises(OperationNotAllowed, match='not allowed until'):
        store.start_operation(cluster['uuid'], 'upgrade')
    with pytest.raises(OperationNotAllowed, match='changed status'):
        store.update('cluster', cluster['uuid'], {'status': 'UPDATE_COMPLETE'},
                     expect_status=states.CREATE_COMPLETE)
    store.start_operation(cluster['uuid'], 'delete')  # delete is always allowed
    # the superseded job can no longer end its operation
    with pytest.raises(Conflict, match='refusing to end resize'):
        lifecycle.end_operation(store, store.get('cluster', 'c1'), 'resize', True)


def test_upgrade_moves_node_groups_to_the_new_image(db_url):
    """Groups on the old template's image follow the new template's; a group given an
    image of its own keeps it; an upgrade of one group moves only that group."""
    store, tpl = make(db_url)
    lifecycle.create_template(store, dict(TPL, name='tpl2', image_id='debian-12-r2'), SCOPE)
    lifecycle.create_template(store, dict(TPL, name='tpl3', image_id='debian-12-r3'), SCOPE)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    settle(store, cluster['uuid'], 'create')
    cluster = store.get('cluster', 'c1')
    for name, image in (('own', 'debian-12-gpu'), ('plain', None)):
        lifecycle.create_nodegroup(store, cluster, {'name': name, 'image_id': image}, SCOPE)
        settle(store, cluster['uuid'], 'nodegroup_create')

    def images():
        groups = store.find('nodegroup', cluster_id=cluster['uuid'])
        return dict((g['name'], g['image_id']) for g in groups)
    started, new, _group = lifecycle.start_upgrade(store, store.get('cluster', 'c1'), 'tpl2',
                                                   SCOPE)
    lifecycle.end_operation(store, started, 'upgrade', True, template_id=new['uuid'])
    assert images() == {'default-master': 'debian-12-r2', 'default-worker': 'debian-12-r2',
                        'own': 'debian-12-gpu', 'plain': 'debian-12-r2'}
    started, new, group = lifecycle.start_upgrade(store, store.get('cluster', 'c1'), 'tpl3',
                                                  SCOPE, nodegroup='plain')
    lifecycle.end_operation(store, started, 'upgrade', True, nodegroup=group['uuid'],
                            template_id=new['uuid'])
    assert images() == {'default-master': 'debian-12-r2', 'default-worker': 'debian-12-r2',
                        'own': 'debian-12-gpu', 'plain': 'debian-12-r3'}
    # A failed upgrade changes no image.
    started, new, _group = lifecycle.start_upgrade(store, store.get('cluster', 'c1'), 'tpl',
                                                   SCOPE)
    lifecycle.end_operation(store, started, 'upgrade', False, reason='x', template_id=new['uuid'])
    assert images()['default-worker'] == 'debian-12-r2'


def _race_start(url, uuid, queue):
    store = store_mod.Store(url)
    try:
        store.start_operation(uuid, 'resize')
        queue.put('won')
    except OperationNotAllowed:
        queue.put('refused')


def _race_create(url, name, queue):
    store = store_mod.Store(url)
    try:
        lifecycle.record_cluster(store, {'name': name, 'cluster_template_id': 'tpl'}, SCOPE)
        queue.put('created')
    except ResourceLimitExceeded:
        queue.put('over quota')


def _race_create_from(url, template, prefix, queue):
    store = store_mod.Store(url)
    outcomes = []
    for i in range(6):
        try:
            lifecycle.record_cluster(store, {'name': '%s-%d' % (prefix, i),
                                             'cluster_template_id': template}, SCOPE)
            outcomes.append('created')
        except Invalid:  # the template is gone (looked up, or gone before the insert)
            outcomes.append('no template')
        except Exception as exc:  # anything else is the test's failure, said by the parent
            outcomes.append('error: %r' % exc)
    queue.put(' '.join(outcomes))


def _race_delete_template(url, template, _prefix, queue):
    store = store_mod.Store(url)
    for _ in range(200):
        try:
            lifecycle.delete_template(store, store.get('cluster_template', template))
            queue.put('deleted')
            return
        except Invalid:  # in use (for now)
            continue
        except NotFound:
            break
    queue.put('kept')


def _run_parallel(target, args_list):
    ctx = multiprocessing.get_context('spawn')
    queue = ctx.Queue()
    procs = [ctx.Process(target=target, args=args + (queue,)) for args in args_list]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(300)
    return sorted(queue.get(timeout=60) for _ in procs)


def test_concurrent_writers_one_transition_wins(db_url):
    store, _tpl = make(db_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    settle(store, cluster['uuid'], 'create')
    results = _run_parallel(_race_start, [(db_url, cluster['uuid'])] * 6)
    assert results.count('won') == 1 and results.count('refused') == 5
    assert store.get('cluster', 'c1')['status'] == states.UPDATE_IN_PROGRESS


def test_concurrent_creates_respect_quota(db_url):
    store, _tpl = make(db_url)
    store.set_quota('p1', 'Cluster', 3, create=True)
    results = _run_parallel(_race_create, [(db_url, 'c%d' % i) for i in range(6)])
    assert results.count('created') == 3 and results.count('over quota') == 3
    assert len(store.find('cluster')) == 3


def test_a_template_is_never_deleted_under_a_cluster_being_created(db_url):
    store, _tpl = make(db_url)
    store.set_quota('p1', 'Cluster', 1000, create=True)
    for round_ in range(3):
        name = 'race%d' % round_
        template = lifecycle.create_template(store, dict(TPL, name=name), SCOPE)
        ctx = multiprocessing.get_context('spawn')
        queue = ctx.Queue()
        procs = [ctx.Process(target=_race_delete_template, args=(db_url, name, 'd', queue))]
        procs += [ctx.Process(target=_race_create_from, args=(db_url, name, '%s-%d' % (
            name, i), queue)) for i in range(3)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(300)
        outcomes = ' '.join(queue.get(timeout=60) for _ in procs)
        assert 'error' not in outcomes, outcomes
        using = store.find('cluster', cluster_template_id=template['uuid'])
        exists = bool(store.find('cluster_template', uuid=template['uuid']))
        assert exists or not using, 'clusters left pointing at a deleted template'


def test_certificates_private_and_replaceable(db_url, tmp_path):
    store, _tpl = make(db_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    changed, first = lifecycle.ensure_ca(store, cluster)
    assert changed and 'BEGIN CERTIFICATE' in first['cert_pem']
    assert lifecycle.ensure_ca(store, cluster)[0] is False
    changed, second = lifecycle.ensure_ca(store, cluster, rotate=True)
    assert changed and second['cert_pem'] != first['cert_pem']
    if db_url.startswith('sqlite'):
        import os
        import stat
        mode = os.stat(db_url.split(':///', 1)[1]).st_mode
        assert not mode & (stat.S_IROTH | stat.S_IRGRP), 'store must not be world-readable'


def test_a_store_of_schema_1_gains_the_credentials_table(db_url):
    store = store_mod.Store(db_url)
    with store.write() as conn:
        store.t['credentials'].drop(conn)
        conn.execute(store.meta.tables['schema_version'].delete().where(
            store.meta.tables['schema_version'].c.version == 2))
    again = store_mod.Store(db_url)
    assert again.schema_version() == store_mod.MIGRATIONS[-1][0]
    assert again.credential('nope') is None


def test_a_store_of_schema_5_keeps_its_credentials_as_application_credentials(db_url):
    store, _tpl = make(db_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    with store.write() as conn:
        conn.execute(sa.text('ALTER TABLE credentials DROP COLUMN kind'))
        conn.execute(store.meta.tables['schema_version'].delete().where(
            store.meta.tables['schema_version'].c.version == 6))
        conn.execute(sa.text("INSERT INTO credentials (cluster_uuid, credential_id, secret, "
                             "retired) VALUES (:c, 'old', 's', false)"), {'c': cluster['uuid']})
    again = store_mod.Store(db_url)
    assert again.schema_version() == store_mod.MIGRATIONS[-1][0]
    assert again.credential(cluster['uuid'])['credential_id'] == 'old'
    assert again.credential(cluster['uuid'], kind=store_mod.TRUST) is None


def test_a_store_of_schema_2_gains_row_versions(db_url):
    store, tpl = make(db_url)
    with store.write() as conn:
        for table in ('cluster_templates', 'clusters', 'nodegroups', 'federations'):
            conn.execute(sa.text('ALTER TABLE %s DROP COLUMN row_version' % table))
        conn.execute(store.meta.tables['schema_version'].delete().where(
            store.meta.tables['schema_version'].c.version == 3))
    again = store_mod.Store(db_url)
    assert again.schema_version() == store_mod.MIGRATIONS[-1][0]
    assert again.get('cluster_template', tpl['uuid'])['row_version'] == 0
    changed = again.modify('cluster_template', tpl['uuid'], lambda t: {'name': 'renamed'})
    assert changed['name'] == 'renamed' and changed['row_version'] == 1


def test_a_store_of_schema_3_gains_its_indexes(db_url):
    store = store_mod.Store(db_url)
    with store.write() as conn:
        for table in store_mod.INDEXED:
            for index in list(store.t[table].indexes):
                index.drop(conn)
        conn.execute(store.meta.tables['schema_version'].delete().where(
            store.meta.tables['schema_version'].c.version == 4))
    store_mod.Store(db_url)
    inspector = sa.inspect(store.engine)
    assert 'ix_clusters_project_id' in [i['name'] for i in inspector.get_indexes('clusters')]


def test_a_compare_and_set_update_loses_to_a_write_in_between(db_url):
    store, tpl = make(db_url)
    seen = []

    def change(current):  # another writer gets in between the first read and its write
        seen.append(current['labels'])
        if len(seen) == 1:
            store.update('cluster_template', tpl['uuid'], {'labels': {'other': '1'}})
        return {'labels': dict(current['labels'], mine='2')}

    result = store.modify('cluster_template', tpl['uuid'], change)
    assert result['labels'] == {'other': '1', 'mine': '2'} and len(seen) == 2
    with pytest.raises(Conflict):
        store.modify('cluster_template', tpl['uuid'], lambda current: store.update(
            'cluster_template', tpl['uuid'], {'name': 'x%d' % current['row_version']})
            and {'name': 'never'}, attempts=3)
    assert store.get('cluster_template', tpl['uuid'])['name'] != 'never'


def test_credentials_one_active_per_cluster_retired_until_revoked(db_url):
    store, _tpl = make(db_url)
    c1, c2 = (lifecycle.record_cluster(store, {'name': n, 'cluster_template_id': 'tpl'}, SCOPE)
              for n in ('c1', 'c2'))
    store.save_credential(c1['uuid'], 'cred-1', 's1', user_id='u', project_id='p1')
    store.save_credential(c2['uuid'], 'cred-2', 's2', user_id='u', project_id='p1')
    # Magnum's trust beside the application credential: one active of each kind
    store.save_credential(c1['uuid'], 'trust-1', 'pw1', user_id='trustee-1',
                          project_id='p1', kind=store_mod.TRUST)
    assert store.credential(c1['uuid'])['secret'] == 's1'
    assert store.credential(c1['uuid'], kind=store_mod.TRUST)['secret'] == 'pw1'
    assert store.credential(c2['uuid'], kind=store_mod.TRUST) is None
    assert store.retired_credentials() == []
    # a rotation: the new one is active, the old one (of its kind) waits to be revoked
    store.save_credential(c1['uuid'], 'cred-1b', 's1b', user_id='u', project_id='p1')
    assert store.credential(c1['uuid'])['credential_id'] == 'cred-1b'
    assert store.credential(c1['uuid'], kind=store_mod.TRUST)['credential_id'] == 'trust-1'
    assert [c['credential_id'] for c in store.retired_credentials()] == ['cred-1']
    store.forget_credential('cred-1')
    # a purged cluster's credentials are retired with it, each saying its kind
    store.purge_cluster(c1['uuid'])
    store.purge_cluster(c2['uuid'])
    assert store.credential(c2['uuid']) is None
    assert sorted((c['credential_id'], c['kind'], c['user_id'])
                  for c in store.retired_credentials()) == [
        ('cred-1b', 'application_credential', 'u'), ('cred-2', 'application_credential', 'u'),
        ('trust-1', 'trust', 'trustee-1')]


def raw_secrets(store):
    """Every secret as it lies in the database."""
    with store.read() as conn:
        return [value for name, column in store.SEALED.items()
                for (value,) in conn.execute(sa.select(store.t[name].c[column])).all()]


def test_secrets_are_sealed_at_rest_and_resealed_after_a_key_change(db_url, tmp_path):
    def opened(*keys):
        path = tmp_path / ('keys-%d' % len(list(tmp_path.glob('keys-*'))))
        path.write_text(''.join(k + '\n' for k in keys))
        return store_mod.Store(db_url, secrets=secrets.Secrets(str(path)))

    # a store used without a key file (none given, none beside it): secrets lie as they are
    plain = store_mod.Store(db_url, secrets=secrets.Secrets(None))
    lifecycle.create_template(plain, dict(TPL), SCOPE)
    cluster = lifecycle.record_cluster(plain, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    lifecycle.ensure_ca(plain, cluster)
    plain.save_credential(cluster['uuid'], 'cred-1', 'app-cred-secret')
    plain.add_external_cluster('fed-1', 'ext', 'https://203.0.113.7', '{"token": "ext-secret"}')
    assert any('PRIVATE KEY' in v for v in raw_secrets(plain))
    # a key file is set: what was stored is still read, and a reseal seals it
    old, new = secrets.new_key(), secrets.new_key()
    sealed = opened(old)
    assert sealed.credential(cluster['uuid'])['secret'] == 'app-cred-secret'
    assert sealed.reseal_secrets() == {'certificates': 1, 'credentials': 1,
                                       'external_clusters': 1}
    assert sealed.reseal_secrets() == {'certificates': 0, 'credentials': 0,
                                       'external_clusters': 0}
    assert sealed.external_cluster('fed-1', 'ext', kubeconfig=True)['kubeconfig'] == \
        '{"token": "ext-secret"}'
    # new secrets are sealed as they are written, and every use reads them
    lifecycle.ensure_ca(sealed, cluster, rotate=True)
    sealed.save_credential(cluster['uuid'], 'cred-2', 'second-secret')
    assert all(secrets.is_sealed(v) for v in raw_secrets(sealed))
    assert not any('PRIVATE KEY' in v or 'secret' in v for v in raw_secrets(sealed))
    ca = sealed.certificate(cluster['uuid'])
    csr, _key = tls.make_csr('admin', 'system:masters')
    assert tls.verify_signed_by(lifecycle.sign_csr(sealed, cluster, csr), ca['cert_pem'])
    assert [c['credential_id'] for c in sealed.retired_credentials()] == ['cred-1']
    assert 'secret' not in sealed.retired_credentials()[0]
    # a key rotation: the new key first, reseal, then the old key can go
    rotating = opened(new, old)
    assert rotating.reseal_secrets() == {'certificates': 1, 'credentials': 2,
                                         'external_clusters': 1}
    assert opened(new).certificate(cluster['uuid'])['key_pem'] == ca['key_pem']
    for wrong in (opened(old), store_mod.Store(db_url, secrets=secrets.Secrets())):
        with pytest.raises(secrets.SecretsUnavailable):
            wrong.certificate(cluster['uuid'])


def test_the_command_line_makes_keys_reseals_and_refuses_an_unusable_key_file(
        sqlite_url, tmp_path):
    import subprocess
    from conftest import BIN

    def cli(*args):
        return subprocess.run([str(BIN / 'magnum-ansible-api')] + list(args),
                              capture_output=True, text=True, timeout=60)
    made = [cli('--new-secret-key') for _ in range(2)]
    assert all(m.returncode == 0 for m in made) and made[0].stdout != made[1].stdout
    keys = tmp_path / 'keys'
    keys.write_text(made[0].stdout)
    store, _tpl = make(sqlite_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    lifecycle.ensure_ca(store, cluster)
    resealed = cli('--reseal-secrets', '--db', sqlite_url, '--secret-key-file', str(keys))
    assert resealed.returncode == 0, resealed.stderr
    assert resealed.stdout.strip() == \
        'resealed: 1 certificates, 0 credentials, 0 external_clusters'
    assert all(secrets.is_sealed(v) for v in raw_secrets(store))
    refused = cli('--reseal-secrets', '--db', sqlite_url)
    assert refused.returncode == 1 and 'needs --secret-key-file' in refused.stderr
    keys.write_text('not-a-key\n')
    for args in (['--reseal-secrets'], ['--port', '0']):  # one-off command, and serving
        refused = cli(*args, '--db', sqlite_url, '--secret-key-file', str(keys))
        assert refused.returncode == 1 and 'not a Fernet key' in refused.stderr, refused.stderr


def test_conductors_claim_each_job_once_one_per_cluster_oldest_first(db_url):
    """Jobs are rows: four conductors claim at once, round after round, from three
    clusters' queues - every job is run by one of them, never two, each cluster runs
    one job at a time, in the order its jobs were recorded."""
    import threading
    store = store_mod.Store(db_url)
    records = jobs.Jobs(store)
    recorded = dict((c, [records.create('resize', 'cluster_resize.yml', {}, cluster_id=c)['uuid']
                         for _ in range(4)]) for c in ('c1', 'c2', 'c3'))
    conductors = [records.register_service() for _ in range(4)]
    claimed, order = [], dict((c, []) for c in recorded)
    while len(claimed) < 12:
        barrier = threading.Barrier(len(conductors))
        got = []

        def claim(service_id):
            barrier.wait()
            got.append(records.claim_next(service_id))

        threads = [threading.Thread(target=claim, args=(s,)) for s in conductors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        running = [job for job in got if job]
        # at most one job per cluster at a time: three clusters, three jobs of four claims
        assert len(running) == 3 and len(set(j['cluster_id'] for j in running)) == 3
        assert all(j['status'] == jobs.RUNNING and j['service_id'] in conductors
                   for j in running)
        for job in running:
            claimed.append(job['uuid'])
            order[job['cluster_id']].append(job['uuid'])
            records.finish(job['uuid'], jobs.SUCCESSFUL)
    assert len(set(claimed)) == 12 and order == recorded
    assert records.claim_next(conductors[0]) is None
    # a claimed job never started (its conductor was stopping) is anyone's again
    again = records.create('delete', 'cluster_delete.yml', {}, cluster_id='c1')
    assert records.claim_next(conductors[0])['uuid'] == again['uuid']
    records.release(again['uuid'], conductors[0])
    assert records.claim_next(conductors[1])['service_id'] == conductors[1]


def test_a_dead_conductors_running_job_fails_naming_it_its_queued_one_is_anyones(db_url):
    store, _tpl = make(db_url)
    records = jobs.Jobs(store)
    dead, alive = records.register_service(), records.register_service()
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    running = records.create('create', 'cluster_create.yml', {}, cluster_id=cluster['uuid'])
    assert records.claim_next(dead)['uuid'] == running['uuid']
    # a queued job a service held (as jobs were recorded before conductors claimed them)
    held = records.create('resize', 'cluster_resize.yml', {}, cluster_id='c2',
                          service_id=dead)
    records.stop_service(dead)
    assert records.reap_orphans(own_service_id=alive) == [running['uuid']]
    reason = records.get(running['uuid'])['status_reason']
    assert 'orphaned' in reason and 'magnum-conductor on ' in reason and 'pid ' in reason
    assert store.get('cluster', 'c1')['status'] == states.CREATE_FAILED
    assert records.get(held['uuid'])['service_id'] is None
    assert records.claim_next(alive)['uuid'] == held['uuid']


def test_orphaned_jobs_fail_their_cluster(db_url):
    store, _tpl = make(db_url)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE)
    records = jobs.Jobs(store)
    dead = records.register_service()
    job = records.create('create', 'cluster_create.yml', {}, cluster_id=cluster['uuid'],
                         service_id=dead)
    records.start(job['uuid'])
    records.stop_service(dead)  # the service is gone (as after kill -9 on another host)
    alive = records.register_service()
    # registering is the first report (Magnum's tempest asks report_count > 0 at once)
    assert [s['report_count'] for s in records.services()] == [1, 1]
    assert records.reap_orphans(own_service_id=alive) == [job['uuid']]
    got = store.get('cluster', 'c1')
    assert got['status'] == states.CREATE_FAILED and 'orphaned' in got['status_reason']
    assert records.get(job['uuid'])['status'] == jobs.FAILED
    assert all(g['status'] == states.CREATE_FAILED
               for g in store.find('nodegroup', cluster_id=cluster['uuid']))
