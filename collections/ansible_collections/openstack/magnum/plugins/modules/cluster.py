#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster
short_description: Record or remove a Magnum cluster
version_added: "0.1.0"
description:
  - Writes a Cluster record and its default node groups (C(default-master),
    C(default-worker)) into the store, validated exactly as C(POST /v1/clusters) does -
    template lookup, keypair fallback, label merge and rules, C(master_count) and load
    balancer, quota. The new cluster is C(CREATE_IN_PROGRESS); the C(cluster_create)
    playbook then builds it.
  - An existing cluster is left as it is (changing its size is a resize, done by the
    C(cluster_resize) playbook). With I(state=absent) the record, its node groups and
    certificates are removed from the store; the infrastructure is the
    C(cluster_delete) playbook's job.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  name:
    description: Cluster name (C(^[a-zA-Z][a-zA-Z0-9_.-]*$)) or, to find one, its UUID.
    type: str
    required: true
  state:
    description: Whether the record should exist.
    type: str
    choices: [present, absent]
    default: present
  cluster_template_id:
    description: Template name or UUID. Required to create.
    type: str
  keypair:
    description: SSH keypair; defaults to the template's. One of the two is required.
    type: str
  node_count:
    description: Number of workers in C(default-worker).
    type: int
  master_count:
    description: Number of masters; more than one needs I(master_lb_enabled).
    type: int
  docker_volume_size:
    description: Container storage volume size in GB (defaults to the template's).
    type: int
  labels:
    description: Labels (dict or C(k=v,k2=v2)); replace the template's unless I(merge_labels).
    type: raw
  merge_labels:
    description: Merge I(labels) into the template's labels.
    type: bool
  master_flavor_id:
    description: Master flavor (defaults to the template's).
    type: str
  flavor_id:
    description: Worker flavor (defaults to the template's).
    type: str
  create_timeout:
    description: Minutes before a create is ended as C(CREATE_FAILED) (default 60).
    type: int
  discovery_url:
    description: Discovery URL (immutable).
    type: str
  fixed_network:
    description: Existing private network.
    type: str
  fixed_subnet:
    description: Existing private subnet.
    type: str
  floating_ip_enabled:
    description: Floating IPs for nodes (defaults to the template's).
    type: bool
  master_lb_enabled:
    description: Load balancer for the masters (defaults to the template's).
    type: bool
  uuid:
    description: UUID to give a new cluster (generated when omitted).
    type: str
  fields:
    description:
      - The create fields as one mapping, as the body of Magnum's C(POST /v1/clusters)
        (the options above by the same names); an option set beside it wins. A key that
        is not a create field is refused, as the API refuses it. C(name) in it is the
        I(name) option's; C(project_id) in it, when the I(project_id) option is not set,
        owns the new cluster.
    type: dict
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: Record a cluster (the cluster_create playbook does this from extravars)
  openstack.magnum.cluster:
    name: k8s
    cluster_template_id: k8s-tpl
    node_count: 2
    labels: {kube_tag: v1.30.2}
    merge_labels: true
  register: recorded

- name: Record a cluster described by one mapping (as cluster_create.yml's extravars)
  openstack.magnum.cluster:
    name: "{{ cluster.name }}"
    fields: "{{ cluster }}"

- name: Remove the record of a deleted cluster
  openstack.magnum.cluster:
    name: k8s
    state: absent
'''

RETURN = r'''
cluster:
  description: The cluster record.
  returned: when state is present
  type: dict
  sample: {"uuid": "5d12f6fd-a196-4bf5-ae4c-1f639a523a52", "name": "k8s", "status": "CREATE_IN_PROGRESS",
           "node_count": 2, "master_count": 1}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import fields, lifecycle
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import NotFound
from ansible_collections.openstack.magnum.plugins.module_utils.providers.checks import with_checks

# The create fields (fields.CLUSTER_CREATE_INPUT) but the name, which finds the record.
CREATE_FIELDS = tuple(f for f in fields.CLUSTER_CREATE_INPUT if f != 'name')


class ClusterModule(MagnumModule):
    argument_spec = dict(
        name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        fields=dict(type='dict'),
        **fields.module_options(fields.CLUSTER, CREATE_FIELDS, keypair={'no_log': False})
    )

    def run(self):
        try:
            current = lifecycle.get_cluster(self.store, self.params['name'], self.scope)
        except NotFound:
            current = None
        if self.params['state'] == 'absent':
            if current is None:
                self.exit_json(changed=False)
            if not self.check_mode:
                self.store.purge_cluster(current['uuid'])
            self.exit_json(changed=True)
        if current is not None:
            self.exit_json(changed=False, cluster=public(current))
        if self.check_mode:
            self.exit_json(changed=True, cluster=None)
        data = dict(self.params['fields'] or {})
        self.scope = self.owner_scope(data)
        data.update(self.given(CREATE_FIELDS), name=self.params['name'])
        record = lifecycle.record_cluster(self.store, data, self.scope,
                                          with_checks(self.core_settings))
        self.exit_json(changed=True, cluster=public(record))


def public(record):
    return fields.project(fields.CLUSTER, record, extra=('driver',))


def main():
    ClusterModule()()


if __name__ == '__main__':
    main()
