# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bare-metal servers (``server_type=bm``) straight from Ironic (openstacksdk).

A cluster's bare-metal node is an Ironic node the operator enrolled and made
``available``, chosen by the resource class its Nova bare-metal flavor asks for
(``resources:CUSTOM_<CLASS>=1``, Nova's own rule, so the same flavors serve both
ways), claimed atomically by setting its ``instance_uuid`` (Ironic refuses a
second claim), marked in ``extra`` with the cluster and node it serves, given the
cluster's Neutron port as its VIF, and deployed with the cluster's image and a
config drive carrying the cluster's SSH key. Releasing undeploys it, detaches the
VIF and clears the marks: the node is ``available`` for the next cluster.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import time
import uuid

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict, Invalid

# Metadata kept in the node's ``extra`` (the same keys as a VM's server metadata).
MARKS = ('magnum_cluster', 'magnum_node', 'magnum_role', 'magnum_nodegroup',
         'magnum_nodegroup_uuid', 'magnum_index', 'magnum_address', 'magnum_port')
BUSY_STATES = ('deploying', 'wait call-back', 'deleting', 'cleaning', 'clean wait')
FLAVOR_RC = re.compile(r'^resources:(CUSTOM_[A-Z0-9_]+)$')


def normalized_class(resource_class):
    """Placement's name of an Ironic resource class (what Nova flavors ask for)."""
    return 'CUSTOM_' + re.sub(r'[^A-Z0-9_]', '_', (resource_class or '').upper())


def flavor_class(flavor):
    """The custom resource class a bare-metal flavor asks for, or Invalid."""
    specs = getattr(flavor, 'extra_specs', None) or {}
    wanted = [m.group(1) for m in (FLAVOR_RC.match(k) for k, v in specs.items()
                                   if str(v) != '0') if m]
    if len(wanted) != 1:
        raise Invalid("Flavor %s is not a bare metal flavor: it needs one "
                      "resources:CUSTOM_<CLASS>=1 property." % flavor.name)
    return wanted[0]


def find_flavor(conn, ident):
    flavor = conn.compute.find_flavor(ident, ignore_missing=True, get_extra_specs=True)
    if flavor is None:
        raise Invalid("Unable to find flavor %s." % ident)
    return flavor


def free_nodes(conn, resource_class):
    """Available, unclaimed nodes out of maintenance, of that (normalized) class (a node
    still marked for a cluster is being redeployed for it)."""
    return [n for n in conn.baremetal.nodes(details=True, provision_state='available')
            if not n.is_maintenance and not n.instance_id
            and not (n.extra or {}).get('magnum_cluster')
            and normalized_class(n.resource_class) == resource_class]


def claimed(conn, cluster_uuid):
    """The cluster's nodes (whatever their state), from the marks in ``extra``."""
    return [n for n in conn.baremetal.nodes(details=True)
            if (n.extra or {}).get('magnum_cluster') == cluster_uuid]


def claimed_by_name(conn, cluster_uuid):
    """The cluster's nodes by the server name they are claimed for."""
    return dict((n.extra.get('magnum_node'), n) for n in claimed(conn, cluster_uuid))


def as_server(node):
    """The node in the shape of a server (openstack.cloud.server_info) for the planner."""
    extra = node.extra or {}
    return {'id': node.id, 'name': extra.get('magnum_node'),
            'status': 'ACTIVE' if node.provision_state == 'active'
            else (node.provision_state or 'unknown').upper(),
            'metadata': dict((k, extra[k]) for k in MARKS if k in extra),
            'image': {'id': (node.instance_info or {}).get('image_source')},
            'baremetal_node': node.name or node.id}


def instance_uuid(cluster_uuid, node_name):
    """The instance uuid a node of the cluster is claimed with (stable, so a retry
    finds its own claim)."""
    return str(uuid.uuid5(uuid.UUID(cluster_uuid), node_name))


def _claim(conn, spec, resource_class, cluster_uuid):
    marks = dict(('magnum_' + k, str(spec[k])) for k in
                 ('role', 'nodegroup', 'nodegroup_uuid', 'index', 'address', 'port')
                 if k in spec)
    marks.update(magnum_cluster=cluster_uuid, magnum_node=spec['name'])
    for node in free_nodes(conn, resource_class):
        try:
            return conn.baremetal.update_node(
                node, instance_id=instance_uuid(cluster_uuid, spec['name']),
                extra=dict(node.extra or {}, **marks), retry_on_conflict=False)
        except Exception as exc:  # another claim won this node: try the next one
            if getattr(exc, 'status_code', None) != 409:
                raise
    raise Conflict("No available bare metal node of resource class %s for %s."
                   % (resource_class, spec['name']))


def config_drive(spec, public_keys):
    return {'meta_data': {'uuid': spec.get('instance_uuid'), 'name': spec['name'],
                          'hostname': spec['name'],
                          'public_keys': dict(('key-%d' % i, k) for i, k in enumerate(public_keys))},
            'user_data': spec.get('user_data') or ''}


def deploy(conn, cluster_uuid, spec, public_keys, timeout):
    """Claim (or find the earlier claim of) a node for ``spec`` ({name, flavor,
    image, port, role, nodegroup, nodegroup_uuid, index, address, user_data}),
    attach the port, deploy the image. Returns (node, changed)."""
    if spec.get('port'):  # a name or ID: the node's marks keep the ID
        spec = dict(spec, port=conn.network.find_port(spec['port'], ignore_missing=False).id)
    mine = [n for n in claimed(conn, cluster_uuid) if n.extra.get('magnum_node') == spec['name']]
    node = mine[0] if mine else None
    if node is not None and node.provision_state == 'active':
        return node, False
    if node is not None and node.provision_state in ('deploy failed', 'error'):
        release(conn, node, timeout)
        node = None
    if node is None:
        flavor = find_flavor(conn, spec['flavor'])
        node = _claim(conn, spec, flavor_class(flavor), cluster_uuid)
        image = conn.image.find_image(spec['image'], ignore_missing=False)
        node = conn.baremetal.update_node(node, instance_info={
            'image_source': image.id, 'root_gb': str(flavor.disk or 1),
            'display_name': spec['name']})
    if spec.get('port') and spec['port'] not in conn.baremetal.list_node_vifs(node):
        conn.baremetal.attach_vif_to_node(node, spec['port'])
    if node.provision_state == 'available':
        drive = config_drive(dict(spec, instance_uuid=node.instance_id), public_keys)
        conn.baremetal.set_node_provision_state(node, 'active', config_drive=drive)
    node = wait_state(conn, node.id, ('active', 'deploy failed', 'error'), timeout)
    if node.provision_state != 'active':
        raise Conflict("Deploying bare metal node %s for %s failed: %s"
                       % (node.name or node.id, spec['name'], node.last_error))
    return node, True


def needs_rebuild(node, image_id):
    """Whether the node is not (cleanly) deployed with the image."""
    return not (node.provision_state == 'active'
                and (node.instance_info or {}).get('image_source') == image_id)


def rebuild(conn, node, image_id, public_keys, timeout):
    """Deploy ``image_id`` again on a claimed node (same node, VIF and address) with a
    fresh config drive: Ironic's rebuild, or where Ironic fails it with a server error
    (Ironic 39 fails every rebuild: ``auto_lessee`` unset in
    ironic/conductor/deployments.py), an undeploy and a deploy of the same node."""
    name = node.extra['magnum_node']
    drive = config_drive({'name': name, 'instance_uuid': node.instance_id}, public_keys)
    info = dict(node.instance_info or {}, image_source=image_id)
    node = conn.baremetal.update_node(node, instance_info=info)
    try:
        conn.baremetal.set_node_provision_state(node, 'rebuild', config_drive=drive)
    except Exception as exc:
        if (getattr(exc, 'status_code', None) or 0) < 500:
            raise
        _redeploy(conn, node, info, drive, timeout)
    node = wait_state(conn, node.id, ('active', 'deploy failed', 'error'), timeout)
    if node.provision_state != 'active':
        raise Conflict("Rebuilding bare metal node %s for %s failed: %s"
                       % (node.name or node.id, name, node.last_error))
    return node


def _redeploy(conn, node, instance_info, drive, timeout):
    """Undeploy the node and deploy it again with ``instance_info``, keeping its claim
    (instance uuid and marks; a node marked for a cluster is never taken as free) and
    VIFs."""
    vifs = conn.baremetal.list_node_vifs(node)
    conn.baremetal.set_node_provision_state(node, 'deleted')
    undeployed = wait_state(conn, node.id, ('available', 'manageable', 'clean failed'), timeout)
    if undeployed.provision_state != 'available':
        raise Conflict("Rebuilding bare metal node %s for %s failed: it is %s after undeploy: %s"
                       % (node.name or node.id, node.extra['magnum_node'],
                          undeployed.provision_state, undeployed.last_error))
    node = conn.baremetal.update_node(undeployed, instance_id=node.instance_id, extra=node.extra,
                                      instance_info=instance_info)
    attached = conn.baremetal.list_node_vifs(node)
    for vif in vifs:
        if vif not in attached:
            conn.baremetal.attach_vif_to_node(node, vif)
    conn.baremetal.set_node_provision_state(node, 'active', config_drive=drive)


def wait_state(conn, node_id, states, timeout):
    deadline = time.time() + timeout
    while True:
        node = conn.baremetal.get_node(node_id)
        if node.provision_state in states:
            return node
        if time.time() > deadline:
            raise Conflict("Timed out after %ds waiting for bare metal node %s to be %s (it is %s)."
                           % (timeout, node.name or node.id, ' or '.join(states),
                              node.provision_state))
        time.sleep(1)


def release(conn, node, timeout):
    """Undeploy the node, detach its VIFs and clear the cluster's marks."""
    if node.provision_state in BUSY_STATES:
        node = wait_state(conn, node.id, ('active', 'available', 'manageable', 'deploy failed',
                                          'error', 'clean failed'), timeout)
    if node.provision_state in ('active', 'deploy failed', 'error', 'wait call-back'):
        conn.baremetal.set_node_provision_state(node, 'deleted')
        node = wait_state(conn, node.id, ('available', 'manageable', 'clean failed', 'cleaning',
                                          'clean wait'), timeout)
    for vif in conn.baremetal.list_node_vifs(node):
        conn.baremetal.detach_vif_from_node(node, vif, ignore_missing=True)
    extra = dict((k, v) for k, v in (node.extra or {}).items() if k not in MARKS)
    changes = {'extra': extra}
    if node.instance_id:
        changes['instance_id'] = None
    if node.instance_info:
        changes['instance_info'] = {}
    conn.baremetal.update_node(node, **changes)


def capacity(conn, flavor_ident, needed):
    """Invalid unless ``needed`` free nodes of the flavor's resource class exist."""
    if needed <= 0:
        return
    resource_class = flavor_class(find_flavor(conn, flavor_ident))
    free = len(free_nodes(conn, resource_class))
    if free < needed:
        raise Invalid("Not enough bare metal nodes for flavor %s (resource class %s): "
                      "%d needed, %d available." % (flavor_ident, resource_class, needed, free))


def servers_for(nodes, groups, template):
    """openstack_baremetal's ``servers`` for plan nodes: flavor, the node group's image
    (else the template's), the node's port (``<node>-port``) and its marks."""
    by_uuid = dict((g['uuid'], g) for g in groups)
    servers = []
    for node in nodes:
        group = by_uuid.get(node['group']) or {}
        servers.append({'name': node['name'], 'flavor': node.get('flavor') or group.get('flavor_id'),
                        'image': group.get('image_id') or template['image_id'],
                        'port': node['name'] + '-port', 'role': node['role'],
                        'nodegroup': node.get('group_name') or group.get('name'),
                        'nodegroup_uuid': node['group'], 'index': node['index'],
                        'address': node['address']})
    return servers
