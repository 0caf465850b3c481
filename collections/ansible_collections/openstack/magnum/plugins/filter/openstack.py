# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The OpenStack provider's filters: servers, volumes, floating IPs, SSH routes, bare
# metal. Documentation: one YAML file per filter in this folder.

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    baremetal, cloud, cloud_servers, node_volumes)
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


class FilterModule(object):
    def filters(self):
        return wrap_all({
            'openstack_stack_name': cloud.stack_name,
            'openstack_volume_specs': cloud.node_volumes,
            'openstack_vm_servers': cloud_servers.specs,
            'openstack_user_data': cloud_servers.user_data,
            'openstack_server_floating_ips': cloud_servers.floating_addresses,
            'openstack_floating_ip_nodes': cloud_servers.floating_ip_nodes,
            'openstack_ssh_routes': cloud_servers.ssh_routes,
            'openstack_ssh_wait_outcome': cloud_servers.ssh_wait_outcome,
            'openstack_ssh_wait_failure': cloud_servers.ssh_wait_failure,
            'openstack_node_volume_list': node_volumes.of_node,
            'openstack_baremetal_servers': baremetal.servers_for,
        })
