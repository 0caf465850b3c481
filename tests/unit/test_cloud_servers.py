"""The Nova servers a cluster's planned nodes get (module_utils/cloud_servers.specs, the
vm_servers filter); cluster_servers itself runs against the lab in
tests/test_openstack_provider.py."""

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils import cloud, cloud_servers
from ansible_collections.openstack.magnum.plugins.module_utils.errors import Invalid

CLUSTER = {'name': 'K8s', 'uuid': '5d0e5a9e-27c4-4c1b-9f5e-4e5a8c3d2b1a',
           'labels': {'availability_zone': 'az1', 'boot_volume_size': '20'}}
GROUPS = [{'uuid': 'g-m', 'name': 'default-master', 'role': 'master', 'flavor_id': 'm1.m'},
          {'uuid': 'g-w', 'name': 'gpu', 'role': 'worker', 'image_id': 'gpu-image',
           'labels': {'availability_zone': 'az2'}}]
TEMPLATE = {'image_id': 'debian-12'}


def test_each_node_gets_its_groups_image_zone_and_its_roles_security_group():
    prefix = cloud.stack_name(CLUSTER)
    nodes = [{'name': prefix + '-master-0', 'group': 'g-m', 'role': 'master', 'index': 0,
              'address': '10.0.0.3', 'flavor': 'm1.m', 'group_name': 'default-master'},
             {'name': prefix + '-gpu-1', 'group': 'g-w', 'role': 'worker', 'index': 1,
              'address': '10.0.0.9', 'flavor': 'g1'}]
    master, worker = cloud_servers.specs(nodes, CLUSTER, GROUPS, TEMPLATE)
    assert master == {
        'name': prefix + '-master-0', 'flavor': 'm1.m', 'image': 'debian-12',
        'address': '10.0.0.3', 'role': 'master', 'index': 0, 'nodegroup': 'default-master',
        'nodegroup_uuid': 'g-m', 'security_group': prefix + '-secgroup-master',
        'server_group': prefix + '-default-master', 'availability_zone': 'az1',
        'boot_volume_size': 20}
    # The group's own image and zone; workers of any group share the worker security group.
    assert (worker['image'], worker['availability_zone'], worker['nodegroup'],
            worker['security_group'], worker['server_group']) == (
        'gpu-image', 'az2', 'gpu', prefix + '-secgroup-worker', prefix + '-gpu')


def test_without_labels_no_zone_and_no_boot_volume():
    node = {'name': 'n', 'group': 'g-m', 'role': 'master', 'index': 0, 'address': '10.0.0.3'}
    spec, = cloud_servers.specs([node], dict(CLUSTER, labels={}), GROUPS, TEMPLATE)
    assert (spec['availability_zone'], spec['boot_volume_size'], spec['flavor']) == (
        None, 0, 'm1.m')


def test_the_user_data_makes_the_providers_user_with_the_clusters_key():
    """Cloud images refuse root's logins and give the keypair to their default user: the
    provider gets a user of its own, with the cluster's key and sudo (issue #44)."""
    import yaml
    key = 'ssh-ed25519 AAAAC3Nza magnum-cluster'
    data = cloud_servers.user_data(key + '\n', 'magnum')
    assert data.startswith('#cloud-config\n')
    assert yaml.safe_load(data) == {'users': ['default', {
        'name': 'magnum', 'shell': '/bin/bash', 'sudo': 'ALL=(ALL) NOPASSWD:ALL',
        'lock_passwd': True, 'ssh_authorized_keys': [key]}]}
    assert yaml.safe_load(cloud_servers.user_data(key, 'root')) == {
        'disable_root': False, 'ssh_authorized_keys': [key]}
    for bad in ('', 'a b', 'x\n- name: root', None):
        with pytest.raises(Invalid):
            cloud_servers.user_data(key, bad)
