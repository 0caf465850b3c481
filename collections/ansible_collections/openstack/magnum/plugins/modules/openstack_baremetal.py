#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_baremetal
short_description: Deploy, list and release a cluster's bare-metal servers (Ironic)
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - The bare-metal servers (C(server_type=bm)) of a cluster are Ironic nodes the operator
    enrolled and made C(available). For each server it lacks, this module picks a free node
    of the resource class the server's flavor asks for (the Nova bare-metal flavor property
    C(resources:CUSTOM_<CLASS>=1)), claims it atomically (its C(instance_uuid)), marks it in
    C(extra) with the cluster, node name, role, node group and address, attaches the
    server's Neutron port as its VIF and deploys the image with a config drive holding the
    SSH keys. Nodes already deployed for the cluster are left alone; a node whose deploy
    failed is released and another one tried.
  - With I(state=absent), the named servers (all the cluster's when I(names) is omitted)
    are undeployed, their VIFs detached and the marks cleared, so the nodes are
    C(available) again. (Floating IPs are openstack_floating_ips' business.)
  - With I(state=rebuilt), the named servers are deployed again with I(image) (Ironic's
    rebuild, same node, port and address, a fresh config drive); those already active on
    that image are left alone.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  state:
    description: C(present) deploys I(servers); C(absent) releases I(names); C(rebuilt)
      deploys I(image) again on I(names).
    type: str
    choices: [present, absent, rebuilt]
    default: present
  servers:
    description: The servers to have, as the provider plans them.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Server name (the cluster's node name).
        type: str
        required: true
      flavor:
        description: Nova bare-metal flavor (name or ID).
        type: str
        required: true
      image:
        description: Glance image (name or ID) deployed on the node.
        type: str
        required: true
      port:
        description: Name or ID of the Neutron port attached as the node's VIF.
        type: str
      role:
        description: C(master) or the node group's role.
        type: str
      nodegroup:
        description: Node group name.
        type: str
      nodegroup_uuid:
        description: Node group UUID.
        type: str
      index:
        description: The node's index in its node group.
        type: int
      address:
        description: The node's fixed address.
        type: str
      user_data:
        description: User data for the config drive.
        type: str
  names:
    description: With I(state=absent), the servers to release (default all); with
      I(state=rebuilt), the servers to rebuild.
    type: list
    elements: str
  image:
    description: With I(state=rebuilt), the Glance image (name or ID) to deploy.
    type: str
  public_keys:
    description: SSH public keys put in the config drive.
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds to wait for each node to deploy, rebuild or undeploy.
    type: int
    default: 600
notes:
  - Check mode reports what would be deployed, rebuilt or released, and does nothing.
'''

EXAMPLES = r'''
- name: Deploy two bare-metal servers
  openstack.magnum.openstack_baremetal:
    cluster: k8s
    cloud: mycloud
    servers:
      - {name: k8s-abc-master-0, flavor: bm.small, image: 4b1e..., port: 9c0f..., role: master}
      - {name: k8s-abc-node-0, flavor: bm.small, image: 4b1e..., port: 1d2e..., role: worker}
    public_keys: ["ssh-ed25519 AAAA..."]

- name: Release one
  openstack.magnum.openstack_baremetal:
    cluster: k8s
    cloud: mycloud
    state: absent
    names: [k8s-abc-node-0]

- name: Rebuild one on a new image
  openstack.magnum.openstack_baremetal:
    cluster: k8s
    cloud: mycloud
    state: rebuilt
    names: [k8s-abc-node-0]
    image: debian-12-2026-11
    public_keys: ["ssh-ed25519 AAAA..."]
'''

RETURN = r'''
servers:
  description: The cluster's bare-metal servers after the run, shaped like
    openstack.cloud.server_info's servers (C(metadata) holds the node's marks, C(image.id)
    the deployed Glance image).
  returned: always
  type: list
  elements: dict
  sample: [{"id": "5e2f...", "name": "k8s-abc-master-0", "status": "ACTIVE",
            "metadata": {"magnum_role": "master"}, "image": {"id": "4b1e..."},
            "baremetal_node": "rack1-07"}]
deployed:
  description: Servers deployed by this run.
  returned: always
  type: list
  elements: str
released:
  description: Servers released by this run.
  returned: always
  type: list
  elements: str
rebuilt:
  description: Servers rebuilt by this run.
  returned: always
  type: list
  elements: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import baremetal

SERVER_SPEC = dict(
    name=dict(type='str', required=True), flavor=dict(type='str', required=True),
    image=dict(type='str', required=True), port=dict(type='str'), role=dict(type='str'),
    nodegroup=dict(type='str'), nodegroup_uuid=dict(type='str'), index=dict(type='int'),
    address=dict(type='str'), user_data=dict(type='str'),
)


class ClusterBaremetalModule(CloudModule):
    argument_spec = dict(
        state=dict(type='str', default='present', choices=['present', 'absent', 'rebuilt']),
        servers=dict(type='list', elements='dict', default=[], options=SERVER_SPEC),
        names=dict(type='list', elements='str'),
        image=dict(type='str'),
        public_keys=dict(type='list', elements='str', default=[], no_log=False),
        timeout=dict(type='int', default=600),
    )

    module_kwargs = dict(required_if=[('state', 'rebuilt', ['names', 'image'])])

    def act(self, conn, record):
        state = self.params['state']
        deployed = self.deploy(conn, record) if state == 'present' else []
        released = self.release(conn, record) if state == 'absent' else []
        rebuilt = self.rebuild(conn, record) if state == 'rebuilt' else []
        servers = [baremetal.as_server(n) for n in baremetal.claimed(conn, record['uuid'])]
        self.exit_json(changed=bool(deployed or released or rebuilt), servers=servers,
                       deployed=deployed, released=released, rebuilt=rebuilt)

    def deploy(self, conn, record):
        have = baremetal.claimed_by_name(conn, record['uuid'])
        deployed = []
        for spec in self.params['servers']:
            node = have.get(spec['name'])
            if node is not None and node.provision_state == 'active':
                continue
            deployed.append(spec['name'])
            if not self.check_mode:
                baremetal.deploy(conn, record['uuid'], dict((k, v) for k, v in spec.items()
                                                            if v is not None),
                                 self.params['public_keys'], self.params['timeout'])
        return deployed

    def rebuild(self, conn, record):
        have = baremetal.claimed_by_name(conn, record['uuid'])
        missing = [name for name in self.params['names'] if name not in have]
        if missing:
            self.fail_json(msg="No bare metal server %s in cluster %s."
                               % (', '.join(missing), record['name']))
        image = conn.image.find_image(self.params['image'], ignore_missing=False)
        rebuilt = [name for name in self.params['names']
                   if baremetal.needs_rebuild(have[name], image.id)]
        for name in rebuilt if not self.check_mode else []:
            baremetal.rebuild(conn, have[name], image.id, self.params['public_keys'],
                              self.params['timeout'])
        return rebuilt

    def release(self, conn, record):
        names = self.params['names']
        released = []
        for node in baremetal.claimed(conn, record['uuid']):
            name = node.extra.get('magnum_node')
            if names is None or name in names:
                released.append(name)
                if not self.check_mode:
                    baremetal.release(conn, node, self.params['timeout'])
        return released


def main():
    ClusterBaremetalModule()()


if __name__ == '__main__':
    main()
