# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's master load balancer (Octavia) with one connection: the load balancer, a
listener, pool and TCP health monitor per API port, every master a member, the
listeners' allowed CIDRs and a floating IP on the VIP; what exists is left alone,
what is missing is made (Octavia takes one change at a time: each is waited for), and
members that are no longer masters are removed."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud


class _Steps(object):
    """Octavia changes made one after another, each waited for (the load balancer is
    PENDING_UPDATE meanwhile), and recorded; in a dry run only recorded."""

    def __init__(self, conn, timeout, dry_run):
        self.conn, self.timeout, self.dry_run, self.done, self.lb = conn, timeout, dry_run, [], None

    def make(self, what, call, **attrs):
        self.done.append(what)
        if self.dry_run:
            return None
        made = call(**attrs)
        self.settle()
        return made

    def settle(self):
        if self.lb is not None:
            self.lb = self.conn.load_balancer.wait_for_load_balancer(
                self.lb.id, status='ACTIVE', failures=['ERROR'], interval=2, wait=self.timeout)


def _listener(steps, lb, name, port, cidrs):
    conn = steps.conn
    found = conn.load_balancer.find_listener(name, ignore_missing=True)
    if found is None:
        attrs = dict(name=name, load_balancer_id=lb.id, protocol='TCP', protocol_port=port)
        if cidrs:
            attrs['allowed_cidrs'] = cidrs
        return steps.make('create listener %s' % name, conn.load_balancer.create_listener,
                          **attrs)
    if cidrs and sorted(found.allowed_cidrs or []) != sorted(cidrs):
        steps.make('set allowed CIDRs of %s to %s' % (name, ', '.join(cidrs)),
                   conn.load_balancer.update_listener, listener=found, allowed_cidrs=cidrs)
    return found


def _pool(steps, listener, name):
    conn = steps.conn
    found = conn.load_balancer.find_pool(name, ignore_missing=True)
    if found is None and listener is not None:
        found = steps.make('create pool %s' % name, conn.load_balancer.create_pool, name=name,
                           listener_id=listener.id, protocol='TCP', lb_algorithm='ROUND_ROBIN')
    elif found is None:
        steps.done.append('create pool %s' % name)
    return found


def _monitor(steps, pool, name):
    conn = steps.conn
    if conn.load_balancer.find_health_monitor(name, ignore_missing=True) is not None:
        return
    if pool is None:
        steps.done.append('create health monitor %s' % name)
        return
    steps.make('create health monitor %s' % name, conn.load_balancer.create_health_monitor,
               name=name, pool_id=pool.id, type='TCP', delay=5, timeout=5, max_retries=3)


def _members(steps, pool, port, masters, subnet):
    """Every master (name, address) a member of the pool on ``port``; others removed."""
    conn = steps.conn
    have = list(conn.load_balancer.members(pool.id)) if pool is not None else []
    addresses = set(m['address'] for m in masters)
    for member in have:
        if member.address not in addresses:
            steps.make('remove member %s from %s' % (member.address, pool.name),
                       conn.load_balancer.delete_member, member=member, pool=pool,
                       ignore_missing=True)
    present = set(m.address for m in have)
    for master in masters:
        if master['address'] in present:
            continue
        name = '%s-%s' % (master['name'], port)
        if pool is None:
            steps.done.append('create member %s' % name)
            continue
        steps.make('create member %s' % name, conn.load_balancer.create_member, pool=pool,
                   name=name, address=master['address'], protocol_port=port, subnet_id=subnet)


def _floating_ip(steps, cluster, lb, external_network):
    conn = steps.conn
    if lb is None:
        steps.done.append('create a floating IP for the load balancer')
        return None
    found = list(conn.network.ips(port_id=lb.vip_port_id))
    if found:
        return found[0].floating_ip_address
    steps.done.append('create a floating IP for the load balancer')
    if steps.dry_run:
        return None
    network = conn.network.find_network(external_network, ignore_missing=False)
    return conn.network.create_ip(floating_network_id=network.id, port_id=lb.vip_port_id,
                                  description=cloud.fip_description(cluster)).floating_ip_address


def converge(conn, cluster, spec, timeout, dry_run=False):
    """``spec``: 'name' (the load balancer's; its listeners are ``<name>-<port>``, their
    pools and monitors ``<listener>-pool`` / ``-monitor``), 'subnet' (id), 'address'
    (the VIP), 'ports', 'masters' ([{'name', 'address'}]), 'allowed_cidrs' ([] leaves
    the listeners open), 'floating_ip_network' (None: no floating IP).
    Returns ([done], {'id', 'vip_address', 'floating_ip'} or None in a dry run)."""
    steps = _Steps(conn, timeout, dry_run)
    lb = conn.load_balancer.find_load_balancer(spec['name'], ignore_missing=True)
    if lb is None:
        steps.done.append('create load balancer %s (%s)' % (spec['name'], spec['address']))
        if not dry_run:
            lb = conn.load_balancer.create_load_balancer(
                name=spec['name'], vip_subnet_id=spec['subnet'], vip_address=spec['address'])
    steps.lb = lb
    steps.settle()
    lb = steps.lb
    for port in spec['ports']:
        listener_name = '%s-%s' % (spec['name'], port)
        listener = _listener(steps, lb, listener_name, int(port),
                             spec.get('allowed_cidrs') or []) if lb is not None else None
        if lb is None:
            steps.done.append('create listener %s' % listener_name)
        pool = _pool(steps, listener, listener_name + '-pool')
        _monitor(steps, pool, listener_name + '-monitor')
        _members(steps, pool, int(port), spec['masters'], spec['subnet'])
    address = None
    if spec.get('floating_ip_network'):
        address = _floating_ip(steps, cluster, lb, spec['floating_ip_network'])
    if lb is None:
        return steps.done, None
    return steps.done, {'id': lb.id, 'vip_address': lb.vip_address, 'floating_ip': address}
