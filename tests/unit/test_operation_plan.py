"""The step plan of every operation for every driver on every provider
(module_utils/core/operations.py, which roles/cluster_operation loops over)."""

from pathlib import Path

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import operations
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import DRIVERS
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry

ROLES = (Path(__file__).resolve().parents[2]
         / 'collections/ansible_collections/openstack/magnum/roles')
PROVIDERS = registry.NAMES


def plan_on(driver, operation, provider, coe=True):
    """The plan on the provider named ``provider`` (the filter operation_plan's way)."""
    return operations.plan(driver, operation, registry.by_name(provider), coe)


CASES = [(d, p, o) for d in DRIVERS for p in PROVIDERS for o in operations.OPERATIONS]


def test_every_driver_provider_and_operation_is_covered():
    assert sorted(set(d.name for d, _, _ in CASES)) == sorted(d.name for d in DRIVERS)
    assert len(CASES) == len(DRIVERS) * 3 * 7


@pytest.mark.parametrize('driver, provider, operation', CASES,
                         ids=['%s-%s-%s' % (d.name, p, o) for d, p, o in CASES])
def test_the_plan_of(driver, provider, operation):
    as_dict = driver.as_dict()
    plan = plan_on(as_dict, operation, provider)
    infra = [] if provider == 'none' or driver.own_infrastructure else ['infra_' + provider]
    assert plan['provider_roles'] == infra
    assert plan['driver_roles'] == list(driver.roles)
    steps = [tuple(step) for step in plan['steps']]
    if operation == 'delete':
        # the COE lets its nodes go first, the provider deletes the servers last
        assert steps == [(r, 'delete') for r in list(driver.roles) + infra]
    else:
        # none of these without a provider that makes the nodes (#61: the do-nothing
        # provider's resize had the kubeadm driver fetch from dl.k8s.io)
        nodes = bool(infra) or driver.own_infrastructure
        first = [(r, 'removal_order') for r in driver.roles] if (
            operation == 'resize' and driver.picks_nodes_to_remove and nodes) else []
        # an operation that makes nodes: the provider prepares and the COE roles find
        # what the nodes will need before any is made
        if operation in ('create', 'resize', 'nodegroup_create') and driver.preflight and nodes:
            first += [(r, 'prepare') for r in infra] + [(r, 'preflight') for r in driver.roles]
        # an upgrade ends rebuilding the servers not on the new image (its own step)
        last = [('cluster_operation', 'rebuild')] if operation == 'upgrade' else []
        assert steps == first + [(r, operation) for r in infra] + \
            [(r, operation) for r in driver.roles] + [(r, 'remove_nodes') for r in infra] + last
    # every step is a tasks file its role has, unless the driver refuses the operation
    # before it starts
    missing = [s for s in steps if not (ROLES / s[0] / 'tasks' / (s[1] + '.yml')).exists()]
    if operation in driver.cannot:
        with pytest.raises(Exception, match=r'\(driver %s\)' % driver.name):
            driver.check_operation(operation)
    else:
        assert missing == []


def test_the_infrastructure_alone_and_unknown_operations():
    swarm = DRIVERS.by_name('swarm_mode').as_dict()
    assert plan_on(swarm, 'create', 'openstack', coe=False)['steps'] == [
        ['infra_openstack', 'create'], ['infra_openstack', 'remove_nodes']]
    # Kubernetes' artifacts are found for the provider's image before it makes a node
    kubeadm = DRIVERS.by_name('k8s_kubeadm').as_dict()
    assert plan_on(kubeadm, 'resize', 'docker')['steps'] == [
        ['kubernetes', 'removal_order'], ['infra_docker', 'prepare'],
        ['kubernetes', 'preflight'], ['infra_docker', 'resize'], ['kubernetes', 'resize'],
        ['infra_docker', 'remove_nodes']]
    # with nothing to make its nodes, its resize neither reads nor fetches for nodes
    assert plan_on(kubeadm, 'resize', 'none')['steps'] == [['kubernetes', 'resize']]
    assert plan_on(kubeadm, 'create', 'openstack', coe=False)['steps'] == [
        ['infra_openstack', 'create'], ['infra_openstack', 'remove_nodes']]
    with pytest.raises(Invalid, match="Unknown operation 'rebuild'"):
        plan_on(swarm, 'rebuild', 'docker')


@pytest.mark.parametrize('driver, provider', [(d, p) for d in DRIVERS for p in PROVIDERS],
                         ids=['%s-%s' % (d.name, p) for d in DRIVERS for p in PROVIDERS])
def test_the_health_round_asks_the_provider_then_the_coe(driver, provider):
    plan = plan_on(driver.as_dict(), 'health', provider)
    infra = [] if provider == 'none' or driver.own_infrastructure else ['infra_' + provider]
    assert plan['steps'] == [[r, 'health'] for r in infra + list(driver.roles)]
    assert [s for s in plan['steps']
            if not (ROLES / s[0] / 'tasks' / 'health.yml').exists()] == []


def test_every_step_declares_the_inputs_ansible_checks():
    """Each tasks file the plan (or an upgrade's rebuild) includes is an entry point of its
    role's meta/argument_specs.yml, which Ansible checks when it includes it."""
    import yaml
    steps = set()
    for driver in DRIVERS:
        for provider in PROVIDERS:
            for operation in operations.OPERATIONS + (operations.HEALTH,):
                if operation not in driver.cannot:
                    steps.update(tuple(s) for s in plan_on(
                        driver.as_dict(), operation, provider)['steps'])
        if driver.rebuilds_nodes:
            steps.update((r, s) for r in driver.roles for s in ('rebuild_leave', 'rebuild_join'))
    steps.update(('infra_' + p, 'rebuild') for p in PROVIDERS if p != 'none')
    undeclared = []
    for role, entry in sorted(steps):
        spec = yaml.safe_load((ROLES / role / 'meta' / 'argument_specs.yml').read_text())
        if entry not in spec['argument_specs']:
            undeclared.append('%s:%s' % (role, entry))
        else:
            assert spec['argument_specs'][entry]['options']['magnum_cluster']['required']
    assert undeclared == []


def test_the_roles_declare_the_interface_alike():
    """The magnum_* interface is declared in each role's meta/argument_specs.yml (Ansible
    has no shared spec): every role that declares an input declares it as the others do."""
    import yaml
    seen = {}
    for spec_file in sorted(ROLES.glob('*/meta/argument_specs.yml')):
        for entry, spec in yaml.safe_load(spec_file.read_text())['argument_specs'].items():
            for name, option in spec['options'].items():
                declared = dict((k, v) for k, v in option.items() if k != 'description')
                seen.setdefault(name, {}).setdefault(repr(sorted(declared.items())), []).append(
                    '%s:%s' % (spec_file.parts[-3], entry))
    assert [name for name, ways in seen.items() if len(ways) > 1] == []


def test_every_operation_is_one_record_whose_playbook_exists():
    """A job runs its operation's record's playbook (api/jobqueue.py): one table, whose
    playbooks exist at the checkout's entry points and in the collection; a cluster's
    operation has the state machine's statuses."""
    collection = ROLES.parent / 'playbooks'
    entry = ROLES.parents[4] / 'playbooks'
    for name, record in operations.RECORDS.items():
        assert record.name == name
        assert (collection / record.playbook).exists() and (entry / record.playbook).exists()
        assert (record.statuses is None) == name.startswith('federation_'), name
    assert operations.record('resize').statuses == (
        'UPDATE_IN_PROGRESS', 'UPDATE_COMPLETE', 'UPDATE_FAILED')
    assert set(operations.OPERATIONS) == set(
        n for n in operations.RECORDS if not n.startswith('federation_'))
    with pytest.raises(Invalid, match="Unknown operation 'rebuild'"):
        operations.record('rebuild')
