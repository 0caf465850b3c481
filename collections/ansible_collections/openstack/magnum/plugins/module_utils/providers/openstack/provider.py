# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack provider (``openstack``): nodes are a cloud's Nova servers (or Ironic's
bare metal), made by the role infra_openstack; what it checks on the cloud is
providers/openstack/cloud.py's, connected when first asked (providers/checks.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.providers.contract import Provider

PROVIDER = Provider('openstack', roles=('infra_openstack',), cloud=True)
