# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Federations of Kubernetes clusters on Karmada (role ``federation_kubernetes``): its
control plane a Helm release of Karmada's chart on the host cluster, members joined in
Push mode with a credential made in each member for Karmada.

Pure parts, the modules doing the I/O:

- ``settings``: the federation's properties read as Karmada's settings (README,
  "Federations"), refused with a clear error when invalid;
- ``chart_values``: the chart's values (host install, the control plane's certificates
  from the federation's own CA, its API server's NodePort, images);
- ``member_objects`` / ``karmada_objects``: what a join makes in the member (a service
  account with the rights Push mode needs and its token - never the member's admin
  certificate) and in Karmada (the token's Secret, the ``Cluster``);
- ``member_state``: a ``Cluster``'s Ready condition as Karmada reports it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import os
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_values
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

NAMESPACE = 'karmada-system'      # the control plane's, on the host
RELEASE = 'karmada'               # its release (the chart names objects after it)
MEMBER_NAMESPACE = 'karmada-cluster'   # the credential's, in each member and in Karmada
APISERVER_PORT = 5443
CHART = {'name': 'karmada', 'version': '1.16.0',
         'repo': 'https://raw.githubusercontent.com/karmada-io/karmada/master/charts'}
LABEL_CLUSTER = 'magnum.openstack.org/cluster-uuid'
LABEL_FEDERATION = 'magnum.openstack.org/federation-uuid'
# The chart's components whose image is Karmada's own: each takes its tag from
# ``<component>.image.tag`` (values.yaml gives them karmadaImageVersion through a YAML
# anchor, resolved when the chart's values are read: setting karmadaImageVersion alone
# leaves them at the chart's default).
COMPONENTS = ('controllerManager', 'scheduler', 'webhook', 'aggregatedApiServer',
              'metricsAdapter', 'agent', 'schedulerEstimator', 'descheduler', 'search')
# CA records of a federation in the store (keyed by the federation's uuid).
CA_TYPES = ('karmada-ca', 'karmada-front-proxy-ca')

# property -> (default, check, what it sets); docs "Federations" lists them.
PROPERTIES = {
    'dns': ('cluster.local', r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
            "the host cluster's DNS domain, in the control plane's service names"),
    'karmada_version': (CHART['version'], r'^v?[0-9]+\.[0-9]+\.[0-9]+$',
                        "Karmada's chart version (its images' tag: v<version>)"),
    'apiserver_nodeport': ('32443', r'^[0-9]+$',
                           "the host's node port of Karmada's API server"),
}


def settings(properties):
    """The federation's Karmada settings from its ``properties`` (other properties are
    the federation's metadata and are kept, unread)."""
    found = {}
    for key, (default, pattern, _what) in PROPERTIES.items():
        value = str((properties or {}).get(key, default)).strip()
        if not re.match(pattern, value):
            raise Invalid("Federation property %s=%r is not valid (%s)." % (key, value, _what))
        found[key] = value
    port = int(found['apiserver_nodeport'])
    if not 1 <= port <= 65535:
        raise Invalid("Federation property apiserver_nodeport=%d is not a port." % port)
    found['apiserver_nodeport'] = port
    found['karmada_version'] = found['karmada_version'].lstrip('v')
    return found


def chart_source(version, offline_dir=None, charts_url=None, cache_dir=None):
    """Where Karmada's chart is: ``archive`` (a path on the controller, to fetch first
    when ``url`` or ``repo`` is given). The offline directory holds it as
    ``charts/karmada-<version>.tgz`` (its root: Karmada's version is not the clusters'),
    a mirror as ``<url>/karmada-<version>.tgz``; else Karmada's repository."""
    archive = 'karmada-%s.tgz' % version
    if offline_dir:
        path = os.path.join(offline_dir, 'charts', archive)
        if not os.path.isfile(path):
            raise Invalid("MAGNUM_K8S_ARTIFACTS=%s lacks Karmada's chart: charts/%s."
                          % (offline_dir, archive))
        return {'archive': path}
    if not cache_dir:
        raise Invalid("Karmada's chart needs a cache directory on the controller.")
    dest = os.path.join(cache_dir, 'charts', archive)
    found = {'archive': dest}
    if not os.path.isfile(dest):
        if charts_url:
            found['url'] = '%s/%s' % (charts_url.rstrip('/'), archive)
        else:
            found.update(repo=CHART['repo'], chart=CHART['name'], version=version)
    return found


def apiserver_hosts(found, host_addresses):
    """The names and addresses the control plane's certificate is for: its services in
    the host, and the host's nodes (through which the controller reaches it)."""
    domain = found['dns']
    return ['kubernetes.default.svc', '%s-apiserver.%s.svc' % (RELEASE, NAMESPACE),
            '%s-apiserver.%s.svc.%s' % (RELEASE, NAMESPACE, domain),
            '*.%s.svc.%s' % (NAMESPACE, domain), '*.%s.svc' % NAMESPACE,
            '*.etcd.%s.svc.%s' % (NAMESPACE, domain), 'localhost', '127.0.0.1'] + \
        [a for a in host_addresses or [] if a]


def chart_values(found, certs, image_registry=None):
    """Values of Karmada's chart: control plane in the host (``installMode: host``), the
    certificates given (``certs.mode: custom``: no job makes them, they stay across
    upgrades), its API server on a node port, images from ``image_registry`` (the
    host's container_infra_prefix), Karmada's own at the chart's version."""
    tag = 'v%s' % found['karmada_version']
    values = dict(((c, {'image': {'tag': tag}}) for c in COMPONENTS), **{
        'installMode': 'host',
        'clusterDomain': found['dns'],
        'karmadaImageVersion': tag,
        'certs': {'mode': 'custom', 'custom': {
            'caCrt': certs['ca'], 'caKey': certs['ca_key'],
            'crt': certs['crt'], 'key': certs['key'],
            'frontProxyCaCrt': certs['front_proxy_ca'],
            'frontProxyCrt': certs['front_proxy_crt'],
            'frontProxyKey': certs['front_proxy_key']}},
        'apiServer': {'serviceType': 'NodePort', 'nodePort': found['apiserver_nodeport']},
    })
    if image_registry:
        values['global'] = {'imageRegistry': image_registry.rstrip('/')}
    return values


def endpoint(host, found):
    """The URL of Karmada's API server from the controller: the host's first master
    address at the node port."""
    addresses = host.get('master_addresses') or []
    if not addresses:
        raise Invalid("Host cluster %s has no master address to reach Karmada's API "
                      "server through." % host['name'])
    return 'https://%s:%d' % (node_values.bracketed(addresses[0]), found['apiserver_nodeport'])


def member_name(cluster, taken=()):
    """The member's Cluster name in Karmada (what PropagationPolicies name): the Magnum
    cluster's name as a DNS-1123 label, with its uuid's head when that name is taken."""
    base = re.sub('[^a-z0-9]+', '-', (cluster.get('name') or '').lower()).strip('-')[:48]
    base = base.rstrip('-') or 'cluster'
    if base in taken:
        base = '%s-%s' % (base[:39].rstrip('-'), cluster['uuid'][:8])
    return base


def credential_name(federation_uuid):
    """The member's service account (and its token Secret, ClusterRole and binding) for
    one federation: a cluster in two federations has two, each removed alone."""
    return 'magnum-federation-%s' % federation_uuid[:8]


def member_objects(federation_uuid, cluster):
    """What a join makes in the member: the namespace, a service account, its token
    Secret, a ClusterRole with the rights Karmada's Push mode needs (every resource:
    it creates, updates and deletes what it propagates, and reads status and health)
    and its binding - as karmadactl join makes them."""
    name = credential_name(federation_uuid)
    labels = {LABEL_FEDERATION: federation_uuid, LABEL_CLUSTER: cluster['uuid']}
    meta = {'name': name, 'namespace': MEMBER_NAMESPACE, 'labels': labels}
    return [
        {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': MEMBER_NAMESPACE}},
        {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': meta},
        {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'kubernetes.io/service-account-token',
         'metadata': dict(meta, annotations={'kubernetes.io/service-account.name': name})},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRole',
         'metadata': {'name': name, 'labels': labels},
         'rules': [{'apiGroups': ['*'], 'resources': ['*'], 'verbs': ['*']},
                   {'nonResourceURLs': ['*'], 'verbs': ['get']}]},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding',
         'metadata': {'name': name, 'labels': labels},
         'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole',
                     'name': name},
         'subjects': [{'kind': 'ServiceAccount', 'name': name,
                       'namespace': MEMBER_NAMESPACE}]},
    ]


def karmada_objects(federation_uuid, cluster, name, token, ca_pem):
    """What a join registers in Karmada: the token's Secret and the ``Cluster`` (Push
    mode, the member's API address, its CA)."""
    labels = {LABEL_FEDERATION: federation_uuid, LABEL_CLUSTER: cluster['uuid']}
    return [
        {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': MEMBER_NAMESPACE}},
        {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'Opaque',
         'metadata': {'name': name, 'namespace': MEMBER_NAMESPACE, 'labels': labels},
         'data': {'token': base64.b64encode(token.encode()).decode(),
                  'caBundle': base64.b64encode(ca_pem.encode()).decode()}},
        {'apiVersion': 'cluster.karmada.io/v1alpha1', 'kind': 'Cluster',
         'metadata': {'name': name, 'labels': labels},
         'spec': {'id': cluster['uuid'], 'syncMode': 'Push',
                  'apiEndpoint': cluster['api_address'],
                  'secretRef': {'namespace': MEMBER_NAMESPACE, 'name': name}}},
    ]


def member_state(cluster_obj):
    """('ready' | 'joining', reason) from a Karmada ``Cluster``'s Ready condition."""
    for condition in ((cluster_obj or {}).get('status') or {}).get('conditions') or []:
        if condition.get('type') == 'Ready':
            if condition.get('status') == 'True':
                return 'ready', None
            return 'joining', condition.get('message') or condition.get('reason') or \
                'not ready'
    return 'joining', 'Karmada has not reported on it yet'
