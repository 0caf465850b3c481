#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_cluster_status
short_description: Read a Cluster API driver cluster's state from its management cluster
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Reads the Cluster API objects of a cluster of the C(k8s_capi_helm) driver on the
    management cluster - its C(Cluster), C(KubeadmControlPlane), C(MachineDeployment)s and
    C(Machine)s - and says what they say - C(ready) once the infrastructure and control
    plane are ready and every MachineDeployment runs its replicas, C(failed) with Cluster
    API's message, C(progressing) naming what is not there yet - with the cluster's API
    address, Kubernetes version and node addresses.
  - While it waits for C(ready) or C(initialized), the cluster's C(status_reason) says what
    Cluster API says it waits for (written when it changes, while the operation runs).
  - With I(wait), waits for C(ready) (failing on C(failed) or after I(timeout), with the
    reason), for C(initialized) (the control plane answers, its kubeconfig Secret
    is there) or, after a delete, for every one of those objects to be gone.
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
  wait:
    description: C(none) reads once; C(ready), C(initialized) or C(gone) waits for that.
    type: str
    choices: [none, ready, initialized, gone]
    default: none
  timeout:
    description: Seconds to wait at most.
    type: int
    default: 3600
  interval:
    description: Seconds between two reads while waiting.
    type: int
    default: 5
requirements:
  - kubernetes
notes:
  - Reading changes nothing but the status_reason of a cluster in progress; check mode
    reads only.
'''

EXAMPLES = r'''
- name: Wait for the cluster
  openstack.magnum.capi_cluster_status:
    cluster: k8s
    kubeconfig: /etc/magnum/capi-management.kubeconfig
    wait: ready
    timeout: 3600
  register: capi_state
'''

RETURN = r'''
state:
  description: C(ready), C(progressing), C(failed), C(missing) or, waiting for C(gone) or
    C(initialized), that.
  returned: always
  type: str
reason:
  description: What is not ready yet, or Cluster API's failure message.
  returned: always
  type: str
facts:
  description: The cluster's C(api_address), C(coe_version) (each where Cluster API says
    it), C(master_addresses), C(node_addresses) and C(nodegroup_nodes) (each node group's
    nodes - Node name, server id, address - from the Machines).
  returned: always
  type: dict
names:
  description: The cluster's C(namespace), C(release) and C(credentials) Secret.
  returned: always
  type: dict
ready_replicas:
  description: Ready replicas per MachineDeployment.
  returned: always
  type: dict
'''

import time

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi, capi_client
from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict


class CapiClusterStatusModule(capi_client.CapiModule, MagnumModule):
    argument_spec = dict(
        capi_client.CapiModule.ARGS,
        wait=dict(type='str', default='none', choices=['none', 'ready', 'initialized', 'gone']),
        timeout=dict(type='int', default=3600),
        interval=dict(type='int', default=5),
    )

    def act(self, record, names, api):
        deadline = time.time() + self.params['timeout']
        said = record.get('status_reason')
        while True:
            objects = capi_client.read(api, names)
            if self.params['wait'] == 'gone':
                left = ['%s %s' % (kind, obj['metadata']['name'])
                        for kind, items in objects.items() for obj in items]
                found = {'state': 'gone' if not left else 'progressing',
                         'reason': 'still there: ' + ', '.join(left) if left else None}
                done = not left
            else:
                found = capi.status((objects['clusters'] or [None])[0],
                                    (objects['kubeadmcontrolplanes'] or [None])[0],
                                    objects['machinedeployments'], objects['machines'],
                                    objects['openstackservers'])
                if self.params['wait'] == 'initialized' and found.get('initialized') and \
                        found['state'] != 'failed':
                    found['state'] = 'initialized'
                done = self.params['wait'] == 'none' or \
                    found['state'] in ('ready', 'failed', 'initialized')
                if not done:
                    said = self._say(record, found['reason'], said)
            if done or time.time() >= deadline:
                break
            time.sleep(self.params['interval'])
        facts = dict((k, v) for k, v in found.items()
                     if k not in ('state', 'reason', 'node_count', 'initialized'))
        if self.params['wait'] != 'gone':
            facts['nodegroup_nodes'] = capi.machine_nodes(
                objects['machines'], names['release'],
                self.store.find('nodegroup', cluster_id=record['uuid']))
        result = dict(changed=False, state=found['state'], reason=found['reason'] or '',
                      facts=facts, ready_replicas=found.get('node_count') or {}, names=names)
        if self.params['wait'] != 'none' and found['state'] not in ('ready', 'gone',
                                                                    'initialized'):
            why = found['reason'] if found['state'] == 'failed' else \
                'Timed out after %ds waiting for the cluster to be %s on the management ' \
                'cluster: %s' % (self.params['timeout'], self.params['wait'], found['reason'])
            self.fail_json(msg='Cluster API: %s' % why, **result)
        self.exit_json(**result)

    def _say(self, record, reason, said):
        """While waiting, the cluster's status_reason says what Cluster API says it waits
        for (a user's `openstack coe cluster show` within one read), written when it
        changes and only while the operation runs (its status unchanged)."""
        if not reason or reason == said or self.check_mode or \
                not str(record.get('status') or '').endswith('_IN_PROGRESS'):
            return said
        try:
            self.store.update('cluster', record['uuid'], {'status_reason': reason[:1000]},
                              expect_status=record['status'])
        except Conflict:
            pass   # the operation ended or was cancelled meanwhile: its status says so
        return reason


def main():
    CapiClusterStatusModule()()


if __name__ == '__main__':
    main()
