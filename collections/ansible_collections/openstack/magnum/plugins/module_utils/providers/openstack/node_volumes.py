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


def mounted_device(path, mounts='/proc/self/mounts'):
    """The device mounted on ``path``, or None."""
    with open(mounts) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) > 1 and fields[1] == path:
                return fields[0]
    return None


def unmounted(volumes, paths):
    """The mount paths of the node's ``volumes`` with nothing mounted on them yet."""
    return [path for _volume_id, path in plan(volumes, paths) if mounted_device(path) is None]


def mount(steps, volumes, paths, fstype='ext4', by_id=BY_ID, fstab='/etc/fstab', timeout=60):
    """Each of the node's ``volumes`` formatted where it has no file system, kept in
    ``fstab`` and mounted on its purpose's path, with ``steps`` (a node_steps.NodeSteps:
    its commands, its check mode, what it changed). Returns ({path: device}, [devices
    formatted]); a path with another device mounted on it is a Conflict."""
    mounted, formatted = {}, []
    for volume_id, path in plan(volumes, paths):
        dev = device(volume_id, by_id, timeout)
        rc, uuid = steps.command(['blkid', '-o', 'value', '-s', 'UUID', dev], 'Reading ' + dev,
                                 check=False)
        uuid = uuid.strip()
        if rc != 0 or not uuid:
            formatted.append(dev)
            steps.changed('formatted %s (volume %s)' % (dev, volume_id))
            if steps.check_mode:
                mounted[path] = dev
                continue
            steps.command(['mkfs.' + fstype, '-q', dev],
                          'Formatting volume %s (%s)' % (volume_id, dev))
            uuid = steps.command(['blkid', '-o', 'value', '-s', 'UUID', dev],
                                 'Reading ' + dev)[1].strip()
        current = mounted_device(path)
        if current is not None and os.path.realpath(current) != dev:
            raise Conflict('%s has %s mounted on it, not volume %s (%s).' % (
                path, current, volume_id, dev))
        line = fstab_line(uuid, path, fstype)
        lines = (steps.read(fstab) or '').splitlines()
        if line not in lines:
            steps.changed('kept %s in %s' % (path, fstab))
            if not steps.check_mode:
                kept = [entry for entry in lines if entry.split()[1:2] != [path]]
                with open(fstab, 'w') as handle:
                    handle.write('\n'.join(kept + [line]) + '\n')
        if current is None:
            steps.changed('mounted %s on %s' % (dev, path))
            if not steps.check_mode:
                if not os.path.isdir(path):
                    os.makedirs(path, 0o755)
                steps.command(['mount', dev, path],
                              'Mounting volume %s (%s) on %s' % (volume_id, dev, path))
        mounted[path] = dev
    return mounted, formatted
