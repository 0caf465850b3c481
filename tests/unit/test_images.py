from ansible_collections.openstack.magnum.plugins.module_utils.core import images

OLD = {'image_id': 'debian-12'}
NEW = {'image_id': 'debian-12-r2'}
GROUPS = [{'uuid': 'gm', 'name': 'default-master', 'role': 'master', 'image_id': 'debian-12'},
          {'uuid': 'gw', 'name': 'default-worker', 'role': 'worker', 'image_id': 'debian-12'},
          {'uuid': 'gx', 'name': 'gpu', 'role': 'gpu', 'image_id': 'debian-12-gpu'}]
IDS = {'debian-12': 'id-1', 'debian-12-r2': 'id-2', 'debian-12-gpu': 'id-g'}


def server(name, group, index, image, role='worker'):
    return {'name': name, 'image': {'id': image},
            'metadata': {'magnum_nodegroup_uuid': group, 'magnum_index': str(index),
                         'magnum_role': role}}


def test_masters_first_then_workers_by_index_and_own_images_kept():
    servers = [server('c-node-10', 'gw', 10, 'id-1'), server('c-node-2', 'gw', 2, 'id-1'),
               server('c-master-1', 'gm', 1, 'id-1', 'master'),
               server('c-master-0', 'gm', 0, 'id-1', 'master'),
               server('c-gpu-0', 'gx', 0, 'id-g', 'gpu')]
    plan = images.rebuild_plan(servers, GROUPS, OLD, NEW, IDS)
    assert [(n['name'], n['image']) for n in plan] == [
        ('c-master-0', 'debian-12-r2'), ('c-master-1', 'debian-12-r2'),
        ('c-node-2', 'debian-12-r2'), ('c-node-10', 'debian-12-r2')]


def test_a_retry_goes_on_where_the_last_run_stopped():
    servers = [server('c-master-0', 'gm', 0, 'id-2', 'master'), server('c-node-0', 'gw', 0, 'id-2'),
               server('c-node-1', 'gw', 1, 'id-1')]
    assert [n['name'] for n in images.rebuild_plan(servers, GROUPS, OLD, NEW, IDS)] == ['c-node-1']
    # A server whose rebuild failed (on the new image, not ACTIVE) is rebuilt again.
    servers[1]['status'] = 'ERROR'
    assert [n['name'] for n in images.rebuild_plan(servers, GROUPS, OLD, NEW, IDS)] == [
        'c-node-0', 'c-node-1']
    servers[1]['status'] = 'ACTIVE'
    # The same image in both templates (a kube_tag-only upgrade): nothing is rebuilt.
    on_old = [server('c-master-0', 'gm', 0, 'id-1', 'master'), server('c-node-0', 'gw', 0, 'id-1')]
    assert images.rebuild_plan(on_old, GROUPS, OLD, dict(OLD, labels={'kube_tag': 'v2'}),
                               IDS) == []


def test_one_node_group_only():
    servers = [server('c-master-0', 'gm', 0, 'id-1', 'master'), server('c-node-0', 'gw', 0, 'id-1')]
    plan = images.rebuild_plan(servers, GROUPS, OLD, NEW, IDS, nodegroup='gw')
    assert [n['name'] for n in plan] == ['c-node-0']


def test_ids_and_unknown_servers():
    # Templates may name an image by its ID; servers of no group of the cluster are not touched.
    servers = [server('c-node-0', 'gw', 0, 'id-1'), server('stray', 'other', 0, 'id-1')]
    plan = images.rebuild_plan(servers, GROUPS, OLD, {'image_id': 'id-2'}, {})
    assert [(n['name'], n['image']) for n in plan] == [('c-node-0', 'id-2')]


def test_upgrade_image():
    assert images.upgrade_image(GROUPS[1], OLD, NEW) == 'debian-12-r2'
    assert images.upgrade_image(GROUPS[2], OLD, NEW) == 'debian-12-gpu'
    assert images.upgrade_image({'image_id': None}, OLD, NEW) == 'debian-12-r2'
