#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: federation_control_plane
short_description: Prepare a federation's Karmada control plane on its host cluster
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - For a federation of Kubernetes clusters, the values of Karmada's Helm chart (control
    plane in the host cluster, its certificates from the federation's own CA, its API
    server on a node port of the host, images from the host's C(container_infra_prefix))
    written to I(values_file), and a kubeconfig of the host cluster (an admin certificate
    issued for the occasion from the host's CA) written to I(host_kubeconfig); both mode
    0600. Returns where the chart is.
  - The federation's properties are read as Karmada's settings (C(dns),
    C(karmada_version), C(apiserver_nodeport), see docs "Federations"); an invalid one
    fails here, before anything is made. The federation's CAs and the control plane's
    certificate are made once and kept (sealed) in the store.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  federation:
    description: The federation (name or UUID).
    type: str
    required: true
  values_file:
    description:
      - Where to write the chart's values (JSON). Without it (a delete), only the host's
        kubeconfig is written, and neither the chart nor the certificates are looked at.
    type: path
  host_kubeconfig:
    description: Where to write the host cluster's kubeconfig.
    type: path
    required: true
  offline_dir:
    description:
      - An offline directory holding the chart as C(charts/karmada-<version>.tgz)
        (C(MAGNUM_K8S_ARTIFACTS)).
    type: path
  charts_url:
    description: A mirror holding the chart as C(<url>/karmada-<version>.tgz).
    type: str
  cache_dir:
    description: Where a fetched chart is kept on the controller.
    type: path
notes:
  - Check mode computes everything and writes nothing.
'''

EXAMPLES = r'''
- name: Karmada's values for federation myfed
  openstack.magnum.federation_control_plane:
    federation: myfed
    values_file: /var/lib/magnum/federation/myfed/values.json
    host_kubeconfig: /var/lib/magnum/federation/myfed/host.kubeconfig
    cache_dir: /var/cache/magnum
  register: karmada
'''

RETURN = r'''
chart:
  description:
    - The chart's C(archive) on the controller; with C(url) (a mirror's file) or C(repo),
      C(chart) and C(version) (Karmada's repository) when it is to be fetched there first.
  returned: always
  type: dict
settings:
  description: The federation's Karmada settings (C(dns), C(karmada_version), C(apiserver_nodeport)).
  returned: always
  type: dict
release:
  description: The control plane's Helm release and namespace on the host.
  returned: always
  type: dict
  sample: {"name": "karmada", "namespace": "karmada-system"}
endpoint:
  description: Where the controller reaches Karmada's API server.
  returned: always
  type: str
  sample: https://10.0.0.5:32443
'''

import json

from ansible_collections.openstack.magnum.plugins.module_utils.core import private_files
from ansible_collections.openstack.magnum.plugins.module_utils.federation import federations
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import kube_access
from ansible_collections.openstack.magnum.plugins.module_utils.federation import (
    karmada, karmada_store)
from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule


class FederationControlPlaneModule(MagnumModule):
    argument_spec = dict(
        federation=dict(type='str', required=True),
        values_file=dict(type='path'),
        host_kubeconfig=dict(type='path', required=True),
        offline_dir=dict(type='path'),
        charts_url=dict(type='str'),
        cache_dir=dict(type='path'),
    )

    def run(self):
        federation = federations.get_federation(self.store, self.params['federation'],
                                                self.scope)
        host = self.store.get('cluster', federation['hostcluster_id'], by_name=False)
        release = {'name': karmada.RELEASE, 'namespace': karmada.NAMESPACE}
        if not self.params['values_file']:
            if not self.check_mode:
                private_files.write_private(self.params['host_kubeconfig'], json.dumps(
                    kube_access.cluster_admin(self.store, host)))
            self.exit_json(changed=False, chart={}, settings={}, endpoint='',
                           release=release)
        found = karmada.settings(federation['properties'])
        chart = karmada.chart_source(found['karmada_version'], self.params['offline_dir'],
                                     self.params['charts_url'], self.params['cache_dir'])
        endpoint = karmada.endpoint(host, found)
        certs, changed = karmada_store.certificates(self.store, federation, host, found,
                                                    self.check_mode)
        if not self.check_mode:
            values = karmada.chart_values(found, certs, (host.get('labels') or {}).get(
                'container_infra_prefix'))
            changed |= private_files.replace_if_changed(
                self.params['values_file'], json.dumps(values, indent=1, sort_keys=True))
            private_files.write_private(self.params['host_kubeconfig'], json.dumps(
                kube_access.cluster_admin(self.store, host)))
        self.exit_json(changed=changed, chart=chart, settings=found, endpoint=endpoint,
                       release=release)


def main():
    FederationControlPlaneModule()()


if __name__ == '__main__':
    main()
