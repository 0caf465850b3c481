#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_resources
short_description: Find, or delete, every resource a cluster has on an OpenStack cloud
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Lists every resource the C(openstack) infrastructure provider made for a cluster on
    the cloud (load balancers, floating IPs, servers, volumes, ports, router interfaces,
    routers, subnets, networks, security groups, server groups), found by the cluster's
    resource-name prefix and floating IP description.
  - With I(state=absent), deletes them in that order and waits for each kind to go. A
    second run finds nothing and changes nothing. Ports on the cluster's network that the
    cluster did not make (a user's server, added by hand) make the module fail with a
    message that names them, before anything is deleted.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  state:
    description: C(present) only lists the resources; C(absent) deletes them.
    type: str
    choices: [present, absent]
    default: present
  timeout:
    description: Seconds to wait for each kind of resource to be deleted.
    type: int
    default: 300
notes:
  - Check mode lists what I(state=absent) would delete.
'''

EXAMPLES = r'''
- name: Everything cluster k8s has on the cloud
  openstack.magnum.openstack_resources:
    cluster: k8s
    cloud: mycloud
  register: found

- name: Delete it all
  openstack.magnum.openstack_resources:
    cluster: k8s
    cloud: mycloud
    state: absent
'''

RETURN = r'''
resources:
  description: The cluster's resources by kind (before deletion, for I(state=absent)).
  returned: always
  type: dict
  sample: {"servers": [{"id": "8b1e...", "name": "k8s-kaj2abl7tq2q-master-0"}], "networks": []}
count:
  description: How many resources were found.
  returned: always
  type: int
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud


class ClusterResourcesModule(CloudModule):
    argument_spec = dict(
        state=dict(type='str', default='present', choices=['present', 'absent']),
        timeout=dict(type='int', default=300),
    )

    def act(self, conn, record):
        p = self.params
        found = cloud.scan(conn, record)
        count = sum(len(items) for items in found.values())
        listed = dict((kind, items) for kind, items in found.items() if items)
        if p['state'] == 'present' or count == 0 or self.check_mode:
            self.exit_json(changed=p['state'] == 'absent' and count > 0, resources=listed,
                           count=count)
        deleted = cloud.delete_all(conn, record, timeout=p['timeout'])
        self.exit_json(changed=True, resources=deleted, count=count)


def main():
    ClusterResourcesModule()()


if __name__ == '__main__':
    main()
