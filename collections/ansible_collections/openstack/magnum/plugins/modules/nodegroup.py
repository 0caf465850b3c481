#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: nodegroup
short_description: Record, update or remove a node group of a Magnum cluster
version_added: "0.1.0"
description:
  - Writes a NodeGroup record with Magnum's rules (role C(master) is reserved, the default
    groups cannot be removed, min/max node counts, taints) after checking that the cluster
    may start a node group operation. The C(nodegroup_create) playbook then builds its nodes.
  - An existing group gets I(min_node_count), I(max_node_count), I(node_labels) and
    I(node_taints) updated; other fields are fixed once created.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cluster
options:
  name:
    description: Node group name (or UUID to find one).
    type: str
    required: true
  state:
    description: Whether the record should exist.
    type: str
    choices: [present, absent]
    default: present
  role:
    description: Role of the nodes (default C(worker); C(master) is reserved).
    type: str
  node_count:
    description: Number of nodes (default 1).
    type: int
  min_node_count:
    description: Lower bound for resizes and autoscaling (default 0).
    type: int
  max_node_count:
    description: Upper bound for resizes and autoscaling.
    type: int
  flavor_id:
    description: Flavor (defaults to the cluster's worker flavor).
    type: str
  image_id:
    description: Image (defaults to the template's).
    type: str
  docker_volume_size:
    description: Container storage volume size in GB.
    type: int
  labels:
    description: Labels (dict or C(k=v,...)); replace the cluster's unless I(merge_labels).
    type: raw
  merge_labels:
    description: Merge I(labels) into the cluster's labels.
    type: bool
  node_labels:
    description: Kubernetes labels to put on the group's nodes (dict or C(k=v,k2=v2)).
    type: raw
  node_taints:
    description: Kubernetes taints (C(key), C(value), C(effect)) for the group's nodes.
    type: list
    elements: dict
  fields:
    description:
      - The create fields as one mapping, as the body of Magnum's
        C(POST /v1/clusters/{cluster}/nodegroups) (the options above by the same names); an
        option set beside it wins. A key that is not a create field is refused, as the API
        refuses it. C(name) in it is the I(name) option's.
    type: dict
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: A group of two large workers
  openstack.magnum.nodegroup:
    cluster: k8s
    name: big
    node_count: 2
    flavor_id: m1.large
    node_taints:
      - {key: dedicated, value: big, effect: NoSchedule}

- name: A group described by one mapping (as nodegroup_create.yml's extravars)
  openstack.magnum.nodegroup:
    cluster: k8s
    name: "{{ nodegroup.name }}"
    fields: "{{ nodegroup }}"
'''

RETURN = r'''
nodegroup:
  description: The node group record.
  returned: when state is present
  type: dict
  sample: {"uuid": "7c1f6f8e-6d1b-4a43-a0a2-9f4b3a2d1e55", "name": "big", "role": "worker", "node_count": 2}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import fields, lifecycle, model
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import NotFound

# The node group's create fields (fields.NODEGROUP_CREATE_INPUT) but the name, which finds
# the record.
CREATE_FIELDS = tuple(f for f in fields.NODEGROUP_CREATE_INPUT if f != 'name')


class NodegroupModule(MagnumModule):
    argument_spec = dict(
        cluster=dict(type='str', required=True),
        name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        fields=dict(type='dict'),
        **fields.module_options(fields.NODEGROUP, CREATE_FIELDS,
                                node_taints={'elements': 'dict'})
    )

    def run(self):
        cluster = lifecycle.get_cluster(self.store, self.params['cluster'], self.scope)
        try:
            current = lifecycle.get_nodegroup(self.store, cluster, self.params['name'])
        except NotFound:
            current = None
        if self.params['state'] == 'absent':
            if current is None:
                self.exit_json(changed=False)
            model.check_nodegroup_delete(current)
            if not self.check_mode:
                self.store.delete('nodegroup', current['uuid'])
            self.exit_json(changed=True)
        wanted = dict(self.params['fields'] or {})
        wanted.pop('name', None)
        wanted.update(self.given(CREATE_FIELDS))
        # What is no create field is refused as the API refuses it (Magnum's words).
        wanted = fields.given_in(fields.take(fields.NODEGROUP, wanted, allowed=CREATE_FIELDS,
                                             argument='nodegroup'), CREATE_FIELDS)
        if current is None:
            if self.check_mode:
                self.exit_json(changed=True, nodegroup=None)
            data = dict(wanted, name=self.params['name'])
            group = lifecycle.create_nodegroup(self.store, cluster, data, self.scope,
                                               start=False, settings=self.core_settings)
            self.exit_json(changed=True, nodegroup=_public(group))
        patched = dict(current)
        for key in fields.NODEGROUP_UPDATABLE:
            if key in wanted:
                patched[key] = wanted[key]
        fixed = [k for k in wanted if k not in fields.NODEGROUP_UPDATABLE
                 and fields.coerce(fields.NODEGROUP, k, wanted[k]) != current.get(k)
                 and k != 'merge_labels']
        if fixed:
            self.fail_json(msg="Node group %s exists: %s cannot be changed (only %s)."
                           % (current['name'], ', '.join(sorted(fixed)),
                              ', '.join(fields.NODEGROUP_UPDATABLE)))
        changed = any(patched.get(k) != current.get(k) for k in fields.NODEGROUP_UPDATABLE)
        if changed and not self.check_mode:
            current = lifecycle.update_nodegroup(self.store, current, patched)
        self.exit_json(changed=changed, nodegroup=_public(current))


def _public(record):
    return fields.project(fields.NODEGROUP, record, extra=('id',))


def main():
    NodegroupModule()()


if __name__ == '__main__':
    main()
