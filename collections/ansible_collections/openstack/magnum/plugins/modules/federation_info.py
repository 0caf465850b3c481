#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: federation_info
short_description: List or show federations of Magnum clusters
version_added: "0.1.0"
description:
  - Reads Federation records from the openstack.magnum store.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  name:
    description: Name or UUID of one federation; all when omitted.
    type: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: All federations
  openstack.magnum.federation_info:
'''

RETURN = r'''
federations:
  description: The matching federations.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "myfed", "hostcluster_id": "5d12f6fd-a196-4bf5-ae4c-1f639a523a52", "member_ids": []}]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.federation import federations


class FederationInfoModule(MagnumModule):
    argument_spec = dict(name=dict(type='str'))

    def run(self):
        if self.params['name']:
            records = [federations.get_federation(self.store, self.params['name'], self.scope)]
        else:
            records = self.store.find('federation')
        self.exit_json(changed=False, federations=records)


def main():
    FederationInfoModule()()


if __name__ == '__main__':
    main()
