#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_cloud_check
short_description: Check that an OpenStack cloud has what a cluster asks for, before anything is made
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs Magnum's checks of a cluster and its template against the cloud, with Magnum's
    messages (the same checks the API makes at template and cluster create). The image
    exists and its Glance C(os_distro) is the template's C(cluster_distro), the flavors,
    the keypair and a given fixed network and subnet exist, the external network is
    C(router:external), and an image that lists the packages it holds (Glance property
    C(magnum_packages), as the C(cloud_image) role's does) holds those the driver's nodes
    need, unless the template names a proxy they could install them through.
  - Then checks there is room for the servers the cluster still lacks (node counts minus
    the servers it has) in the project's compute quota (instances, cores, RAM) for
    C(server_type=vm), or among free Ironic nodes of each bare-metal flavor's resource class for
    C(server_type=bm), where Cinder volumes (C(docker_volume_size), C(boot_volume_size))
    are refused.
  - Changes nothing; fails with the first problem found.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  node_counts:
    description:
      - Node count wanted per node group (UUID or name), for resizes. Node groups not
        named keep their recorded count.
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Check the cloud before creating cluster k8s
  openstack.magnum.openstack_cloud_check:
    cluster: k8s
    cloud: mycloud

- name: Check there is room to grow the default worker group to 5
  openstack.magnum.openstack_cloud_check:
    cluster: k8s
    cloud: mycloud
    node_counts:
      default-worker: 5
'''

RETURN = r'''
distro:
  description: The image's C(os_distro).
  returned: success
  type: str
  sample: debian
external_network:
  description: The id of the external network the cluster's router and floating IPs use -
    the template's, or, when it names none, the cloud's only external network.
  returned: success
  type: str
  sample: 5d0e5a9e-27c4-4c1b-9f5e-4e5a8c3d2b1a
machine:
  description: The machine the image's Glance C(architecture) property names, as
    C(uname -m) prints it; null when the image names none.
  returned: success
  type: str
  sample: x86_64
needs:
  description: New servers the cluster needs, per flavor.
  returned: success
  type: dict
  sample: {"m1.small": 2}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.core import fields
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


class ClusterCloudCheckModule(CloudModule):
    argument_spec = dict(
        node_counts=dict(type='dict', default={}),
    )

    def act(self, conn, record):
        template = self.store.get('cluster_template', record['cluster_template_id'], by_name=False)
        groups = self.store.find('nodegroup', cluster_id=record['uuid'])
        checks = cloud.CloudChecks(conn)
        distro = checks.image_distro(template['image_id'])
        if distro != template['cluster_distro']:
            raise Invalid("Image %s doesn't contain os_distro %s (it has %s)."
                          % (template['image_id'], template['cluster_distro'], distro))
        external = checks.template(template, pick=True)
        checks.cluster(record)
        checks.node_image(template, record.get('labels'))
        needs = self.needs(checks, record, template, groups)
        if template['server_type'] == 'bm':
            checks.bare_metal(record, groups)
        checks.capacity(template['server_type'], sorted(needs.items()))
        self.exit_json(changed=False, distro=distro, needs=needs, external_network=external,
                       machine=checks.image_machine(template['image_id']))

    def needs(self, checks, record, template, groups):
        """New servers per flavor: wanted counts minus the servers each group has."""
        counts = self.params['node_counts']
        have = checks.servers_per_group(record, template['server_type'])
        needs = {}
        for group in groups:
            wanted = counts.get(group['uuid'], counts.get(group['name'], group['node_count']))
            missing = int(wanted) - have.get(group['uuid'], 0)
            flavor = fields.flavor_of(group.get('flavor_id'), record['master_flavor_id']
                                      if group['role'] == 'master' else record['flavor_id'])
            if missing > 0:
                needs[flavor] = needs.get(flavor, 0) + missing
        return needs


def main():
    ClusterCloudCheckModule()()


if __name__ == '__main__':
    main()
