#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_node_volumes
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
  openstack.magnum.openstack_node_volumes:
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
changes:
  description: What the run changed (or would change, in check mode), in order.
  returned: always
  type: list
  elements: str
  sample: ["formatted /dev/vdb (volume 5d0c4f1e-...)", "mounted /dev/vdb on /var/lib/docker"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    node_volumes)


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
    steps = node_steps.NodeSteps(module.run_command, module.check_mode)
    mounted, formatted = node_steps.run_in_module(module, steps, lambda: node_volumes.mount(
        steps, params['volumes'], params['paths'], params['fstype'], params['by_id'],
        params['fstab'], params['timeout']))
    module.exit_json(changed=bool(steps.changes), mounted=mounted, formatted=formatted,
                     changes=steps.changes)


if __name__ == '__main__':
    main()
