#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_volumes
short_description: Make and attach a cluster's node volumes on an OpenStack cloud, or delete them
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - With I(state=present), each of I(volumes) (a node's Docker or etcd volume) is made
    where missing and attached to its server where it is not; every create and attach
    is requested before any is waited for.
  - With I(state=absent), the volumes of I(names) are deleted once detached (a volume whose
    server was deleted detaches on its own); missing ones are fine.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  volumes:
    description:
      - With I(state=present), the volumes, as the C(openstack.magnum.openstack_volume_specs)
        filter lists them (C(name), C(server), C(size) in GiB, C(type)).
    type: list
    elements: dict
  names:
    description: With I(state=absent), the names of the volumes to delete.
    type: list
    elements: str
  state:
    description: C(present) makes and attaches them; C(absent) deletes them.
    type: str
    choices: [present, absent]
    default: present
  timeout:
    description: Seconds to wait for the volumes to be available, attached or gone.
    type: int
    default: 600
notes:
  - Check mode reports what would be made, attached or deleted.
'''

EXAMPLES = r'''
- name: Docker volumes of two nodes
  openstack.magnum.openstack_volumes:
    cluster: k8s
    cloud: mycloud
    volumes:
      - {name: k8s-abc-master-0-docker, server: k8s-abc-master-0, size: 10}
      - {name: k8s-abc-node-0-docker, server: k8s-abc-node-0, size: 10, type: ssd}
'''

RETURN = r'''
done:
  description: What was made, attached or deleted (or, in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: ["create k8s-abc-node-0-docker", "attach k8s-abc-node-0-docker to k8s-abc-node-0"]
volumes:
  description: With I(state=present), each volume's Cinder id by name (those that exist).
  returned: always
  type: dict
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud_converge)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


class ClusterVolumesModule(CloudModule):
    argument_spec = dict(
        volumes=dict(type='list', elements='dict'),
        names=dict(type='list', elements='str'),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        timeout=dict(type='int', default=600),
    )
    module_kwargs = dict(required_if=[('state', 'present', ['volumes']),
                                      ('state', 'absent', ['names'])],
                         mutually_exclusive=[('volumes', 'names')])

    def act(self, conn, record):
        if self.params['state'] == 'absent':
            done = cloud_converge.delete_volumes(conn, self.params['names'],
                                                 self.params['timeout'],
                                                 dry_run=self.check_mode)
            self.exit_json(changed=bool(done), done=done, volumes={})
        volumes = self.params['volumes']
        needed = ('name', 'server', 'size')
        for spec in volumes:
            missing = [key for key in needed if not spec.get(key)]
            if missing:
                raise Invalid('Each volume needs %s; missing %s in %s.' % (
                    ', '.join(needed), ', '.join(missing), spec))
        done, ids = cloud_converge.node_volumes(conn, volumes, self.params['timeout'],
                                                dry_run=self.check_mode)
        self.exit_json(changed=bool(done), done=done, volumes=ids)


def main():
    ClusterVolumesModule()()


if __name__ == '__main__':
    main()
