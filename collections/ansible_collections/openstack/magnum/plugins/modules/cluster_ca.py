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
    missing (at cluster create); C(sign) signs a client CSR (C(openstack coe ca sign));
    C(rotate) replaces the CA (drivers then re-issue node certificates).
extends_documentation_fragment:
  - openstack.magnum.store
options:
  cluster:
    description: Cluster name or UUID.
    type: str
    required: true
  action:
    description: What to do.
    type: str
    choices: [show, present, sign, rotate]
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
  description: The CA certificate, or the signed certificate for I(action=sign).
  returned: success
  type: str
ca_key:
  description: The CA private key, when I(return_key).
  returned: when return_key is true
  type: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils import lifecycle


class ClusterCaModule(MagnumModule):
    argument_spec = dict(
        cluster=dict(type='str', required=True),
        action=dict(type='str', default='show', choices=['show', 'present', 'sign', 'rotate']),
        csr=dict(type='str'),
        ca_cert_type=dict(type='str', default='ca'),
        return_key=dict(type='bool', default=False, no_log=False),
    )
    module_kwargs = dict(required_if=[('action', 'sign', ['csr'])])

    def run(self):
        p = self.params
        cluster = lifecycle.get_cluster(self.store, p['cluster'], self.scope)
        action, kind = p['action'], p['ca_cert_type']
        if action == 'sign':
            self.exit_json(changed=False, pem=lifecycle.sign_csr(self.store, cluster, p['csr'],
                                                                 kind))
        lifecycle.check_tls(self.store, cluster)
        changed = False
        if action in ('present', 'rotate'):
            exists = self.store.certificate(cluster['uuid'], kind, missing_ok=True) is not None
            changed = action == 'rotate' or not exists
            if changed and not self.check_mode:
                lifecycle.ensure_ca(self.store, cluster, kind, rotate=action == 'rotate')
        ca = self.store.certificate(cluster['uuid'], kind, missing_ok=self.check_mode)
        result = dict(changed=changed, pem=ca['cert_pem'] if ca else None)
        if p['return_key'] and ca:
            result['ca_key'] = ca['key_pem']
        self.exit_json(**result)


def main():
    ClusterCaModule()()


if __name__ == '__main__':
    main()
