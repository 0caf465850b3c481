#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_machines
short_description: Mark the Cluster API Machines a shrink removes
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - For a cluster of the C(k8s_capi_helm) driver, annotates the Machines that I(delete)
    names (by Machine name, Node name or server id) with Cluster API's
    C(cluster.x-k8s.io/delete-machine), so the MachineDeployment scaled down next removes
    those and no others (a resize's C(nodes_to_remove)). A name that matches no Machine of
    the cluster fails the module before any is marked.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  cluster:
    description: Name or UUID of the cluster (its record in the store).
    type: str
    required: true
  kubeconfig:
    description: The management cluster's kubeconfig.
    type: path
    required: true
  delete:
    description: The nodes to remove.
    type: list
    elements: str
    required: true
requirements:
  - kubernetes
notes:
  - Check mode finds the Machines and marks none.
'''

EXAMPLES = r'''
- name: Remove k8s-node-1 in the next shrink
  openstack.magnum.capi_machines:
    cluster: k8s
    kubeconfig: /etc/magnum/capi-management.kubeconfig
    delete: [k8s-node-1]
'''

RETURN = r'''
machines:
  description: The Machines marked (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi, capi_client
from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule


class CapiMachinesModule(capi_client.CapiModule, MagnumModule):
    argument_spec = dict(
        capi_client.CapiModule.ARGS,
        delete=dict(type='list', elements='str', required=True),
    )

    def act(self, record, names, api):
        machines = capi.machines_to_delete(capi_client.read(api, names)['machines'],
                                           self.params['delete'])
        changed = [m for m in machines if ((m['metadata'].get('annotations') or {})
                                           .get(capi.DELETE_MACHINE) != 'yes')]
        if not self.check_mode:
            for machine in changed:
                capi_client.annotate(api, names['namespace'], machine,
                                     {capi.DELETE_MACHINE: 'yes'})
        self.exit_json(changed=bool(changed),
                       machines=[m['metadata']['name'] for m in machines])


def main():
    CapiMachinesModule()()


if __name__ == '__main__':
    main()
