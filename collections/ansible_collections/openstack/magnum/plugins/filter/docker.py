# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The docker provider's filters (nodes as containers on the Docker host; module_utils
# providers/docker/). Documentation: one YAML file per filter in this folder.

from ansible_collections.openstack.magnum.plugins.module_utils.core import images
from ansible_collections.openstack.magnum.plugins.module_utils.providers.docker import (
    nodes as docker_nodes)
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


def docker_nodes_image_problem(create):
    """The docker provider's refusal of the new nodes' images (the catalog from
    MAGNUM_IMAGE_CATALOG, as the API reads it), or ''."""
    return docker_nodes.images_problem(create, images.catalog())


class FilterModule(object):
    def filters(self):
        return wrap_all({
            'docker_subnet': docker_nodes.pick_subnet,
            'docker_nodes_plan': docker_nodes.plan,
            'docker_nodes_existing': docker_nodes.existing_nodes,
            'docker_nodes_room': docker_nodes.room_problem,
            'docker_nodes_image_problem': docker_nodes_image_problem,
            'docker_nodes_as_servers': docker_nodes.nodes_as_servers,
        })
