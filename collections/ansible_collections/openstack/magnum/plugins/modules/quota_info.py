#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: quota_info
short_description: Show Magnum quotas
version_added: "0.1.0"
description:
  - Lists quota rows, of one project (I(project_id)) or of all projects (I(all_projects)).
extends_documentation_fragment:
  - openstack.magnum.store
options:
  all_projects:
    description: List the quotas of every project.
    type: bool
    default: false
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: Every quota
  openstack.magnum.quota_info:
    all_projects: true
'''

RETURN = r'''
quotas:
  description: Quota rows.
  returned: always
  type: list
  elements: dict
  sample: [{"id": 1, "project_id": "demo", "resource": "Cluster", "hard_limit": 5}]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule


class QuotaInfoModule(MagnumModule):
    argument_spec = dict(all_projects=dict(type='bool', default=False))

    def run(self):
        project = None if self.params['all_projects'] else self.scope.project_id
        self.exit_json(changed=False, quotas=self.store.quotas(project))


def main():
    QuotaInfoModule()()


if __name__ == '__main__':
    main()
