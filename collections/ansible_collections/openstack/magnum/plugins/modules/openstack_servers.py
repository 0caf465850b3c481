#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_servers
short_description: List, make or delete a cluster's Nova servers on an OpenStack cloud
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - The VMs (C(server_type=vm)) of a cluster, with one connection and one login for all
    of them (a task per server, port and poll would each be a process of its own).
  - With I(state=present), the server groups of I(server_groups) and of the servers are
    made where missing; then, for each of I(servers) the cluster lacks, its port
    (C(<name>-port), with the server's fixed address, its security group and
    I(address_pairs)) and the server (marked in its metadata with the cluster, role, node
    group, index and address); every server is requested before any is waited for, and
    all of them (those that existed too) are waited for until C(ACTIVE). A server going to
    C(ERROR) fails the module, naming it with Nova's fault. With no I(servers), the
    cluster's servers are only listed.
  - With I(state=absent), the cluster's servers of I(names) are deleted and waited for,
    then their ports; missing ones are fine. (Floating IPs and volumes are
    openstack_floating_ips' and openstack_volumes' business.)
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  state:
    description: C(present) makes the missing I(servers); C(absent) deletes I(names).
    type: str
    choices: [present, absent]
    default: present
  servers:
    description: With I(state=present), the servers to have, as the
      C(openstack.magnum.openstack_vm_servers) filter lists them.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Server name (the cluster's node name).
        type: str
        required: true
      flavor:
        description: Nova flavor (name or ID).
        type: str
        required: true
      image:
        description: Glance image (name or ID).
        type: str
        required: true
      address:
        description: The node's fixed address on I(subnet).
        type: str
        required: true
      role:
        description: C(master) or the node group's role.
        type: str
        required: true
      nodegroup:
        description: Node group name.
        type: str
        required: true
      nodegroup_uuid:
        description: Node group UUID.
        type: str
        required: true
      index:
        description: The node's index in its node group.
        type: int
        required: true
      security_group:
        description: Name or ID of the security group of the server's port.
        type: str
        required: true
      server_group:
        description: Name of the server group the server is scheduled in.
        type: str
      availability_zone:
        description: Nova availability zone.
        type: str
      boot_volume_size:
        description: Boot from a Cinder volume of this many GiB (deleted with the server);
          C(0) boots from the image.
        type: int
        default: 0
  names:
    description: With I(state=absent), the servers to delete.
    type: list
    elements: str
  network:
    description: Name or ID of the network of the servers' ports.
    type: str
  subnet:
    description: ID of the subnet of the servers' fixed addresses.
    type: str
  address_pairs:
    description: CIDRs the ports accept traffic from besides their own address (Neutron's
      allowed address pairs; the pods' network where nodes forward pods' traffic).
    type: list
    elements: str
    default: []
  key_name:
    description: Nova keypair of the servers.
    type: str
  user_data:
    description: User data of the new servers (cloud-init).
    type: str
  server_groups:
    description: Names of server groups to have even if no new server is scheduled in them.
    type: list
    elements: str
    default: []
  server_group_policy:
    description: Policy of the server groups made.
    type: str
    default: soft-anti-affinity
  timeout:
    description: Seconds to wait for the servers to be ACTIVE, or gone.
    type: int
    default: 600
notes:
  - Check mode reports what would be made or deleted, and does nothing.
'''

EXAMPLES = r'''
- name: Two servers
  openstack.magnum.openstack_servers:
    cluster: k8s
    cloud: mycloud
    network: k8s-abc-network
    subnet: 0c6b...
    key_name: mykey
    servers:
      - {name: k8s-abc-master-0, flavor: m1.small, image: debian-12, address: 10.0.0.3,
         role: master, nodegroup: default-master, nodegroup_uuid: 7f2e..., index: 0,
         security_group: k8s-abc-secgroup-master, server_group: k8s-abc-default-master}
      - {name: k8s-abc-node-0, flavor: m1.small, image: debian-12, address: 10.0.0.4,
         role: worker, nodegroup: default-worker, nodegroup_uuid: 91ab..., index: 0,
         security_group: k8s-abc-secgroup-worker, server_group: k8s-abc-default-worker}

- name: List them
  openstack.magnum.openstack_servers:
    cluster: k8s
    cloud: mycloud
  register: found

- name: Delete one with its port
  openstack.magnum.openstack_servers:
    cluster: k8s
    cloud: mycloud
    state: absent
    names: [k8s-abc-node-0]
'''

RETURN = r'''
servers:
  description: The cluster's servers after the run, shaped like openstack.cloud.server_info's
    (C(metadata) holds the node's marks, C(image.id) its Glance image).
  returned: always
  type: list
  elements: dict
  sample: [{"id": "5e2f...", "name": "k8s-abc-master-0", "status": "ACTIVE",
            "metadata": {"magnum_role": "master"}, "image": {"id": "4b1e..."}}]
done:
  description: What was made or deleted (or, in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: ["create port k8s-abc-node-0-port (10.0.0.4)", "create server k8s-abc-node-0"]
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud_servers)

SERVER_SPEC = dict(
    name=dict(type='str', required=True), flavor=dict(type='str', required=True),
    image=dict(type='str', required=True), address=dict(type='str', required=True),
    role=dict(type='str', required=True), nodegroup=dict(type='str', required=True),
    nodegroup_uuid=dict(type='str', required=True), index=dict(type='int', required=True),
    security_group=dict(type='str', required=True), server_group=dict(type='str'),
    availability_zone=dict(type='str'), boot_volume_size=dict(type='int', default=0),
)


class ClusterServersModule(CloudModule):
    argument_spec = dict(
        state=dict(type='str', default='present', choices=['present', 'absent']),
        servers=dict(type='list', elements='dict', default=[], options=SERVER_SPEC),
        names=dict(type='list', elements='str'),
        network=dict(type='str'),
        subnet=dict(type='str'),
        address_pairs=dict(type='list', elements='str', default=[]),
        key_name=dict(type='str', no_log=False),
        user_data=dict(type='str'),
        server_groups=dict(type='list', elements='str', default=[]),
        server_group_policy=dict(type='str', default='soft-anti-affinity'),
        timeout=dict(type='int', default=600),
    )
    module_kwargs = dict(required_if=[('state', 'absent', ['names'])])

    def act(self, conn, record):
        if self.params['state'] == 'absent':
            done = cloud_servers.delete(conn, record['uuid'], self.params['names'],
                                        self.params['timeout'], dry_run=self.check_mode)
            self.exit_json(changed=bool(done), done=done,
                           servers=cloud_servers.listed(conn, record['uuid']))
        if self.params['servers'] and not (self.params['network'] and self.params['subnet']):
            self.fail_json(msg='Making servers needs network and subnet.')
        if self.params['servers'] and self.params['network']:
            network = conn.network.find_network(self.params['network'], ignore_missing=False)
            self.params['network'] = network.id
        done, servers = cloud_servers.create(conn, record['uuid'], self.params['servers'],
                                             self.params, dry_run=self.check_mode)
        self.exit_json(changed=bool(done), done=done, servers=servers)


def main():
    ClusterServersModule()()


if __name__ == '__main__':
    main()
