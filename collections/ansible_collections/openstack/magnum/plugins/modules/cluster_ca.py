#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_ca
short_description: Show, create, rotate a cluster's CA, or sign a CSR with it
version_added: "0.1.0"
description:
  - Each cluster has its own certificate authority, kept in the store (its private key is
    never returned unless I(return_key) is set).
  - C(show) returns the CA certificate (C(openstack coe ca show)); C(present) creates it when
    missing (at cluster create); C(sign) signs a client CSR (C(openstack coe ca sign)).
  - C(issue) makes a new key and a certificate signed by the CA (I(ca_cert_type), which may
    be the staged C(ca.next)) for a node or a client, from I(common_name), I(organization)
    and I(subject_alt_names). Nothing is stored; use C(no_log) on the task.
  - Rotation is two steps. C(rotate) stages a new CA beside the current one (readable as
    I(ca_cert_type) C(ca.next)); the driver re-issues the nodes' certificates from it; then
    C(promote) makes it the cluster's CA, after which old client certificates no longer
    verify. A rotation that fails before C(promote) leaves the current CA in place.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cluster
options:
  action:
    description: What to do.
    type: str
    choices: [show, present, sign, rotate, promote, issue]
    default: show
  csr:
    description: PEM certificate signing request, for I(action=sign).
    type: str
  ca_cert_type:
    description: Which CA of the cluster (C(ca), or driver-specific such as C(etcd), C(front-proxy)).
    type: str
    default: ca
  return_key:
    description: Also return the CA private key (for driver roles that issue node certificates).
    type: bool
    default: false
  common_name:
    description: Common name of the certificate, for I(action=issue).
    type: str
  organization:
    description: Organization of the certificate, for I(action=issue).
    type: str
  subject_alt_names:
    description: IP addresses and DNS names the certificate is valid for, for I(action=issue).
    type: list
    elements: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: Make sure the cluster has a CA
  openstack.magnum.cluster_ca:
    cluster: "{{ cluster_uuid }}"
    action: present

- name: Sign a client certificate
  openstack.magnum.cluster_ca:
    cluster: k8s
    action: sign
    csr: "{{ lookup('ansible.builtin.file', 'client.csr') }}"
  register: signed
'''

RETURN = r'''
pem:
  description: >-
    The CA certificate (the staged one for I(action=rotate)), or the signed certificate for
    I(action=sign).
  returned: success
  type: str
ca_key:
  description: The CA private key, when I(return_key).
  returned: when return_key is true
  type: str
cert:
  description: The issued certificate, for I(action=issue).
  returned: when action is issue
  type: str
key:
  description: The issued certificate's private key, for I(action=issue).
  returned: when action is issue
  type: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle, tls


class ClusterCaModule(MagnumModule):
    argument_spec = dict(
        cluster=dict(type='str', required=True),
        action=dict(type='str', default='show',
                    choices=['show', 'present', 'sign', 'rotate', 'promote', 'issue']),
        csr=dict(type='str'),
        ca_cert_type=dict(type='str', default='ca'),
        return_key=dict(type='bool', default=False, no_log=False),
        common_name=dict(type='str'),
        organization=dict(type='str'),
        subject_alt_names=dict(type='list', elements='str'),
    )
    module_kwargs = dict(required_if=[('action', 'sign', ['csr']),
                                      ('action', 'issue', ['common_name'])])

    def run(self):
        p = self.params
        cluster = lifecycle.get_cluster(self.store, p['cluster'], self.scope)
        action, kind = p['action'], p['ca_cert_type']
        if action == 'sign':
            self.exit_json(changed=False, pem=lifecycle.sign_csr(self.store, cluster, p['csr'],
                                                                 kind))
        if action == 'issue':
            ca = self.store.certificate(cluster['uuid'], kind)
            cert, key = tls.issue_keypair(ca['cert_pem'], ca['key_pem'], p['common_name'],
                                          p['organization'], p['subject_alt_names'])
            self.exit_json(changed=False, pem=ca['cert_pem'], cert=cert, key=key)
        lifecycle.check_tls(self.store, cluster)
        changed = action in ('rotate', 'promote')
        if action == 'present':
            changed = self.store.certificate(cluster['uuid'], kind, missing_ok=True) is None
            if changed and not self.check_mode:
                lifecycle.ensure_ca(self.store, cluster, kind)
        elif action == 'rotate' and not self.check_mode:
            lifecycle.stage_ca_rotation(self.store, cluster, kind)
        elif action == 'promote' and not self.check_mode:
            lifecycle.promote_ca_rotation(self.store, cluster, kind)
        shown = kind + lifecycle.PENDING_SUFFIX if action == 'rotate' else kind
        ca = self.store.certificate(cluster['uuid'], shown, missing_ok=self.check_mode)
        result = dict(changed=changed, pem=ca['cert_pem'] if ca else None)
        if p['return_key'] and ca:
            result['ca_key'] = ca['key_pem']
        self.exit_json(**result)


def main():
    ClusterCaModule()()


if __name__ == '__main__':
    main()
