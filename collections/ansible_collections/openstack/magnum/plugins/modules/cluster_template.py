#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_template
short_description: Create, update or delete a Magnum cluster template
version_added: "0.1.0"
description:
  - Manages a ClusterTemplate record in the openstack.magnum store, with Magnum's defaults
    and validation (mandatory fields, per-COE drivers, volume size minimums, label rules,
    the driver registry).
  - A template used by clusters can only change I(name), I(public) and I(hidden), and cannot
    be deleted.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  name:
    description: Name of the template (names are not unique; the first match is managed).
    type: str
    required: true
  state:
    description: Whether the template should exist.
    type: str
    choices: [present, absent]
    default: present
  coe:
    description: Container orchestration engine. Required to create.
    type: str
    choices: [kubernetes, swarm, mesos]
  image_id:
    description: Image name or id; its OS distribution selects the driver. Required to create.
    type: str
  external_network_id:
    description: External network of the cluster's router and floating IPs; when unset, the
      cloud's only external network (C(router:external)).
    type: str
  keypair_id:
    description: Default SSH keypair of clusters made from the template.
    type: str
  flavor_id:
    description: Flavor of worker nodes; when unset (and the cluster names none), C(m1.small).
    type: str
  master_flavor_id:
    description: Flavor of master nodes; when unset (and the cluster names none), C(m1.small).
    type: str
  dns_nameserver:
    description: DNS server of the cluster network; when unset, the cloud's own (Neutron's
      DHCP servers; the host's for local nodes).
    type: str
  fixed_network:
    description: Existing private network to use instead of creating one.
    type: str
  fixed_subnet:
    description: Existing private subnet to use instead of creating one.
    type: str
  network_driver:
    description: Container network driver (kubernetes flannel/calico, swarm docker/flannel, mesos docker).
    type: str
  volume_driver:
    description: Volume driver (kubernetes cinder, swarm and mesos rexray).
    type: str
  docker_volume_size:
    description: Size in GB of the per-node container storage volume.
    type: int
  docker_storage_driver:
    description: Docker storage driver (devicemapper, overlay, overlay2; not for mesos).
    type: str
  http_proxy:
    description: HTTP proxy of the nodes.
    type: str
  https_proxy:
    description: HTTPS proxy of the nodes.
    type: str
  no_proxy:
    description: Hosts the nodes reach without proxy.
    type: str
  labels:
    description: Labels, as a dict or as C(k=v,k2=v2;k3=v3).
    type: raw
  tls_disabled:
    description: Disable TLS on the cluster API.
    type: bool
  public:
    description: Make the template visible to other projects.
    type: bool
  registry_enabled:
    description: Run a local registry in the cluster.
    type: bool
  server_type:
    description: C(vm) (Nova) or C(bm) (Ironic).
    type: str
    choices: [vm, bm]
  master_lb_enabled:
    description: Put a load balancer in front of the masters.
    type: bool
  floating_ip_enabled:
    description: Give nodes floating IPs.
    type: bool
  hidden:
    description: Hide the template from listings.
    type: bool
  apiserver_port:
    description: Port of the cluster API server (1024-65535).
    type: int
  insecure_registry:
    description: Insecure registry the nodes may pull from.
    type: str
  tags:
    description: Free-form tags.
    type: str
author:
  - openstack.magnum contributors (@openstack)
'''

EXAMPLES = r'''
- name: A Kubernetes template on Debian nodes
  openstack.magnum.cluster_template:
    name: k8s-tpl
    coe: kubernetes
    image_id: debian-12
    external_network_id: public
    keypair_id: mykey
    labels: kube_tag=v1.30.2,flannel_backend=vxlan

- name: Remove it
  openstack.magnum.cluster_template:
    name: k8s-tpl
    state: absent
'''

RETURN = r'''
cluster_template:
  description: The template as the API shows it (absent after deletion).
  returned: when state is present
  type: dict
  sample: {"uuid": "0b5b6cf8-52a0-4e31-9c40-31b0d2e4f0a2", "name": "k8s-tpl", "coe": "kubernetes",
           "cluster_distro": "debian", "driver": "k8s_kubeadm"}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    driver_spec, fields, lifecycle)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import COES
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import NotFound
from ansible_collections.openstack.magnum.plugins.module_utils.providers.checks import with_checks

# The template's create fields (fields.TEMPLATE_CREATE_INPUT) but the name, which finds
# the record, and the uuid.
FIELDS = tuple(f for f in fields.TEMPLATE_CREATE_INPUT if f not in ('name', 'uuid'))


class ClusterTemplateModule(MagnumModule):
    argument_spec = dict(
        name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        **fields.module_options(fields.CLUSTER_TEMPLATE, FIELDS, keypair_id={'no_log': False},
                                coe={'choices': list(COES)},
                                server_type={'choices': list(driver_spec.SERVER_TYPES)})
    )

    def run(self):
        name = self.params['name']
        try:
            current = lifecycle.get_template(self.store, name, self.scope)
        except NotFound:
            current = None
        if self.params['state'] == 'absent':
            if current is None:
                self.exit_json(changed=False)
            if not self.check_mode:
                lifecycle.delete_template(self.store, current)
            self.exit_json(changed=True)
        wanted = self.given(FIELDS)
        if current is None:
            if self.check_mode:
                self.exit_json(changed=True, cluster_template=None)
            data = dict(wanted, name=name)
            record = lifecycle.create_template(self.store, data, self.scope,
                                               with_checks(self.core_settings))
            self.exit_json(changed=True, cluster_template=_public(record))
        patched = dict(current)
        for key, value in wanted.items():
            patched[key] = fields.coerce(fields.CLUSTER_TEMPLATE, key, value)
        changed = any(patched.get(k) != current.get(k) for k in wanted)
        if changed and not self.check_mode:
            current = lifecycle.update_template(self.store, current, patched, self.scope,
                                                with_checks(self.core_settings))
        self.exit_json(changed=changed, cluster_template=_public(current))


def _public(record):
    return fields.project(fields.CLUSTER_TEMPLATE, record)


def main():
    ClusterTemplateModule()()


if __name__ == '__main__':
    main()
