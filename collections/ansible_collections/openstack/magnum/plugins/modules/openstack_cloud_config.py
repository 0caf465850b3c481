#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_cloud_config
short_description: Write the cloud-config a Kubernetes cluster's OpenStack controllers read
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Writes C(cloud.conf), the configuration the OpenStack cloud controller manager and
    Cinder CSI read, from I(cloud) as openstacksdk loads it - its credential (a cluster
    of the API runs on its own application credential; its controllers are given its
    trust, where it has one - a password with C(trust_id)), region, endpoint interface and
    TLS setting in C([Global]) - and from the cluster's record - its template's external
    network (the load balancers' floating IPs), the subnet of its nodes and the Octavia
    labels C(octavia_provider), C(octavia_lb_algorithm), C(octavia_lb_healthcheck) in
    C([LoadBalancer]); a cloud whose catalog has no C(load-balancer) endpoint (no Octavia)
    gets C(enabled = false) there instead, as the cloud controller manager, unable to find
    one, would stop at its start and initialise no node.
  - With I(values_key), writes a Helm values file instead - I(values) with the
    cloud-config's text at I(values_key) - so the credential reaches Helm without ever
    being a variable of the play, and Helm can tell an unchanged release.
  - The file is written with mode 0600 and its secrets are never returned.
  - A cloud whose credential cannot be handed to a cluster (a token) or that needs a
    private CA file fails the module, naming why.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  dest:
    description: Where to write the cloud-config.
    type: path
    required: true
  subnet:
    description:
      - Name or ID of the subnet of the cluster's nodes (the load balancers' members).
        Defaults to the template's C(fixed_subnet).
    type: str
  sections:
    description:
      - The sections to write; C(Global) alone (what k8s-keystone-auth takes, its
        C(auth-url)) does not look the networks up.
    type: list
    elements: str
    choices: [Global, LoadBalancer]
    default: [Global, LoadBalancer]
  config_format:
    description:
      - C(cloud.conf) is the cloud-config (gcfg); C(octavia_ingress) the
        octavia-ingress-controller's configuration (YAML, C(cluster-name) the cluster's
        UUID, C(openstack) from C([Global]), C(octavia) from C([LoadBalancer]));
        C(clouds.yaml) a clouds.yaml of one cloud named C(openstack) with the
        credential (what Cluster API's OpenStack provider reads; I(sections) unused);
        C(autoscaler) the cluster autoscaler's cloud-config, C([Global]) in the keys its
        magnum provider reads (it takes a password or a Keystone trust; an application
        credential fails the module).
    type: str
    choices: [cloud.conf, octavia_ingress, clouds.yaml, autoscaler]
    default: cloud.conf
  values:
    description: The Helm values the cloud-config is added to (with I(values_key)).
    type: dict
    default: {}
  values_key:
    description:
      - Where in I(values) the cloud-config's text goes, as the keys from the top
        (C([secret, data, cloud.conf])). Without it, I(dest) is the plain cloud-config.
    type: list
    elements: str
notes:
  - Check mode resolves the networks and checks the credential without writing.
'''

EXAMPLES = r'''
- name: The cloud-config of cluster k8s
  openstack.magnum.openstack_cloud_config:
    cluster: k8s
    cloud: mycloud
    subnet: k8s-abc-subnet
    dest: /run/user/1000/k8s/cloud.conf

- name: Cinder CSI's values with the cloud-config in its Secret
  openstack.magnum.openstack_cloud_config:
    cluster: k8s
    cloud: mycloud
    values: {clusterID: 7b2c6a4e-25d5-4a2e-9d1c-1f3c1f0f1f51}
    values_key: [secret, data, cloud.conf]
    dest: /run/user/1000/k8s/cinder-csi.values.json
'''

RETURN = r'''
auth_url:
  description: The cloud's Keystone (what k8s-keystone-auth asks about tokens).
  returned: success
  type: str
  sample: https://keystone.example.com/v3
sections:
  description: The keys written in each section (values left out).
  returned: always
  type: dict
  sample: {"Global": ["auth-url", "application-credential-id",
                      "application-credential-secret", "region"],
           "LoadBalancer": ["floating-network-id", "subnet-id", "create-monitor"]}
'''

from ansible_collections.openstack.magnum.plugins.module_utils.core import private_files
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud_config)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


class ClusterCloudConfigModule(CloudModule):
    argument_spec = dict(
        dest=dict(type='path', required=True),
        subnet=dict(type='str'),
        sections=dict(type='list', elements='str', choices=['Global', 'LoadBalancer'],
                      default=['Global', 'LoadBalancer']),
        config_format=dict(type='str', choices=['cloud.conf', 'octavia_ingress', 'clouds.yaml',
                                                'autoscaler'],
                           default='cloud.conf'),
        values=dict(type='dict', default={}),
        values_key=dict(type='list', elements='str', no_log=False),
    )

    def act(self, conn, record):
        template = self.store.get('cluster_template', record['cluster_template_id'],
                                  by_name=False)
        config = conn.config.config
        try:
            sections = [('Global', cloud_config.global_section(
                config.get('auth_type'), config.get('auth') or {},
                region=conn.config.region_name, verify=config.get('verify'),
                cacert=config.get('cacert'),
                interface=None if config.get('interface') in (None, 'public')
                else config['interface']))]
            if 'LoadBalancer' in self.params['sections']:
                sections.append(('LoadBalancer', cloud_config.load_balancer_section(
                    record.get('labels'),
                    floating_network_id=self._find(conn.network.find_network,
                                                   template.get('external_network_id'),
                                                   'external network'),
                    subnet_id=self._find(conn.network.find_subnet,
                                         self.params['subnet'] or template.get('fixed_subnet'),
                                         'subnet'),
                    octavia=conn.endpoint_for('load-balancer') is not None)))
            text = cloud_config.render(sections)
            if self.params['config_format'] == 'octavia_ingress':
                text = cloud_config.ingress_config(sections, record['uuid'])
            elif self.params['config_format'] == 'autoscaler':
                text = cloud_config.autoscaler_config(sections)
            elif self.params['config_format'] == 'clouds.yaml':
                text = cloud_config.clouds_yaml(
                    config.get('auth_type'), config.get('auth') or {},
                    region=conn.config.region_name, verify=config.get('verify'),
                    cacert=config.get('cacert'),
                    interface=None if config.get('interface') in (None, 'public')
                    else config['interface'])
            if self.params['values_key']:
                text = cloud_config.helm_values(self.params['values'],
                                                self.params['values_key'], text)
        except Invalid as exc:
            self.fail_json(msg=str(exc))
        changed = private_files.replace_if_changed(self.params['dest'], text,
                                                   self.check_mode)
        self.exit_json(changed=changed, auth_url=dict(sections[0][1])['auth-url'],
                       sections=dict((name, [entry[0] for entry in entries])
                                     for name, entries in sections))

    def _find(self, find, ident, what):
        if not ident:
            return None
        found = find(ident, ignore_missing=True)
        if found is None:
            self.fail_json(msg="The cluster's %s %s does not exist." % (what, ident))
        return found.id


def main():
    ClusterCloudConfigModule()()


if __name__ == '__main__':
    main()
