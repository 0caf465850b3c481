#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: quota
short_description: Set or remove a project's Magnum quota
version_added: "0.1.0"
description:
  - Sets the C(hard_limit) of a project for a resource (Magnum knows only C(Cluster)).
    Without a quota row a project may have 20 clusters.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  resource:
    description: The limited resource.
    type: str
    choices: [Cluster]
    default: Cluster
  hard_limit:
    description: Maximum number of resources of the project. Required when I(state=present).
    type: int
  state:
    description: Whether the quota row should exist.
    type: str
    choices: [present, absent]
    default: present
notes:
  - I(project_id) names the project the quota applies to.
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: At most 5 clusters for project demo
  openstack.magnum.quota:
    project_id: demo
    hard_limit: 5
'''

RETURN = r'''
quota:
  description: The quota row.
  returned: when state is present
  type: dict
  sample: {"id": 1, "project_id": "demo", "resource": "Cluster", "hard_limit": 5}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import model


class QuotaModule(MagnumModule):
    argument_spec = dict(
        resource=dict(type='str', default='Cluster', choices=['Cluster']),
        hard_limit=dict(type='int'),
        state=dict(type='str', default='present', choices=['present', 'absent']),
    )
    module_kwargs = dict(required_if=[('state', 'present', ['hard_limit'])])

    def run(self):
        project, resource = self.scope.project_id, self.params['resource']
        current = self.store.quota(project, resource, missing_ok=True)
        if self.params['state'] == 'absent':
            if current is None:
                self.exit_json(changed=False)
            if not self.check_mode:
                self.store.delete_quota(project, resource)
            self.exit_json(changed=True)
        model.build_quota({'project_id': project, 'resource': resource,
                           'hard_limit': self.params['hard_limit']})
        if current is not None and current['hard_limit'] == self.params['hard_limit']:
            self.exit_json(changed=False, quota=current)
        if self.check_mode:
            self.exit_json(changed=True, quota=current)
        record = self.store.set_quota(project, resource, self.params['hard_limit'],
                                      create=current is None)
        self.exit_json(changed=True, quota=record)


def main():
    QuotaModule()()


if __name__ == '__main__':
    main()
