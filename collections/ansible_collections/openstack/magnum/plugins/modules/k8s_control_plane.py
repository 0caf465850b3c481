#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: k8s_control_plane
short_description: The first master's part of a Kubernetes converge, in one run on it
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs on the cluster's first master (the C(kubernetes) role delegates it there), once
    its node is set up (M(openstack.magnum.k8s_node_setup)). In order
    - where I(kubeconfig) does not exist (no control plane runs there), the cluster's CA
      written to C(/etc/kubernetes/pki), kubeadm's patches of the static pods to
      C(/etc/kubernetes/patches), I(config) to C(/etc/kubernetes/kubeadm.yaml), then
      C(kubeadm init --upload-certs); when only its last phase (the add-ons, whose one call
      to the API server has a 10-second client timeout of its own) failed, that phase is
      run again, I(addon_retries) more times at most, I(addon_delay) seconds apart;
    - the network add-on's I(cni_manifest) written to C(/etc/kubernetes/cni.yaml) and
      applied;
    - with I(join), what joining nodes need - a bootstrap token (30 minutes), the CA's
      discovery hash, and for joining masters the key of the uploaded control-plane
      certificates;
    - the API server's and containerd's versions read.
  - Fails naming the step, the command and its error.
options:
  config:
    description: kubeadm's init configuration (the C(k8s_document) filter's C(init) kind);
      required where no control plane runs yet.
    type: str
  ca_cert:
    description: The cluster's CA certificate (PEM), the Kubernetes CA; required where no
      control plane runs yet.
    type: str
  ca_key:
    description: Its private key (PEM).
    type: str
  patches:
    description: kubeadm's patches of the static pods, file name to strategic merge patch
      (the C(k8s_control_plane_patches) filter's result).
    type: dict
    default: {}
  cni_manifest:
    description: The network add-on's manifest; none applied when empty.
    type: str
    default: ''
  join:
    description: What joining nodes need made - nothing, a token and the CA's hash for
      C(workers), the certificate key too for C(masters).
    type: str
    choices: [none, workers, masters]
    default: none
  kubeconfig:
    description: The cluster administrator's kubeconfig kubeadm writes (its presence says
      the control plane runs).
    type: path
    default: /etc/kubernetes/admin.conf
  addon_retries:
    description: How often kubeadm's add-on phase is run again when only it failed.
    type: int
    default: 8
  addon_delay:
    description: Seconds between those runs.
    type: int
    default: 15
notes:
  - Supports check mode (nothing is written or run but reads; no join credentials).
  - The task that runs it should be C(no_log) - its parameters hold the CA's key and its
    result the bootstrap token.
'''

EXAMPLES = r'''
- name: Initialise the control plane, apply the network add-on, make the join token
  openstack.magnum.k8s_control_plane:
    config: "{{ kubernetes_conf | openstack.magnum.k8s_document('init', node=node, endpoint=endpoint) }}"
    ca_cert: "{{ kubernetes_control_plane_ca.pem }}"
    ca_key: "{{ kubernetes_control_plane_ca.ca_key }}"
    patches: "{{ kubernetes_conf | openstack.magnum.k8s_control_plane_patches }}"
    cni_manifest: "{{ lookup('ansible.builtin.template', 'flannel.yml.j2') }}"
    join: workers
  delegate_to: "{{ kubernetes_leader }}"
  register: kubernetes_control_plane_init
  no_log: true
'''

RETURN = r'''
initialised:
  description: Whether this run initialised the control plane.
  returned: always
  type: bool
changes:
  description: What the run changed (or would change, in check mode), in order.
  returned: always
  type: list
  elements: str
join:
  description: What joining nodes need (empty without I(join), or in check mode).
  returned: always
  type: dict
  contains:
    token:
      description: A bootstrap token.
      type: str
      returned: with I(join)
    ca_cert_hash:
      description: The CA's discovery hash, C(sha256:<hex>).
      type: str
      returned: with I(join)
    certificate_key:
      description: The key of the uploaded control-plane certificates.
      type: str
      returned: with I(join=masters)
versions:
  description: The versions running (empty in check mode before an init).
  returned: always
  type: dict
  contains:
    kubernetes:
      description: The API server's version.
      type: str
      returned: success
      sample: v1.36.2
    containerd:
      description: containerd's version.
      type: str
      returned: success
      sample: 1.6.20
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_plane


def main():
    module = AnsibleModule(argument_spec=dict(
        config=dict(type='str'),
        ca_cert=dict(type='str'),
        ca_key=dict(type='str', no_log=True),
        patches=dict(type='dict', default={}),
        cni_manifest=dict(type='str', default=''),
        join=dict(type='str', choices=['none', 'workers', 'masters'], default='none'),
        kubeconfig=dict(type='path', default='/etc/kubernetes/admin.conf'),
        addon_retries=dict(type='int', default=8),
        addon_delay=dict(type='int', default=15),
    ), supports_check_mode=True)
    plane = k8s_plane.ControlPlane(module.run_command, module.check_mode,
                                   kubeconfig=module.params['kubeconfig'])
    initialised, join, versions = node_steps.run_in_module(
        module, plane, lambda: plane.all(module.params))
    module.exit_json(changed=bool(plane.changes), changes=plane.changes, initialised=initialised,
                     join=join, versions=versions)


if __name__ == '__main__':
    main()
