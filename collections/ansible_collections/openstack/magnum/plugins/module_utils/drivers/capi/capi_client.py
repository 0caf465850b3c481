# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's Cluster API objects on the management cluster (the kubernetes client):
read by the Cluster API driver's modules."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict

try:
    from kubernetes import client as kube_client, config as kube_config
    from kubernetes.client.rest import ApiException
    HAS_KUBERNETES = True
    KUBERNETES_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_ERROR = traceback.format_exc()

VERSION = 'v1beta1'
# (group, plural, version): CAPO's OpenStackServers (v1alpha1, one per Machine's server)
# hold what Nova said of a server CAPO could not make, its OpenStackMachine does not.
KINDS = (('cluster.x-k8s.io', 'clusters', VERSION),
         ('controlplane.cluster.x-k8s.io', 'kubeadmcontrolplanes', VERSION),
         ('cluster.x-k8s.io', 'machinedeployments', VERSION),
         ('cluster.x-k8s.io', 'machines', VERSION),
         ('infrastructure.cluster.x-k8s.io', 'openstackclusters', VERSION),
         ('infrastructure.cluster.x-k8s.io', 'openstackservers', 'v1alpha1'))
CLUSTER_LABEL = 'cluster.x-k8s.io/cluster-name'


def connect(kubeconfig):
    return kube_client.CustomObjectsApi(kube_config.new_client_from_config(
        config_file=kubeconfig))


def read(api, names):
    """The release's objects by plural: those named after it (its Cluster,
    OpenStackCluster, KubeadmControlPlane) and those of its cluster (spec.clusterName, or
    CAPI's cluster-name label); a kind the management cluster does not serve has none."""
    found = {}
    own = {'clusters': names['release'], 'openstackclusters': names['release'],
           'kubeadmcontrolplanes': names['release'] + '-control-plane'}
    for group, plural, version in KINDS:
        try:
            items = api.list_namespaced_custom_object(group, version, names['namespace'],
                                                      plural)['items']
        except ApiException as exc:
            if exc.status != 404:
                raise Conflict('The management cluster answered %s listing %s: %s'
                               % (exc.status, plural, exc.reason))
            items = []
        found[plural] = [obj for obj in items
                         if (obj.get('spec') or {}).get('clusterName') == names['release']
                         or ((obj['metadata'].get('labels') or {}).get(CLUSTER_LABEL)
                             == names['release'] and plural == 'openstackservers')
                         or obj['metadata']['name'] == own.get(plural)]
    return found


def annotate(api, namespace, machine, annotations):
    api.patch_namespaced_custom_object('cluster.x-k8s.io', VERSION, namespace, 'machines',
                                       machine['metadata']['name'],
                                       {'metadata': {'annotations': annotations}})


class CapiModule(object):
    """Mixed into a MagnumModule: the options ``cluster`` and ``kubeconfig``; ``run()``
    loads the cluster's record, its names and a client of the management cluster and calls
    ``act(record, names, api)``."""

    ARGS = dict(cluster=dict(type='str', required=True),
                kubeconfig=dict(type='path', required=True))

    def run(self):
        if not HAS_KUBERNETES:
            self.fail_json(msg=missing_required_lib('kubernetes'), exception=KUBERNETES_ERROR)
        record = lifecycle.get_cluster(self.store, self.params['cluster'], self.scope)
        self.act(record, capi.names(record), connect(self.params['kubeconfig']))

    def act(self, record, names, api):
        raise NotImplementedError()
