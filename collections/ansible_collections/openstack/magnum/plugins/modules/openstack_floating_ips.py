#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_floating_ips
short_description: Give a cluster's nodes floating IPs on their ports, or take them back
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - For each node, a floating IP from I(network) on the node's Neutron port (VM or bare
    metal alike). A new one is allocated and associated in one request and described
    C(magnum-cluster=<uuid>), so neither a crash nor a detached address can escape the
    cluster's delete. A port that has a floating IP keeps it.
  - With I(state=absent), the cluster's floating IPs on the nodes' ports are deleted.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  nodes:
    description: The nodes' names; each node's Neutron port is named C(<node><port_suffix>).
    type: list
    elements: str
    required: true
  port_suffix:
    description: What the provider appends to a node's name to name its port.
    type: str
    default: -port
  network:
    description: External network the floating IPs come from; required with I(state=present).
    type: str
  state:
    description: C(present) gives floating IPs; C(absent) deletes them.
    type: str
    choices: [present, absent]
    default: present
notes:
  - Check mode reports the addresses the nodes have and which would get one.
'''

EXAMPLES = r'''
- name: Floating IPs for two nodes
  openstack.magnum.openstack_floating_ips:
    cluster: k8s
    cloud: mycloud
    network: public
    nodes: [k8s-abc-master-0, k8s-abc-node-0]
  register: fips
'''

RETURN = r'''
floating_ips:
  description: Floating IP address per node name (nodes without one are left out).
  returned: always
  type: dict
  sample: {"k8s-abc-master-0": "172.24.4.10"}
changed_nodes:
  description: The nodes that got, or lost, a floating IP.
  returned: always
  type: list
  elements: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud


class ClusterFloatingIpsModule(CloudModule):
    argument_spec = dict(
        nodes=dict(type='list', elements='str', required=True),
        port_suffix=dict(type='str', default='-port'),
        network=dict(type='str'),
        state=dict(type='str', default='present', choices=['present', 'absent']),
    )
    module_kwargs = dict(required_if=[('state', 'present', ['network'])])

    def act(self, conn, record):
        addresses, changed = {}, []
        for name in self.params['nodes']:
            port = name + self.params['port_suffix']
            if self.params['state'] == 'absent':
                if self.check_mode:
                    gone = [cloud.floating_ip(conn, record, port, None, create=False)[0]]
                    gone = [a for a in gone if a]
                else:
                    gone = cloud.release_floating_ips(conn, record, port)
                if gone:
                    changed.append(name)
                continue
            address, created = cloud.floating_ip(conn, record, port,
                                                 self.params['network'],
                                                 create=not self.check_mode)
            if address:
                addresses[name] = address
            if created or (self.check_mode and not address):
                changed.append(name)
        self.exit_json(changed=bool(changed), floating_ips=addresses, changed_nodes=changed)


def main():
    ClusterFloatingIpsModule()()


if __name__ == '__main__':
    main()
