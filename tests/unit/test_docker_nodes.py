import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.providers.docker import (
    nodes as ln)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers import contract

CLUSTER = {'name': 'Swarm_1', 'uuid': '5d12f6fd-a196-4bf5-ae4c-1f639a523a52',
           'flavor_id': 'm1.small'}
MASTER = {'uuid': 'gm', 'name': 'default-master', 'role': 'master', 'node_count': 1,
          'is_default': True}
WORKER = {'uuid': 'gw', 'name': 'default-worker', 'role': 'worker', 'node_count': 2,
          'is_default': True, 'flavor_id': 'm1.medium'}


def containers(plan):
    return [{'Names': ['/' + n['name']], 'Id': '%064x' % i, 'State': 'running',
             'Labels': {'magnum.openstack.org/nodegroup-uuid': n['group'],
                        'magnum.openstack.org/role': n['role'],
                        'magnum.openstack.org/address': n['address'],
                        'magnum.openstack.org/index': str(n['index'])}}
            for i, n in enumerate(plan['create'])]


def test_names_follow_magnums_pattern():
    suffix = contract.stack_suffix(CLUSTER['uuid'])
    assert len(suffix) == 12 and suffix == contract.stack_suffix(CLUSTER['uuid'])
    assert ln.node_name('kube', CLUSTER['uuid'], MASTER, 0) == 'kube-%s-master-0' % suffix
    assert ln.node_name('kube', CLUSTER['uuid'], WORKER, 3) == 'kube-%s-node-3' % suffix
    group = {'name': 'test-ng', 'role': 'worker', 'is_default': False}
    assert ln.node_name('kube', CLUSTER['uuid'], group, 0) == 'kube-test-ng-%s-node-0' % suffix
    assert ln.node_name('Swarm_1', CLUSTER['uuid'], MASTER, 0).startswith('swarm-1-')


def test_subnet_avoids_the_engines_networks():
    first = ln.pick_subnet([], CLUSTER['uuid'])
    assert ln.pick_subnet([first], CLUSTER['uuid']) != first
    with pytest.raises(Invalid, match='No free'):
        ln.pick_subnet(['10.192.0.0/11'], CLUSTER['uuid'])
    assert ln.pick_subnet(['172.17.0.0/16'], 'x', wanted='192.168.50.0/24') == '192.168.50.0/24'
    with pytest.raises(Invalid, match='overlaps'):
        ln.pick_subnet(['192.168.0.0/16'], 'x', wanted='192.168.50.0/24')


def test_create_then_grow_then_shrink_by_name():
    plan = ln.plan([], CLUSTER, [MASTER, WORKER], '10.192.3.0/24')
    assert [(n['role'], n['address'], n['flavor']) for n in plan['create']] == [
        ('master', '10.192.3.10', 'm1.small'), ('worker', '10.192.3.11', 'm1.medium'),
        ('worker', '10.192.3.12', 'm1.medium')]
    assert plan['remove'] == [] and plan['nodes'][0]['role'] == 'master'
    existing = containers(plan)
    assert ln.plan(existing, CLUSTER, [MASTER, WORKER], '10.192.3.0/24')['create'] == []
    grown = ln.plan(existing, CLUSTER, [MASTER, WORKER], '10.192.3.0/24', {'gw': 4})
    assert [(n['index'], n['address']) for n in grown['create']] == [
        (2, '10.192.3.13'), (3, '10.192.3.14')]
    first_worker = plan['create'][1]['name']
    shrunk = ln.plan(existing, CLUSTER, [MASTER, WORKER], '10.192.3.0/24', {'gw': 1},
                     [first_worker])
    assert [n['name'] for n in shrunk['remove']] == [first_worker]
    assert [n['name'] for n in shrunk['nodes']] == [plan['create'][0]['name'],
                                                    plan['create'][2]['name']]
    highest = ln.plan(existing, CLUSTER, [MASTER, WORKER], '10.192.3.0/24', {'gw': 1})
    assert [n['name'] for n in highest['remove']] == [plan['create'][2]['name']]


def test_local_nodes_not_on_their_groups_new_image_are_rebuilt_masters_first():
    """An upgrade to a template with another image: the nodes (by the image label they
    were started with, or, unlabelled, their group's) not on it are rebuilt, masters
    first; a stopped node too; kept nodes carry their group's flavor to start again."""
    from ansible_collections.openstack.magnum.plugins.module_utils.core import images
    old, new = {'image_id': 'debian-12'}, {'image_id': 'debian-12-b'}
    groups = [dict(MASTER, image_id='debian-12'), dict(WORKER, image_id='debian-12')]
    plan = ln.plan([], CLUSTER, groups, '10.192.3.0/24')
    assert [n['image'] for n in plan['create']] == ['debian-12'] * 3
    existing = containers(plan)
    existing[0]['Labels']['magnum.openstack.org/image'] = 'debian-12'
    existing[2]['State'] = 'exited'
    nodes = ln.plan(existing, CLUSTER, groups, '10.192.3.0/24')['nodes']
    assert [n['flavor'] for n in nodes] == ['m1.small', 'm1.medium', 'm1.medium']
    servers = ln.nodes_as_servers(nodes, groups)
    assert [s['image'] for s in servers] == ['debian-12'] * 3
    assert [s['status'] for s in servers] == ['ACTIVE', 'ACTIVE', 'SHUTOFF']
    rebuild = images.rebuild_plan(servers, groups, old, new)
    assert [(n['name'], n['image'], n['role']) for n in rebuild] == [
        (c['name'], 'debian-12-b', c['role']) for c in plan['create']]
    # Once rebuilt (labelled with the new image, running), nothing is left to do;
    # the same template's image rebuilds nothing.
    for container in existing:
        container['Labels']['magnum.openstack.org/image'] = 'debian-12-b'
        container['State'] = 'running'
    nodes = ln.plan(existing, CLUSTER, groups, '10.192.3.0/24')['nodes']
    assert images.rebuild_plan(ln.nodes_as_servers(nodes, groups), groups, old, new) == []
    nodes = ln.plan(containers(plan), CLUSTER, groups, '10.192.3.0/24')['nodes']
    assert images.rebuild_plan(ln.nodes_as_servers(nodes, groups), groups, old, old) == []


def test_freed_index_is_reused_and_unknown_names_refused():
    plan = ln.plan([], CLUSTER, [MASTER, WORKER], '10.192.3.0/24')
    existing = [c for c in containers(plan) if not c['Names'][0].endswith('-node-0')]
    again = ln.plan(existing, CLUSTER, [MASTER, WORKER], '10.192.3.0/24')
    assert [n['index'] for n in again['create']] == [0]
    with pytest.raises(Invalid, match='not in the cluster'):
        ln.plan(existing, CLUSTER, [MASTER, WORKER], '10.192.3.0/24', {'gw': 1}, ['ghost'])


def test_nodes_of_a_deleted_group_are_removed():
    plan = ln.plan([], CLUSTER, [MASTER, WORKER], '10.192.3.0/24')
    leftover = ln.plan(containers(plan), CLUSTER, [MASTER], '10.192.3.0/24')
    assert len(leftover['remove']) == 2 and len(leftover['nodes']) == 1


def test_removal_entries_carry_what_the_coe_needs_to_drain():
    plan = ln.plan([], CLUSTER, [MASTER, WORKER], '10.192.3.0/24')
    shrunk = ln.plan(containers(plan), CLUSTER, [MASTER, WORKER], '10.192.3.0/24', {'gw': 1})
    assert shrunk['remove'] == [{'name': plan['create'][2]['name'], 'id': '%064x' % 2,
                                 'address': '10.192.3.12', 'role': 'worker',
                                 'group_name': 'default-worker'}]


def test_master_load_balancer_is_planned_once_and_kept_out_of_the_groups():
    cluster = dict(CLUSTER, master_lb_enabled=True, master_flavor_id='m1.tiny')
    three = dict(MASTER, node_count=3)
    plan = ln.plan([], cluster, [three, WORKER], '10.192.3.0/24')
    suffix = contract.stack_suffix(CLUSTER['uuid'])
    assert plan['lb'] == {'name': 'swarm-1-%s-api-lb' % suffix, 'address': '10.192.3.5',
                          'index': 0, 'group': '', 'group_name': 'api-lb', 'role': 'lb',
                          'flavor': 'm1.tiny'}
    assert [n['role'] for n in plan['create']] == ['master'] * 3 + ['worker'] * 2 + ['lb']
    assert all(n['role'] != 'lb' for n in plan['nodes'])
    existing = containers(plan)
    again = ln.plan(existing, cluster, [three, WORKER], '10.192.3.0/24')
    assert again['create'] == [] and again['remove'] == [] and again['lb'] == plan['lb']
    assert [n['name'] for n in ln.existing_nodes(existing, lb=True)] == [plan['lb']['name']]
    assert len(ln.existing_nodes(existing)) == 5
    # A load balancer the cluster no longer wants is removed like a node.
    without = ln.plan(existing, CLUSTER, [three, WORKER], '10.192.3.0/24')
    assert without['lb'] is None and [n['role'] for n in without['remove']] == ['lb']


def test_cloud_servers_become_plan_nodes():
    plan = ln.plan([], CLUSTER, [MASTER, WORKER], '10.0.0.0/24')
    servers = [{'name': n['name'], 'id': 'id-%d' % i, 'status': 'ACTIVE',
                'metadata': {'magnum_role': n['role'], 'magnum_nodegroup_uuid': n['group'],
                             'magnum_index': str(n['index']), 'magnum_address': n['address']}}
               for i, n in enumerate(plan['create'])]
    servers.append({'name': 'someone-elses-server', 'id': 'x', 'metadata': {}})
    prefix = plan['create'][0]['name'].rsplit('-', 2)[0] + '-'
    nodes = contract.servers_as_nodes(servers, prefix)
    assert [n['address'] for n in nodes] == ['10.0.0.10', '10.0.0.11', '10.0.0.12']
    again = ln.plan(nodes, CLUSTER, [MASTER, WORKER], '10.0.0.0/24', {'gw': 3})
    assert [(n['index'], n['address']) for n in again['create']] == [(2, '10.0.0.13')]


def test_cloud_volumes_per_node():
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    cluster = dict(CLUSTER, docker_volume_size=5,
                   labels={'etcd_volume_size': '2', 'docker_volume_type': 'fast'})
    groups = [MASTER, dict(WORKER, docker_volume_size=8)]
    plan = ln.plan([], cluster, groups, '10.0.0.0/24')
    volumes = cloud.node_volumes(plan['nodes'], cluster, groups)
    master = plan['nodes'][0]['name']
    assert volumes[:2] == [
        {'name': master + '-docker', 'server': master, 'size': 5, 'type': 'fast'},
        {'name': master + '-etcd', 'server': master, 'size': 2, 'type': None}]
    assert [v['size'] for v in volumes[2:]] == [8, 8]
    assert cloud.stack_name(CLUSTER) == 'swarm-1-' + contract.stack_suffix(CLUSTER['uuid'])


FLAVORS = {'m1.tiny': {'cpus': 1, 'memory': '512m'}, 'm1.small': {'cpus': 1, 'memory': '2g'}}
GIB = 1024 ** 3


@pytest.mark.parametrize('value, size', [
    ('512m', 512 * 1024 ** 2), ('2g', 2 * GIB), ('2G', 2 * GIB), ('1.5g', 3 * GIB // 2),
    ('64mb', 64 * 1024 ** 2), (1048576, 1048576), ('300k', 300 * 1024)])
def test_memory_in_dockers_notation(value, size):
    assert ln.memory_bytes(value) == size


@pytest.mark.parametrize('value', ['', 'lots', '2x', '-1g', None])
def test_memory_not_in_dockers_notation_is_refused(value):
    with pytest.raises(Invalid, match="Docker's notation"):
        ln.memory_bytes(value)


def test_new_nodes_fit_while_the_hosts_memory_times_the_ratio_holds_them():
    plan = ln.plan([], CLUSTER, [MASTER, dict(WORKER, flavor_id='m1.tiny')], '10.192.3.0/24')
    # 2g master + 2 x 512m = 3 GiB, on a 2 GiB host with ratio 1.5 -> 3 GiB: just fits.
    assert ln.room_problem(plan['create'], FLAVORS, 2 * GIB, 0, 1.5) == ''
    # One byte more, held by another cluster's nodes, does not.
    problem = ln.room_problem(plan['create'], FLAVORS, 2 * GIB, 1, 1.5)
    assert problem.startswith('No valid host was found')
    assert '1 x m1.small, 2 x m1.tiny' in problem and '3.0 GiB' in problem
    assert '2.0 GiB x 1.5' in problem
    # Ratio 1 (no overcommit) refuses the same nodes on an empty host.
    assert ln.room_problem(plan['create'], FLAVORS, 2 * GIB, 0, 1) != ''


def test_nothing_to_create_always_fits():
    assert ln.room_problem([], FLAVORS, 1, 10 * GIB, 1.0) == ''


def test_named_nodes_at_an_unchanged_count_are_replaced_by_new_numbers():
    existing = [{'name': 'k-node-%d' % i, 'id': '%064d' % i, 'index': i} for i in range(3)]
    step = ln.plan_group(existing, 3, ['%064d' % 1])
    assert [n['name'] for n in step['remove']] == ['k-node-1']
    assert [n['name'] for n in step['keep']] == ['k-node-0', 'k-node-2']
    # Not k-node-1 again: both exist until the COE has let the old one go.
    assert step['add'] == [3]
    # A plain grow fills the gaps earlier removals left.
    assert ln.plan_group(existing[:1] + existing[2:], 3)['add'] == [1]


def test_the_local_provider_has_its_node_image_under_its_names_and_the_catalogs():
    # debian-12, and debian-12-<version> (a new name is a new image: upgrades rebuild)
    for name in ('debian-12', 'debian-12-r2', 'debian-12-gpu'):
        assert ln.image_problem(name) == ''
    assert ln.image_problem('ubuntu-22.04') == (
        'Image ubuntu-22.04 could not be found. The docker provider has its Debian 12 node '
        'image only, named debian-12 or debian-12-<version>.')
    assert ln.image_problem('golden', {'golden': 'debian'}) == ''
    assert ln.image_problem('debian-11', {'golden': 'debian', 'base': 'debian'}).endswith(
        'named debian-12 or debian-12-<version>, and as base, golden (MAGNUM_IMAGE_CATALOG).')
    plan = [{'name': 'lb', 'image': None}, {'name': 'n0', 'image': 'debian-12'},
            {'name': 'n1', 'image': 'fedora-coreos'}]
    assert ln.images_problem(plan).startswith('Image fedora-coreos could not be found.')
    assert ln.images_problem(plan[:2]) == ''


def test_what_a_provider_hands_the_coe_roles():
    nodes = [{'name': 'c-master-0', 'role': 'master', 'group': 'g-m', 'address': '10.0.0.10',
              'id': 's0'},
             {'name': 'c-master-1', 'role': 'master', 'group': 'g-m', 'address': '10.0.0.11'},
             {'name': 'c-node-0', 'role': 'worker', 'group': 'g-w', 'address': '10.0.0.12'},
             {'name': 'c-lb', 'role': 'lb', 'address': '10.0.0.2'}]
    new = nodes[1:]
    remove = [{'name': 'c-node-1', 'role': 'worker', 'group': 'g-w', 'address': '10.0.0.13'}]
    # reached at their fixed addresses (local nodes): the API at the first master
    handed = contract.provider_facts(nodes, new, remove)
    assert handed == {
        'cluster_facts': {
            'master_addresses': ['10.0.0.10', '10.0.0.11'], 'node_addresses': ['10.0.0.12'],
            'nodegroup_nodes': {
                'g-m': [{'name': 'c-master-0', 'id': 's0', 'address': '10.0.0.10'},
                        {'name': 'c-master-1', 'address': '10.0.0.11'}],
                'g-w': [{'name': 'c-node-0', 'address': '10.0.0.12'}]}},
        'new_nodes': ['c-master-1', 'c-node-0'], 'removing_nodes': ['c-node-1'],
        'api_host': '10.0.0.10', 'node_api_host': '10.0.0.10'}
    # at floating IPs where they have one; the load balancer is the API host
    public = {'c-master-0': '10.113.0.5', 'c-node-0': '10.113.0.6'}
    handed = contract.provider_facts(nodes, public=public, lb_address='10.113.0.9')
    assert handed['cluster_facts']['master_addresses'] == ['10.113.0.5', '10.0.0.11']
    assert handed['cluster_facts']['node_addresses'] == ['10.113.0.6']
    assert handed['cluster_facts']['nodegroup_nodes']['g-w'] == [
        {'name': 'c-node-0', 'address': '10.113.0.6'}]
    assert (handed['api_host'], handed['new_nodes'], handed['removing_nodes']) == (
        '10.113.0.9', [], [])
    # nodes reach the API on the cluster's network, never through a floating IP
    assert handed['node_api_host'] == '10.113.0.9'   # a load balancer without a VIP given
    handed = contract.provider_facts(nodes, public=public, lb_address='10.113.0.9',
                                     lb_private_address='10.0.0.3')
    assert (handed['api_host'], handed['node_api_host']) == ('10.113.0.9', '10.0.0.3')
    handed = contract.provider_facts(nodes, public=public, lb_address='')
    assert (handed['api_host'], handed['node_api_host']) == ('10.113.0.5', '10.0.0.10')
    assert contract.provider_facts(nodes, lb_address='')['api_host'] == '10.0.0.10'
    assert contract.provider_facts([])['api_host'] == ''
    assert contract.provider_facts([])['node_api_host'] == ''
    # Nodes planned before their servers existed get the servers' ids once made: the node
    # groups' records name their servers (the Heat view's refs_map, by which the cluster
    # autoscaler finds a node's group; #62, on the lab's guests it found none).
    made = [{'name': 'c-master-1', 'id': 's1'}, {'name': 'c-node-0', 'id': 's2'},
            {'name': 'other', 'id': 's9'}]
    grouped = contract.provider_facts(nodes, new, remove, servers=made)['cluster_facts'][
        'nodegroup_nodes']
    assert [n.get('id') for n in grouped['g-m'] + grouped['g-w']] == ['s0', 's1', 's2']
