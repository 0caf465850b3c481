#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: k8s_node_setup
short_description: Make a Kubernetes node ready for kubeadm, in one run on the node
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs on the node (the C(kubernetes) role delegates it to each node, asynchronously,
    every node at once), once its packages are installed and its binaries and image
    archives pushed. In order, each step changing only what differs
    - a Docker engine the node image has is stopped and disabled, its C(docker0) bridge
      removed (the kubelet uses containerd);
    - kubeadm's directories; the kubelet's C(resolv.conf) from the node's resolver (its
      loopback servers replaced by I(controller_resolv)'s, or the template's
      C(dns_nameserver));
    - the kernel settings for bridged traffic; C(/dev/net/tun) for flannel's C(udp) backend;
    - the template's insecure registry for containerd (one it no longer names removed);
    - the kubelet's unit and kubeadm's drop-in, enabled; the CNI reference plugins in
      C(/opt/cni/bin);
    - containerd configured for kubeadm with the template's proxies, from its release
      tarball where I(containerd) says so, restarted where anything changed;
    - systemd reloaded once where a unit changed;
    - the image archives of I(images) containerd lacks, or that were pushed in this run,
      imported into its C(k8s.io) namespace.
  - Fails naming the step, the command and its error.
options:
  conf:
    description: The cluster's Kubernetes settings (the C(k8s_settings) filter's result).
    type: dict
    required: true
  bin_dir:
    description: Where the Kubernetes binaries are on the node.
    type: path
    required: true
  master:
    description: Whether the node is a master (it gets the API server's files).
    type: bool
    default: false
  controller_resolv:
    description: The controller's C(/etc/resolv.conf), whose servers replace the node's
      loopback ones.
    type: str
    default: ''
  containerd:
    description: Where containerd comes from (the C(k8s_containerd_source) filter's result);
      C(mode=package) is Debian's, already installed.
    type: dict
    default: {mode: package}
  containerd_tarball:
    description: Where containerd's release tarball is on the node (C(mode=tarball)).
    type: path
  containerd_cache:
    description: The directory on the node where the unpacked tarball's checksum is kept.
    type: path
    default: /var/cache/openstack-magnum/containerd
  images:
    description: The image archives on the node (the C(k8s_node_images) filter's result).
    type: list
    elements: dict
    default: []
    suboptions:
      archive:
        description: The archive's path on the node.
        type: path
        required: true
      names:
        description: The images it holds.
        type: list
        elements: str
        default: []
      fresh:
        description: Pushed in this run (imported whatever containerd has).
        type: bool
        default: false
notes:
  - Supports check mode (nothing is written, run, stopped or imported).
'''

EXAMPLES = r'''
- name: Prepare the nodes, every node at once
  openstack.magnum.k8s_node_setup:
    conf: "{{ kubernetes_conf }}"
    bin_dir: /usr/local/bin
    controller_resolv: "{{ lookup('ansible.builtin.file', '/etc/resolv.conf') }}"
    images: "{{ kubernetes_node_images[item] | default([]) }}"
  loop: "{{ kubernetes_node_hosts }}"
  delegate_to: "{{ item }}"
  async: 600
  poll: 0
  register: setup_jobs
'''

RETURN = r'''
changes:
  description: What the run changed (or would change, in check mode), in order.
  returned: always
  type: list
  elements: str
  sample: ["stopped the Docker engine", "wrote /etc/containerd/config.toml"]
imported:
  description: The archives imported into containerd.
  returned: always
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_node


def main():
    module = AnsibleModule(argument_spec=dict(
        conf=dict(type='dict', required=True),
        bin_dir=dict(type='path', required=True),
        master=dict(type='bool', default=False),
        controller_resolv=dict(type='str', default=''),
        containerd=dict(type='dict', default={'mode': 'package'}),
        containerd_tarball=dict(type='path'),
        containerd_cache=dict(type='path', default='/var/cache/openstack-magnum/containerd'),
        images=dict(type='list', elements='dict', default=[], options=dict(
            archive=dict(type='path', required=True),
            names=dict(type='list', elements='str', default=[]),
            fresh=dict(type='bool', default=False))),
    ), supports_check_mode=True)
    params = module.params
    if params['containerd'].get('mode') == 'tarball' and not params['containerd_tarball']:
        module.fail_json(msg='containerd_tarball is required with containerd mode tarball')
    setup = k8s_node.NodeSetup(module.run_command, module.check_mode)
    imported = node_steps.run_in_module(module, setup, lambda: setup.all(params))
    module.exit_json(changed=bool(setup.changes), changes=setup.changes, imported=imported)


if __name__ == '__main__':
    main()
