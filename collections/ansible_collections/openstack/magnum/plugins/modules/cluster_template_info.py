#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_template_info
short_description: List or show Magnum cluster templates
version_added: "0.1.0"
description:
  - Reads ClusterTemplate records from the openstack.magnum store.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  name:
    description: Name or UUID of one template; all templates when omitted.
    type: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: All templates
  openstack.magnum.cluster_template_info:
  register: templates

- name: One template
  openstack.magnum.cluster_template_info:
    name: k8s-tpl
'''

RETURN = r'''
cluster_templates:
  description: The matching templates.
  returned: always
  type: list
  elements: dict
  sample: [{"uuid": "0b5b6cf8-52a0-4e31-9c40-31b0d2e4f0a2", "name": "k8s-tpl", "coe": "kubernetes"}]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import fields, lifecycle


class ClusterTemplateInfoModule(MagnumModule):
    argument_spec = dict(name=dict(type='str'))

    def run(self):
        if self.params['name']:
            records = [lifecycle.get_template(self.store, self.params['name'], self.scope)]
        else:
            records = self.store.find('cluster_template')
        self.exit_json(changed=False, cluster_templates=[
            fields.project(fields.CLUSTER_TEMPLATE, r) for r in records])


def main():
    ClusterTemplateInfoModule()()


if __name__ == '__main__':
    main()
