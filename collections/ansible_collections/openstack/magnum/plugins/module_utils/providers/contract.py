# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provider contract: what an infrastructure provider is to the rest of the project
(``Provider``, a small descriptor each provider's folder gives: providers/<name>/provider.py,
listed by providers/registry.py), and the rules by which every provider hands its servers
over (docs/developer/layout.md, "Writing a provider"): the stack suffix in their names,
servers as the nodes of a plan, and the facts the COE roles and the cluster's record get.

Nothing outside providers/ asks a provider's name: it asks its descriptor."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib


class Provider(object):
    """An infrastructure provider as the rest of the project sees it.

    ``name``: how the deployment names it (``MAGNUM_PROVIDER``, ``--provider``);
    ``roles``: the roles that make, change and remove its servers (the step plan's
    provider steps; none for a provider that makes nothing); ``cloud``: its servers are an
    OpenStack cloud's - jobs get the cloud's clouds.yaml and token cache, the API checks
    templates and clusters on the cloud (as the caller under Keystone) and gives clusters
    their cloud credential, the COE's cloud controller initializes the nodes, and the
    controller reaches nodes without floating IPs only through a bastion; ``checks``: a
    function of (kind, record, **context) refusing what the provider cannot build before
    it is recorded (kind ``template`` or ``cluster``), or None; ``shared_disk``: its nodes
    have no disk of their own but the host's filesystem, shared with everything else on
    it (a COE's disk-pressure rules would read the host's, not the node's)."""

    def __init__(self, name, roles=(), cloud=False, checks=None, shared_disk=False):
        self.name = name
        self.roles = tuple(roles)
        self.cloud = cloud
        self.checks = checks
        self.shared_disk = shared_disk

    def plan_roles(self, driver):
        """The provider's roles in the step plan of ``driver`` (a Driver.as_dict): none for
        a driver that brings its own infrastructure."""
        return [] if driver.get('own_infrastructure') else list(self.roles)

    def reaches_nodes(self, cluster, template):
        """Whether the controller reaches the cluster's nodes at the addresses its last
        operation recorded (the conductor's health rounds read their COE there): a cloud's
        servers without floating IPs are reached only through a bastion."""
        if not self.cloud:
            return True
        enabled = cluster.get('floating_ip_enabled')
        return template.get('floating_ip_enabled', True) if enabled is None else enabled

    def as_dict(self):
        return {'name': self.name, 'roles': list(self.roles), 'cloud': self.cloud,
                'shared_disk': self.shared_disk}


def stack_suffix(cluster_uuid):
    """Magnum's 12-character stack suffix, stable for a cluster."""
    digest = hashlib.sha256(cluster_uuid.encode('utf-8')).hexdigest()
    alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
    return ''.join(alphabet[int(digest[i:i + 2], 16) % 36] for i in range(0, 24, 2))


def servers_as_nodes(servers, prefix):
    """Node dicts from cloud servers (openstack.cloud.server_info) named ``prefix...``:
    the provider writes the node's group, role, index and address in its metadata."""
    nodes = []
    for server in servers or []:
        meta = server.get('metadata') or {}
        if not (server.get('name') or '').startswith(prefix) or 'magnum_index' not in meta:
            continue
        nodes.append({'name': server['name'], 'id': server.get('id', ''),
                      'state': server.get('status'), 'group': meta.get('magnum_nodegroup_uuid'),
                      'role': meta.get('magnum_role'), 'address': meta.get('magnum_address'),
                      'index': int(meta['magnum_index'])})
    return nodes


def provider_facts(nodes, new=None, remove=None, public=None, lb_address=None,
                   lb_private_address=None, servers=None):
    """What a provider hands the COE roles and the cluster's record once its servers are
    there (docs/developer/layout.md, "Writing a driver"), one rule for every provider:
    ``cluster_facts`` (``master_addresses``, ``node_addresses``, ``nodegroup_nodes``: each
    node at the address it is reached on), ``new_nodes`` and ``removing_nodes`` (names of
    the plan's nodes made and leaving), ``api_host``, where clients reach the COE's
    API: the master load balancer's address, else the first master's; and
    ``node_api_host``, where the cluster's own nodes reach it, as Magnum's templates give
    nodes the API's private address: the load balancer's address on the cluster's network
    (``lb_private_address``, else ``lb_address``), else the first master's own address —
    never a floating IP, which nodes would reach only back through the router.

    ``nodes``: the plan's nodes (name, role, group, address, id); ``public``: node name ->
    the address it is reached on, where that differs (a floating IP); ``servers``: the
    cloud's servers (name, id) once the operation made its own, where a node planned
    before its server existed gets its id - the node groups' records name their servers
    by it (the Heat view's ``refs_map``, which the cluster autoscaler maps nodes by)."""
    public = public or {}
    ids = dict((server.get('name'), server.get('id')) for server in servers or []
               if server.get('name') and server.get('id'))
    servers = [dict(node, id=node.get('id') or ids.get(node.get('name')) or '')
               for node in nodes or [] if node.get('role') != 'lb']

    def reached(node):
        return public.get(node['name']) or node.get('address')

    masters = [node for node in servers if node.get('role') == 'master']
    return {
        'cluster_facts': {
            'master_addresses': [reached(node) for node in masters],
            'node_addresses': [reached(node) for node in servers if node.get('role') != 'master'],
            'nodegroup_nodes': nodes_by_group(servers, public)},
        'new_nodes': [node['name'] for node in new or [] if node.get('role') != 'lb'],
        'removing_nodes': [node['name'] for node in remove or [] if node.get('role') != 'lb'],
        'api_host': lb_address or (reached(masters[0]) if masters else ''),
        'node_api_host': (lb_private_address or lb_address
                          or (masters[0].get('address') or '' if masters else '')),
    }


def nodes_by_group(nodes, public=None):
    """The planned nodes (``plan``'s ``nodes``) of each node group, as the
    ``nodegroup_nodes`` fact records them: group uuid -> [{name, id, address}], the
    address a node is reached on (``public``: name -> floating IP, where it has one)."""
    grouped, public = {}, public or {}
    for node in nodes or []:
        if node.get('role') == 'lb' or not node.get('group'):
            continue
        entry = dict((k, node[k]) for k in ('name', 'id', 'address') if node.get(k))
        if public.get(node.get('name')):
            entry['address'] = public[node['name']]
        grouped.setdefault(node['group'], []).append(entry)
    return grouped
