#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_security_groups
short_description: Give a cluster's nodes their security groups on an OpenStack cloud
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - One security group per node role, named C(<cluster stack>-secgroup-<role>), letting
    in (IPv4) the role's I(ports) and SSH from anywhere, and every protocol from each of
    I(internal_cidrs) (the cluster's subnet, its pod network).
  - Missing groups and rules are made, existing ones are left alone (rules added by hand
    too), in one run with one connection.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  ports:
    description:
      - Per role (C(master), C(worker)), the ports its nodes accept from anywhere.
    type: dict
    required: true
  ssh:
    description: Let SSH (tcp/22) in from anywhere too (the provider reaches nodes over it).
    type: bool
    default: true
  internal_cidrs:
    description: Networks whose traffic every role accepts, any protocol and port.
    type: list
    elements: str
    default: []
notes:
  - Each port is a mapping of C(protocol) (C(tcp), C(udp), ...), C(min) and C(max).
  - Check mode reports the groups and rules that would be made.
'''

EXAMPLES = r'''
- name: Security groups of a Kubernetes cluster
  openstack.magnum.openstack_security_groups:
    cluster: k8s
    cloud: mycloud
    ports:
      master: [{protocol: tcp, min: 6443, max: 6443}]
      worker: [{protocol: tcp, min: 30000, max: 32767}]
    internal_cidrs: [10.0.0.0/24, 10.100.0.0/16]
'''

RETURN = r'''
security_groups:
  description: Each group's id by role (null in check mode for a group not made yet).
  returned: always
  type: dict
  sample: {"master": "5d0c4f1e-...", "worker": "9b1a2c3d-..."}
made:
  description: The groups and rules made (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud, cloud_converge)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

SSH = {'protocol': 'tcp', 'min': 22, 'max': 22}


class ClusterSecurityGroupsModule(CloudModule):
    argument_spec = dict(
        ports=dict(type='dict', required=True),
        ssh=dict(type='bool', default=True),
        internal_cidrs=dict(type='list', elements='str', default=[]),
    )

    def groups(self, record):
        stack = cloud.stack_name(record)
        groups = []
        for role, ports in sorted(self.params['ports'].items()):
            if not isinstance(ports, list) or not all(
                    isinstance(p, dict) and p.get('protocol') for p in ports):
                raise Invalid('ports.%s must be a list of {protocol, min, max}.' % role)
            rules = [dict(p, remote='0.0.0.0/0') for p in ports]
            if self.params['ssh']:
                rules.append(dict(SSH, remote='0.0.0.0/0'))
            rules += [{'protocol': 'any', 'remote': cidr}
                      for cidr in self.params['internal_cidrs'] if cidr]
            groups.append({'role': role, 'name': '%s-secgroup-%s' % (stack, role),
                           'description': 'Cluster %s: %s nodes' % (record['uuid'], role),
                           'rules': rules})
        return groups

    def act(self, conn, record):
        groups = self.groups(record)
        ids, made = cloud_converge.security_groups(conn, groups, dry_run=self.check_mode)
        self.exit_json(changed=bool(made), made=made,
                       security_groups=dict((g['role'], ids[g['name']]) for g in groups))


def main():
    ClusterSecurityGroupsModule()()


if __name__ == '__main__':
    main()
