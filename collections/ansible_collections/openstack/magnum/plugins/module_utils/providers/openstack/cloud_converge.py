# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bring a cluster's security groups and node volumes on an OpenStack cloud to what the
provider asks, with one connection and one listing per kind (instead of one module
process, login and lookup per rule or volume): what exists is left alone, what is
missing is made, and the answer says which was which."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict

ANY = ('any', '', None)


def _rule_key(protocol, port_min, port_max, remote):
    protocol = None if protocol in ANY else str(protocol).lower()
    if protocol is None:
        port_min = port_max = None
    return (protocol, None if port_min is None else int(port_min),
            None if port_max is None else int(port_max), remote)


def _existing_key(rule):
    return _rule_key(rule.get('protocol'), rule.get('port_range_min'),
                     rule.get('port_range_max'), rule.get('remote_ip_prefix'))


def security_groups(conn, groups, dry_run=False):
    """``groups``: [{'name', 'description', 'rules': [{'protocol', 'min', 'max',
    'remote'}]}], ingress IPv4 rules (protocol ``any`` for every protocol, without
    ports). Returns ({name: id or None}, [what was (or would be) made])."""
    ids, made = {}, []
    for spec in groups:
        group = conn.network.find_security_group(spec['name'], ignore_missing=True)
        if group is None:
            made.append('security group %s' % spec['name'])
            if dry_run:
                ids[spec['name']] = None
                have = set()
            else:
                group = conn.network.create_security_group(
                    name=spec['name'], description=spec.get('description') or '')
        if group is not None:
            ids[spec['name']] = group.id
            have = set(_existing_key(r) for r in (group.security_group_rules or [])
                       if r.get('direction') == 'ingress' and r.get('ethertype') == 'IPv4'
                       and not r.get('remote_group_id'))
        for rule in spec['rules']:
            key = _rule_key(rule['protocol'], rule.get('min'), rule.get('max'), rule['remote'])
            if key in have:
                continue
            have.add(key)
            made.append('%s: %s %s-%s from %s' % ((spec['name'],) + key))
            if dry_run:
                continue
            conn.network.create_security_group_rule(
                security_group_id=group.id, direction='ingress', ethertype='IPv4',
                protocol=key[0], port_range_min=key[1], port_range_max=key[2],
                remote_ip_prefix=key[3])
    return ids, made


def _wait_volumes(conn, ids, statuses, timeout):
    """Wait for every volume (id) to reach one of ``statuses``; an ``error`` state or
    the timeout is a Conflict naming the volume."""
    deadline = time.time() + timeout
    pending = dict(ids)
    while pending:
        for name, ident in list(pending.items()):
            volume = conn.block_storage.get_volume(ident)
            if volume.status in statuses:
                del pending[name]
            elif volume.status.startswith('error'):
                raise Conflict('Volume %s went to %s.' % (name, volume.status))
        if pending and time.time() > deadline:
            raise Conflict('Timed out after %ds waiting for volumes %s to be %s.' % (
                timeout, ', '.join(sorted(pending)), ' or '.join(statuses)))
        if pending:
            time.sleep(1)


def node_volumes(conn, volumes, timeout, dry_run=False):
    """``volumes``: [{'name', 'server', 'size', 'type'}]: each made where missing, then
    attached to its server where it is not. Creates and attachments are all requested
    before any is waited for. Returns ([what was (or would be) done], {name: volume id})."""
    done, created, attach, ids = [], {}, [], {}
    for spec in volumes:
        volume = conn.block_storage.find_volume(spec['name'], ignore_missing=True)
        if volume is None:
            done.append('create %s' % spec['name'])
            if dry_run:
                continue
            volume = conn.block_storage.create_volume(
                name=spec['name'], size=int(spec['size']), volume_type=spec.get('type') or None)
            created[spec['name']] = volume.id
        ids[spec['name']] = volume.id
        attach.append((spec, volume))
    _wait_volumes(conn, created, ('available',), timeout)
    servers, attaching = {}, {}
    for spec, volume in attach:
        server = servers.get(spec['server']) or conn.compute.find_server(
            spec['server'], ignore_missing=False)
        servers[spec['server']] = server
        if any(a.get('server_id') == server.id for a in (volume.attachments or [])):
            continue
        done.append('attach %s to %s' % (spec['name'], spec['server']))
        if dry_run:
            continue
        conn.compute.create_volume_attachment(server, volume_id=volume.id)
        attaching[spec['name']] = volume.id
    _wait_volumes(conn, attaching, ('in-use',), timeout)
    return done, ids


def delete_volumes(conn, names, timeout, dry_run=False):
    """Delete the named volumes that exist, each once it is detached. Returns
    [what was (or would be) deleted]: nothing on a cloud without Cinder, which has none."""
    if not conn.has_service('block-storage'):
        return []
    found = [v for v in (conn.block_storage.find_volume(n, ignore_missing=True) for n in names)
             if v is not None]
    done = ['delete %s' % v.name for v in found]
    if dry_run or not found:
        return done
    _wait_volumes(conn, dict((v.name, v.id) for v in found), ('available', 'error'), timeout)
    for volume in found:
        conn.block_storage.delete_volume(volume.id, ignore_missing=True)
    deadline = time.time() + timeout
    while any(conn.block_storage.find_volume(v.id, ignore_missing=True) for v in found):
        if time.time() > deadline:
            raise Conflict('Timed out after %ds waiting for volumes %s to be deleted.' % (
                timeout, ', '.join(sorted(v.name for v in found))))
        time.sleep(1)
    return done


def network(conn, prefix, spec, dry_run=False):
    """The cluster's private network ``<prefix>-network``, its subnet ``<prefix>-subnet``
    (``spec`` 'cidr', 'dns_nameservers') and router ``<prefix>-router`` to
    'external_network' with an interface on the subnet, each made where missing; or, when
    ``spec`` names a 'fixed_network', that network and its 'fixed_subnet' (else its first
    IPv4 subnet), only read. Returns ([done], {'network': id, 'subnet': the subnet's
    fields} or None in a dry run that would make them)."""
    if spec.get('fixed_network'):
        net = conn.network.find_network(spec['fixed_network'], ignore_missing=False)
        if spec.get('fixed_subnet'):
            subnet = conn.network.find_subnet(spec['fixed_subnet'], ignore_missing=False)
        else:
            subnet = next(iter(conn.network.subnets(network_id=net.id, ip_version=4)), None)
            if subnet is None:
                raise Conflict('Network %s has no IPv4 subnet.' % spec['fixed_network'])
        return [], {'network': net.id, 'subnet': subnet.to_dict(computed=False)}
    done = []
    net = conn.network.find_network(prefix + '-network', ignore_missing=True)
    if net is None:
        done.append('create network %s-network' % prefix)
        if not dry_run:
            net = conn.network.create_network(name=prefix + '-network')
    subnet = conn.network.find_subnet(prefix + '-subnet', ignore_missing=True)
    if subnet is None:
        done.append('create subnet %s-subnet (%s)' % (prefix, spec['cidr']))
        if not dry_run:
            subnet = conn.network.create_subnet(
                name=prefix + '-subnet', network_id=net.id, ip_version=4, cidr=spec['cidr'],
                dns_nameservers=spec.get('dns_nameservers') or [])
    router = conn.network.find_router(prefix + '-router', ignore_missing=True)
    if router is None:
        done.append('create router %s-router' % prefix)
        if not dry_run:
            external = conn.network.find_network(spec['external_network'], ignore_missing=False)
            router = conn.network.create_router(
                name=prefix + '-router', external_gateway_info={'network_id': external.id})
    attached = router is not None and subnet is not None and any(
        any(f.get('subnet_id') == subnet.id for f in (p.fixed_ips or []))
        for p in conn.network.ports(device_id=router.id))
    if not attached:
        done.append('attach %s-subnet to %s-router' % (prefix, prefix))
        if not dry_run:
            conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    if subnet is None:
        return done, None
    return done, {'network': net.id, 'subnet': subnet.to_dict(computed=False)}
