# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The first master's part of a Kubernetes converge, in one run on it (module
``k8s_control_plane``): the control plane initialised with the cluster's CA where it runs
none, the network add-on applied, what joining nodes need made, the versions read.

One module run, not one task per step: each task is Python started on the master over
SSH, seconds on a guest of QEMU without KVM (ten tasks were two minutes of a create)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import hashlib
import json
import os
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_config

PKI_DIR = '/etc/kubernetes/pki'
KUBEADM_CONFIG = '/etc/kubernetes/kubeadm.yaml'
CNI_MANIFEST = '/etc/kubernetes/cni.yaml'
# kubeadm's last phase, the add-ons (CoreDNS, kube-proxy), asks the API server once with a
# client timeout of its own (10 s, no setting, no retry): on a slow master that call can
# time out after everything else is done. That phase alone is then run again.
ADDON_PHASE = 'error execution phase addon/'
PEM_PUBLIC_KEY = re.compile(r'-----BEGIN PUBLIC KEY-----(.*?)-----END PUBLIC KEY-----', re.S)


def ca_cert_hash(public_key_pem):
    """kubeadm's discovery hash of a CA: sha256 of its SubjectPublicKeyInfo (the DER a
    PEM ``PUBLIC KEY`` block holds)."""
    found = PEM_PUBLIC_KEY.search(public_key_pem or '')
    if not found:
        raise node_steps.StepFailed('Hashing the CA\'s public key: no public key in %r'
                                    % (public_key_pem or '')[:200])
    der = base64.b64decode(''.join(found.group(1).split()))
    return 'sha256:' + hashlib.sha256(der).hexdigest()


def server_version(text):
    """The API server's gitVersion in ``kubectl version -o json``'s output."""
    try:
        return json.loads(text)['serverVersion']['gitVersion']
    except (ValueError, KeyError, TypeError):
        raise node_steps.StepFailed('Reading the versions: kubectl version answered %r'
                                    % (text or '')[:300])


class ControlPlane(node_steps.NodeSteps):
    """The steps, in order (the primitives: node_steps.NodeSteps)."""

    def __init__(self, run, check_mode=False, kubeconfig='/etc/kubernetes/admin.conf', root='',
                 **kw):
        super(ControlPlane, self).__init__(run, check_mode, **kw)
        self.kubeconfig = kubeconfig
        # where the files are written (kubeadm reads the paths without it: a test's)
        self.root = root

    def initialised(self):
        return os.path.exists(self.root + self.kubeconfig)

    def init(self, params):
        """``kubeadm init`` with the cluster's CA, kubeadm's patches and configuration, where
        this master runs no control plane; True when it did (or would)."""
        if self.initialised():
            return False
        if not params.get('config') or not params.get('ca_cert') or not params.get('ca_key'):
            raise node_steps.StepFailed(
                'Initialising the control plane: %s holds none, and no kubeadm configuration '
                'and CA were given to make one' % self.kubeconfig)
        self.directory(self.root + PKI_DIR, 0o700)
        self.file(self.root + PKI_DIR + '/ca.crt', params['ca_cert'], 0o644)
        self.file(self.root + PKI_DIR + '/ca.key', params['ca_key'], 0o600)
        self.patches(params.get('patches'))
        self.file(self.root + KUBEADM_CONFIG, params['config'], 0o600)
        self.changed('initialised the control plane')
        if self.check_mode:
            return True
        rc, out, err = self._run(['kubeadm', 'init', '--config', KUBEADM_CONFIG, '--upload-certs'])
        if rc == 0:
            return True
        if ADDON_PHASE not in (err or ''):
            raise node_steps.StepFailed('Initialising the control plane: kubeadm init exited %d: %s'
                                        % (rc, node_steps.detail(out, err)))
        self.again(['kubeadm', 'init', 'phase', 'addon', 'all', '--config', KUBEADM_CONFIG],
                   'Deploying the add-ons whose phase timed out',
                   params.get('addon_retries', 8), params.get('addon_delay', 15))
        return True

    def again(self, argv, what, retries, delay):
        """Run ``argv`` until it exits 0, ``retries`` more times at most, ``delay`` s apart."""
        for attempt in range(int(retries) + 1):
            rc, out, err = self._run(argv)
            if rc == 0:
                return out
            if attempt < int(retries):
                self._sleep(delay)
        raise node_steps.StepFailed('%s: %s exited %d %d times: %s' % (
            what, ' '.join(argv), rc, int(retries) + 1, node_steps.detail(out, err)))

    def patches(self, patches):
        """kubeadm's strategic merge patches of the static pods (JSON: YAML kubeadm reads)."""
        if not patches:
            return
        self.directory(self.root + k8s_config.PATCHES_DIR, 0o700)
        for name, patch in sorted(patches.items()):
            if '/' in name or name.startswith('.'):
                raise node_steps.StepFailed('Writing kubeadm\'s patches: %r is no file name' % name)
            self.file(os.path.join(self.root + k8s_config.PATCHES_DIR, name),
                      json.dumps(patch, indent=2, sort_keys=True) + '\n', 0o600)

    def kubectl(self, *args):
        return ['kubectl', '--kubeconfig', self.kubeconfig] + list(args)

    def network(self, manifest):
        """The network add-on's manifest written and applied; True when something changed."""
        if not manifest:
            return False
        self.file(self.root + CNI_MANIFEST, manifest, 0o644)
        if self.check_mode:
            return False
        out = self.command(self.kubectl('apply', '-f', CNI_MANIFEST),
                           'Applying the network add-on')[1]
        applied = [line for line in out.splitlines() if line.strip()
                   and not line.endswith(' unchanged')]
        if applied:
            self.changed('applied the network add-on: ' + '; '.join(applied))
        return bool(applied)

    def join_credentials(self, masters):
        """A bootstrap token (30 minutes), the CA's discovery hash, and with ``masters`` the
        key of the control-plane certificates uploaded for them."""
        if self.check_mode:
            return {}
        token = self.command(['kubeadm', 'token', 'create', '--ttl', '30m'],
                             'Making a bootstrap token')[1]
        public = self.command(['openssl', 'x509', '-pubkey', '-noout', '-in',
                               self.root + PKI_DIR + '/ca.crt'], 'Reading the CA\'s public key')[1]
        found = {'token': token.strip(), 'ca_cert_hash': ca_cert_hash(public)}
        if masters:
            out = self.command(['kubeadm', 'init', 'phase', 'upload-certs', '--upload-certs'],
                               'Uploading the control-plane certificates')[1]
            lines = [line.strip() for line in out.splitlines() if line.strip()]
            if not lines:
                raise node_steps.StepFailed('Uploading the control-plane certificates: '
                                            'kubeadm printed no certificate key')
            found['certificate_key'] = lines[-1]
        return found

    def versions(self):
        if self.check_mode and not self.initialised():
            return {}
        out = self.command(self.kubectl('version', '-o', 'json'), 'Reading the versions')[1]
        containerd = self.command(['containerd', '--version'], 'Reading containerd\'s version')[1]
        words = containerd.split()
        return {'kubernetes': server_version(out),
                'containerd': words[2] if len(words) > 2 else containerd.strip()}

    def all(self, params):
        initialised = self.init(params)
        self.network(params.get('cni_manifest'))
        join = params.get('join') or 'none'
        credentials = self.join_credentials(join == 'masters') if join != 'none' else {}
        return initialised, credentials, self.versions()


KUBELET_CONF = '/etc/kubernetes/kubelet.conf'


def probed(results, admin_conf, masters):
    """What the role's probe (a raw command per node, looped over the cluster's nodes,
    printing which of ``admin_conf`` and the kubelet's kubelet.conf exist) found:
    ``leader`` (the first of ``masters`` running a control plane, else the first),
    ``initialised`` (one runs) and ``joining`` (the nodes without a kubelet.conf, but the
    leader where it initialises)."""
    found = {}
    for result in results or []:
        lines = [line.strip() for line in (result.get('stdout') or '').splitlines()]
        found[result['item']] = set(lines)
    running = [m for m in masters if admin_conf in found.get(m, ())]
    leader = running[0] if running else (list(masters) + [None])[0]
    joining = [node for node in found if KUBELET_CONF not in found[node]
               and (running or node != leader)]
    return {'leader': leader, 'initialised': bool(running), 'joining': joining}
