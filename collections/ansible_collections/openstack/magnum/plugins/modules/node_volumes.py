#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: node_volumes
short_description: Format and mount a node's Cinder volumes where its COE keeps its data
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs on a node. Each of I(volumes) - a Cinder volume the OpenStack provider attached
    (C(docker_volume_size), C(etcd_volume_size)) - is found by its id under I(by_id)
    (C(virtio-<first 20 characters>), or its SCSI name), given a file system (I(fstype))
    when it has none, and mounted on the path I(paths) gives its purpose, with a line in
    C(/etc/fstab) by UUID so it is mounted again at boot. A formatted volume is never
    formatted again; a path with something else mounted on it fails the module.
  - Run it before the container runtime or etcd first write there.
options:
  volumes:
    description: The node's volumes, each C(id) (the Cinder volume's) and C(purpose).
    type: list
    elements: dict
    required: true
  paths:
    description: The mount path per purpose (e.g. C(docker), C(etcd)).
    type: dict
    required: true
  fstype:
    description: The file system a blank volume gets.
    type: str
    default: ext4
  by_id:
    description: Where the volumes' devices are listed by id.
    type: path
    default: /dev/disk/by-id
  fstab:
    description: The fstab to keep the mounts in.
    type: path
    default: /etc/fstab
  timeout:
    description: Seconds to wait for a volume's device to show up.
    type: int
    default: 60
notes:
  - Check mode reports what would be formatted and mounted.
'''

EXAMPLES = r'''
- name: The node's volumes where Kubernetes keeps its data
  openstack.magnum.node_volumes:
    volumes: "{{ magnum_node_volumes }}"
    paths: {docker: /var/lib/containerd, etcd: /var/lib/etcd}
'''

RETURN = r'''
mounted:
  description: Mount path -> device of each volume.
  returned: always
  type: dict
formatted:
  description: The devices given a file system (or that would be).
  returned: always
  type: list
  elements: str
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    node_volumes)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError


def _run(module, args):
    rc, out, err = module.run_command(args)
    return rc, out.strip(), err.strip()


def _mounted(path):
    """The device mounted on ``path``, or None."""
    with open('/proc/self/mounts') as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 1 and fields[1] == path:
                return fields[0]
    return None


def main():
    module = AnsibleModule(argument_spec=dict(
        volumes=dict(type='list', elements='dict', required=True),
        paths=dict(type='dict', required=True),
        fstype=dict(type='str', default='ext4'),
        by_id=dict(type='path', default=node_volumes.BY_ID),
        fstab=dict(type='path', default='/etc/fstab'),
        timeout=dict(type='int', default=60),
    ), supports_check_mode=True)
    params = module.params
    mounted, formatted, changed = {}, [], False
    try:
        for volume_id, path in node_volumes.plan(params['volumes'], params['paths']):
            dev = node_volumes.device(volume_id, params['by_id'], params['timeout'])
            rc, uuid, _err = _run(module, ['blkid', '-o', 'value', '-s', 'UUID', dev])
            if rc != 0 or not uuid:
                formatted.append(dev)
                changed = True
                if module.check_mode:
                    mounted[path] = dev
                    continue
                rc, out, err = _run(module, ['mkfs.' + params['fstype'], '-q', dev])
                if rc != 0:
                    module.fail_json(msg='mkfs.%s %s (volume %s) failed: %s' % (
                        params['fstype'], dev, volume_id, err or out))
                _rc, uuid, _err = _run(module, ['blkid', '-o', 'value', '-s', 'UUID', dev])
            current = _mounted(path)
            if current is not None and os.path.realpath(current) != dev:
                module.fail_json(msg='%s has %s mounted on it, not volume %s (%s).' % (
                    path, current, volume_id, dev))
            line = node_volumes.fstab_line(uuid, path, params['fstype'])
            try:
                with open(params['fstab']) as handle:
                    lines = handle.read().splitlines()
            except IOError:
                lines = []
            if line not in lines:
                changed = True
                if not module.check_mode:
                    kept = [entry for entry in lines if entry.split()[1:2] != [path]]
                    with open(params['fstab'], 'w') as handle:
                        handle.write('\n'.join(kept + [line]) + '\n')
            if current is None:
                changed = True
                if not module.check_mode:
                    if not os.path.isdir(path):
                        os.makedirs(path, 0o755)
                    rc, out, err = _run(module, ['mount', dev, path])
                    if rc != 0:
                        module.fail_json(msg='mount %s %s (volume %s) failed: %s' % (
                            dev, path, volume_id, err or out))
            mounted[path] = dev
    except MagnumError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=changed, mounted=mounted, formatted=formatted)


if __name__ == '__main__':
    main()
