#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_cluster
short_description: Write the Helm values of a cluster of the Cluster API driver
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - For a cluster of the C(k8s_capi_helm) driver, the values of azimuth-cloud's
    C(openstack-cluster) chart, mapped from its template, record, node groups and labels as
    magnum-capi-helm maps them (docs, "Clusters through Cluster API"), written to
    I(values_file) (mode 0600, JSON), with the names of its namespace, release and
    credentials Secret and the chart to install.
  - What the mapping needs from the cloud is looked up on it - the template's image (its
    id, C(os_distro) and C(kube_version) properties), the external and fixed networks'
    and subnet's ids, the volume types (Cinder CSI's StorageClasses), the Keystone URL and
    project (k8s-keystone-auth) - so a bad reference fails here, before anything is made.
  - Without a load balancer in front of the API server but with a floating IP for it, the
    cluster's first release is given an address the driver allocates in the cluster's
    project on the external network (the chart's C(apiServer.floatingIP), described
    C(Magnum cluster <uuid> API server (Cluster API))); later releases keep it. Left
    to Cluster API's OpenStack provider, the address would go with the first control
    plane machine replaced (an upgrade, a health check's remediation). Module
    M(openstack.magnum.capi_floating_ips) deletes it with the cluster.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  values_file:
    description: Where to write the values.
    type: path
    required: true
  ca_secret_file:
    description:
      - Where to write the manifest of the Secret C(<release>-ca) holding the cluster's
        CA (created in the store if missing), which Cluster API's control plane takes as
        the cluster's CA instead of making its own - so C(openstack coe ca show), C(ca
        sign) and C(cluster config) work as for every cluster. Mode 0600; use C(no_log)
        on the task that applies it.
    type: path
  node_counts:
    description:
      - Node counts by node group name or UUID that differ from the records (the target of
        a resize).
    type: dict
    default: {}
  without_groups:
    description: Node groups (names or UUIDs) left out (a node group being deleted).
    type: list
    elements: str
    default: []
  image:
    description:
      - The image to map instead of the template's (the target of an upgrade); its
        C(kube_version) may not be below the cluster's C(coe_version) nor skip a minor
        version.
    type: str
  control_plane_first:
    description:
      - With I(image), the values of an upgrade's first release - the control plane on
        I(image), the node groups kept on the image they run now (the template's, its
        Kubernetes version) - as Kubernetes' version skew policy wants it (kubelets never
        newer than the API server) and Cluster API's ClusterClass does it. Its second
        release, once Cluster API has rolled the control plane, is the module without
        it. RV(staged) says whether there is a second.
    type: bool
    default: false
  chart:
    description:
      - The operator's chart, over the default (C(openstack-cluster) 0.27.0 of
        U(https://azimuth-cloud.github.io/capi-helm-charts)) - C(name), C(repo), C(version)
        or C(archive) (a packaged chart on the controller). The template's
        C(capi_helm_chart_version) label sets the version.
    type: dict
    default: {}
  addon_provider:
    description:
      - Whether the management cluster runs the addon provider that installs the chart's
        add-ons (azimuth-cloud's cluster-api-addon-provider, its C(HelmRelease) and
        C(Manifests) kinds). Without it the chart's add-ons are off, the kubelets name their
        server themselves (C(provider-id) C(openstack:///<server id>), no external cloud
        provider) and the pod and service networks are the cluster's (its
        C(flannel_network_cidr) or C(calico_ipv4pool), C(service_cluster_ip_range)) - the
        role applies the network add-on through the cluster's kubeconfig.
    type: bool
    default: true
  values:
    description:
      - The operator's chart values (the site's - registries, kubeadm's waits, probes),
        under those of the cluster.
    type: dict
    default: {}
notes:
  - Check mode computes everything and writes nothing.
'''

EXAMPLES = r'''
- name: Values of cluster k8s
  openstack.magnum.capi_cluster:
    cluster: k8s
    cloud: mycloud
    values_file: /var/lib/magnum/capi/k8s/values.json
  register: capi
'''

RETURN = r'''
names:
  description: The cluster's C(namespace), C(release) and C(credentials) Secret.
  returned: always
  type: dict
chart:
  description: The chart to install (C(name), C(repo), C(version), C(archive) if given).
  returned: always
  type: dict
kube_version:
  description: The Kubernetes version of the image.
  returned: always
  type: str
staged:
  description:
    - Whether these are the values of an upgrade's first release (I(control_plane_first)
      and node groups on another image than I(image)); the upgrade's second release
      follows once Cluster API has rolled the control plane.
  returned: always
  type: bool
'''

import json

from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle, private_files
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


class CapiClusterModule(CloudModule):
    argument_spec = dict(
        values_file=dict(type='path', required=True),
        ca_secret_file=dict(type='path'),
        node_counts=dict(type='dict', default={}),
        without_groups=dict(type='list', elements='str', default=[]),
        image=dict(type='str'),
        control_plane_first=dict(type='bool', default=False),
        chart=dict(type='dict', default={}),
        addon_provider=dict(type='bool', default=True),
        values=dict(type='dict', default={}),
    )

    def act(self, conn, record):
        template = self.store.get('cluster_template', record['cluster_template_id'],
                                  by_name=False)
        leaving = set(self.params['without_groups'])
        groups = [g for g in self.store.find('nodegroup', cluster_id=record['uuid'])
                  if g['uuid'] not in leaving and g['name'] not in leaving]
        targets = self.params['node_counts']
        for group in groups:
            for key in (group['uuid'], group['name']):
                if key in targets:
                    group['node_count'] = int(targets[key])
        image = self._image(conn, self.params['image'] or template['image_id'])
        networks = {
            'external': self._id(conn.network.find_network, template.get('external_network_id'),
                                 'external network'),
            'fixed': self._id(conn.network.find_network, record.get('fixed_network')
                              or template.get('fixed_network'), 'network'),
            'subnet': self._id(conn.network.find_subnet, record.get('fixed_subnet')
                               or template.get('fixed_subnet'), 'subnet')}
        types = [t.name for t in conn.block_storage.types()] \
            if conn.has_service('block-storage') else []
        auth = {'auth_url': (conn.config.config.get('auth') or {}).get('auth_url'),
                'project_id': conn.current_project_id}
        try:
            values = capi.values(template, record, groups, image, networks, types, auth,
                                 addon_provider=self.params['addon_provider'],
                                 base=self.params['values'])
            if capi.api_floating_ip_wanted(values):
                address = self._api_floating_ip(conn, record, networks['external'])
                if address:
                    values['apiServer']['floatingIP'] = address
            staged = False
            if self.params['image']:
                capi.check_upgrade(record.get('coe_version'), values['kubernetesVersion'])
                if self.params['control_plane_first']:
                    staged = capi.node_groups_kept(
                        values, self._image(conn, template['image_id']))
        except Invalid as exc:
            self.fail_json(msg=str(exc))
        text = json.dumps(values, indent=2, sort_keys=True)
        changed = private_files.replace_if_changed(self.params['values_file'], text,
                                                   self.check_mode)
        if self.params['ca_secret_file'] and not self.check_mode:
            _made, ca = lifecycle.ensure_ca(self.store, record)
            manifest = capi.ca_secret(capi.names(record), ca['cert_pem'], ca['key_pem'])
            changed = private_files.replace_if_changed(
                self.params['ca_secret_file'], json.dumps(manifest, indent=2, sort_keys=True)) \
                or changed
        self.exit_json(changed=changed, names=capi.names(record),
                       chart=capi.chart(template, self.params['chart']),
                       kube_version=values['kubernetesVersion'], staged=staged)

    def _api_floating_ip(self, conn, record, network_id):
        """The address the driver holds for the cluster's API server: found by its
        description, else allocated if the cluster has no endpoint yet (its first release;
        not in check mode)."""
        description = capi.api_floating_ip_description(record)
        for ip in conn.network.ips(project_id=conn.current_project_id):
            if ip.description == description:
                return ip.floating_ip_address
        if record.get('api_address') or self.check_mode:
            return None
        # Neutron's refusal (quota, no address left) fails the module in its words
        return conn.network.create_ip(floating_network_id=network_id,
                                      description=description).floating_ip_address

    def _image(self, conn, ident):
        """The Glance image ``ident`` as capi.values reads it (its properties a dict)."""
        image = self._find(conn.image.find_image, ident, 'image')
        return dict(image.to_dict(), properties=dict(image.properties or {}))

    def _find(self, find, ident, what):
        found = find(ident, ignore_missing=True)
        if found is None:
            self.fail_json(msg="The cluster's %s %s does not exist." % (what, ident))
        return found

    def _id(self, find, ident, what):
        return self._find(find, ident, what).id if ident else None


def main():
    CapiClusterModule()()


if __name__ == '__main__':
    main()
