#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_cloud_check
short_description: Check that an OpenStack cloud has what a cluster asks for, before anything is made
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs Magnum's checks of a cluster and its template against the cloud, with Magnum's
    messages (the same checks the API makes at template and cluster create). The image
    exists and its Glance C(os_distro) is the template's C(cluster_distro), the flavors,
    the keypair and a given fixed network and subnet exist, the external network is
    C(router:external).
  - Then checks there is room for the servers the cluster still lacks (node counts minus
    the servers it has) in the project's compute quota (instances, cores, RAM) for
    C(server_type=vm), or among free Ironic nodes of each bare-metal flavor's resource class for
    C(server_type=bm), where Cinder volumes (C(docker_volume_size), C(boot_volume_size))
    are refused.
  - Changes nothing; fails with the first problem found.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  cluster:
    description: Name or UUID of the cluster (its record in the store).
    type: str
    required: true
  cloud:
    description:
      - Name of the cloud in C(clouds.yaml). Defaults to E(OS_CLOUD).
    type: str
  node_counts:
    description:
      - Node count wanted per node group (UUID or name), for resizes. Node groups not
        named keep their recorded count.
    type: dict
    default: {}
requirements:
  - openstacksdk
  - SQLAlchemy
'''

EXAMPLES = r'''
- name: Check the cloud before creating cluster k8s
  openstack.magnum.cluster_cloud_check:
    cluster: k8s
    cloud: mycloud

- name: Check there is room to grow the default worker group to 5
  openstack.magnum.cluster_cloud_check:
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
needs:
  description: New servers the cluster needs, per flavor.
  returned: success
  type: dict
  sample: {"m1.small": 2}
'''

import os
import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils import cloud, lifecycle
from ansible_collections.openstack.magnum.plugins.module_utils.errors import Invalid

try:
    import openstack
    HAS_SDK = True
    SDK_ERROR = None
except ImportError:
    HAS_SDK = False
    SDK_ERROR = traceback.format_exc()


class ClusterCloudCheckModule(MagnumModule):
    argument_spec = dict(
        cluster=dict(type='str', required=True),
        cloud=dict(type='str'),
        node_counts=dict(type='dict', default={}),
    )

    def run(self):
        if not HAS_SDK:
            self.fail_json(msg=missing_required_lib('openstacksdk'), exception=SDK_ERROR)
        record = lifecycle.get_cluster(self.store, self.params['cluster'], self.scope)
        template = self.store.get('cluster_template', record['cluster_template_id'], by_name=False)
        groups = self.store.find('nodegroup', cluster_id=record['uuid'])
        try:
            checks = cloud.CloudChecks(openstack.connect(
                cloud=self.params['cloud'] or os.environ.get('OS_CLOUD')))
            distro = checks.image_distro(template['image_id'])
            if distro != template['cluster_distro']:
                raise Invalid("Image %s doesn't contain os_distro %s (it has %s)."
                              % (template['image_id'], template['cluster_distro'], distro))
            checks.template(template)
            checks.cluster(record)
            needs = self.needs(checks, record, template, groups)
            if template['server_type'] == 'bm':
                checks.bare_metal(record, groups)
            checks.capacity(template['server_type'], sorted(needs.items()))
        except openstack.exceptions.SDKException as exc:
            self.fail_json(msg='OpenStack: %s' % exc)
        self.exit_json(changed=False, distro=distro, needs=needs)

    def needs(self, checks, record, template, groups):
        """New servers per flavor: wanted counts minus the servers each group has."""
        counts = self.params['node_counts']
        have = checks.servers_per_group(record, template['server_type'])
        needs = {}
        for group in groups:
            wanted = counts.get(group['uuid'], counts.get(group['name'], group['node_count']))
            missing = int(wanted) - have.get(group['uuid'], 0)
            flavor = group.get('flavor_id') or (record['master_flavor_id'] if group['role'] == 'master'
                                                else record['flavor_id'])
            if missing > 0:
                needs[flavor] = needs.get(flavor, 0) + missing
        return needs


def main():
    ClusterCloudCheckModule()()


if __name__ == '__main__':
    main()
