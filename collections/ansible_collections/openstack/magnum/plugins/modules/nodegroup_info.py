#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: nodegroup_info
short_description: List or show the node groups of a Magnum cluster
version_added: "0.1.0"
description:
  - Reads NodeGroup records of one cluster from the openstack.magnum store.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cluster
options:
  name:
    description: Name or UUID of one node group.
    type: str
  role:
    description: Only groups with this role.
    type: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: Worker groups of a cluster
  openstack.magnum.nodegroup_info:
    cluster: k8s
    role: worker
'''

RETURN = r'''
nodegroups:
  description: The matching node groups.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "default-worker", "role": "worker", "node_count": 2, "is_default": true}]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle


class NodegroupInfoModule(MagnumModule):
    argument_spec = dict(cluster=dict(type='str', required=True), name=dict(type='str'),
                         role=dict(type='str'))

    def run(self):
        cluster = lifecycle.get_cluster(self.store, self.params['cluster'], self.scope)
        if self.params['name']:
            groups = [lifecycle.get_nodegroup(self.store, cluster, self.params['name'])]
        else:
            groups = self.store.find('nodegroup', cluster_id=cluster['uuid'])
        if self.params['role']:
            groups = [g for g in groups if g['role'] == self.params['role']]
        self.exit_json(changed=False, nodegroups=groups)


def main():
    NodegroupInfoModule()()


if __name__ == '__main__':
    main()
