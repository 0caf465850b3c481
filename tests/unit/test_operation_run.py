"""One run of an operation from a playbook (module_utils/core/operation_run.py): the start
reads what the steps need in one call, and ends the operation itself when what follows
its start fails; the end promotes a rotated CA and writes the outcome."""

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    jobs, lifecycle, operation_run, store as store_mod)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, NotSupported, OperationNotAllowed)
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry

SCOPE = lifecycle.Scope('p1')
DOCKER, NONE = registry.by_name('docker'), registry.by_name('none')
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'k'}


@pytest.fixture
def store(tmp_path):
    made = store_mod.Store('sqlite:///%s' % (tmp_path / 's.sqlite'))
    lifecycle.create_template(made, dict(TPL), SCOPE)
    return made


def record(store, name='c1', **data):
    return lifecycle.record_cluster(store, dict({'name': name, 'cluster_template_id': 'tpl'},
                                                **data), SCOPE)


def roles(tmp_path, *names):
    """A collection's roles folder holding ``names``."""
    for name in names:
        (tmp_path / 'roles' / name).mkdir(parents=True)
    return str(tmp_path / 'roles')


def test_a_create_starts_with_its_ca_its_plan_and_the_group_it_acts_on(store, tmp_path):
    cluster = record(store, node_count=2)
    run = operation_run.start(store, cluster, 'create', DOCKER, scope=SCOPE,
                              where=roles(tmp_path, 'kubernetes', 'infra_docker'))
    assert run['changed'] and run['missing_roles'] == [] and not run['built']
    assert 'ca_changed' not in run
    assert run['cluster']['status'] == 'CREATE_IN_PROGRESS'
    assert run['driver']['name'] == 'k8s_kubeadm'
    assert run['plan']['steps'][-2:] == [['kubernetes', 'create'], ['infra_docker', 'remove_nodes']]
    assert run['cluster_template']['uuid'] == run['target_template']['uuid']
    assert store.certificate(cluster['uuid'], 'ca')['cert_pem']
    # no group named: the default worker group, not the masters'
    assert run['nodegroup'] == '' and run['nodegroup_record']['role'] == 'worker'
    assert sorted(g['role'] for g in run['nodegroups']) == ['master', 'worker']
    done = operation_run.end(store, run['cluster'], 'create', True,
                             facts={'api_address': 'https://10.0.0.5:6443'})
    assert (done['status'], done['api_address']) == ('CREATE_COMPLETE', 'https://10.0.0.5:6443')


def test_a_start_names_its_group_by_uuid_before_name(store, tmp_path):
    cluster = record(store)
    groups = store.find('nodegroup', cluster_id=cluster['uuid'])
    master = [g for g in groups if g['role'] == 'master'][0]
    where = roles(tmp_path, 'kubernetes')
    lifecycle.end_operation(store, operation_run.start(store, cluster, 'create', NONE,
                                                       where=where)['cluster'], 'create', True)
    cluster = lifecycle.get_cluster(store, 'c1')
    run = operation_run.start(store, cluster, 'resize', NONE, where=where, group=master['uuid'],
                              node_count=2, nodegroup=None)
    assert run['nodegroup_record']['uuid'] == master['uuid']
    assert operation_run._group_acted_on(groups, master['name'])['uuid'] == master['uuid']
    assert operation_run._group_acted_on(groups, 'nothing') == {}


def test_a_driver_not_installed_ends_the_started_operation_failed_naming_it(store, tmp_path):
    cluster = record(store)
    with pytest.raises(NotSupported, match=r'driver k8s_kubeadm on provider docker is not '
                       r'installed \(missing roles: kubernetes, infra_docker\)'):
        operation_run.start(store, cluster, 'create', DOCKER, where=roles(tmp_path))
    failed = lifecycle.get_cluster(store, 'c1')
    assert failed['status'] == 'CREATE_FAILED'
    assert 'missing roles: kubernetes, infra_docker' in failed['status_reason']
    # the CA is made only once the driver is known to be there
    assert store.certificate(cluster['uuid'], 'ca', missing_ok=True) is None
    # a delete of a cluster that was never built goes on without them
    run = operation_run.start(store, failed, 'delete', DOCKER, where=roles(tmp_path / 'x'))
    assert run['missing_roles'] == ['kubernetes', 'infra_docker'] and not run['built']


def test_any_error_after_the_start_ends_it_failed_without_saying_what_is_inside(
        store, tmp_path, monkeypatch):
    cluster = record(store)

    def broken(*_args, **_kwargs):
        raise KeyError('secret detail')
    monkeypatch.setattr(lifecycle, 'ensure_ca', broken)
    with pytest.raises(KeyError):
        operation_run.start(store, cluster, 'create', NONE, where=roles(tmp_path, 'kubernetes'))
    failed = lifecycle.get_cluster(store, 'c1')
    assert (failed['status'], failed['status_reason']) == (
        'CREATE_FAILED', 'The create could not start: KeyError')


def test_check_mode_writes_nothing_and_refuses_what_the_state_machine_refuses(store, tmp_path):
    cluster = record(store)
    where = roles(tmp_path, 'kubernetes')
    run = operation_run.start(store, cluster, 'create', NONE, where=where, check_mode=True)
    assert run['changed'] and run['cluster']['status'] == 'CREATE_IN_PROGRESS'
    assert store.certificate(cluster['uuid'], 'ca', missing_ok=True) is None
    with pytest.raises(OperationNotAllowed, match='not allowed until the running operation'):
        operation_run.start(store, cluster, 'resize', NONE, where=where, check_mode=True,
                            node_count=2)


def test_a_job_that_no_longer_runs_cannot_start_or_end_its_operation(store, tmp_path):
    cluster = record(store)
    job = jobs.Jobs(store).create('create', 'cluster_create.yml', {},
                                  cluster_id=cluster['uuid'])
    jobs.Jobs(store).finish(job['uuid'], jobs.CANCELED, 'superseded by a delete')
    for call in (lambda: operation_run.start(store, cluster, 'create', NONE,
                                             job_uuid=job['uuid'], where=roles(tmp_path)),
                 lambda: operation_run.end(store, cluster, 'create', True, job_uuid=job['uuid'])):
        with pytest.raises(Conflict, match='no longer owns cluster c1'):
            call()
    assert lifecycle.get_cluster(store, 'c1')['status'] == 'CREATE_IN_PROGRESS'


def test_a_ca_rotation_stages_at_the_start_and_promotes_at_a_good_end(store, tmp_path):
    where = roles(tmp_path, 'kubernetes')
    cluster = record(store)
    run = operation_run.start(store, cluster, 'create', NONE, where=where)
    operation_run.end(store, run['cluster'], 'create', True)
    old = store.certificate(cluster['uuid'], 'ca')['cert_pem']
    run = operation_run.start(store, lifecycle.get_cluster(store, 'c1'), 'ca_rotate', NONE,
                              where=where)
    assert store.certificate(cluster['uuid'], 'ca')['cert_pem'] == old
    done = operation_run.end(store, run['cluster'], 'ca_rotate', True)
    assert done['status'] == 'UPDATE_COMPLETE'
    assert store.certificate(cluster['uuid'], 'ca')['cert_pem'] != old


def test_a_failed_federation_job_ends_its_federations_operation_by_its_record(store):
    """A federation's job that fails (orphaned, crashed, timed out) ends the federation's
    own operation, the one its record names (operations.RECORDS' action), not a cluster's."""
    fed = store.create('federation', {'uuid': '5c1f0e1e-0000-4000-8000-000000000001',
                                      'name': 'f1', 'project_id': 'p1', 'hostcluster_id': 'h',
                                      'member_ids': [], 'status': 'UPDATE_IN_PROGRESS'})
    job = jobs.Jobs(store).create('federation_update', 'federation.yml', {},
                                  resource_id=fed['uuid'])
    jobs.fail_operation(store, job, 'Job crashed.')
    ended = store.get('federation', fed['uuid'], by_name=False)
    assert (ended['status'], ended['status_reason']) == ('UPDATE_FAILED', 'Job crashed.')


def test_a_node_group_of_a_cluster_with_the_clouds_controller_is_checked_as_its_cluster(
        tmp_path):
    """A service that gives clusters a trust takes cloud_provider_enabled and the
    autoscaler: a node group of such a cluster inherits them and is made, started from a
    playbook as from the API (it was refused as if the service gave no trust); a service
    without trusts still refuses them."""
    trust = {'cluster_user_trust': True}
    store = store_mod.Store('sqlite:///%s' % (tmp_path / 's.sqlite'))
    lifecycle.create_template(store, dict(TPL, labels={
        'cloud_provider_enabled': 'true', 'auto_scaling_enabled': 'true',
        'max_node_count': '3'}), SCOPE, trust)
    cluster = lifecycle.record_cluster(store, {'name': 'c1', 'cluster_template_id': 'tpl'},
                                       SCOPE, trust)
    cluster = lifecycle.end_operation(store, cluster, 'create', True)
    with pytest.raises(Invalid, match='cluster_user_trust is False'):
        lifecycle.begin_operation(store, cluster, 'nodegroup_create', scope=SCOPE,
                                  nodegroup_fields={'name': 'ng1'})
    changed, started = lifecycle.begin_operation(
        store, cluster, 'nodegroup_create', scope=SCOPE, nodegroup_fields={'name': 'ng1'},
        settings=trust)
    assert changed and started['status'] == 'UPDATE_IN_PROGRESS'
    group = lifecycle.get_nodegroup(store, started, 'ng1')
    assert group['labels']['cloud_provider_enabled'] == 'true'
