# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers of the local (docker) infrastructure provider: the cluster's
private subnet, node addresses, node names, which nodes a resize removes and
whether the Docker host has room for new nodes."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import ipaddress
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.core.fields import flavor_of
from ansible_collections.openstack.magnum.plugins.module_utils.providers.contract import (
    stack_suffix)

POOL = '10.192.0.0/11'  # /24 subnets for cluster networks
FIRST_HOST = 10         # .1 is the bridge gateway; .2-.9 are left free
LB_HOST = 5             # the master load balancer, when the cluster has one


def node_name(cluster_name, cluster_uuid, group, index):
    """``<cluster>-<suffix>-master-0`` / ``-node-0``; other groups insert their name."""
    kind = 'master' if group['role'] == 'master' else 'node'
    base = cluster_name.lower()
    if not group.get('is_default'):
        base = '%s-%s' % (base, group['name'].lower())
    name = '%s-%s-%s-%d' % (base, stack_suffix(cluster_uuid), kind, index)
    return re.sub(r'[^a-z0-9.-]', '-', name)


def lb_name(cluster_name, cluster_uuid):
    """``<cluster>-<suffix>-api-lb``: the master load balancer's server."""
    name = '%s-%s-api-lb' % (cluster_name.lower(), stack_suffix(cluster_uuid))
    return re.sub(r'[^a-z0-9.-]', '-', name)


def lb_address(subnet):
    return str(list(ipaddress.ip_network(subnet).hosts())[LB_HOST - 1])


def pick_subnet(used, cluster_uuid, wanted=None, pool=POOL):
    """The cluster's /24: ``wanted`` if free, else one from ``pool`` that overlaps none
    of the ``used`` CIDRs, starting at a place derived from the cluster uuid."""
    taken = [ipaddress.ip_network(u, strict=False) for u in used or []]
    if wanted:
        net = ipaddress.ip_network(wanted, strict=False)
        if any(net.overlaps(t) for t in taken):
            raise Invalid("fixed_subnet_cidr %s overlaps a network of the docker engine." % wanted)
        return str(net)
    subnets = list(ipaddress.ip_network(pool).subnets(new_prefix=24))
    start = int(hashlib.sha256(cluster_uuid.encode('utf-8')).hexdigest(), 16) % len(subnets)
    for offset in range(len(subnets)):
        net = subnets[(start + offset) % len(subnets)]
        if not any(net.overlaps(t) for t in taken):
            return str(net)
    raise Invalid("No free /24 left in %s for the cluster network." % pool)


def free_addresses(subnet, used, count):
    """``count`` addresses of ``subnet`` not in ``used``, lowest first."""
    taken = set(used or [])
    found = []
    for host in list(ipaddress.ip_network(subnet).hosts())[FIRST_HOST - 1:]:
        if str(host) not in taken:
            found.append(str(host))
            if len(found) == count:
                return found
    raise Invalid("The cluster network %s has no room for %d more nodes." % (subnet, count))


def plan_group(existing, wanted_count, to_remove=None):
    """Which existing nodes a group keeps and removes, and which indexes it adds.

    ``existing`` are node dicts with ``name``, ``id`` and ``index``. Named nodes
    (by name or container id) go first, then the highest indexes; named nodes at an
    unchanged count are replaced by new ones.
    """
    to_remove = list(to_remove or [])
    unknown = [r for r in to_remove
               if not any(r in (n['name'], n['id'], n['id'][:12]) for n in existing)]
    if unknown:
        raise Invalid("nodes_to_remove names nodes that are not in the group: %s"
                      % ', '.join(unknown))
    remove = [n for n in existing if n['name'] in to_remove or n['id'] in to_remove
              or n['id'][:12] in to_remove]
    keep = sorted([n for n in existing if n not in remove], key=lambda n: n['index'])
    while len(keep) > wanted_count:
        remove.append(keep.pop())
    # New nodes never take the number (the name) of one leaving in the same operation:
    # both exist until the COE has let the leaving one go.
    used = set(n['index'] for n in existing)
    add, index = [], 0
    while len(keep) + len(add) < wanted_count:
        if index not in used:
            add.append(index)
        index += 1
    return {'keep': keep, 'remove': remove, 'add': add}


LABEL = 'magnum.openstack.org/'


def existing_nodes(containers, lb=False):
    """Node dicts from docker_host_info containers (they carry our labels): the
    cluster's servers, or with ``lb`` its load balancer."""
    nodes = []
    for container in containers or []:
        if 'Labels' not in container and 'index' in container:
            # Already a node dict (another provider's servers, see servers_as_nodes).
            if (container.get('role') == 'lb') == bool(lb):
                nodes.append(container)
            continue
        labels = container.get('Labels') or {}
        if (labels.get(LABEL + 'role') == 'lb') != bool(lb):
            continue
        nodes.append({'name': (container.get('Names') or ['?'])[0].lstrip('/'),
                      'id': container.get('Id', ''),
                      'state': container.get('State'),
                      'group': labels.get(LABEL + 'nodegroup-uuid'),
                      'role': labels.get(LABEL + 'role'),
                      'address': labels.get(LABEL + 'address'),
                      'index': int(labels.get(LABEL + 'index', '0')),
                      'image': labels.get(LABEL + 'image')})
    return nodes


def plan(containers, cluster, groups, subnet, targets=None, remove=None):
    """What to create and remove so each group has its node count.

    ``targets`` maps group uuid -> wanted count (default: the group's
    node_count); ``remove`` names nodes to remove first. Returns
    ``{'create': [...], 'remove': [...], 'nodes': [...], 'lb': {...} or None}``
    where ``nodes`` is the cluster after the change, masters first, and ``lb``
    the master load balancer (``cluster['master_lb_enabled']``); ``create``
    holds the load balancer too when it does not exist yet (role ``lb``).
    """
    targets = targets or {}
    existing = existing_nodes(containers)
    known = set(g['uuid'] for g in groups)
    create, removing, final = [], [], []
    strays = [n for n in existing if n['group'] not in known]  # groups deleted meanwhile
    used = [n['address'] for n in existing if n['address'] and n not in strays]
    for group in groups:
        mine = [n for n in existing if n['group'] == group['uuid']]
        wanted = int(targets.get(group['uuid'], group['node_count']))
        names = [r for r in remove or [] if any(r in (n['name'], n['id'], n['id'][:12])
                                                for n in mine)]
        step = plan_group(mine, wanted, names)
        addresses = free_addresses(subnet, used, len(step['add'])) if step['add'] else []
        used.extend(addresses)
        flavor = flavor_of(group.get('flavor_id'), cluster.get('flavor_id'))
        for index, address in zip(step['add'], addresses):
            create.append({'name': node_name(cluster['name'], cluster['uuid'], group, index),
                           'address': address, 'index': index, 'group': group['uuid'],
                           'group_name': group['name'], 'role': group['role'],
                           'flavor': flavor, 'image': group.get('image_id')})
        removing.extend(dict(n, group_name=group['name']) for n in step['remove'])
        final.extend([dict(n, group_name=group['name'], flavor=flavor) for n in step['keep']])
        final.extend([dict(c) for c in create if c['group'] == group['uuid']])
    unknown = [r for r in remove or [] if not any(
        r in (n['name'], n['id'], n['id'][:12]) for n in removing)]
    if unknown:
        raise Invalid("nodes_to_remove names nodes that are not in the cluster: %s"
                      % ', '.join(unknown))
    removing.extend(dict(n, group_name=n['group']) for n in strays)
    final.sort(key=lambda n: (n['role'] != 'master', n['group_name'], n['index']))
    lb, balancers = None, existing_nodes(containers, lb=True)
    if cluster.get('master_lb_enabled'):
        lb = {'name': lb_name(cluster['name'], cluster['uuid']), 'address': lb_address(subnet),
              'index': 0, 'group': '', 'group_name': 'api-lb', 'role': 'lb',
              'flavor': flavor_of(cluster.get('master_flavor_id'), cluster.get('flavor_id'))}
        if not any(b['name'] == lb['name'] for b in balancers):
            create.append(dict(lb))
    removing.extend(dict(b, group_name='api-lb') for b in balancers
                    if not lb or b['name'] != lb['name'])
    keys = ('name', 'id', 'address', 'role', 'group_name')
    return {'create': create, 'nodes': final, 'lb': lb,
            'remove': [dict((k, n.get(k)) for k in keys) for n in removing]}


# The one image the docker provider boots: its Debian 12 node image (roles/node_image),
# under this name or this name and a version (``debian-12-r2``: a new name is a new
# image, so an upgrade to it rebuilds the nodes as it would on a cloud).
NODE_IMAGE = 'debian-12'


# A keypair's name as Nova takes one; here it also names the file keypairs/<name>.pub.
_KEYPAIR_NAME = re.compile(r'\A[A-Za-z0-9_@-][A-Za-z0-9._@ -]{0,254}\Z')


def keypair_problem(name):
    """Why the docker provider cannot take ``name`` as a keypair's, or ``''``: a name as
    Nova's (letters, digits, '.', '_', '-', '@', spaces), not a path (it names the file
    keypairs/<name>.pub of the provider's state)."""
    if name and not _KEYPAIR_NAME.match(str(name)):
        return ("Keypair %r is not a keypair name: letters, digits, '.', '_', '-', '@' and "
                "spaces, not beginning with '.' or a space." % (name,))
    return ''


def image_problem(image_id, catalog=None):
    """Why the docker provider cannot boot image ``image_id``, or ``''``: it has its node
    image (``NODE_IMAGE``, ``NODE_IMAGE-<version>``) and the names ``catalog``
    (MAGNUM_IMAGE_CATALOG) lists, and no other."""
    catalog = catalog or {}
    if image_id in catalog or image_id == NODE_IMAGE or \
            str(image_id).startswith(NODE_IMAGE + '-'):
        return ''
    return ("Image %s could not be found. The docker provider has its Debian 12 node image "
            "only, named %s or %s-<version>%s." % (
                image_id, NODE_IMAGE, NODE_IMAGE,
                ', and as %s (MAGNUM_IMAGE_CATALOG)' % ', '.join(sorted(catalog))
                if catalog else ''))


def images_problem(create, catalog=None):
    """The first image_problem of the nodes to create (plan entries with an ``image``)."""
    for node in create or []:
        problem = image_problem(node['image'], catalog) if node.get('image') else ''
        if problem:
            return problem
    return ''


MEMORY_UNITS = {'b': 1, 'k': 1024, 'm': 1024 ** 2, 'g': 1024 ** 3, 't': 1024 ** 4}


def memory_bytes(value):
    """Docker's memory notation (``512m``, ``2g``, or bytes) in bytes."""
    text = str(value).strip().lower()
    match = re.match(r'^(\d+(?:\.\d+)?)\s*([bkmgt]?)b?$', text)
    if not match:
        raise Invalid("Memory %r is not in Docker's notation (such as 512m or 2g)." % (value,))
    return int(float(match.group(1)) * MEMORY_UNITS[match.group(2) or 'b'])


def _gib(size):
    return '%.1f GiB' % (size / float(1024 ** 3))


def room_problem(create, flavors, host_memory, held, ratio):
    """Nova's RAM filter for the Docker host: why the new nodes ``create`` (plan
    entries with a ``flavor``) do not fit, or ``''``. Their flavors' memory limits
    (``flavors`` name -> {memory}), with ``held`` bytes the engine's Magnum nodes are
    limited to already, may add up to ``host_memory`` bytes times ``ratio``."""
    counts = {}
    for node in create or []:
        counts[node['flavor']] = counts.get(node['flavor'], 0) + 1
    needed = sum(count * memory_bytes(flavors[name]['memory'])
                 for name, count in counts.items())
    capacity = int(host_memory) * float(ratio)
    if not counts or int(held) + needed <= capacity:
        return ''
    asked = ', '.join('%d x %s' % (counts[name], name) for name in sorted(counts))
    return ("No valid host was found: the new nodes (%s) need %s of memory and the Magnum "
            "nodes on this Docker host hold %s already, over its %s x %s "
            "(infra_docker_ram_allocation_ratio)."
            % (asked, _gib(needed), _gib(int(held)), _gib(int(host_memory)), ratio))


def nodes_as_servers(nodes, groups):
    """The local nodes (``plan``'s) shaped as openstack.cloud.server_info gives servers,
    for images.rebuild_plan: a node is on the image it was started on (its label), else,
    started before nodes were labelled with it, on its group's."""
    images = dict((g['uuid'], g.get('image_id')) for g in groups)
    return [{'name': n['name'], 'image': n.get('image') or images.get(n['group']),
             'status': 'ACTIVE' if n.get('state', 'running') == 'running' else 'SHUTOFF',
             'metadata': {'magnum_nodegroup_uuid': n['group'], 'magnum_role': n['role'],
                          'magnum_index': str(n['index'])}}
            for n in nodes]
