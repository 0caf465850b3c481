# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The cluster a module acts on (argument_spec: cluster=dict(type='str', required=True)).
    DOCUMENTATION = r'''
options:
  cluster:
    description: Cluster name or UUID.
    type: str
    required: true
'''
