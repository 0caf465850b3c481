"""Which volumes a node mounts where (module_utils/providers/openstack/node_volumes.py)."""

import pytest
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    node_volumes)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict, Invalid


def test_a_nodes_volumes_from_the_clusters_ids():
    ids = {'k-master-0-docker': 'd0', 'k-master-0-etcd': 'e0', 'k-node-0-docker': 'd1'}
    assert node_volumes.of_node(ids, 'k-master-0') == [{'id': 'd0', 'purpose': 'docker'},
                                                       {'id': 'e0', 'purpose': 'etcd'}]
    assert node_volumes.of_node(ids, 'k-node-0') == [{'id': 'd1', 'purpose': 'docker'}]
    assert node_volumes.of_node({}, 'k-node-1') == []
    paths = {'docker': '/var/lib/containerd', 'etcd': '/var/lib/etcd'}
    assert node_volumes.plan(node_volumes.of_node(ids, 'k-master-0'), paths) == [
        ('d0', '/var/lib/containerd'), ('e0', '/var/lib/etcd')]
    with pytest.raises(Invalid, match='No mount path for the node.s etcd volume e0'):
        node_volumes.plan([{'id': 'e0', 'purpose': 'etcd'}], {'docker': '/var/lib/docker'})


def test_a_device_is_waited_for_then_named_missing(tmp_path):
    clock = [0.0]
    with pytest.raises(Conflict, match='Volume abc is not attached to this node'):
        node_volumes.device('abc', str(tmp_path), timeout=3,
                            sleep=lambda s: clock.__setitem__(0, clock[0] + s),
                            now=lambda: clock[0])
    assert clock[0] >= 3
    (tmp_path / 'scsi-0QEMU_QEMU_HARDDISK_abc').symlink_to('/dev/null')
    assert node_volumes.device('abc', str(tmp_path)) == '/dev/null'
