#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_network
short_description: Give a cluster its private network, subnet and router on an OpenStack cloud
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - The cluster's private network C(<prefix>-network), its subnet C(<prefix>-subnet) of
    I(cidr) with I(dns_nameservers), and a router C(<prefix>-router) to
    I(external_network) with an interface on the subnet, each made where missing, with one
    connection and one login.
  - When I(fixed_network) is given (the cluster's own network), nothing is made - that
    network and I(fixed_subnet) (else the network's first IPv4 subnet) are only read.
  - They are deleted with the cluster (openstack_resources).
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  prefix:
    description: The prefix of the names (the cluster's, C(openstack.magnum.openstack_stack_name)).
    type: str
    required: true
  cidr:
    description: The subnet's CIDR.
    type: str
    default: 10.0.0.0/24
  dns_nameservers:
    description: The subnet's DNS servers.
    type: list
    elements: str
    default: []
  external_network:
    description: Name or ID of the external network the router leads to.
    type: str
  fixed_network:
    description: Name or ID of a network of the cluster's own, to use instead.
    type: str
  fixed_subnet:
    description: Name or ID of the subnet of I(fixed_network) to use.
    type: str
notes:
  - Check mode reports what would be made, and does nothing.
'''

EXAMPLES = r'''
- name: The cluster's network
  openstack.magnum.openstack_network:
    cluster: k8s
    cloud: mycloud
    prefix: k8s-abc
    cidr: 10.0.0.0/24
    dns_nameservers: [8.8.8.8]
    external_network: public
  register: net
'''

RETURN = r'''
network:
  description: ID of the network (null in check mode when it would be made).
  returned: always
  type: str
subnet:
  description: The subnet (Neutron's fields, C(id) and C(cidr) among them); null in check
    mode when it would be made.
  returned: always
  type: dict
  sample: {"id": "0c6b...", "cidr": "10.0.0.0/24", "name": "k8s-abc-subnet"}
done:
  description: What was made (or, in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: ["create network k8s-abc-network", "create subnet k8s-abc-subnet (10.0.0.0/24)"]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud_converge)


class ClusterNetworkModule(CloudModule):
    argument_spec = dict(
        prefix=dict(type='str', required=True),
        cidr=dict(type='str', default='10.0.0.0/24'),
        dns_nameservers=dict(type='list', elements='str', default=[]),
        external_network=dict(type='str'),
        fixed_network=dict(type='str'),
        fixed_subnet=dict(type='str'),
    )
    module_kwargs = dict(required_one_of=[('external_network', 'fixed_network')])

    def act(self, conn, record):
        done, found = cloud_converge.network(conn, self.params['prefix'], self.params,
                                             dry_run=self.check_mode)
        found = found or {}
        self.exit_json(changed=bool(done), done=done, network=found.get('network'),
                       subnet=found.get('subnet'))


def main():
    ClusterNetworkModule()()


if __name__ == '__main__':
    main()
