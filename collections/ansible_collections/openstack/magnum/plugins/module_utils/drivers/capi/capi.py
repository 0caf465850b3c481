# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Cluster API driver (``k8s_capi_helm``): a Magnum cluster as a Helm release of
azimuth-cloud's ``openstack-cluster`` chart on a management cluster, whose Cluster API
(CAPI) and OpenStack provider (CAPO) build it.

Three pure parts, the role's modules doing the I/O:

- ``names``: the namespace, release and Secret names of a cluster - valid Kubernetes
  names whatever the cluster is called;
- ``values``: the chart's values from the template, the cluster, its node groups and
  labels, as magnum-capi-helm maps them (docs, "Clusters through Cluster API");
- ``status``: the cluster's state read from CAPI's objects (``Cluster``,
  ``KubeadmControlPlane``, ``MachineDeployment``s, ``Machine``s), not from the
  playbook's exit.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import copy
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as labels_mod
from ansible_collections.openstack.magnum.plugins.module_utils.providers import contract
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_config
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.core.fields import (
    check_count_range, flavor_of)

NAMESPACE_PREFIX = 'magnum'
# The chart, as magnum-capi-helm's defaults name it; the operator's configuration
# (MAGNUM_CAPI_CHART_*) or the template's capi_helm_chart_version label changes them.
CHART = {'name': 'openstack-cluster',
         'repo': 'https://azimuth-cloud.github.io/capi-helm-charts',
         'version': '0.27.0'}
# The cloud the credentials Secret's clouds.yaml names (the chart's cloudName default).
CLOUD_NAME = 'openstack'
CNI = {'calico': 'calico', 'cilium': 'cilium', 'flannel': 'flannel'}
OS_DISTROS = ('ubuntu', 'flatcar', 'debian')
# The labels only this driver reads (magnum-capi-helm's; docs "Clusters through Cluster
# API"), name -> (kind, allowed values or None): the kubeadm driver refuses them.
OWN_LABELS = {
    'capi_helm_chart_version': (labels_mod.STR, None),
    'etcd_blockdevice_size': (labels_mod.INT, None),
    'etcd_blockdevice_type': (labels_mod.STR, ('local', 'volume')),
    'etcd_blockdevice_volume_type': (labels_mod.STR, None),
    'etcd_blockdevice_volume_az': (labels_mod.STR, None),
    'extra_network_names': (labels_mod.STR, None),
    'csi_cinder_reclaim_policy': (labels_mod.STR, ('Delete', 'Retain')),
    'csi_cinder_volume_binding_mode': (labels_mod.STR, ('Immediate', 'WaitForFirstConsumer')),
    'csi_cinder_availability_zone': (labels_mod.STR, None),
    'csi_cinder_fstype': (labels_mod.STR, None),
    'csi_cinder_allow_volume_expansion': (labels_mod.BOOL, None),
}
# What a node's kubelet names its server when no cloud controller manager initialises the
# nodes (no addon provider on the management cluster): the id Cluster API's OpenStack
# provider gives the Machine, so that CAPI finds the Machine's Node. cloud-init's jinja
# fills it on the machine (the chart's kubeadm configuration is a template already: its
# nodes are named '{{ local_hostname }}').
PROVIDER_ID = 'openstack:///{{ v1.instance_id }}'
# The label values magnum-capi-helm filters user input with: what reaches the chart.
_SAFE = re.compile(r'[^a-zA-Z0-9./ _-]+')


def sanitized(name, limit=None):
    """A DNS-1123 label of ``name``: lowercase, runs of other characters as one ``-``."""
    text = re.sub('[^a-z0-9]+', '-', (name or '').lower()).strip('-')
    if limit:
        text = text[:limit].rstrip('-')
    return text


def names(cluster):
    """``namespace`` (one per project), ``release`` (also the cluster's stack_id: at most
    30 characters of its name and Magnum's stable 12-character suffix, within Helm's 53)
    and ``credentials`` (the Secret of the cluster's clouds.yaml)."""
    project = re.sub('[^a-z0-9]', '', (cluster.get('project_id') or '').lower())
    release = '-'.join(p for p in (sanitized(cluster.get('name'), 30) or 'cluster',
                                   contract.stack_suffix(cluster['uuid'])) if p)
    return {'namespace': '%s-%s' % (NAMESPACE_PREFIX, project or 'default'),
            'release': release,
            'credentials': '%s-cloud-credentials' % release}


def _labels(template, cluster):
    merged = dict(template.get('labels') or {})
    merged.update(cluster.get('labels') or {})
    return merged


def _label(labels, key, default=None):
    value = labels.get(key)
    if value in (None, ''):
        return default
    return _SAFE.sub('', str(value))


def _int_label(labels, key, default=None):
    value = labels.get(key)
    if value in (None, ''):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise Invalid("Label %s=%r must be an integer." % (key, value))


def ca_secret(names, cert_pem, key_pem):
    """The Secret Cluster API's control plane takes as the cluster's CA
    (``<cluster>-ca``, type ``cluster.x-k8s.io/secret``) when it exists before it."""
    return {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'cluster.x-k8s.io/secret',
            'metadata': {'name': names['release'] + '-ca', 'namespace': names['namespace'],
                         'labels': {'cluster.x-k8s.io/cluster-name': names['release']}},
            'data': {'tls.crt': base64.b64encode(cert_pem.encode()).decode(),
                     'tls.key': base64.b64encode(key_pem.encode()).decode()}}


def chart(template, settings=None):
    """The chart to install: the operator's (``settings``: name, repo, version, or
    ``archive`` - a local .tgz) over CHART; the template's capi_helm_chart_version label
    over both versions."""
    found = dict(CHART)
    found.update(dict((k, v) for k, v in (settings or {}).items() if v))
    version = (template.get('labels') or {}).get('capi_helm_chart_version')
    if version:
        found['version'] = re.sub(r'[^a-z0-9.+-]+', '', version.lower())
    return found


def kube_version(image):
    """The image's Kubernetes version (its ``kube_version`` property), without a ``v``."""
    props = image.get('properties') or {}
    raw = image.get('kube_version') or props.get('kube_version')
    if not raw:
        raise Invalid("Image %s does not have a kube_version property: the Cluster API driver "
                      "needs it (the Kubernetes version built into the image)."
                      % (image.get('name') or image.get('id')))
    version = re.sub(r'[^0-9.]+', '', str(raw).lstrip('v'))
    if not re.match(r'^\d+\.\d+\.\d+$', version):
        raise Invalid("Image %s has kube_version %r, not a version like v1.31.4."
                      % (image.get('name') or image.get('id'), raw))
    return version


def check_upgrade(current, new):
    """An upgrade from Kubernetes ``current`` (the cluster's coe_version) to ``new`` (the
    new image's kube_version): not a downgrade, at most one minor version (what kubeadm
    and Cluster API's control plane take)."""
    old = labels_mod.version_tuple(current)
    target = labels_mod.version_tuple(new)
    if old is None or target is None:
        return
    if target < old:
        raise Invalid("Downgrading a cluster is not supported: Kubernetes %s -> %s."
                      % (current, new))
    if target[:2] > (old[0], old[1] + 1):
        raise Invalid("Upgrading Kubernetes %s -> %s skips a minor version: upgrade one "
                      "minor version at a time." % (current, new))


def node_counts(group, labels, default_worker):
    """(min, max) of a node group for the autoscaler: the group's own, else (for the
    default worker group) the min_node_count / max_node_count labels, else its count.
    A min_node_count of 0 is the field's default (1 the default group's, in Magnum),
    not a wish to scale to zero: taken as unset."""
    low = group.get('min_node_count') or None
    high = group.get('max_node_count')
    count = group['node_count']
    if default_worker:
        if low in (None, 1):
            low = _int_label(labels, 'min_node_count')
        if high is None:
            high = _int_label(labels, 'max_node_count')
    low = count if low is None else low
    high = count if high is None else high
    if low < 1:
        raise Invalid("Node group %s: min_node_count must be at least 1 (Cluster API's "
                      "OpenStack provider cannot scale a group to zero)." % group['name'])
    check_count_range(group['name'], count, low, high, error=Invalid)
    return low, high


def _node_groups(template, cluster, groups, labels):
    scaling = labels_mod.to_bool(labels.get('auto_scaling_enabled'))
    workers = [g for g in groups if g.get('role') != 'master']
    found = []
    for group in workers:
        item = {'name': sanitized(group['name']) or 'group',
                'machineFlavor': flavor_of(group.get('flavor_id'), cluster.get('flavor_id'),
                                           template.get('flavor_id')),
                'machineCount': group['node_count']}
        if scaling:
            low, high = node_counts(group, labels, group.get('is_default')
                                    or group['name'] == 'default-worker')
            if low != high:
                item.update(autoscale=True, machineCountMin=low, machineCountMax=high)
        found.append(item)
    return found


def _etcd(labels):
    size = _int_label(labels, 'etcd_blockdevice_size', _int_label(labels, 'etcd_volume_size', 0))
    if not size:
        return {}
    device = {'size': size}
    if _label(labels, 'etcd_blockdevice_type') == 'local':
        device['type'] = 'Local'
    else:
        device['type'] = 'Volume'
        volume_type = _label(labels, 'etcd_blockdevice_volume_type',
                             _label(labels, 'etcd_volume_type'))
        if volume_type:
            device['volumeType'] = volume_type
        zone = _label(labels, 'etcd_blockdevice_volume_az')
        if zone:
            device['availabilityZone'] = zone
    return {'blockDevice': device}


def _storage_classes(labels, volume_types, default_type=None):
    """Cinder CSI's StorageClasses, one per volume type, the default one first."""
    if not volume_types:
        return {}
    default_type = default_type or volume_types[0]
    if default_type not in volume_types:
        raise Invalid("Volume type %s (the default StorageClass) is not a volume type of the "
                      "cloud: %s." % (default_type, ', '.join(volume_types)))

    def storage_class(volume_type):
        return {'name': sanitized(volume_type), 'enabled': True, 'volumeType': volume_type,
                'reclaimPolicy': _label(labels, 'csi_cinder_reclaim_policy', 'Delete'),
                'allowVolumeExpansion': labels_mod.to_bool(
                    labels.get('csi_cinder_allow_volume_expansion'), True),
                'volumeBindingMode': _label(labels, 'csi_cinder_volume_binding_mode',
                                            'Immediate'),
                'availabilityZone': _label(labels, 'csi_cinder_availability_zone', 'nova'),
                'fstype': _label(labels, 'csi_cinder_fstype', 'ext4')}
    return {'defaultStorageClass': storage_class(default_type),
            'additionalStorageClasses': [storage_class(t) for t in volume_types
                                         if t != default_type]}


def _merge(into, extra):
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


# Cluster API runs a machine's `kubeadm join` once (cloud-init's runcmd, its sentinel file
# written on success; v1beta2 dropped useExperimentalRetryJoin): a join whose reads of the
# control plane time out on a loaded master (kubeadm's 10 s for the kubeadm-config and
# kube-proxy ConfigMaps, seen on TCG guests while a control plane machine joined) leaves the
# machine without a node until a health check replaces it. runcmd is one shell script, so
# a function defined before the join wraps it: a failed join is reset and tried again, 5
# times 20 s apart, as the kubeadm driver retries its joins - the certificates CAPI wrote
# (a control plane machine's) kept across the reset, which empties the certificates'
# directory. An init is left alone.
JOIN_RETRY = (
    "kubeadm() { [ \"$1\" = join ] || { command kubeadm \"$@\"; return; }; "
    "cp -a /etc/kubernetes/pki /run/kubeadm/pki.given 2>/dev/null; "
    "for attempt in 1 2 3 4 5; do command kubeadm \"$@\" && return 0; "
    "echo \"kubeadm join failed (attempt $attempt of 5): reset, again in 20 s\" >&2; "
    "command kubeadm reset -f; "
    "[ -d /run/kubeadm/pki.given ] && cp -a /run/kubeadm/pki.given/. /etc/kubernetes/pki/; "
    "sleep 20; done; return 1; }")


def node_groups_kept(found, image):
    """Leave the node groups of ``found`` (an upgrade's values) on ``image``, the one they
    run now, while the control plane moves to the values' image: an upgrade's first
    release. Kubernetes' version skew policy wants the control plane upgraded before the
    kubelets (never newer than the API server), as Cluster API's ClusterClass sequences
    it; without it CAPI rolls the MachineDeployments and the KubeadmControlPlane at once.
    Whether anything was kept (False when ``image`` is the values' own)."""
    if image['id'] == found['machineImageId']:
        return False
    defaults = found.setdefault('nodeGroupDefaults', {})
    defaults['machineImageId'] = image['id']
    defaults['kubernetesVersion'] = kube_version(image)
    return True


def _join_retried(found):
    """JOIN_RETRY first among the control plane's and the node groups' pre-kubeadm
    commands (the operator's kept after it)."""
    for part in (found.setdefault('controlPlane', {}),
                 found.setdefault('nodeGroupDefaults', {})):
        spec = part.setdefault('kubeadmConfigSpec', {})
        spec['preKubeadmCommands'] = [JOIN_RETRY] + [
            c for c in spec.get('preKubeadmCommands') or [] if c != JOIN_RETRY]


def _without_addon_provider(found, pod_cidr, service_cidr):
    """The values of a cluster whose add-ons no addon provider installs (the role applies
    its network add-on through the cluster's kubeconfig): the chart's add-ons off, the
    kubelets without an external cloud provider (whose controller would never come, its
    taint never lifted) naming their server themselves (PROVIDER_ID), the pod and service
    networks the network add-on is given."""
    kubelet = {'kubeletExtraArgs': {'cloud-provider': None, 'provider-id': PROVIDER_ID}}
    join = {'joinConfiguration': {'nodeRegistration': kubelet}}
    _merge(found, {
        'addons': {'enabled': False},
        'kubeNetwork': {'pods': {'cidrBlocks': [pod_cidr]},
                        'services': {'cidrBlocks': [service_cidr]}},
        'controlPlane': {'kubeadmConfigSpec': dict(
            join, initConfiguration={'nodeRegistration': kubelet})},
        'nodeGroupDefaults': {'kubeadmConfigSpec': join}})


def values(template, cluster, groups, image, networks=None, volume_types=(), auth=None,
           addon_provider=True, base=None):
    """The chart's values. ``image``: the template's Glance image (``id``, ``name``,
    ``kube_version``/``properties``, ``os_distro``); ``networks``: ``external``,
    ``fixed`` and ``subnet`` ids (resolved on the cloud); ``volume_types``: the cloud's,
    for Cinder CSI's StorageClasses; ``auth``: ``auth_url`` and ``project_id`` for
    k8s-keystone-auth. ``addon_provider``: whether the management cluster has the addon
    provider that installs the chart's add-ons (else _without_addon_provider); ``base``:
    the operator's values (the site's: registries, kubeadm's waits), under the cluster's."""
    labels = _labels(template, cluster)
    networks = networks or {}
    names_ = names(cluster)
    healing = labels_mod.to_bool(labels.get('auto_healing_enabled'), True)
    provider = _label(labels, 'octavia_provider', 'amphora')
    os_distro = image.get('os_distro') or (image.get('properties') or {}).get('os_distro')
    # Magnum's master_lb_enabled (the cluster's, else its template's): without it the API
    # server is the control plane machine's address, no Octavia load balancer is made (a
    # single master: the API refuses several without one).
    lb = cluster.get('master_lb_enabled')
    lb = template.get('master_lb_enabled', True) if lb is None else lb
    found = {
        'kubernetesVersion': kube_version(image),
        'machineImageId': image['id'],
        'machineSSHKeyName': cluster.get('keypair') or template.get('keypair_id') or None,
        'cloudCredentialsSecretName': names_['credentials'],
        'etcd': _etcd(labels),
        'apiServer': {
            'enableLoadBalancer': bool(lb),
            'loadBalancerProvider': provider,
            'associateFloatingIP': labels_mod.to_bool(
                labels.get('master_lb_floating_ip_enabled'),
                bool(template.get('floating_ip_enabled', True))),
        },
        'clusterNetworking': {
            'dnsNameservers': [s.strip() for s in (template.get('dns_nameserver') or '')
                               .split(',') if s.strip()] or None,
            'externalNetworkId': networks.get('external'),
            'internalNetwork': {
                'networkFilter': {'id': networks['fixed']} if networks.get('fixed') else None,
                'subnetFilter': {'id': networks['subnet']} if networks.get('subnet') else None,
                'nodeCidr': _label(labels, 'fixed_subnet_cidr', '10.0.0.0/24'),
            },
        },
        'osDistro': _SAFE.sub('', os_distro or 'ubuntu'),
        'controlPlane': {
            'machineFlavor': flavor_of(cluster.get('master_flavor_id'),
                                       template.get('master_flavor_id')),
            'machineCount': cluster.get('master_count') or 1,
            'healthCheck': {'enabled': healing},
        },
        'nodeGroupDefaults': {'healthCheck': {'enabled': healing}},
        'nodeGroups': _node_groups(template, cluster, groups, labels),
        'addons': {
            'openstack': {
                'csiCinder': _storage_classes(labels, list(volume_types)),
                'cloudConfig': {'LoadBalancer': {
                    'lb-provider': provider,
                    'lb-method': _label(labels, 'octavia_lb_algorithm',
                                        'SOURCE_IP_PORT' if provider.lower() == 'ovn'
                                        else 'ROUND_ROBIN'),
                    'create-monitor': labels_mod.to_bool(labels.get('octavia_lb_healthcheck'),
                                                         True)}},
            },
            'monitoring': {'enabled': labels_mod.to_bool(labels.get('monitoring_enabled'))},
            'kubernetesDashboard': {
                'enabled': labels_mod.to_bool(labels.get('kube_dashboard_enabled'))},
            # As magnum-capi-helm: the cluster's delete cannot yet remove an ingress
            # controller's load balancer.
            'ingress': {'enabled': False},
        },
    }
    for volume_label, key in (('boot_volume_type', 'volumeType'), ('boot_volume_size', 'diskSize')):
        value = _int_label(labels, volume_label) if key == 'diskSize' else \
            _label(labels, volume_label)
        if value:
            _merge(found, {'controlPlane': {'machineRootVolume': {key: value}},
                           'nodeGroupDefaults': {'machineRootVolume': {key: value}}})
    extra = _label(labels, 'extra_network_names') or _label(labels, 'extra_network_name')
    if extra:
        ports = [{}] + [{'network': {'name': n}, 'securityGroups': []} for n in extra.split()]
        _merge(found, {'nodeGroupDefaults': {'machineNetworking': {'ports': ports}}})
    if labels_mod.to_bool(labels.get('keystone_auth_enabled')):
        auth = auth or {}
        _merge(found, {'authWebhook': 'k8s-keystone-auth', 'addons': {'openstack': {
            'k8sKeystoneAuth': {'enabled': True, 'values': {
                'openstackAuthUrl': auth.get('auth_url'),
                'projectId': auth.get('project_id') or cluster.get('project_id')}}}}})
    cidrs = [c.strip() for c in (labels.get('master_lb_allowed_cidrs')
                                 or labels.get('api_master_lb_allowed_cidrs') or '').split(',')
             if c.strip()]
    if cidrs:
        # The chart's key since its #699; allowedCidrs before it (what older charts read).
        _merge(found, {'apiServer': {'allowedCIDRs': cidrs, 'allowedCidrs': cidrs}})
    driver = template.get('network_driver')
    if driver:
        _merge(found, {'addons': {'cni': {'type': CNI.get(driver, _SAFE.sub('', driver))}}})
    if not addon_provider:
        if (driver or 'flannel') != 'flannel':
            raise Invalid("network_driver %s needs the addon provider on the management "
                          "cluster (azimuth-cloud's cluster-api-addon-provider): without it "
                          "the cluster's network add-on is flannel." % _SAFE.sub('', driver))
        conf = k8s_config.settings(dict(cluster, labels=labels), template)
        _without_addon_provider(found, conf['pod_cidr'], conf['service_cidr'])
    found = _merge(copy.deepcopy(base or {}), found)
    _join_retried(found)
    return found


# ----------------------------------------------------------------- status from CAPI

def _conditions(obj):
    """{type: condition} of a CAPI object (v1beta1 ``status.conditions``, or v1beta2's
    ``status.v1beta2.conditions`` / ``status.conditions``)."""
    status = obj.get('status') or {}
    found = {}
    for condition in (status.get('conditions') or []) + \
            ((status.get('v1beta2') or {}).get('conditions') or []):
        found.setdefault(condition.get('type'), condition)
    return found


def _true(obj, kind):
    return (_conditions(obj).get(kind) or {}).get('status') == 'True'


# The reasons of a False condition that Cluster API's OpenStack provider does not try
# again (its TerminalError's, a server Nova put in ERROR). Any other False condition, of
# whatever severity, is tried again - CAPI's preflight checks and CAPO's failed calls to
# the cloud are of severity Error too: the cluster is still in progress, CAPI's words its
# reason, until it is ready or its create_timeout ends it.
TERMINAL_REASONS = ('InvalidMachineSpec', 'DependencyFailed', 'InstanceStateError')


def _failure(obj):
    """CAPI's reason an object failed for good: its failureMessage (failureReason), else a
    False condition of a TERMINAL_REASONS reason."""
    status = obj.get('status') or {}
    if status.get('failureMessage') or status.get('failureReason'):
        return status.get('failureMessage') or status.get('failureReason')
    for condition in _conditions(obj).values():
        if condition.get('status') == 'False' and condition.get('reason') in TERMINAL_REASONS:
            return condition.get('message') or condition.get('reason')
    return None


def _name(obj):
    return (obj.get('metadata') or {}).get('name')


def _words(obj, kind):
    """CAPI's message on ``obj``'s False condition ``kind`` (a provider's, mirrored: CAPO's
    errors while it tries again), or ''."""
    condition = _conditions(obj).get(kind) or {}
    if condition.get('status') != 'False':
        return ''
    return (condition.get('message') or '').strip()[:300]


def _rolling(obj):
    """What a KubeadmControlPlane or MachineDeployment still rolls out (None when
    nothing): its controller has not seen its spec yet, machines not of the spec yet, or
    more machines than wanted (old ones not gone yet) - a new image at the same version
    rolls every machine while the object stays ready."""
    generation = (obj.get('metadata') or {}).get('generation')
    status_ = obj.get('status') or {}
    seen = status_.get('observedGeneration')
    if generation is not None and seen is not None and seen < generation:
        return 'its change not yet seen by its controller'
    spec = (obj.get('spec') or {}).get('replicas')
    updated, replicas = status_.get('updatedReplicas'), status_.get('replicas')
    if spec is not None and updated is not None and updated < spec:
        return '%d of %d machines updated' % (updated, spec)
    if spec is not None and replicas is not None and replicas > spec:
        return '%d machines, %d wanted' % (replicas, spec)
    return None


def status(cluster_obj, control_plane, deployments, machines, servers=()):
    """What CAPI says of the cluster: ``state`` (``ready``, ``progressing``, ``failed``
    or ``missing``), ``reason`` (naming the object that is not there yet, or CAPI's
    message; ``servers``: CAPO's OpenStackServers), and the cluster's fields it gives:
    ``api_address``, ``coe_version``,
    ``master_addresses``, ``node_addresses``, ``node_count`` per MachineDeployment,
    ``initialized`` (the control plane answers)."""
    if not cluster_obj:
        return {'state': 'missing', 'reason': 'The Cluster API Cluster does not exist.'}
    facts = {}
    endpoint = (cluster_obj.get('spec') or {}).get('controlPlaneEndpoint') or {}
    if endpoint.get('host'):
        facts['api_address'] = 'https://%s:%s' % (endpoint['host'], endpoint.get('port') or 6443)
    if control_plane:
        version = (control_plane.get('status') or {}).get('version') or \
            (control_plane.get('spec') or {}).get('version')
        if version:
            facts['coe_version'] = version
    masters, nodes = [], []
    for machine in machines or []:
        labels = (machine.get('metadata') or {}).get('labels') or {}
        addresses = [a.get('address') for a in (machine.get('status') or {}).get('addresses')
                     or [] if a.get('type') in ('ExternalIP', 'InternalIP') and a.get('address')]
        if not addresses:
            continue
        target = masters if 'cluster.x-k8s.io/control-plane' in labels else nodes
        target.append(addresses[0])
    facts['master_addresses'] = sorted(masters)
    # The control plane answers (kubeadm init done; CAPI's <cluster>-kubeconfig Secret
    # made): KubeadmControlPlane's v1beta1 status.initialized, or the Cluster's condition.
    facts['initialized'] = bool(((control_plane or {}).get('status') or {}).get('initialized')
                                or _true(cluster_obj, 'ControlPlaneInitialized'))
    facts['node_addresses'] = sorted(nodes)
    facts['node_count'] = dict((_name(d), (d.get('status') or {}).get('readyReplicas') or 0)
                               for d in deployments or [])

    failed = [(kind, _name(obj), _failure(obj)) for kind, obj in
              [('Cluster', cluster_obj), ('KubeadmControlPlane', control_plane or {})] +
              [('MachineDeployment', d) for d in deployments or []] +
              [('Machine', m) for m in machines or []] if obj and _failure(obj)]
    if failed:
        return dict(facts, state='failed', reason='; '.join(
            '%s %s: %s' % item for item in failed))
    waiting = []
    if not _true(cluster_obj, 'InfrastructureReady') and \
            not (cluster_obj.get('status') or {}).get('infrastructureReady'):
        words = _words(cluster_obj, 'InfrastructureReady')
        waiting.append('Cluster %s: infrastructure not ready%s'
                       % (_name(cluster_obj), ': ' + words if words else ''))
    if not control_plane:
        waiting.append('no KubeadmControlPlane yet')
    elif not (_true(control_plane, 'Available') or _true(control_plane, 'Ready')
              or (control_plane.get('status') or {}).get('ready')):
        waiting.append('KubeadmControlPlane %s: not ready' % _name(control_plane))
    else:
        # An upgrade: ready at the old version is not done.
        wanted = (control_plane.get('spec') or {}).get('version')
        running = (control_plane.get('status') or {}).get('version')
        if wanted and running and wanted != running:
            waiting.append('KubeadmControlPlane %s: at %s, upgrading to %s'
                           % (_name(control_plane), running, wanted))
        else:
            rolling = _rolling(control_plane)
            if rolling:
                waiting.append('KubeadmControlPlane %s: %s' % (_name(control_plane), rolling))
    for deployment in deployments or []:
        spec = (deployment.get('spec') or {}).get('replicas')
        status_ = deployment.get('status') or {}
        ready = status_.get('readyReplicas') or 0
        if spec is not None and ready < spec:
            waiting.append('MachineDeployment %s: %d of %d replicas ready'
                           % (_name(deployment), ready, spec))
        elif _rolling(deployment):
            waiting.append('MachineDeployment %s: %s'
                           % (_name(deployment), _rolling(deployment)))
    # A machine whose server CAPO cannot make (quota, a port, a floating IP) says why: on
    # the Machine (mirrored from its OpenStackMachine), or on its OpenStackServer, where
    # CAPO keeps Nova's refusal (a server it could not create is in ERROR; CAPI's health
    # check replaces its Machine).
    said = [('Machine', _name(m), _words(m, 'InfrastructureReady')) for m in machines or []]
    said += [('OpenStackServer', _name(s), _words(s, 'InstanceReady')) for s in servers or []]
    waiting += ['%s %s: %s' % item for item in said if item[2]][:3]
    if waiting:
        return dict(facts, state='progressing', reason='; '.join(waiting))
    return dict(facts, state='ready', reason=None)


def api_floating_ip_description(cluster):
    """The description of the floating IP the driver allocates for ``cluster``'s API."""
    return 'Magnum cluster %s API server (Cluster API)' % cluster['uuid']


def api_floating_ip_wanted(chart_values):
    """Whether the driver gives the API server a floating IP of its own (the chart's
    ``apiServer.floatingIP``): no load balancer, a floating IP wanted, none given by the
    operator. Left to CAPO, the address is allocated by the cluster's controller but
    deleted by the machine controller with the control plane machine holding it, so the
    first control plane machine replaced (an upgrade's roll, a health check's
    remediation) takes the cluster's endpoint with it, and a project member cannot
    allocate that address again (Neutron's policy): given in the spec, CAPO never deletes
    it. OpenStackCluster's spec is immutable there, so only a cluster's first release
    gets one."""
    api = chart_values.get('apiServer') or {}
    return not api.get('enableLoadBalancer') and bool(api.get('associateFloatingIP')) and \
        not api.get('floatingIP') and bool(
            (chart_values.get('clusterNetworking') or {}).get('externalNetworkId'))


def left_behind(floating_ip, cluster):
    """Whether ``floating_ip`` (a Neutron floating IP's fields) is one made for
    ``cluster``'s API server - by the driver (api_floating_ip_description) or by CAPO (its
    description names the cluster as CAPO's names.GetDescription does:
    ``<namespace>-<release>``) - and attached to no port."""
    names_ = names(cluster)
    capo = 'Created by cluster-api-provider-openstack cluster %s-%s' % (
        names_['namespace'], names_['release'])
    return floating_ip.get('description') in (capo, api_floating_ip_description(cluster)) \
        and not floating_ip.get('port_id')


# ------------------------------------------------------------- machines and nodes

DELETE_MACHINE = 'cluster.x-k8s.io/delete-machine'
DEPLOYMENT_LABEL = 'cluster.x-k8s.io/deployment-name'
CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane'


def _machine_parts(machine):
    """(Machine name, its Node's name or None, its server's id or None)."""
    provider = (machine.get('spec') or {}).get('providerID') or ''
    node = ((machine.get('status') or {}).get('nodeRef') or {}).get('name')
    return _name(machine), node, provider.rsplit('/', 1)[-1] or None


def machine_nodes(machines, release, groups):
    """``nodegroup_nodes`` (group uuid -> [{name, id, address}]) from the Machines: the
    control plane's to the master group, the others to the group whose MachineDeployment
    (``<release>-<group name, sanitized>``) made them."""
    by_deployment = dict(('%s-%s' % (release, sanitized(g['name']) or 'group'), g['uuid'])
                         for g in groups if g.get('role') != 'master')
    masters = [g['uuid'] for g in groups if g.get('role') == 'master']
    found = dict((g['uuid'], []) for g in groups)
    for machine in machines or []:
        labels = (machine.get('metadata') or {}).get('labels') or {}
        group = masters[0] if CONTROL_PLANE_LABEL in labels and masters else \
            by_deployment.get(labels.get(DEPLOYMENT_LABEL))
        if group is None:
            continue
        name, node, server = _machine_parts(machine)
        addresses = [a.get('address') for a in (machine.get('status') or {}).get('addresses')
                     or [] if a.get('address')]
        entry = {'name': node or name}
        if server:
            entry['id'] = server
        if addresses:
            entry['address'] = addresses[0]
        found[group].append(entry)
    return found


def machines_to_delete(machines, names):
    """The Machines ``names`` (Machine, Node or server names) name; raises Invalid naming
    those that match none."""
    chosen, unknown = [], []
    for name in names:
        matched = [m for m in machines if name in _machine_parts(m)]
        if not matched:
            unknown.append(name)
        chosen.extend(m for m in matched if m not in chosen)
    if unknown:
        raise Invalid("nodes_to_remove names nodes Cluster API does not have: %s." %
                      ', '.join(unknown))
    return chosen
