# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The local provider's filters (nodes as containers on the Docker host), and the provider
# contract every provider hands over (provider_facts, servers_as_nodes: providers/contract.py). Documentation: one YAML file per
# filter in this folder.

from ansible_collections.openstack.magnum.plugins.module_utils.core import images
from ansible_collections.openstack.magnum.plugins.module_utils.providers import contract
from ansible_collections.openstack.magnum.plugins.module_utils.providers.local import local_nodes
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


def local_nodes_image_problem(create):
    """The local provider's refusal of the new nodes' images (the catalog from
    MAGNUM_IMAGE_CATALOG, as the API reads it), or ''."""
    return local_nodes.images_problem(create, images.catalog())


class FilterModule(object):
    def filters(self):
        return wrap_all({
            'local_subnet': local_nodes.pick_subnet,
            'local_nodes_plan': local_nodes.plan,
            'local_nodes_existing': local_nodes.existing_nodes,
            'local_nodes_room': local_nodes.room_problem,
            'local_nodes_image_problem': local_nodes_image_problem,
            'provider_facts': contract.provider_facts,
            'servers_as_nodes': contract.servers_as_nodes,
            'local_nodes_as_servers': local_nodes.nodes_as_servers,
        })
