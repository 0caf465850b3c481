#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_status
short_description: Start or end a cluster operation in the store (the state machine)
version_added: "0.1.0"
description:
  - The lifecycle playbooks call this module to move a cluster through Magnum's state
    machine. I(phase=start) runs the checks the API runs when it accepts the operation
    (module_utils/core/lifecycle.py start_operation), then sets the C(*_IN_PROGRESS) status.
    Those checks are the state machine's (update, resize and upgrade are refused while
    another operation runs; delete is always allowed; a C(*_FAILED) cluster can be
    retried, resized or deleted), a resize's node group bounds and I(nodes_to_remove), an
    upgrade's template, a delete of a federation's host or member, a node group delete,
    and a CA rotation with TLS disabled.
  - I(phase=complete) writes C(*_COMPLETE) with the cluster's facts; I(phase=failed) writes
    C(*_FAILED) with I(reason). Both only act on a cluster still in the status this operation
    set, so a job superseded by a delete never moves the cluster back.
  - A completed delete removes the cluster's records.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cluster
options:
  operation:
    description: The operation.
    type: str
    required: true
    choices: [create, update, resize, upgrade, ca_rotate, nodegroup_create, nodegroup_update,
              nodegroup_delete, delete]
  phase:
    description: Start the operation, or end it well or badly.
    type: str
    required: true
    choices: [start, complete, failed]
  reason:
    description: C(status_reason) to write (the failure message for I(phase=failed)).
    type: str
  facts:
    description:
      - Cluster facts to record with I(phase=complete), among C(api_address),
        C(node_addresses), C(master_addresses), C(coe_version), C(container_version),
        C(discovery_url), C(stack_id), C(health_status), C(health_status_reason),
        C(master_count), C(facts) (a free dict for drivers), and C(nodegroup_nodes) (node
        group uuid to its nodes, each C(name), C(address) and C(id); they become the groups'
        C(node_addresses), and the nodes a resize's C(nodes_to_remove) may name).
    type: dict
  nodegroup:
    description:
      - Node group (name or UUID) the operation acts on.
      - For I(operation=resize), the default worker group when not given; required for
        I(operation=nodegroup_delete).
    type: str
  nodegroup_fields:
    description:
      - For I(operation=nodegroup_create) and I(phase=start) without I(job_uuid), the new
        node group's create fields (as the body of Magnum's
        C(POST /v1/clusters/{cluster}/nodegroups)); the group is recorded with the start,
        in one transaction, and checked as the API checks it - nothing is recorded when
        either is refused.
    type: dict
  node_count:
    description:
      - New node count of the node group, checked against its bounds when a resize starts
        (required then) and written when it completes.
    type: int
  nodes_to_remove:
    description:
      - For I(operation=resize) and I(phase=start), the nodes (names or ids) the resize
        removes; each must be a node of the group.
    type: list
    elements: str
  cluster_template:
    description:
      - For I(operation=upgrade), the template to upgrade to (name or UUID).
      - With I(phase=start) and without I(job_uuid), required; the upgrade is checked as the
        API checks it (same COE, no C(kube_tag) downgrade, another image only for drivers
        that rebuild nodes, I(max_batch_size), I(nodegroup)) before anything changes.
      - With I(phase=complete), the template the cluster references from then on.
    type: str
  max_batch_size:
    description: For I(operation=upgrade) and I(phase=start), the batch size to check.
    type: int
  job_uuid:
    description:
      - The API job running this playbook. With it, I(phase=start) only checks that the API
        already started the operation.
    type: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: Mark the create done
  openstack.magnum.cluster_status:
    cluster: "{{ cluster_uuid }}"
    operation: create
    phase: complete
    facts:
      api_address: https://10.0.0.5:6443
      master_addresses: [10.0.0.5]
      node_addresses: [10.0.0.6, 10.0.0.7]

- name: Mark it failed
  openstack.magnum.cluster_status:
    cluster: "{{ cluster_uuid }}"
    operation: create
    phase: failed
    reason: "{{ ansible_failed_result.msg }}"
'''

RETURN = r'''
cluster:
  description: The cluster after the change (null once a delete completed).
  returned: always
  type: dict
  sample: {"uuid": "5d12f6fd-a196-4bf5-ae4c-1f639a523a52", "status": "CREATE_COMPLETE",
           "status_reason": "Create completed successfully"}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    fields, lifecycle, operation_run, states)


class ClusterStatusModule(MagnumModule):
    argument_spec = dict(
        cluster=dict(type='str', required=True),
        operation=dict(type='str', required=True, choices=sorted(states.OPERATIONS)),
        phase=dict(type='str', required=True, choices=['start', 'complete', 'failed']),
        reason=dict(type='str'),
        facts=dict(type='dict'),
        nodegroup=dict(type='str'),
        nodegroup_fields=dict(type='dict'),
        node_count=dict(type='int'),
        nodes_to_remove=dict(type='list', elements='str'),
        cluster_template=dict(type='str'),
        max_batch_size=dict(type='int'),
        job_uuid=dict(type='str'),
    )

    def run(self):
        p = self.params
        cluster = lifecycle.get_cluster(self.store, p['cluster'], self.scope)
        operation_run.check_job(self.store, p['job_uuid'], cluster)
        if p['phase'] == 'start':
            if self.check_mode:
                operation_run.check_start(self.store, cluster, p['operation'], self.scope,
                                          p['job_uuid'], p['cluster_template'],
                                          p['max_batch_size'], p['nodegroup'])
                self.exit_json(changed=not p['job_uuid'], cluster=_public(cluster))
            changed, cluster = lifecycle.begin_operation(
                self.store, cluster, p['operation'], started_by_job=bool(p['job_uuid']),
                scope=self.scope, node_count=p['node_count'], nodegroup=p['nodegroup'],
                nodes_to_remove=p['nodes_to_remove'], cluster_template=p['cluster_template'],
                max_batch_size=p['max_batch_size'], nodegroup_fields=p['nodegroup_fields'],
                settings=self.core_settings)
            self.exit_json(changed=changed, cluster=_public(cluster))
        if self.check_mode:
            self.exit_json(changed=True, cluster=_public(cluster))
        ok = p['phase'] == 'complete'
        result = lifecycle.end_operation(
            self.store, cluster, p['operation'], ok, reason=p['reason'], facts=p['facts'],
            nodegroup=p['nodegroup'], node_count=p['node_count'],
            template_id=p['cluster_template'])
        self.exit_json(changed=True, cluster=_public(result) if result else None)


def _public(record):
    return fields.project(fields.CLUSTER, record)


def main():
    ClusterStatusModule()()


if __name__ == '__main__':
    main()
