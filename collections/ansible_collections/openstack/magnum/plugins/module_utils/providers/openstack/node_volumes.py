# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's Cinder volumes (docker_volume_size, etcd_volume_size) formatted and mounted
where the COE keeps its data, as Magnum's templates do: the device a volume is attached
as is found by its id (``/dev/disk/by-id/virtio-<first 20 characters of the id>``, or the
SCSI name of the same), a volume without a file system gets one, and it is mounted (and
kept in /etc/fstab, by UUID) on its path. A volume already formatted is never formatted
again: its data is the COE's."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import time

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict, Invalid

BY_ID = '/dev/disk/by-id'
PREFIXES = ('virtio-', 'scsi-0QEMU_QEMU_HARDDISK_')


def of_node(ids, node):
    """The node's volumes (``id``, ``purpose``) from the cluster's volume ids by name
    (``<node>-docker``, ``<node>-etcd``)."""
    return [{'id': ids[node + '-' + purpose], 'purpose': purpose}
            for purpose in ('docker', 'etcd') if (ids or {}).get(node + '-' + purpose)]


def plan(volumes, paths):
    """[(volume id, mount path)] from the node's volumes (``id``, ``purpose``) and the
    COE's path per purpose; a purpose without a path is refused."""
    found = []
    for volume in volumes or []:
        purpose = volume.get('purpose')
        if purpose not in paths:
            raise Invalid("No mount path for the node's %s volume %s (paths: %s)." % (
                purpose, volume.get('id'), ', '.join(sorted(paths))))
        found.append((volume['id'], paths[purpose]))
    return found


def device(volume_id, by_id=BY_ID, timeout=60, sleep=time.sleep, now=time.time):
    """The device a volume is attached as, once it shows up (a fresh attachment may take
    a moment); a Conflict naming the volume after ``timeout`` seconds."""
    names = [os.path.join(by_id, prefix + volume_id[:20]) for prefix in PREFIXES]
    deadline = now() + timeout
    while True:
        for name in names:
            if os.path.exists(name):
                return os.path.realpath(name)
        if now() >= deadline:
            raise Conflict("Volume %s is not attached to this node: none of %s exists after "
                           "%ds." % (volume_id, ', '.join(names), timeout))
        sleep(1)


def fstab_line(uuid, path, fstype):
    return 'UUID=%s %s %s defaults,nofail 0 2' % (uuid, path, fstype)
