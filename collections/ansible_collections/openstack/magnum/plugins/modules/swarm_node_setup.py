#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: swarm_node_setup
short_description: Set a Swarm node's Docker engine up, in one run on the node
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs on the node (the C(swarm) role delegates it to each node, asynchronously, every
    node at once). In order, each step changing only what differs
    - I(packages) installed where the node lacks one (the lists refreshed first), through
      I(proxy);
    - the node's Cinder I(volumes) formatted where blank and mounted on their
      I(volume_paths), the engine stopped first where one is mounted now;
    - with I(tls), the CA, the node's certificate and key in I(tls_dir) - an engine that
      already trusts this CA keeps its certificate;
    - C(/etc/docker/daemon.json) with the local socket, TCP on I(port) on a manager (with TLS
      when I(tls) is given), I(storage_driver), I(insecure_registry);
    - the engine unit's drop-in, letting daemon.json choose the sockets, with I(proxy) for
      its pulls;
    - systemd reloaded where the drop-in changed, the engine restarted where anything
      changed (started where it is not running), then waited for;
    - with I(swarm), the node in the swarm where it is in none - the first manager
      initialises it (unless one of I(swarm.peers) already has one, which it joins then), every
      other node asks the engine of the manager I(swarm.join) for the join token (through
      I(port), with its own TLS files) until it gives one, and joins; the token is never
      returned nor named in a failure.
  - Fails naming the step, the command and its error.
options:
  manager:
    description: Whether the node is a manager (its engine listens on I(port)).
    type: bool
    default: false
  port:
    description: The managers' engine port (2376 with TLS, 2375 without).
    type: int
    default: 2376
  tls:
    description: The node's TLS files; without them the engine listens without TLS.
    type: dict
    suboptions:
      ca:
        description: The cluster CA's certificate (PEM).
        type: str
        required: true
      cert:
        description: The node's certificate (PEM), issued by that CA.
        type: str
        required: true
      key:
        description: The node's private key (PEM).
        type: str
        required: true
  tls_dir:
    description: Where the engine's TLS files are.
    type: path
    default: /etc/docker/tls
  storage_driver:
    description: The engine's storage driver.
    type: str
    default: overlay2
  insecure_registry:
    description: A registry (host and port) pulled from over HTTPS unverified, or HTTP.
    type: str
    default: ''
  proxy:
    description: The template's proxies, C(HTTP_PROXY), C(HTTPS_PROXY), C(NO_PROXY) (empty
      ones left out).
    type: dict
    default: {}
  packages:
    description: What the node needs from its distribution.
    type: list
    elements: str
    default: [docker.io]
  volumes:
    description: The node's Cinder volumes, each C(id) and C(purpose) (the OpenStack
      provider's C(magnum_node_volumes)).
    type: list
    elements: dict
    default: []
  volume_paths:
    description: Where a volume is mounted, by purpose (C(docker)).
    type: dict
    default: {}
  timeout:
    description: Seconds to wait for the engine to answer after its (re)start.
    type: int
    default: 60
  swarm:
    description: The node in the swarm; without it the engine alone is set up.
    type: dict
    suboptions:
      advertise_address:
        description: The address the node is reached at by the other nodes.
        type: str
        required: true
      join:
        description: The address of the manager whose swarm the node joins (as a manager
          when I(manager)); without it the node initialises the swarm.
        type: str
      peers:
        description: The other managers' addresses, asked (once each) before the swarm is
          initialised - one that is in a swarm is joined instead.
        type: list
        elements: str
        default: []
      default_addr_pool:
        description: The overlay networks' address pool, at initialisation.
        type: str
      default_addr_pool_mask_length:
        description: The overlay networks' prefix length, at initialisation.
        type: int
      timeout:
        description: Seconds to go on asking I(join) for the token.
        type: int
        default: 300
notes:
  - Supports check mode (nothing is installed, written, stopped or started).
'''

EXAMPLES = r'''
- name: Set the engines up and make the swarm, every node at once
  openstack.magnum.swarm_node_setup:
    manager: "{{ hostvars[item].magnum_node_role == 'master' }}"
    tls: "{{ swarm_node_tls[item] }}"
    swarm:
      advertise_address: "{{ hostvars[item].magnum_node_address }}"
      # The first manager initialises the swarm, the others join it.
      join: "{{ omit if item == groups['magnum_masters'][0]
                else hostvars[groups['magnum_masters'][0]].magnum_node_address }}"
  loop: "{{ swarm_nodes }}"
  delegate_to: "{{ item }}"
  async: 900
  poll: 0
  register: swarm_setup_jobs
'''

RETURN = r'''
changes:
  description: What the run changed (or would change, in check mode), in order.
  returned: always
  type: list
  elements: str
  sample: ["wrote /etc/docker/daemon.json", "wrote /etc/docker/tls/cert.pem"]
version:
  description: The engine's version once it answers (not in check mode).
  returned: success
  type: str
  sample: 20.10.24+dfsg1
swarm_state:
  description: The engine's swarm state at the end (C(active) once in the swarm, C(inactive)
    without I(swarm)); not in check mode.
  returned: success
  type: str
  sample: active
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import swarm_node


def main():
    module = AnsibleModule(argument_spec=dict(
        manager=dict(type='bool', default=False),
        port=dict(type='int', default=2376),
        tls=dict(type='dict', options=dict(
            ca=dict(type='str', required=True),
            cert=dict(type='str', required=True),
            key=dict(type='str', required=True, no_log=True))),
        tls_dir=dict(type='path', default='/etc/docker/tls'),
        storage_driver=dict(type='str', default='overlay2'),
        insecure_registry=dict(type='str', default=''),
        proxy=dict(type='dict', default={}),
        packages=dict(type='list', elements='str', default=['docker.io']),
        volumes=dict(type='list', elements='dict', default=[]),
        volume_paths=dict(type='dict', default={}),
        timeout=dict(type='int', default=60),
        swarm=dict(type='dict', options=dict(
            advertise_address=dict(type='str', required=True),
            join=dict(type='str'),
            peers=dict(type='list', elements='str', default=[]),
            default_addr_pool=dict(type='str'),
            default_addr_pool_mask_length=dict(type='int'),
            timeout=dict(type='int', default=300))),
    ), supports_check_mode=True)
    setup = swarm_node.EngineSetup(module.run_command, module.check_mode)
    version, swarm_state = node_steps.run_in_module(module, setup,
                                                    lambda: setup.all(module.params))
    module.exit_json(changed=bool(setup.changes), changes=setup.changes, version=version,
                     swarm_state=swarm_state)


if __name__ == '__main__':
    main()
