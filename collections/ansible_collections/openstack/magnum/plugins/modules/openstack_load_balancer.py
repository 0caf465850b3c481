#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_load_balancer
short_description: Put a cluster's master load balancer (Octavia) in front of its masters
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - The master load balancer of a cluster (C(master_lb_enabled)), with one connection and
    one login (a task per listener, pool, monitor and member would each be a process of
    its own) - the load balancer on I(subnet) at I(address); per port of I(ports), a TCP
    listener C(<name>-<port>), its pool C(<name>-<port>-pool) (round robin) and TCP
    health monitor C(<name>-<port>-monitor); every one of I(masters) a member of each pool,
    and members that are not masters removed; the listeners' I(allowed_cidrs); a floating
    IP on the VIP from I(floating_ip_network), described as the cluster's.
  - What exists is left alone and what is missing is made, each change waited for until
    the load balancer is C(ACTIVE) again (Octavia takes one change at a time). The
    load balancer is deleted with the cluster (openstack_resources).
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  name:
    description: Name of the load balancer; its listeners, pools and monitors are named
      after it.
    type: str
    required: true
  subnet:
    description: ID of the subnet of the VIP and of the members.
    type: str
    required: true
  address:
    description: The VIP's fixed address.
    type: str
    required: true
  ports:
    description: The COE's API ports (a listener each).
    type: list
    elements: int
    required: true
  masters:
    description: The masters (C(name), C(address) on I(subnet)), members of every pool.
    type: list
    elements: dict
    required: true
  allowed_cidrs:
    description: The only sources the listeners accept (Octavia's C(allowed_cidrs)); empty
      leaves them as they are (open when made).
    type: list
    elements: str
    default: []
  floating_ip_network:
    description: External network of a floating IP for the VIP; none when omitted.
    type: str
  timeout:
    description: Seconds to wait for the load balancer to be C(ACTIVE) after each change.
    type: int
    default: 600
notes:
  - Check mode reports what would be made, and does nothing.
'''

EXAMPLES = r'''
- name: The API load balancer of a three-master Kubernetes cluster
  openstack.magnum.openstack_load_balancer:
    cluster: k8s
    cloud: mycloud
    name: k8s-abc-api-lb
    subnet: 0c6b...
    address: 10.0.0.5
    ports: [6443]
    masters:
      - {name: k8s-abc-master-0, address: 10.0.0.6}
      - {name: k8s-abc-master-1, address: 10.0.0.7}
      - {name: k8s-abc-master-2, address: 10.0.0.8}
    allowed_cidrs: [192.0.2.0/24, 10.0.0.0/24]
'''

RETURN = r'''
load_balancer:
  description: The load balancer (C(id), C(vip_address), C(floating_ip)); null in check mode
    when it does not exist yet.
  returned: always
  type: dict
  sample: {"id": "3c5e...", "vip_address": "10.0.0.5", "floating_ip": "172.24.4.10"}
done:
  description: What was made or removed (or, in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: ["create load balancer k8s-abc-api-lb (10.0.0.5)", "create listener k8s-abc-api-lb-6443"]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud_lb
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


class ClusterLoadBalancerModule(CloudModule):
    argument_spec = dict(
        name=dict(type='str', required=True),
        subnet=dict(type='str', required=True),
        address=dict(type='str', required=True),
        ports=dict(type='list', elements='int', required=True),
        masters=dict(type='list', elements='dict', required=True),
        allowed_cidrs=dict(type='list', elements='str', default=[]),
        floating_ip_network=dict(type='str'),
        timeout=dict(type='int', default=600),
    )

    def act(self, conn, record):
        for master in self.params['masters']:
            if not (master.get('name') and master.get('address')):
                raise Invalid('Each master needs a name and an address; got %s.' % master)
        done, lb = cloud_lb.converge(conn, record, self.params, self.params['timeout'],
                                     dry_run=self.check_mode)
        self.exit_json(changed=bool(done), done=done, load_balancer=lb)


def main():
    ClusterLoadBalancerModule()()


if __name__ == '__main__':
    main()
