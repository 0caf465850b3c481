"""A node group's Heat view (api/heat_stacks.py): stable derived ids, node indexes from
names, refs_map and statuses while a node's server is being made."""

from api import heat_stacks

CLUSTER = {'name': 'k', 'created_at': '2026-11-26 09:00:00.123456+00:00'}
GROUP = {'uuid': '0a1fa684-90ac-4511-a015-84283e6f7685', 'name': 'default-worker',
         'status': 'UPDATE_IN_PROGRESS',
         'nodes': [{'name': 'k-abc-node-0', 'id': 's0'}, {'name': 'k-abc-node-4'}]}


def test_the_groups_stacks_have_stable_ids_and_name_each_node_by_its_index():
    stacks = heat_stacks.GroupStacks(CLUSTER, GROUP, 'http://api/heat/v1/p/')
    again = heat_stacks.GroupStacks(CLUSTER, GROUP, 'http://api/heat/v1/p')
    assert stacks.stacks() == again.stacks()
    assert stacks.find(GROUP['uuid']) is None
    assert stacks.find(stacks.minions_id) == heat_stacks.MINIONS
    assert stacks.find(stacks.minion_id('4')) == '4'
    assert stacks.find('k-default-worker', GROUP['uuid']) is None
    assert stacks.find('other-name', GROUP['uuid']) is False
    minions = stacks.stack(heat_stacks.MINIONS)
    assert minions['outputs'][0]['output_value'] == {'0': 's0', '4': 'kube-minion'}
    assert minions['creation_time'] == '2026-11-26T09:00:00Z'
    assert minions['stack_status'] == 'UPDATE_IN_PROGRESS'
    listed = dict((r['resource_name'], r) for r in stacks.resources(heat_stacks.MINIONS))
    assert listed['0']['resource_status'] == 'CREATE_COMPLETE'
    assert listed['4']['resource_status'] == 'CREATE_IN_PROGRESS'
    own = dict((r['resource_name'], r) for r in stacks.resources('0'))
    assert own['kube-minion']['physical_resource_id'] == 's0'
    assert own['kube-minion']['links'][0]['href'].startswith('http://api/heat/v1/p/stacks/')
