#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_info
short_description: List clusters, or show one with its template, node groups and driver
version_added: "0.1.0"
description:
  - Reads Cluster records from the openstack.magnum store. For one cluster it also returns
    its template, its node groups and the driver the registry picks for it, which is what
    the lifecycle playbooks dispatch on.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  name:
    description: Name or UUID of one cluster; all clusters when omitted.
    type: str
  missing_ok:
    description:
      - With I(name), a cluster that does not exist gives an empty I(clusters) and an empty
        I(cluster) instead of a failure (a federation's delete whose host is gone).
    type: bool
    default: false
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: One cluster and what it is made of
  openstack.magnum.cluster_info:
    name: k8s
  register: info

- name: Show its driver roles
  ansible.builtin.debug:
    var: info.driver.roles
'''

RETURN = r'''
clusters:
  description: The matching clusters.
  returned: always
  type: list
  elements: dict
cluster:
  description: The cluster, when I(name) is given (empty when it is missing and I(missing_ok)).
  returned: when name is given
  type: dict
cluster_template:
  description: The cluster's template, when I(name) is given.
  returned: when name is given
  type: dict
nodegroups:
  description: The cluster's node groups, when I(name) is given.
  returned: when name is given
  type: list
  elements: dict
driver:
  description: The driver for the cluster's (coe, server_type, os_distro), when I(name) is given.
  returned: when name is given
  type: dict
  sample: {"name": "k8s_kubeadm", "coe": "kubernetes", "roles": ["kubernetes"], "api_ports": [6443]}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import fields, lifecycle
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import NotFound


class ClusterInfoModule(MagnumModule):
    argument_spec = dict(name=dict(type='str'), missing_ok=dict(type='bool', default=False))

    def run(self):
        if not self.params['name']:
            self.exit_json(changed=False, clusters=[
                fields.project(fields.CLUSTER, r) for r in self.store.find('cluster')])
        try:
            cluster = lifecycle.get_cluster(self.store, self.params['name'], self.scope)
        except NotFound:
            if not self.params['missing_ok']:
                raise
            self.exit_json(changed=False, clusters=[], cluster={})
        template, driver = lifecycle.cluster_driver(self.store, cluster)
        groups = self.store.find('nodegroup', cluster_id=cluster['uuid'])
        public = fields.project(fields.CLUSTER, cluster)
        public['faults'] = lifecycle.cluster_faults(self.store, cluster)
        self.exit_json(
            changed=False, clusters=[public], cluster=public, driver=driver,
            cluster_template=fields.project(fields.CLUSTER_TEMPLATE, template),
            nodegroups=[dict(g) for g in groups])


def main():
    ClusterInfoModule()()


if __name__ == '__main__':
    main()
