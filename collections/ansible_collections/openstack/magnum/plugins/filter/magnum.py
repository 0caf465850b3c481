# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: driver_missing_roles
short_description: Roles of a cluster driver that are not installed
version_added: "0.1.0"
description:
  - Given the C(driver) returned by M(openstack.magnum.cluster_info), lists the driver roles
    missing from this collection (an empty list means the driver is installed).
options:
  _input:
    description: The driver dict.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Fail when the driver is absent
  ansible.builtin.assert:
    that: info.driver | openstack.magnum.driver_missing_roles | length == 0
'''

RETURN = r'''
_value:
  description: Names of the missing roles.
  type: list
  elements: str
'''

import os

from ansible.errors import AnsibleFilterError

from ansible_collections.openstack.magnum.plugins.module_utils import drivers, labels
from ansible_collections.openstack.magnum.plugins.module_utils.errors import MagnumError


def roles_dir():
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         '..', '..', 'roles'))


def driver_missing_roles(driver):
    try:
        return drivers.by_name(driver['name']).missing_roles(roles_dir())
    except (KeyError, TypeError, MagnumError) as exc:
        raise AnsibleFilterError('driver_missing_roles: %s' % exc)


def magnum_labels(value):
    try:
        return labels.parse(value)
    except MagnumError as exc:
        raise AnsibleFilterError('magnum_labels: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'driver_missing_roles': driver_missing_roles, 'magnum_labels': magnum_labels}
