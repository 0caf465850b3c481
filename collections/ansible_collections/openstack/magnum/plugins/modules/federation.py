#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: federation
short_description: Record a federation of Magnum clusters and its status
version_added: "0.1.0"
description:
  - Writes a Federation record (host cluster, member clusters, properties) in the store, or
    removes it. Members are given by name or UUID and stored as UUIDs.
  - With I(operation) and I(phase) it records the outcome of a federation operation (the
    C(federation) playbook does this); the status comes from the state machine, as
    M(openstack.magnum.cluster_status) writes a cluster's. I(status) sets one directly.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  name:
    description: Federation name or UUID.
    type: str
    required: true
  state:
    description: Whether the record should exist.
    type: str
    choices: [present, absent]
    default: present
  hostcluster:
    description: Cluster that hosts the federation control plane. Required to create.
    type: str
  member_ids:
    description: Member clusters (names or UUIDs).
    type: list
    elements: str
  properties:
    description: Federation properties, for example C(dns=cluster.local).
    type: dict
  status:
    description: Status to record. Mutually exclusive with I(operation).
    type: str
    choices: [CREATE_IN_PROGRESS, CREATE_FAILED, CREATE_COMPLETE, UPDATE_IN_PROGRESS,
              UPDATE_FAILED, UPDATE_COMPLETE, DELETE_IN_PROGRESS, DELETE_FAILED, DELETE_COMPLETE]
  operation:
    description:
      - The federation operation whose outcome I(phase) records (C(CREATE_COMPLETE),
        C(UPDATE_FAILED), ...). Requires I(phase).
    type: str
    choices: [create, update, delete]
  phase:
    description: How I(operation) ended. Requires I(operation).
    type: str
    choices: [complete, failed]
  status_reason:
    description: Reason recorded with I(status) or I(phase).
    type: str
notes:
  - A final I(status) (C(*_COMPLETE), C(*_FAILED)) is only recorded over the matching
    C(*_IN_PROGRESS) status, so a run never overwrites an operation that took over.
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: A federation hosted by k8s1
  openstack.magnum.federation:
    name: myfed
    hostcluster: k8s1
    member_ids: [k8s2, k8s3]
    properties: {dns: cluster.local}

- name: Its create ended well
  openstack.magnum.federation:
    name: myfed
    operation: create
    phase: complete
    status_reason: Federation CREATE completed successfully
'''

RETURN = r'''
federation:
  description: The federation record.
  returned: when state is present
  type: dict
  sample: {"uuid": "3e8d4c36-5c1b-4c9f-9a36-2b1f2b3d2c11", "name": "myfed", "member_ids": []}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import states
from ansible_collections.openstack.magnum.plugins.module_utils.federation import federations
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, NotFound)


class FederationModule(MagnumModule):
    argument_spec = dict(
        name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        hostcluster=dict(type='str'),
        member_ids=dict(type='list', elements='str'),
        properties=dict(type='dict'),
        status=dict(type='str', choices=list(states.FEDERATION_STATUSES)),
        operation=dict(type='str', choices=['create', 'update', 'delete']),
        phase=dict(type='str', choices=['complete', 'failed']),
        status_reason=dict(type='str'),
    )
    module_kwargs = dict(mutually_exclusive=[('status', 'operation')],
                         required_together=[('operation', 'phase')])

    def run(self):
        p = self.params
        if p['operation']:
            p['status'] = states.final_status(p['operation'], p['phase'] == 'complete')
        try:
            current = federations.get_federation(self.store, p['name'], self.scope)
        except NotFound:
            current = None
        if p['state'] == 'absent':
            if current is None:
                self.exit_json(changed=False)
            if not self.check_mode:
                self.store.delete('federation', current['uuid'])
                # Its credentials (its Karmada control plane's CAs, its external
                # clusters' kubeconfigs) go with it.
                self.store.delete_certificates(current['uuid'])
                self.store.forget_external_clusters(current['uuid'])
            self.exit_json(changed=True)
        if current is None:
            if self.check_mode:
                self.exit_json(changed=True, federation=None)
            current = federations.create_federation(self.store, {
                'name': p['name'], 'hostcluster_id': p['hostcluster'],
                'member_ids': p['member_ids'] or [], 'properties': p['properties'] or {}},
                self.scope)
            changed = True
        else:
            changed = False
        values = {}
        if p['member_ids'] is not None:
            members = [federations.federation_member(self.store, current, m, self.scope)[
                'uuid'] for m in p['member_ids']]
            if members != current['member_ids']:
                values['member_ids'] = members
        if p['properties'] is not None and p['properties'] != current['properties']:
            values['properties'] = p['properties']
        expect = None
        if p['status'] and (p['status'] != current['status']
                            or p['status_reason'] != current['status_reason']):
            values.update(status=p['status'], status_reason=p['status_reason'])
            if not p['status'].endswith('_IN_PROGRESS'):
                # An outcome only ends the operation that is running: never
                # overwrite an operation (such as a delete) that took over.
                expect = p['status'].rsplit('_', 1)[0] + '_IN_PROGRESS'
                if current['status'] not in (expect, p['status']):
                    raise Conflict("Federation %s is %s: not recording %s over it."
                                   % (current['name'], current['status'], p['status']))
        if values:
            changed = True
            if not self.check_mode:
                current = self.store.update('federation', current['uuid'], values,
                                            expect_status=expect if current['status'] == expect
                                            else None)
        self.exit_json(changed=changed, federation=current)


def main():
    FederationModule()()


if __name__ == '__main__':
    main()
