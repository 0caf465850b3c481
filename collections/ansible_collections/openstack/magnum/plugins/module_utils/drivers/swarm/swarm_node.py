# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Swarm node's Docker engine set up in one run on the node (module
``swarm_node_setup``), every node at once: its package, its volume, its certificates,
its daemon.json and unit drop-in, restarted where any changed, then waited for; then,
in the same run, the node in the swarm - the first manager initialises it, every other
node asks that manager's engine for the join token (over TLS with its own certificate:
the token never passes through the controller) until it gives one, and joins.

The managers' engine listens on TCP - with TLS from the cluster CA (swarm_port 2376),
or plain (2375) with the template's tls_disabled; every engine keeps its local socket."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps, node_values
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    node_volumes)

DAEMON_JSON = '/etc/docker/daemon.json'
DROPIN = '/etc/systemd/system/docker.service.d/magnum.conf'
LOCAL_SOCKET = 'unix:///var/run/docker.sock'
# The engine's command line names no socket: daemon.json's hosts choose them (dockerd
# refuses hosts given in both).
EXEC_START = '/usr/sbin/dockerd --containerd=/run/containerd/containerd.sock'
# What the engine answers once it runs: its version and its swarm state.
ENGINE_STATE = '{{.ServerVersion}} {{.Swarm.LocalNodeState}}'
SWARM_STATE = '{{.Swarm.LocalNodeState}}'
# The swarm's port on its managers (raft and joins).
SWARM_PORT = 2377
# Seconds one ask of another engine may take (an address that drops packets would
# otherwise hold the docker CLI for minutes).
ASK_TIMEOUT = 10
# (file name, field of tls, mode)
TLS_FILES = (('ca.pem', 'ca', 0o644), ('cert.pem', 'cert', 0o644), ('key.pem', 'key', 0o600))


def daemon_config(manager, port, tls_dir, storage_driver, insecure_registry=''):
    """The engine's daemon.json: the local socket (and TCP on ``port`` on a manager),
    TLS from ``tls_dir`` when given, the storage driver, the template's insecure registry
    (pulled from over HTTPS unverified, or HTTP)."""
    config = {'hosts': [LOCAL_SOCKET] + (['tcp://0.0.0.0:%d' % int(port)] if manager else []),
              'storage-driver': storage_driver}
    if tls_dir:
        config.update({'tls': True, 'tlsverify': True,
                       'tlscacert': tls_dir + '/ca.pem',
                       'tlscert': tls_dir + '/cert.pem',
                       'tlskey': tls_dir + '/key.pem'})
    if insecure_registry:
        config['insecure-registries'] = [insecure_registry]
    # As Ansible's to_nice_json writes it (a node configured before keeps its file).
    return json.dumps(config, indent=4, sort_keys=True, separators=(',', ': '))


def engine_dropin(proxy):
    """The engine unit's drop-in: its command line without sockets, the template's
    proxies for its pulls (validated as environment names, quoted for systemd)."""
    return ('[Service]\nExecStart=\nExecStart=%s\n' % EXEC_START
            + node_values.systemd_environment(proxy or {}))


class EngineSetup(node_steps.NodeSteps):
    """The steps, in order; ``all(params)`` runs them (the module's parameters)."""

    def volumes(self, volumes, paths):
        """The node's Cinder volumes mounted (the engine's data), the engine stopped first
        where one is mounted now: what it wrote before is not hidden under the mount."""
        if not volumes:
            return False
        if node_volumes.unmounted(volumes, paths) and not self.check_mode:
            self.command(['systemctl', 'stop', 'docker.socket', 'docker.service'],
                         'Stopping the engine before its volume is mounted')
        before = len(self.changes)
        node_volumes.mount(self, volumes, paths)
        return len(self.changes) > before

    def certificates(self, tls_dir, tls):
        """The CA, the node's certificate and key in ``tls_dir``; an engine that already
        trusts this CA keeps its certificate (the one offered is not written)."""
        if not tls:
            return False
        have = self.read(os.path.join(tls_dir, 'ca.pem'))
        if have == tls['ca'] and all(os.path.isfile(os.path.join(tls_dir, name))
                                     for name, _field, _mode in TLS_FILES):
            return False
        self.directory(tls_dir)
        for name, field, mode in TLS_FILES:
            self.file(os.path.join(tls_dir, name), tls[field], mode)
        return True

    def configure(self, params):
        tls_dir = params['tls_dir'] if params.get('tls') else None
        daemon = self.file(DAEMON_JSON, daemon_config(
            params['manager'], params['port'], tls_dir, params['storage_driver'],
            params.get('insecure_registry') or ''))
        dropin = self.file(DROPIN, engine_dropin(params.get('proxy')))
        self.reload = self.reload or dropin
        return daemon or dropin

    def restart(self, changed):
        """The engine restarted where anything changed, started where it is not active."""
        if self.check_mode:
            return
        if self.reload:
            self.command(['systemctl', 'daemon-reload'], 'Reloading systemd')
        active = self._run(['systemctl', 'is-active', '--quiet', 'docker.service'])[0] == 0
        if changed or not active:
            if not changed:
                self.changed('started the engine')
            self.command(['systemctl', 'restart', 'docker.service'], 'Restarting the engine')

    def remote(self, address, params):
        """The docker CLI asking the engine at ``address`` (a manager's TCP port: with TLS,
        this node's certificate from the cluster CA), each ask bounded."""
        argv = ['timeout', str(ASK_TIMEOUT), 'docker']
        if params.get('tls'):
            tls_dir = params['tls_dir']
            argv += ['--tlsverify', '--tlscacert', tls_dir + '/ca.pem',
                     '--tlscert', tls_dir + '/cert.pem', '--tlskey', tls_dir + '/key.pem']
        return argv + ['-H', 'tcp://%s:%d' % (address, int(params['port']))]

    def peer_in_swarm(self, params, peers):
        """The first of the other managers ``peers`` whose engine is in a swarm (asked once
        each; one that does not answer counts as in none): a first manager that was replaced
        joins their swarm rather than make a second."""
        for peer in peers:
            rc, out = self.command(self.remote(peer, params) + ['info', '--format', SWARM_STATE],
                                   'Asking ' + peer, check=False)
            if rc == 0 and out.strip() == 'active':
                return peer
        return None

    def swarm(self, params, state):
        """This node in the swarm (``params['swarm']``): where it is in none, the first
        manager initialises it (unless another manager already has one), every other node
        joins the swarm of ``join`` (a manager's address), its token asked of that manager's
        engine until it gives one (the manager may be initialising it at this moment).
        Returns the node's swarm state."""
        spec = params.get('swarm')
        if not spec or state == 'active' or self.check_mode:
            return state
        address = spec['advertise_address']
        leader = spec.get('join')
        if not leader:
            leader = self.peer_in_swarm(params, spec.get('peers') or [])
        if not leader:
            argv = ['docker', 'swarm', 'init', '--advertise-addr', address]
            if spec.get('default_addr_pool'):
                argv += ['--default-addr-pool', spec['default_addr_pool']]
            if spec.get('default_addr_pool_mask_length'):
                argv += ['--default-addr-pool-mask-length',
                         str(spec['default_addr_pool_mask_length'])]
            self.command(argv, 'Initialising the swarm')
            self.changed('initialised the swarm')
        else:
            kind = 'manager' if params.get('manager') else 'worker'
            token = self.wait(self.remote(leader, params) + ['swarm', 'join-token', '-q', kind],
                              'Asking the manager %s for the %s join token' % (leader, kind),
                              spec.get('timeout') or 300, delay=2).strip()
            # The token stays out of the message of a failure (the cluster's status reason).
            rc, out, err = self._run(['docker', 'swarm', 'join', '--advertise-addr', address,
                                      '--token', token, '%s:%d' % (leader, SWARM_PORT)])
            if rc != 0:
                raise node_steps.StepFailed(
                    'Joining the swarm of %s as a %s: docker swarm join exited %d: %s'
                    % (leader, kind, rc, node_steps.detail(out, err).replace(token, '<token>')))
            self.changed('joined the swarm of %s as a %s' % (leader, kind))
        return self.command(['docker', 'info', '--format', SWARM_STATE],
                            'Reading the swarm state')[1].strip()

    def all(self, params):
        """Every step; returns the engine's version and its swarm state (``inactive``,
        ``active``, ...) once it answers (Nones in check mode)."""
        # apt reads the proxies from the lower-case names.
        proxy = params.get('proxy') or {}
        self.packages(params['packages'], dict((name.lower(), value)
                                               for name, value in proxy.items() if value))
        changed = self.volumes(params.get('volumes'), params.get('volume_paths') or {})
        changed = self.certificates(params['tls_dir'], params.get('tls')) or changed
        changed = self.configure(params) or changed
        self.restart(changed)
        if self.check_mode:
            return None, None
        out = self.wait(['docker', 'info', '--format', ENGINE_STATE], 'Waiting for the engine',
                        params['timeout'])
        version, _sep, state = out.strip().partition(' ')
        return version, self.swarm(params, state)
