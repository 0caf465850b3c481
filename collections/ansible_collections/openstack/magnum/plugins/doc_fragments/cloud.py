# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The options of every module that acts on a cluster's resources on a cloud
    # (module_utils.cloud_module.CloudModule).
    DOCUMENTATION = r'''
options:
  cluster:
    description: Name or UUID of the cluster (its record in the store).
    type: str
    required: true
  cloud:
    description:
      - Name of the cloud in C(clouds.yaml). Defaults to E(OS_CLOUD).
    type: str
requirements:
  - openstacksdk
'''
