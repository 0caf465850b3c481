# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The provider contract every provider's role hands over (module_utils
# providers/contract.py): provider_facts, servers_as_nodes. Documentation: one YAML file
# per filter in this folder.

from ansible_collections.openstack.magnum.plugins.module_utils.providers import contract
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


class FilterModule(object):
    def filters(self):
        return wrap_all({
            'provider_facts': contract.provider_facts,
            'servers_as_nodes': contract.servers_as_nodes,
        })
