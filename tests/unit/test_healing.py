"""Auto-healing's choice of the workers to replace (module_utils/core/healing.py)."""

from ansible_collections.openstack.magnum.plugins.module_utils.core import healing


def group(uuid, role, *names):
    return {'uuid': uuid, 'role': role, 'nodes': [{'name': n, 'id': n + '-id'} for n in names]}


GROUPS = [group('m', 'master', 'k-master-0'),
          group('w', 'worker', 'k-node-0', 'k-node-1', 'k-node-2', 'k-node-3'),
          group('x', 'worker', 'k-x-0')]


def cluster(reason, **labels):
    return {'labels': dict({'auto_healing_enabled': 'true'}, **labels),
            'health_status_reason': reason}


def test_enabled_by_the_label_with_magnum_auto_healer_the_default():
    assert healing.enabled(cluster({}))
    assert healing.enabled(cluster({}, auto_healing_controller='magnum-auto-healer'))
    assert not healing.enabled(cluster({}, auto_healing_controller='draino'))
    assert not healing.enabled(cluster({}, auto_healing_enabled='false'))
    assert not healing.enabled({'labels': {}})


def test_broken_workers_are_those_not_ready_masters_never():
    reason = {'api': 'ok', 'k-master-0.Ready': 'False', 'k-node-0.Ready': 'True',
              'k-node-1.Ready': 'False', 'k-node-2.Ready': 'Unknown',
              'k-node-3.Ready': 'not registered', 'k-x-0.Ready': 'True'}
    assert healing.broken_workers(cluster(reason), GROUPS) == {
        'w': ['k-node-1', 'k-node-2', 'k-node-3']}
    # The API not answering ok: nothing is judged (every node would look broken).
    assert healing.broken_workers(cluster(dict(reason, api='HTTP 500: etcd')), GROUPS) == {}
    assert healing.broken_workers(cluster({'api': 'The cluster is not accessible'}),
                                  GROUPS) == {}
    assert healing.broken_workers(cluster(None), GROUPS) == {}


def test_a_node_is_due_after_the_grace_period_half_a_group_at_most():
    seen = {}
    broken = {'w': ['k-node-1', 'k-node-2', 'k-node-3'], 'x': ['k-x-0']}
    assert healing.due(broken, seen, 100.0, 300, GROUPS) == []
    assert seen == {'k-node-1': 100.0, 'k-node-2': 100.0, 'k-node-3': 100.0, 'k-x-0': 100.0}
    # k-node-1 recovers: forgotten; k-node-2 and -3 stay broken.
    broken = {'w': ['k-node-2', 'k-node-3'], 'x': ['k-x-0']}
    assert healing.due(broken, seen, 399.0, 300, GROUPS) == []
    assert 'k-node-1' not in seen
    # At 400: due, at most 2 of the 4-node group, the 1-node group's only node.
    assert healing.due(broken, seen, 400.0, 300, GROUPS) == [
        ('w', ['k-node-2', 'k-node-3']), ('x', ['k-x-0'])]
    broken = {'w': ['k-node-0', 'k-node-1', 'k-node-2', 'k-node-3']}
    seen = dict.fromkeys(broken['w'], 0.0)
    assert healing.due(broken, seen, 500.0, 300, GROUPS) == [('w', ['k-node-0', 'k-node-1'])]
    # A node broken again later starts a new grace period.
    assert healing.due({'w': ['k-node-1']}, {}, 10.0, 0, GROUPS) == [('w', ['k-node-1'])]
