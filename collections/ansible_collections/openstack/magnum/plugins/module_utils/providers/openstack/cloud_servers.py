# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's Nova servers (server_type=vm) with one connection: list them, make the
missing ones (server groups, each server's port with its fixed address, the server) and
wait for them all at once, or delete some with their ports. One module run does what a
task per server, port and poll did (each a process and a Keystone round trip)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import json
import re
import time

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict, Invalid


def user_data(public_key, user='magnum'):
    """The cloud-init user data that lets the provider in: ``user`` made with the
    cluster's key and passwordless sudo (the image's default user keeps the keypair the
    cluster was given, for people; cloud images refuse root's logins), or, for
    ``root``, root's own logins allowed with the key."""
    key = json.dumps(str(public_key).strip())
    if user == 'root':
        return '#cloud-config\ndisable_root: false\nssh_authorized_keys:\n  - %s\n' % key
    if not user or not all(c.isalnum() or c in '-_' for c in user):
        raise Invalid("The provider's SSH user %r is not a user name." % (user,))
    return ('#cloud-config\nusers:\n  - default\n  - name: %s\n    shell: /bin/bash\n'
            '    sudo: ALL=(ALL) NOPASSWD:ALL\n    lock_passwd: true\n'
            '    ssh_authorized_keys:\n      - %s\n' % (user, key))


def specs(nodes, cluster, groups, template):
    """openstack_servers' ``servers`` for plan nodes: the node's flavor, its node group's
    image (else the template's) and availability zone (else the cluster's label), the
    security group of its role and the server group of its node group (both named
    after the cluster, ``cloud.stack_name``), the boot_volume_size label."""
    prefix = cloud.stack_name(cluster)
    labels = cluster.get('labels') or {}
    by_uuid = dict((g['uuid'], g) for g in groups)
    servers = []
    for node in nodes:
        group = by_uuid.get(node['group']) or {}
        servers.append({
            'name': node['name'], 'flavor': node.get('flavor') or group.get('flavor_id'),
            'image': group.get('image_id') or template['image_id'],
            'address': node['address'], 'role': node['role'], 'index': node['index'],
            'nodegroup': node.get('group_name') or group.get('name'),
            'nodegroup_uuid': node['group'],
            'security_group': '%s-secgroup-%s' % (
                prefix, 'master' if node['role'] == 'master' else 'worker'),
            'server_group': '%s-%s' % (prefix, group.get('name') or node.get('group_name')),
            'availability_zone': (group.get('labels') or {}).get('availability_zone')
            or labels.get('availability_zone') or None,
            'boot_volume_size': int(labels.get('boot_volume_size') or 0)})
    return servers


def _servers(conn, cluster_uuid):
    """The cluster's servers (metadata magnum_cluster)."""
    return [s for s in cloud.suffixed_servers(conn, cluster_uuid)
            if (s.metadata or {}).get('magnum_cluster') == cluster_uuid]


def listed(conn, cluster_uuid):
    """The cluster's servers, shaped as openstack.cloud.server_info returns them (without
    its per-server network lookups)."""
    return [s.to_dict(computed=False) for s in _servers(conn, cluster_uuid)]


def floating_addresses(servers):
    """{server name: its floating IP} of servers shaped as ``listed`` returns them (Nova's
    addresses; a server without one is left out): where the controller reaches a node
    of a cluster it is not converging (health rounds)."""
    found = {}
    for server in servers or []:
        for entries in (server.get('addresses') or {}).values():
            for entry in entries or []:
                if entry.get('OS-EXT-IPS:type') == 'floating' and server.get('name'):
                    found.setdefault(server['name'], entry.get('addr'))
    return found


# A connection to a server that vanishes (deleted, stopped) mid-task ends within a minute
# instead of hanging (ServerAlive*): TCP sees no reset from an address that is gone.
SSH_OPTIONS = ('-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 '
               '-o ServerAliveInterval=15 -o ServerAliveCountMax=4')


def _first_master(nodes):
    masters = sorted((n for n in nodes or [] if n.get('role') == 'master'),
                     key=lambda n: int(n.get('index') or 0))
    return masters[0] if masters else None


def floating_ip_nodes(nodes, enabled, bastion=''):
    """The nodes given floating IPs: every one with floating_ip_enabled; else only the
    first master, the controller's way in (the jump host to the others), or none when
    the deployment names a bastion of its own."""
    if enabled:
        return [n['name'] for n in nodes or []]
    first = None if bastion else _first_master(nodes)
    return [first['name']] if first else []


# What ssh says when the server answers but has no such user, or not with this key.
REFUSED = 'Permission denied (publickey'
# ssh's notice before its error, with StrictHostKeyChecking=no: noise in a reason.
KNOWN_HOST_NOTICE = re.compile(r"Warning: Permanently added '[^']*' \([^)]*\) to the list of "
                               r"known hosts\.\s*")


def ssh_wait_outcome(results, user='magnum', routes=None):
    """Sorts the servers a first SSH wait (``wait_for_connection`` looped over server
    names) did not reach: {'silent': [names] - no answer, worth a hard reboot -,
    'behind': [names] reached through a node that is itself silent (``routes``:
    ssh_routes' answer, whose ``through`` names it) - nothing is known of them, they are
    waited for again once it answers, never rebooted for it -, 'refused': the reason
    naming those whose sshd answered and refused the cluster's key (empty when none)}. A
    server that refuses the key past the wait's bound will not let the provider in after a
    reboot either: its image did not run cloud-init with the server's user data, which
    makes ``user``."""
    silent, refused, error = [], [], ''
    for result in results or []:
        if not isinstance(result, dict) or not result.get('failed'):
            continue
        message = str(result.get('msg') or '')
        if REFUSED in message:
            refused.append(str(result.get('item')))
            error = error or KNOWN_HOST_NOTICE.sub('', message)
        else:
            silent.append(result.get('item'))
    reason = ''
    if refused:
        verbs = ('Servers %s answer SSH but refuse' if len(refused) > 1
                 else 'Server %s answers SSH but refuses') % ', '.join(refused)
        reason = ("%s the cluster's key for user %r: the image did not run cloud-init with "
                  "the server's user data (an image for clusters needs cloud-init reading a "
                  "config drive or the metadata service, as playbooks/cloud_image.yml builds "
                  "it). Last error: %s" % (verbs, user, error))
    routes = routes or {}
    behind = [name for name in silent
              if (routes.get(name) or {}).get('through') in silent]
    return {'silent': [name for name in silent if name not in behind], 'behind': behind,
            'refused': reason}


def ssh_wait_failure(results, timeout, reboot_after=None, user='magnum', boots=None,
                     progressing=None, last_lines=None):
    """Why a create's last SSH wait failed, '' when every server answered: the first server
    still silent with its connection error (a server that refused the key: ssh_wait_outcome's
    reason), the others named, then the bounds that ran out and how to give a slow cloud's
    guests longer (``timeout``: the whole wait's seconds; ``reboot_after``: when the silent
    ones were rebooted hard, None for none; ``boots``: the slowest boot of each of the
    cloud's last creates, which the reboot's bound scales with; ``progressing``: the silent
    servers not rebooted because their consoles still changed, ``last_lines`` their last
    console lines: openstack_consoles')."""
    outcome = ssh_wait_outcome(results, user)
    if outcome['refused']:
        return outcome['refused']
    failed = [r for r in results or [] if isinstance(r, dict) and r.get('failed')]
    if not failed:
        return ''
    first = failed[0]
    others = [str(r.get('item')) for r in failed[1:]]
    error = KNOWN_HOST_NOTICE.sub('', str(first.get('msg') or 'no answer')).strip()
    booting = str(first.get('item')) in (progressing or [])
    if booting:
        rebooted = (', not rebooted: its console still changed after %d s (last line: %r)'
                    % (int(reboot_after or 0),
                       str((last_lines or {}).get(first.get('item')) or '')[-200:]))
    else:
        rebooted = ('' if reboot_after is None else
                    ', rebooted hard after %d s of silence' % int(reboot_after))
    if rebooted and boots:
        rebooted += (' (the bound scales with the cloud: twice the slowest boot of its last '
                     '%d creates, %d s, if longer than infra_openstack_ssh_reboot_after)'
                     % (len(boots), max(int(b) for b in boots)))
    return ("%s: %s%s. Not answering over SSH within the wait's %d s%s: a slow cloud's guests "
            "may need longer - raise the cluster's create_timeout (the wait is half of it, "
            "at most 20 minutes), or set infra_openstack_ssh_timeout (and "
            "infra_openstack_ssh_reboot_after) in the playbooks' inventory."
            % (first.get('item'), error, (' (also silent: %s)' % ', '.join(others))
               if others else '', int(timeout), rebooted))


def ssh_routes(nodes, public, key_file, user='magnum', bastion=''):
    """How the controller reaches each node, {name: {'host', 'args'}} (Ansible's
    ansible_host and ansible_ssh_common_args): a node with a floating IP (``public``:
    name -> address) directly; one without through a jump host, as Kubespray's bastion -
    ``bastion`` (``[user@]host[:port]``) when given, else the first master's floating IP
    - by an SSH ProxyCommand with the cluster's key (``through``: the node it goes through,
    '' for none or the bastion). Never its fixed address from the controller itself: a
    node with neither is given its fixed address with no route, and the SSH wait fails
    naming it."""
    public = public or {}
    jump, through = None, ''
    if bastion:
        # its user, if none is given, is ssh's (the controller's configuration)
        target, port = str(bastion), ''
        if ':' in target:
            target, port = target.rsplit(':', 1)
        jump = (target, port)
    else:
        first = _first_master(nodes)
        if first is not None and public.get(first['name']):
            jump, through = ('%s@%s' % (user, public[first['name']]), ''), first['name']
    routes = {}
    for node in nodes or []:
        host = public.get(node['name'])
        args, via = SSH_OPTIONS, ''
        if not host:
            host = node.get('address') or ''
            if jump is not None:
                args += (' -o ProxyCommand="ssh -i %s %s%s -W %%h:%%p %s"'
                         % (key_file, SSH_OPTIONS, ' -p %s' % jump[1] if jump[1] else '',
                            jump[0]))
                via = through
        routes[node['name']] = {'host': host, 'args': args, 'through': via}
    return routes


def _found(cache, finder, ident, what):
    if ident not in cache:
        found = finder(ident, ignore_missing=True)
        if found is None:
            raise Invalid('%s %s does not exist.' % (what, ident))
        cache[ident] = found.id
    return cache[ident]


def server_groups(conn, names, policy, dry_run=False):
    """Each named server group, made where missing. Returns ({name: id}, [done])."""
    have = dict((g.name, g.id) for g in conn.compute.server_groups())
    ids, done = {}, []
    for name in names:
        if name not in have:
            done.append('create server group %s' % name)
            if not dry_run:
                have[name] = conn.compute.create_server_group(name=name, policy=policy).id
        ids[name] = have.get(name)
    return ids, done


def _port(conn, spec, network, subnet, address_pairs, secgroups, done, dry_run):
    name = spec['name'] + '-port'
    port = conn.network.find_port(name, ignore_missing=True)
    if port is not None:
        return port.id
    done.append('create port %s (%s)' % (name, spec['address']))
    if dry_run:
        return None
    group = _found(secgroups, conn.network.find_security_group, spec['security_group'],
                   'Security group')
    return conn.network.create_port(
        name=name, network_id=network, security_group_ids=[group],
        fixed_ips=[{'subnet_id': subnet, 'ip_address': spec['address']}],
        allowed_address_pairs=[{'ip_address': cidr} for cidr in address_pairs]).id


def _server_body(conn, spec, port, group_id, key_name, user_data, lookups):
    image = _found(lookups.setdefault('image', {}), conn.image.find_image, spec['image'], 'Image')
    body = dict(name=spec['name'], networks=[{'port': port}], metadata=dict(
        magnum_cluster=spec['cluster'], magnum_role=spec['role'],
        magnum_nodegroup=spec['nodegroup'], magnum_nodegroup_uuid=spec['nodegroup_uuid'],
        magnum_index=str(spec['index']), magnum_address=spec['address']),
        flavor_id=_found(lookups.setdefault('flavor', {}), conn.compute.find_flavor,
                         spec['flavor'], 'Flavor'))
    size = int(spec.get('boot_volume_size') or 0)
    if size > 0:
        body['block_device_mapping'] = [{
            'boot_index': 0, 'uuid': image, 'source_type': 'image', 'volume_size': size,
            'destination_type': 'volume', 'delete_on_termination': True}]
    else:
        body['image_id'] = image
    if key_name:
        body['key_name'] = key_name
    if spec.get('availability_zone'):
        body['availability_zone'] = spec['availability_zone']
    if group_id:
        body['scheduler_hints'] = {'group': group_id}
    if user_data:
        body['user_data'] = base64.b64encode(user_data.encode('utf-8')).decode('ascii')
    return body


def _wait_active(conn, cluster_uuid, ids, timeout):
    """Wait for every server (name -> id) to be ACTIVE, looking at them all in one listing
    a round; ERROR (with Nova's fault), a server gone, or the timeout is a Conflict naming
    the servers."""
    deadline, pending = time.time() + timeout, dict(ids)
    while pending:
        found = dict((s.id, s) for s in _servers(conn, cluster_uuid))
        for name, ident in list(pending.items()):
            server = found.get(ident) or conn.compute.find_server(ident, ignore_missing=True)
            if server is None:
                raise Conflict('Server %s (%s) is gone.' % (name, ident))
            if server.status == 'ACTIVE':
                del pending[name]
            elif server.status == 'ERROR':
                fault = (server.fault or {}).get('message') or 'no fault given'
                raise Conflict('Server %s went to ERROR: %s' % (name, fault))
        if not pending:
            return
        if time.time() > deadline:
            raise Conflict('Timed out after %ds waiting for servers %s to be ACTIVE.' % (
                timeout, ', '.join(sorted(pending))))
        time.sleep(2)


def create(conn, cluster_uuid, specs, options, dry_run=False):
    """Make the servers of ``specs`` that the cluster lacks, then wait for them.

    ``specs``: [{'name', 'flavor', 'image', 'address', 'role', 'nodegroup',
    'nodegroup_uuid', 'index', 'security_group', 'server_group', 'availability_zone',
    'boot_volume_size'}]; ``options``: 'network', 'subnet' (ids), 'address_pairs'
    (CIDRs the ports accept), 'key_name', 'user_data', 'server_groups' (names to have),
    'server_group_policy', 'timeout'. A server of that name that exists is left as it is
    (and waited for). Returns ([done], [the cluster's servers])."""
    names = list(options.get('server_groups') or [])
    names += [s['server_group'] for s in specs if s.get('server_group') not in names + [None]]
    group_ids, done = server_groups(conn, names, options['server_group_policy'], dry_run)
    have = dict((s['name'], s['id']) for s in listed(conn, cluster_uuid))
    lookups, secgroups, waiting = {}, {}, {}
    for spec in specs:
        if spec['name'] in have:
            waiting[spec['name']] = have[spec['name']]
            continue
        port = _port(conn, spec, options['network'], options['subnet'],
                     options.get('address_pairs') or [], secgroups, done, dry_run)
        done.append('create server %s' % spec['name'])
        if dry_run:
            continue
        body = _server_body(conn, dict(spec, cluster=cluster_uuid), port,
                            group_ids.get(spec.get('server_group')), options.get('key_name'),
                            options.get('user_data'), lookups)
        waiting[spec['name']] = conn.compute.create_server(**body).id
    if not dry_run:
        _wait_active(conn, cluster_uuid, waiting, options['timeout'])
    return done, listed(conn, cluster_uuid)


def delete(conn, cluster_uuid, names, timeout, dry_run=False):
    """Delete the cluster's servers of ``names`` and their ports (``<name>-port``), the
    servers first, waiting for them to go. Returns [done]."""
    servers = dict((s.name, s.id) for s in _servers(conn, cluster_uuid) if s.name in names)
    ports = [p for p in (conn.network.find_port(n + '-port', ignore_missing=True) for n in names)
             if p is not None]
    done = ['delete server %s' % n for n in sorted(servers)] + \
        ['delete port %s' % p.name for p in ports]
    if dry_run:
        return done
    for ident in servers.values():
        conn.compute.delete_server(ident, ignore_missing=True)
    deadline = time.time() + timeout
    while set(servers.values()) & set(s.id for s in _servers(conn, cluster_uuid)):
        if time.time() > deadline:
            raise Conflict('Timed out after %ds waiting for servers %s to be deleted.' % (
                timeout, ', '.join(sorted(servers))))
        time.sleep(2)
    for port in ports:
        conn.network.delete_port(port, ignore_missing=True)
    return done
