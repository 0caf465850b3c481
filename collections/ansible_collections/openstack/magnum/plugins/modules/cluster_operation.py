#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_operation
short_description: Start or end one run of a cluster operation, with what its steps read
version_added: "0.1.0"
description:
  - The two bookkeeping steps of the role M(openstack.magnum.cluster_operation) - one before
    the provider's and the driver's steps, one after - each a single task
    (module_utils/core/operation_run.py C(start) and C(end)).
  - I(phase=start) finds the cluster (or, for a create described by I(cluster) as a mapping
    or by I(fields), records it as M(openstack.magnum.cluster) does), checks a job's
    ownership (I(job_uuid)), starts the operation as the API does when it accepts it
    (M(openstack.magnum.cluster_status) I(phase=start) - the state machine and the
    operation's own checks), makes the cluster's CA at create (unless TLS is disabled) or
    stages a new one at C(ca_rotate), and returns what the steps read - the cluster, its
    template and the template an upgrade moves it to, its node groups and the one acted
    on, the driver, the step plan on I(provider) and the roles it lacks. Once the
    operation started, a failure of any of that (a driver or provider whose roles are not
    installed, a CA that cannot be made) ends it C(*_FAILED) with the reason before the
    task fails.
  - I(phase=complete) makes a rotated CA the cluster's, then writes C(*_COMPLETE) with
    I(facts); I(phase=failed) writes C(*_FAILED) with I(reason). Both act only on a cluster
    still in the status the operation set (a job superseded by a delete never moves it
    back); a completed delete removes the cluster's records.
  - In check mode nothing is written; I(phase=start) of a create whose cluster does not
    exist yet fails, as there is nothing to show.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  operation:
    description: The operation.
    type: str
    required: true
    choices: [create, delete, resize, upgrade, ca_rotate, nodegroup_create, nodegroup_delete]
  phase:
    description: Start the run, or end it well or badly.
    type: str
    required: true
    choices: [start, complete, failed]
  cluster:
    description:
      - The cluster, by name or UUID. For I(operation=create), a mapping of Magnum's create
        fields (C(name) among them) records the cluster unless a cluster of that name exists.
    type: raw
    required: true
  fields:
    description:
      - For I(operation=create) and I(phase=start), the create fields of a cluster named by
        I(cluster) (as AWX surveys give them), recorded unless it exists.
    type: dict
  provider:
    description:
      - The infrastructure provider whose roles build the cluster's servers (C(docker),
        C(openstack), or C(none)), for the step plan. Required with I(phase=start).
    type: str
  coe:
    description: Plan the COE (driver) roles too; false plans the infrastructure alone.
    type: bool
    default: true
  nodegroup:
    description:
      - The node group the operation acts on (name or UUID) - a resize's (the default worker
        group when not given), an upgrade's, a node group delete's (required then).
      - For I(operation=nodegroup_create), the new group's name, or its create fields (as
        the body of Magnum's C(POST /v1/clusters/{cluster}/nodegroups)), recorded with the
        start, in one transaction, unless I(job_uuid) is given (the API recorded it).
    type: raw
  node_count:
    description:
      - A resize's new node count, checked against the group's bounds at the start and
        written when it completes.
    type: int
  nodes_to_remove:
    description: For I(operation=resize), the nodes (names or ids) the resize removes.
    type: list
    elements: str
  cluster_template:
    description:
      - For I(operation=upgrade), the template to upgrade to (name or UUID), checked at the
        start as the API checks it, referenced by the cluster once it completes.
    type: str
  max_batch_size:
    description: For I(operation=upgrade), how many nodes it takes at a time.
    type: int
  facts:
    description:
      - With I(phase=complete), the facts the steps reported
        (M(openstack.magnum.cluster_status)'s I(facts)).
    type: dict
  reason:
    description: With I(phase=failed), the cause, as C(status_reason).
    type: str
  job_uuid:
    description:
      - The API job running this playbook. With it the start only checks that the API
        already started the operation, and every phase is refused once the job no longer
        runs (cancelled, superseded).
    type: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: Start a resize, reading what its steps need
  openstack.magnum.cluster_operation:
    operation: resize
    phase: start
    cluster: k8s
    provider: docker
    node_count: 3
  register: started

- name: Run the plan's steps
  ansible.builtin.include_role:
    name: "openstack.magnum.{{ step.0 }}"
    tasks_from: "{{ step.1 }}"
  loop: "{{ started.plan.steps }}"
  loop_control:
    loop_var: step

- name: End it
  openstack.magnum.cluster_operation:
    operation: resize
    phase: complete
    cluster: "{{ started.cluster.uuid }}"
    node_count: 3
'''

RETURN = r'''
cluster:
  description: The cluster (after a start, as it started; after an end, as it ended - null once a
    delete completed).
  returned: always
  type: dict
  sample: {"uuid": "5d12f6fd-a196-4bf5-ae4c-1f639a523a52", "status": "CREATE_IN_PROGRESS"}
cluster_template:
  description: The cluster's template.
  returned: when phase is start
  type: dict
target_template:
  description: The template the cluster has once the operation succeeds (an upgrade's new one).
  returned: when phase is start
  type: dict
provider:
  description: The provider's descriptor (C(name), C(roles), C(cloud) - whether its servers are an
    OpenStack cloud's).
  returned: when phase is start
  type: dict
  sample: {"name": "openstack", "roles": ["infra_openstack"], "cloud": true}
driver:
  description: The cluster's driver.
  returned: when phase is start
  type: dict
  sample: {"name": "k8s_kubeadm", "coe": "kubernetes", "roles": ["kubernetes"], "api_ports": [6443]}
nodegroups:
  description: The cluster's node groups, as the start left them.
  returned: when phase is start
  type: list
  elements: dict
nodegroup:
  description: The name (or UUID) of the node group the operation acts on, or an empty string.
  returned: when phase is start
  type: str
nodegroup_record:
  description: The record of that node group (a resize's default worker group when none is
    named), or an empty mapping.
  returned: when phase is start
  type: dict
plan:
  description: The step plan (C(provider_roles), C(driver_roles), C(steps), each a role and its
    tasks file).
  returned: when phase is start
  type: dict
missing_roles:
  description: The plan's roles this collection lacks (only a delete of a cluster that was never
    built goes on without them).
  returned: when phase is start
  type: list
  elements: str
built:
  description: Whether the cluster has addresses (servers were made for it).
  returned: when phase is start
  type: bool
'''

from collections.abc import Mapping

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    fields, lifecycle, operation_run, operations)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Invalid, NotFound)
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry
from ansible_collections.openstack.magnum.plugins.module_utils.providers.checks import with_checks

# The operations whose start names a node group of the cluster.
NAMES_A_GROUP = ('resize', 'upgrade', 'nodegroup_delete')


class ClusterOperationModule(MagnumModule):
    argument_spec = dict(
        operation=dict(type='str', required=True, choices=list(operations.OPERATIONS)),
        phase=dict(type='str', required=True, choices=['start', 'complete', 'failed']),
        cluster=dict(type='raw', required=True),
        fields=dict(type='dict'),
        provider=dict(type='str'),
        coe=dict(type='bool', default=True),
        nodegroup=dict(type='raw'),
        node_count=dict(type='int'),
        nodes_to_remove=dict(type='list', elements='str'),
        cluster_template=dict(type='str'),
        max_batch_size=dict(type='int'),
        facts=dict(type='dict'),
        reason=dict(type='str'),
        job_uuid=dict(type='str'),
    )
    module_kwargs = dict(required_if=[('phase', 'start', ['provider'])])

    def run(self):
        p = self.params
        group = p['nodegroup']
        group_name = str((group.get('name') if isinstance(group, Mapping) else group) or '')
        cluster = self._cluster()
        if p['phase'] != 'start':
            if self.check_mode:
                self.exit_json(changed=True, cluster=fields.project(fields.CLUSTER, cluster))
            result = operation_run.end(
                self.store, cluster, p['operation'], p['phase'] == 'complete',
                job_uuid=p['job_uuid'], reason=p['reason'], facts=p['facts'],
                nodegroup=group_name, node_count=p['node_count'],
                cluster_template=p['cluster_template'])
            self.exit_json(changed=True, cluster=fields.project(fields.CLUSTER, result)
                           if result else None)
        op = p['operation']
        args = dict(node_count=p['node_count'] if op == 'resize' else None,
                    nodes_to_remove=p['nodes_to_remove'] if op == 'resize' else None,
                    cluster_template=p['cluster_template'] if op == 'upgrade' else None,
                    max_batch_size=p['max_batch_size'] if op == 'upgrade' else None,
                    nodegroup=group_name if op in NAMES_A_GROUP and group_name else None)
        if op == 'nodegroup_create' and isinstance(group, Mapping) and not p['job_uuid']:
            args['nodegroup_fields'] = dict(group)
        provider = registry.by_name(p['provider'])
        run = operation_run.start(
            self.store, cluster, op, provider, coe=p['coe'], scope=self.scope,
            job_uuid=p['job_uuid'], check_mode=self.check_mode, group=group_name, **args)
        changed = run.pop('changed') or self.recorded
        self.exit_json(changed=changed, provider=provider.as_dict(), **run)

    def _cluster(self):
        """The cluster's record; a create described by a mapping or by fields records it
        when it does not exist."""
        p, self.recorded = self.params, False
        given = p['cluster']
        data = dict(given) if isinstance(given, Mapping) else dict(p['fields'] or {})
        name = str(data.get('name') or '') if isinstance(given, Mapping) else str(given or '')
        if not name:
            raise Invalid("cluster must name the cluster (its name or uuid), or for a create "
                          "describe it (a mapping with its name).")
        try:
            return lifecycle.get_cluster(self.store, name, self.scope)
        except NotFound:
            if not (p['phase'] == 'start' and p['operation'] == 'create'
                    and (isinstance(given, Mapping) or p['fields'])):
                raise
        if self.check_mode:
            raise Invalid("Cluster %s does not exist yet: in check mode a create records "
                          "nothing, so its steps cannot be shown." % name)
        self.scope = self.owner_scope(data)
        data['name'] = name
        self.recorded = True
        return lifecycle.record_cluster(self.store, data, self.scope,
                                        with_checks(self.core_settings))


def main():
    ClusterOperationModule()()


if __name__ == '__main__':
    main()
