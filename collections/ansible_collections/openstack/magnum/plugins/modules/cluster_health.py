#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_health
short_description: Record the health of a Magnum cluster
version_added: "0.1.0"
description:
  - Writes C(health_status) (C(HEALTHY), C(UNHEALTHY), C(UNKNOWN)) and C(health_status_reason)
    (node or component -> state) of a cluster, as the C(cluster_health) playbook finds them.
  - Health is written whatever operation runs; the cluster's C(status) is not touched.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cluster
options:
  health_status:
    description: The health.
    type: str
    required: true
    choices: [HEALTHY, UNHEALTHY, UNKNOWN]
  health_status_reason:
    description: State per node or component, keyed like C(swarm-x-node-0.status) or C(api).
    type: dict
    default: {}
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: A node is down
  openstack.magnum.cluster_health:
    cluster: swarm
    health_status: UNHEALTHY
    health_status_reason:
      swarm-abc-node-1.status: Down
'''

RETURN = r'''
cluster:
  description: The cluster's health fields after the change.
  returned: always
  type: dict
  sample: {"health_status": "HEALTHY", "health_status_reason": {"api": "ok"}}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle, states


class ClusterHealthModule(MagnumModule):
    argument_spec = dict(
        cluster=dict(type='str', required=True),
        health_status=dict(type='str', required=True, choices=list(states.HEALTH_STATUSES)),
        health_status_reason=dict(type='dict', default={}),
    )

    def run(self):
        cluster = lifecycle.get_cluster(self.store, self.params['cluster'], self.scope)
        wanted = {'health_status': self.params['health_status'],
                  'health_status_reason': self.params['health_status_reason']}
        changed = any(cluster.get(k) != v for k, v in wanted.items())
        if changed and not self.check_mode:
            cluster = self.store.update('cluster', cluster['uuid'], wanted)
        self.exit_json(changed=changed, cluster=dict(
            (k, cluster.get(k)) for k in ('uuid', 'name', 'health_status',
                                          'health_status_reason')))


def main():
    ClusterHealthModule()()


if __name__ == '__main__':
    main()
