# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's resources on an OpenStack cloud (openstacksdk): find every one of
them again, and delete them in the right order.

Every resource the ``openstack`` provider makes is named ``<stack>-...`` where
``<stack>`` is ``<cluster name>-<12-character suffix of the cluster uuid>`` (the
servers carry Magnum's node names, which share that prefix), and floating IPs,
which have no name, carry ``magnum-cluster=<uuid>`` in their description.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import time

from ansible_collections.openstack.magnum.plugins.module_utils.core import drivers
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import baremetal
from ansible_collections.openstack.magnum.plugins.module_utils.providers import contract
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, NotFound)

# What delete removes, in this order (the guide's note: the load balancer first,
# the network last but the security and server groups).
ORDER = ('load_balancers', 'floating_ips', 'servers', 'baremetal_nodes', 'volumes', 'ports',
         'router_interfaces', 'routers', 'subnets', 'networks', 'security_groups',
         'server_groups')


def stack_name(cluster):
    """``<name>-<suffix>``, the prefix of every resource name of the cluster."""
    base = '%s-%s' % (cluster['name'].lower(), contract.stack_suffix(cluster['uuid']))
    return re.sub(r'[^a-z0-9.-]', '-', base)


def fip_description(cluster):
    return 'magnum-cluster=%s' % cluster['uuid']


def floating_ip(conn, cluster, port_ident, external_network, create=True):
    """The floating IP on the port, else (``create``) a new one from the external
    network, allocated and associated in one request and described as the
    cluster's, so a crash cannot leave one behind that delete would not find.
    Returns (address or None, created)."""
    port = conn.network.find_port(port_ident, ignore_missing=True)
    if port is None:
        return None, False
    found = list(conn.network.ips(port_id=port.id))
    if found:
        return found[0].floating_ip_address, False
    if not create:
        return None, False
    network = conn.network.find_network(external_network, ignore_missing=False)
    made = conn.network.create_ip(floating_network_id=network.id, port_id=port.id,
                                  description=fip_description(cluster))
    return made.floating_ip_address, True


def release_floating_ips(conn, cluster, port_ident):
    """Delete the cluster's floating IPs on the port; returns their addresses."""
    port = conn.network.find_port(port_ident, ignore_missing=True)
    released = []
    for ip in (conn.network.ips(port_id=port.id) if port is not None else []):
        if (ip.description or '') == fip_description(cluster):
            conn.network.delete_ip(ip)
            released.append(ip.floating_ip_address)
    return released


def node_volumes(nodes, cluster, groups):
    """The Cinder volumes of ``nodes`` (plan nodes): ``<node>-docker`` of
    docker_volume_size (the node group's, else the cluster's) and, for masters,
    ``<node>-etcd`` of the etcd_volume_size label; types from docker_volume_type /
    etcd_volume_type."""
    labels = cluster.get('labels') or {}
    by_uuid = dict((g['uuid'], g) for g in groups)
    volumes = []
    for node in nodes:
        group = by_uuid.get(node['group']) or {}
        size = int(group.get('docker_volume_size') or cluster.get('docker_volume_size') or 0)
        if size > 0:
            volumes.append({'name': node['name'] + '-docker', 'server': node['name'],
                            'size': size, 'type': labels.get('docker_volume_type') or None})
        etcd = int(labels.get('etcd_volume_size') or 0)
        if node['role'] == 'master' and etcd > 0:
            volumes.append({'name': node['name'] + '-etcd', 'server': node['name'],
                            'size': etcd, 'type': labels.get('etcd_volume_type') or None})
    return volumes


def _mine(items, prefix):
    return [i for i in items if (getattr(i, 'name', None) or '').startswith(prefix)]


def suffixed_servers(conn, cluster_uuid):
    """Nova's servers whose name holds the cluster's stack suffix, as every one of the
    cluster's servers' names does (callers keep their own exact test). Nova is asked
    only for those: a detailed listing costs Nova, and Neutron for each listed
    server's security groups, per server."""
    return conn.compute.servers(details=True, name=contract.stack_suffix(cluster_uuid))


def _servers(conn, cluster):
    """The cluster's Nova servers (names starting with its stack name)."""
    return _mine(suffixed_servers(conn, cluster['uuid']), stack_name(cluster) + '-')


def _brief(item, **extra):
    data = {'id': item.id, 'name': getattr(item, 'name', None)}
    data.update(extra)
    return data


# What Kubernetes itself makes on the cloud for a cluster, named after the cluster's uuid
# (the cloud controller manager's --cluster-name and Cinder CSI's --cluster, as Magnum
# sets them): a LoadBalancer Service's Octavia load balancer
# (kube_service_<cluster>_<namespace>_<service>) and its floating IP, and a
# PersistentVolume's Cinder volume. Left behind, they hold the cluster's network (its
# delete refused "resources the cluster did not create") and cost their owner: the
# cluster's delete removes them first.
K8S_LB_PREFIX = 'kube_service_%s_'
# The octavia-ingress-controller's (its --cluster-name is the cluster's uuid too): an
# Ingress's load balancer and security group.
K8S_INGRESS_PREFIX = 'kube_ingress_%s_'
K8S_FIP_DESCRIPTION = ('Floating IP for Kubernetes external service ', ' from cluster %s')
K8S_VOLUME_OWNER = 'cinder.csi.openstack.org/cluster'


def _made_by_kubernetes(item, kind, cluster_uuid):
    if kind in ('load_balancers', 'security_groups'):
        name = item.name or ''
        return name.startswith(K8S_INGRESS_PREFIX % cluster_uuid) or (
            kind == 'load_balancers' and name.startswith(K8S_LB_PREFIX % cluster_uuid))
    if kind == 'floating_ips':
        text = item.description or ''
        return text.startswith(K8S_FIP_DESCRIPTION[0]) and \
            text.endswith(K8S_FIP_DESCRIPTION[1] % cluster_uuid)
    return (getattr(item, 'metadata', None) or {}).get(K8S_VOLUME_OWNER) == cluster_uuid


def scan(conn, cluster):
    """Every resource of the cluster, by kind: {kind: [{'id', 'name', ...}]}; those
    Kubernetes made for it (K8S_*) among its load balancers, floating IPs and volumes."""
    prefix = stack_name(cluster) + '-'
    uuid = cluster['uuid']
    found = dict((kind, []) for kind in ORDER)
    balancers = []
    if conn.has_service('load-balancer'):
        balancers = [lb for lb in conn.load_balancer.load_balancers()
                     if (lb.name or '').startswith(prefix)
                     or _made_by_kubernetes(lb, 'load_balancers', uuid)]
        found['load_balancers'] = [_brief(lb) for lb in balancers]
    found['servers'] = [_brief(s) for s in _servers(conn, cluster)]
    if conn.has_service('baremetal'):
        found['baremetal_nodes'] = [
            {'id': n.id, 'name': (n.extra or {}).get('magnum_node'), 'node': n.name,
             'provision_state': n.provision_state}
            for n in baremetal.claimed(conn, cluster['uuid'])]
    if conn.has_service('block-storage'):
        found['volumes'] = [_brief(v) for v in conn.block_storage.volumes()
                            if (v.name or '').startswith(prefix)
                            or _made_by_kubernetes(v, 'volumes', uuid)]
    networks = _mine(conn.network.networks(), prefix)
    found['networks'] = [_brief(n) for n in networks]
    subnets = _mine(conn.network.subnets(), prefix)
    found['subnets'] = [_brief(s) for s in subnets]
    routers = _mine(conn.network.routers(), prefix)
    found['routers'] = [_brief(r) for r in routers]
    subnet_ids = set(s.id for s in subnets)
    for router in routers:
        for port in conn.network.ports(device_id=router.id):
            for fixed in port.fixed_ips or []:
                if fixed.get('subnet_id') in subnet_ids or not subnet_ids:
                    found['router_interfaces'].append(
                        {'id': port.id, 'name': port.name, 'router_id': router.id,
                         'subnet_id': fixed.get('subnet_id')})
    found['ports'] = [_brief(p, device_owner=p.device_owner, network_id=p.network_id)
                      for p in _mine(conn.network.ports(), prefix)]
    # Floating IPs have no name: those on the cluster's ports or its load
    # balancers' VIP ports, or described as the cluster's.
    attached = set(p['id'] for p in found['ports'])
    attached.update(lb.vip_port_id for lb in balancers)
    found['floating_ips'] = [
        {'id': ip.id, 'name': ip.floating_ip_address, 'port_id': ip.port_id}
        for ip in conn.network.ips()
        if ip.port_id in attached or (ip.description or '') == fip_description(cluster)
        or _made_by_kubernetes(ip, 'floating_ips', uuid)]
    found['security_groups'] = [_brief(g) for g in conn.network.security_groups()
                                if (g.name or '').startswith(prefix)
                                or _made_by_kubernetes(g, 'security_groups', uuid)]
    found['server_groups'] = [_brief(g) for g in _mine(conn.compute.server_groups(), prefix)]
    return found


def foreign_ports(conn, cluster, found):
    """Ports on the cluster's networks that the cluster did not make (a user's
    server or load balancer added by hand): delete must not remove them."""
    ours = set(p['id'] for p in found['ports'])
    ours.update(i['id'] for i in found['router_interfaces'])
    # The VIP ports of the cluster's own load balancers.
    lb_devices = set('lb-' + lb['id'] for lb in found['load_balancers'])
    foreign = []
    for network in found['networks']:
        for port in conn.network.ports(network_id=network['id']):
            if port.id in ours or (port.device_owner or '').startswith('network:dhcp') \
                    or port.device_id in lb_devices or _amphora_port(port, lb_devices):
                continue
            foreign.append('%s (%s, %s)' % (port.name or port.id, port.device_owner or 'no owner',
                                            port.device_id or 'unattached'))
    return foreign


def _amphora_port(port, lb_devices):
    """An Octavia amphora's port on the network of one of the cluster's load balancers
    (``octavia-lb-vrrp-<amphora>``, owner Octavia): it goes with the load balancer."""
    return bool(lb_devices) and port.device_owner == 'Octavia' and \
        (port.name or '').startswith('octavia-lb-')


def _wait_gone(get, ident, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if get(ident) is None:
            return
        time.sleep(1)
    raise Conflict("Timed out after %ds waiting for %s %s to be deleted." % (timeout, what, ident))


def delete_all(conn, cluster, timeout=300, rounds=3):
    """Delete every resource of the cluster in ORDER; a second run finds nothing.
    Refuses (409, naming them) when ports the cluster did not make are on its
    network. Returns what was deleted, by kind.

    A create killed while a request was in flight (Nova answers a server POST
    only after it is recorded, and a loaded nova-api may take seconds) can leave a
    resource that appears after the first scan: the cluster is scanned again after
    each round until a scan finds nothing."""
    # openstacksdk where it is used, not when this file is imported: Ansible loads every
    # filter file of the collection to resolve any one filter (filter/openstack.py imports
    # this), and importing openstacksdk in each of a job's task processes cost ~3 CPU-s.
    from openstack import exceptions as sdk_exceptions
    deleted = {}
    found = scan(conn, cluster)
    for round_ in range(rounds):
        if not any(found.values()):
            break
        try:
            done = _delete_found(conn, cluster, found, timeout)
        except sdk_exceptions.ConflictException:
            # A resource that appeared during the round (a late server's port) holds
            # a subnet or network: the next round finds and deletes it first.
            if round_ == rounds - 1:
                raise
            done = {}
        for kind, items in done.items():
            deleted.setdefault(kind, []).extend(items)
        found = scan(conn, cluster)
    left = dict((kind, items) for kind, items in found.items() if items)
    if left:
        raise Conflict("Resources of the cluster remain after %d rounds of deletion: %s." % (
            rounds, ', '.join('%s %s' % (kind, i['name'] or i['id'])
                              for kind, items in sorted(left.items()) for i in items)))
    return deleted


def _delete_found(conn, cluster, found, timeout):
    foreign = foreign_ports(conn, cluster, found)
    if foreign:
        raise Conflict("The cluster's network has resources the cluster did not create; "
                       "delete them first: %s." % ', '.join(sorted(foreign)))
    for lb in found['load_balancers']:
        conn.load_balancer.delete_load_balancer(lb['id'], cascade=True, ignore_missing=True)
    for lb in found['load_balancers']:
        _wait_gone(lambda i: conn.load_balancer.find_load_balancer(i, ignore_missing=True),
                   lb['id'], timeout, 'load balancer')
    for ip in found['floating_ips']:
        conn.network.delete_ip(ip['id'], ignore_missing=True)
    for server in found['servers']:
        conn.compute.delete_server(server['id'], ignore_missing=True)
    for server in found['servers']:
        _wait_gone(lambda i: conn.compute.find_server(i, ignore_missing=True), server['id'],
                   timeout, 'server')
    for node in found['baremetal_nodes']:
        baremetal.release(conn, conn.baremetal.get_node(node['id']), timeout)
    for volume in found['volumes']:
        _wait_available(conn, volume['id'], timeout)
        conn.block_storage.delete_volume(volume['id'], ignore_missing=True)
    for volume in found['volumes']:
        _wait_gone(lambda i: conn.block_storage.find_volume(i, ignore_missing=True),
                   volume['id'], timeout, 'volume')
    for port in found['ports']:
        conn.network.delete_port(port['id'], ignore_missing=True)
    for iface in found['router_interfaces']:
        conn.network.remove_interface_from_router(iface['router_id'], port_id=iface['id'])
    for router in found['routers']:
        conn.network.update_router(router['id'], external_gateway_info={})
        conn.network.delete_router(router['id'], ignore_missing=True)
    for subnet in found['subnets']:
        conn.network.delete_subnet(subnet['id'], ignore_missing=True)
    for network in found['networks']:
        conn.network.delete_network(network['id'], ignore_missing=True)
    for group in found['security_groups']:
        conn.network.delete_security_group(group['id'], ignore_missing=True)
    for group in found['server_groups']:
        conn.compute.delete_server_group(group['id'], ignore_missing=True)
    return dict((kind, items) for kind, items in found.items() if items)


def _summed(needs):
    total = {}
    for flavor, count in needs:
        total[flavor] = total.get(flavor, 0) + count
    return sorted(total.items())


def _wait_available(conn, volume_id, timeout):
    """A volume detaches when its server goes; wait for that before deleting it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        volume = conn.block_storage.find_volume(volume_id, ignore_missing=True)
        if volume is None or volume.status in ('available', 'error', 'error_deleting'):
            return
        time.sleep(1)


# Names of a machine Glance images carry that are not ``uname -m``'s (Nova's canonical
# names are).
MACHINE_ALIASES = {'amd64': 'x86_64', 'x64': 'x86_64', 'arm64': 'aarch64', 'i386': 'i686',
                   'x86': 'i686'}


class CloudChecks(object):
    """Magnum's checks of a template or cluster against the cloud (its
    attr_validator), with Magnum's messages."""

    def __init__(self, conn):
        self.conn = conn
        self._images = {}

    def _image(self, ident):
        """Glance's image ``ident`` (None when there is none), looked up once."""
        if ident not in self._images:
            self._images[ident] = self.conn.image.find_image(ident, ignore_missing=True)
        return self._images[ident]

    @classmethod
    def connect(cls, cloud):
        """``cloud``: a clouds.yaml cloud name, openstack.connect() arguments, or a
        connection already made."""
        import openstack
        if not isinstance(cloud, (str, dict)):
            return cls(cloud)
        if isinstance(cloud, dict):
            return cls(openstack.connect(**cloud))
        return cls(openstack.connect(cloud=cloud))

    def image_distro(self, image_ident):
        """The image's ``os_distro`` (Glance): the template's cluster_distro."""
        image = self._image(image_ident)
        if image is None:   # Magnum's ImageNotFound is a 400
            raise Invalid("Image %s could not be found." % image_ident)
        distro = image.os_distro or (image.properties or {}).get('os_distro')
        if not distro:
            raise Invalid("Image %s doesn't contain os_distro field." % image_ident)
        return distro

    def image_machine(self, image_ident):
        """The machine the image's Glance ``architecture`` names, as ``uname -m`` prints
        it (Nova's names: x86_64, aarch64, ...), or None when it names none."""
        image = self._image(image_ident)
        named = None if image is None else (
            image.architecture or (image.properties or {}).get('architecture'))
        return MACHINE_ALIASES.get(str(named).lower(), str(named).lower()) if named else None

    def image_properties(self, image_ident):
        """The image's Glance properties (``magnum_packages``, ``kube_version``, ...);
        none for an image that is not there."""
        image = self._image(image_ident)
        return {} if image is None else dict(image.properties or {})

    def flavor(self, ident):
        if ident and self.conn.compute.find_flavor(ident, ignore_missing=True) is None:
            raise Invalid("Unable to find flavor %s." % ident)

    def keypair(self, ident):
        if ident and self.conn.compute.find_keypair(ident, ignore_missing=True) is None:
            raise NotFound("Unable to find keypair %s." % ident)

    def external_network(self, ident, pick=False):
        """The id of the external network ``ident`` names (Magnum's checks: it exists and
        is router:external); when none is named (optional, as in Magnum), None, or with
        ``pick`` - a cluster's servers need one - the cloud's only external network."""
        if not ident:
            return self._only_external_network() if pick else None
        network = self.conn.network.find_network(ident, ignore_missing=True)
        if network is None:
            raise Invalid("Unable to find external network %s" % ident)
        if not network.is_router_external:
            raise Invalid("The network %s is not an external network (router:external)." % ident)
        return network.id

    def _only_external_network(self):
        externals = sorted(self.conn.network.networks(is_router_external=True),
                           key=lambda n: n.name or n.id)
        if len(externals) == 1:
            return externals[0].id
        raise Invalid("The cluster template names no external network and the cloud has %s: "
                      "set the template's external_network_id (--external-network)." % (
                          'none' if not externals else '%d (%s)' % (
                              len(externals), ', '.join(n.name or n.id for n in externals))))

    def fixed_network(self, network, subnet):
        if network and self.conn.network.find_network(network, ignore_missing=True) is None:
            raise Invalid("Unable to find fixed network %s" % network)
        if subnet and self.conn.network.find_subnet(subnet, ignore_missing=True) is None:
            raise Invalid("Unable to find fixed subnet %s" % subnet)

    def capacity(self, server_type, needs):
        """Room on the cloud for the new servers, ``needs`` [(flavor, count)]: free
        Ironic nodes of each bare-metal flavor's resource class, else the project's
        compute quota (instances, cores, RAM), with Nova's message."""
        needs = [(flavor, count) for flavor, count in needs if flavor and count > 0]
        if server_type == 'bm':
            for flavor, count in _summed(needs):
                baremetal.capacity(self.conn, flavor, count)
            return
        if not needs:
            return
        limits = self.conn.compute.get_limits().absolute
        asked = {'instances': 0, 'cores': 0, 'ram': 0}
        for flavor_ident, count in needs:
            flavor = self.conn.compute.find_flavor(flavor_ident, ignore_missing=True)
            if flavor is None:
                raise Invalid("Unable to find flavor %s." % flavor_ident)
            asked['instances'] += count
            asked['cores'] += count * (flavor.vcpus or 0)
            asked['ram'] += count * (flavor.ram or 0)
        for what, limit, used in (('instances', limits.instances, limits.instances_used),
                                  ('cores', limits.total_cores, limits.total_cores_used),
                                  ('ram', limits.total_ram, limits.total_ram_used)):
            if limit is not None and limit >= 0 and (used or 0) + asked[what] > limit:
                raise Invalid("Quota exceeded for %s: Requested %d, but already used %d of %d %s"
                              % (what, asked[what], used or 0, limit, what))

    def servers_per_group(self, cluster, server_type):
        """How many servers (or claimed Ironic nodes) each node group has now."""
        if server_type == 'bm':
            metas = [n.extra or {} for n in baremetal.claimed(self.conn, cluster['uuid'])]
        else:
            metas = [s.metadata or {} for s in _servers(self.conn, cluster)]
        have = {}
        for meta in metas:
            group = meta.get('magnum_nodegroup_uuid')
            have[group] = have.get(group, 0) + 1
        return have

    def bare_metal(self, cluster, groups):
        """What bare-metal servers cannot have: Cinder volumes (Ironic's deploy
        writes the image to the node's own disk)."""
        labels = cluster.get('labels') or {}
        sized = [g['name'] for g in groups if int(g.get('docker_volume_size') or 0) > 0]
        if sized or int(cluster.get('docker_volume_size') or 0) > 0:
            raise Invalid("docker_volume_size is not supported on bare metal (server_type=bm).")
        for label in ('boot_volume_size', 'etcd_volume_size'):
            if int(labels.get(label) or 0) > 0:
                raise Invalid("%s is not supported on bare metal (server_type=bm)." % label)

    def template(self, tpl, pick=False):
        """As Magnum's template checks: not the keypair, which is a cluster's (a
        cluster without its own takes the template's, checked then). The external
        network's id (``pick``: as external_network's)."""
        self.flavor(tpl.get('flavor_id'))
        self.flavor(tpl.get('master_flavor_id'))
        external = self.external_network(tpl.get('external_network_id'), pick=pick)
        self.fixed_network(tpl.get('fixed_network'), tpl.get('fixed_subnet'))
        return external

    def node_image(self, tpl, labels=None):
        """The template's image holds the packages its driver's nodes need, or the
        nodes can install them, and its driver takes it (driver_spec.Driver.check_image);
        ``labels``: the cluster's, when they differ from the template's."""
        driver = drivers.find(tpl['coe'], tpl['server_type'], tpl['cluster_distro'],
                              tpl.get('labels'))
        driver.check_image(tpl['image_id'], self.image_properties(tpl['image_id']),
                           dict(tpl, labels=tpl.get('labels') if labels is None else labels))

    def cluster(self, cluster):
        self.flavor(cluster.get('flavor_id'))
        self.flavor(cluster.get('master_flavor_id'))
        self.keypair(cluster.get('keypair'))
        self.fixed_network(cluster.get('fixed_network'), cluster.get('fixed_subnet'))
