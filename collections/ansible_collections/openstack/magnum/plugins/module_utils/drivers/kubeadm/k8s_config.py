# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers of the Kubernetes (kubeadm) driver: label -> setting mapping, the
kubeadm / kubelet / kube-proxy / containerd configuration a node gets, where the
Kubernetes artifacts come from, and which nodes a resize or an upgrade touches.

Everything here is data in, data out, so it is tested without a control plane."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import ipaddress
import json
import os
import re
import tarfile

from ansible_collections.openstack.magnum.plugins.module_utils.core import health as health_mod
from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as labels_mod
from ansible_collections.openstack.magnum.plugins.module_utils.core import node_values, registries
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry

DEFAULT_KUBE_TAG = 'v1.36.0'
DEFAULT_POD_CIDR = '10.100.0.0/16'
DEFAULT_SERVICE_CIDR = '10.254.0.0/16'
UPSTREAM_REGISTRY = 'registry.k8s.io'
# The kubelet's resolv.conf (resolv_conf), written on every node.
RESOLV_CONF = '/etc/kubernetes/resolv.conf'
# Where containerd reads per-registry settings (<host>/hosts.toml).
REGISTRY_HOSTS_DIR = '/etc/containerd/certs.d'
# The first line of the hosts.toml this driver writes (registry_hosts): the ones with it
# (or the mark of earlier versions) that the cluster no longer needs are removed.
REGISTRY_HOSTS_MARK = "# openstack.magnum: a registry of the cluster's template"
REGISTRY_HOSTS_MARKS = (REGISTRY_HOSTS_MARK,
                        "# openstack.magnum: the cluster template's insecure_registry")
_PEM_CERTIFICATES = re.compile(
    r'\A(\s*-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----)+\s*\Z')
# Where a version's binaries are downloaded from (MAGNUM_K8S_DOWNLOAD_URL names a mirror
# laid out the same way), and crictl, released by cri-tools as a tarball per minor
# version (MAGNUM_K8S_CRICTL_URL); each file has its SHA-256 beside it (<file>.sha256).
UPSTREAM_DOWNLOADS = 'https://dl.k8s.io'
UPSTREAM_CRICTL = 'https://github.com/kubernetes-sigs/cri-tools/releases/download'
BINARY_PATH = '%(base)s/release/%(tag)s/bin/linux/%(arch)s/%(name)s'
CRICTL_PATH = '%(base)s/%(version)s/crictl-%(version)s-linux-%(arch)s.tar.gz'
# network_driver calico: its manifest for the calico_tag label, as Calico publishes it
# (MAGNUM_K8S_CALICO_URL names a mirror laid out the same way; no checksum is published
# beside it). calico_ipv4pool_ipip's "Off" is Calico's "Never".
DEFAULT_CALICO_TAG = 'v3.31.3'
UPSTREAM_CALICO = 'https://raw.githubusercontent.com/projectcalico/calico'
CALICO_MANIFEST_PATH = '%(base)s/%(tag)s/manifests/calico.yaml'
CALICO_IPIP_MODES = {'Off': 'Never'}
# Architectures as Kubernetes' downloads and images name them: the nodes' (``uname -m``),
# an offline directory's binaries' (ELF machine and byte order) and images' (their config).
DEFAULT_ARCH = 'amd64'
UNAME_ARCHES = {'x86_64': 'amd64', 'aarch64': 'arm64', 'armv7l': 'arm', 'armv8l': 'arm',
                'ppc64le': 'ppc64le', 's390x': 's390x', 'riscv64': 'riscv64'}
ELF_ARCHES = {(62, 1): 'amd64', (183, 1): 'arm64', (40, 1): 'arm', (21, 1): 'ppc64le',
              (21, 2): 'ppc64', (22, 2): 's390x', (243, 1): 'riscv64', (3, 1): '386'}
API_PORT = 6443
# keystone_auth_enabled: the API server asks k8s-keystone-auth (on every master, on the
# loopback) about bearer tokens and authorizations, through this kubeconfig on the masters.
KEYSTONE_WEBHOOK_DIR = '/etc/kubernetes/keystone-webhook'
# kubeadm's patches for the control plane's static pods (its ``patches.directory``).
PATCHES_DIR = '/etc/kubernetes/patches'
# The kubelet's hard eviction thresholds on nodes that share the host's filesystem (kind's).
SHARED_DISK_EVICTION = {'nodefs.available': '0%', 'nodefs.inodesFree': '0%',
                        'imagefs.available': '0%'}
# The probes kubeadm gives each control-plane static pod (its manifests): a patch changes
# only these - a probe it adds without kubeadm's handler (httpGet) would be no probe.
KUBEADM_PROBES = {
    'etcd': ('livenessProbe', 'startupProbe'),
    'kube-apiserver': ('livenessProbe', 'readinessProbe', 'startupProbe'),
    'kube-controller-manager': ('livenessProbe', 'startupProbe'),
    'kube-scheduler': ('livenessProbe', 'startupProbe'),
}
KEYSTONE_WEBHOOK_CONFIG = KEYSTONE_WEBHOOK_DIR + '/webhook.kubeconfig'
KEYSTONE_WEBHOOK_ADDRESS = '127.0.0.1:8443'
KEYSTONE_AUTHZ_CONFIG = KEYSTONE_WEBHOOK_DIR + '/authorization.yaml'
# The structured authorization configuration (--authorization-config, from 1.30) by
# version: the webhook is asked only about users that are not the cluster's own
# (matchConditions) and a webhook that does not answer is no opinion at once. With the
# older flags every request waits on the webhook: kubeadm init times out before it runs.
AUTHZ_CONFIG_APIS = ((1, 32, 'apiserver.config.k8s.io/v1'),
                     (1, 30, 'apiserver.config.k8s.io/v1beta1'))
KEYSTONE_AUTH_FROM = (1, 30)
# Who never goes to Keystone: the cluster's own users (system:*: nodes, controllers,
# service accounts) and kubeadm's admins.
KEYSTONE_SKIPS = ("!request.user.startsWith('system:')",
                  "!('system:masters' in request.groups)",
                  "!('kubeadm:cluster-admins' in request.groups)")
BINARIES = ('kubeadm', 'kubelet', 'kubectl', 'crictl')
# The images only the control plane's static pods run: workers are not given them.
CONTROL_PLANE_IMAGES = ('kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'etcd')
# containerd: Debian's package (1.6/1.7) up to the releases that need containerd 2.x
# (1.37: the kubelet's fallback for runtimes without the RuntimeConfig call ends);
# from then on, or when a containerd_* label asks for one, containerd's release tarball
# and runc's binary, from the offline directory (containerd/), a mirror or upstream,
# each checked by SHA-256.
CONTAINERD_TARBALL_FROM = (1, 37)
DEFAULT_CONTAINERD_VERSION = '2.2.0'
DEFAULT_RUNC_VERSION = '1.3.3'
# Where a release tarball is unpacked on the nodes (its bin/), and their runc.
CONTAINERD_PREFIX = '/usr/local'
RUNC_BINARY = CONTAINERD_PREFIX + '/sbin/runc'
UPSTREAM_CONTAINERD = 'https://github.com/containerd/containerd/releases/download'
UPSTREAM_RUNC = 'https://github.com/opencontainers/runc/releases/download'
CONTAINERD_PATH = '%(base)s/v%(version)s/containerd-%(version)s-linux-%(arch)s.tar.gz'
RUNC_PATH = '%(base)s/v%(version)s/runc.%(arch)s'
# The oldest release whose kubeadm reads the configuration written here (v1beta2).
MIN_VERSION = (1, 20)
# kubeadm's configuration API by release, newest first: v1beta4 from 1.31 (extraArgs as
# name/value lists), v1beta3 from 1.22 and v1beta2 before (extraArgs as maps; the
# fields written here are the same in both).
KUBEADM_APIS = (((1, 31), 'v1beta4'), ((1, 22), 'v1beta3'), ((1, 20), 'v1beta2'))
# kubelet's failCgroupV1 field (cgroup v1 hosts; refused by default from 1.35) since 1.31.
KUBELET_FAIL_CGROUP_V1 = (1, 31)
# The pause (sandbox) image each release's kubeadm names (its PauseVersion), newest
# first; a later release than the table knows gets the newest. Only the fallback: the
# tag is read from the release's own kubeadm (pause_tag) wherever it can run.
PAUSE_TAGS = (((1, 36), '3.10.2'), ((1, 34), '3.10.1'), ((1, 31), '3.10'), ((1, 26), '3.9'), ((1, 25), '3.8'),
              ((1, 24), '3.7'), ((1, 23), '3.6'), ((1, 22), '3.5'), ((1, 21), '3.4.1'),
              ((1, 20), '3.2'))
# kubeadm's preflight errors ignored on every command that runs preflight checks: cgroup
# v1 hosts fail SystemVerification (docs "Kubernetes on local nodes"); a master of one
# vCPU fails NumCPU, kubeadm's advice that Magnum never had (its masters of one vCPU,
# devstack's m1.small, run Kubernetes; memory stays checked).
PREFLIGHT_IGNORED = ('SystemVerification', 'NumCPU')
# The kubeadm commands the driver runs that check preflight from flags (init and join
# take the settings from their configuration's nodeRegistration; reset checks nothing
# they name).
PREFLIGHT_COMMANDS = (('upgrade', 'apply'), ('upgrade', 'node'))
# kubeadm upgrade's configuration file on a node (kubeadm_upgrade; kubeadm's v1beta4 on).
UPGRADE_CONFIG = '/etc/kubernetes/kubeadm-upgrade.yaml'
ROLE_LABEL = 'magnum.openstack.org/role'
NODEGROUP_LABEL = 'magnum.openstack.org/nodegroup'
ZONE_LABEL = 'topology.kubernetes.io/zone'


def parse_version(tag):
    """``v1.30.1`` -> (1, 30, 1); a clear error for anything else."""
    version = labels_mod.version_tuple(tag)
    if version is None or not str(tag).startswith('v'):
        raise Invalid("kube_tag %r is not a Kubernetes version (like v1.30.1)." % (tag,))
    if version[:2] < MIN_VERSION:
        raise Invalid("kube_tag %s: the kubernetes driver brings up Kubernetes v%d.%d and "
                      "later." % ((tag,) + MIN_VERSION))
    return version


def _network(value, label):
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError:
        raise Invalid("Label %s: %r is not a network CIDR." % (label, value))


# Tag labels of the add-on images the role deploys (the role's defaults name them).
ADDON_TAG_LABELS = {'flannel': 'flannel_tag', 'flannel_cni': 'flannel_cni_tag'}


def image_repository(ref, prefix=None):
    """An image's repository as the cluster pulls it: Magnum's container_infra_prefix
    rule - the image's last name under the mirror ``prefix`` when given, else ``ref``'s
    own repository (any tag dropped)."""
    head, last = ref.rpartition('/')[::2]
    name = last.partition(':')[0]
    return '%s%s' % (prefix + '/' if prefix else head + '/' if head else '', name)


def addon_image(ref, prefix=None, tag=None):
    """An add-on image as the cluster pulls it: image_repository, with ``tag`` (its tag
    label) when given, else ``ref``'s own."""
    default_tag = ref.rpartition('/')[2].partition(':')[2]
    return '%s:%s' % (image_repository(ref, prefix), tag or default_tag or 'latest')


def pod_network(cluster, template):
    """The cluster's pod network: its calico_ipv4pool label with network_driver calico,
    else its flannel_network_cidr; DEFAULT_POD_CIDR when unset."""
    network_driver = template.get('network_driver') or 'flannel'
    label = 'calico_ipv4pool' if network_driver == 'calico' else 'flannel_network_cidr'
    return _network((cluster.get('labels') or {}).get(label) or DEFAULT_POD_CIDR, label)


def _default_flag(args, flag, value):
    """Add ``flag`` (name/value pairs ``args``) unless a ``*_options`` label set it: the
    label's own flag wins."""
    if not any(a['name'] == flag for a in args):
        args.append({'name': flag, 'value': str(value)})


def settings(cluster, template, addon_images=None, provider=None, registry_ca=None):
    """The Kubernetes settings of a cluster, from its labels and template, with the
    driver's defaults; ``addon_images`` (name -> image, the role's defaults) as the
    cluster pulls them (``images``); ``provider`` the infrastructure provider's name
    (with ``cloud_provider_enabled`` on ``openstack``, the cloud controller manager
    initializes the nodes: kubelets run with ``--cloud-provider=external``);
    ``registry_ca``: the operator's CA (PEM certificates, MAGNUM_K8S_REGISTRY_CA) that
    container_infra_prefix's registry is verified with (registry_hosts)."""
    labels = cluster.get('labels') or {}
    network_driver = template.get('network_driver') or 'flannel'
    tag = labels.get('kube_tag') or DEFAULT_KUBE_TAG
    minor = parse_version(tag)[:2]
    pod_cidr = pod_network(cluster, template)
    service_cidr = _network(labels.get('service_cluster_ip_range') or DEFAULT_SERVICE_CIDR,
                            'service_cluster_ip_range')
    if pod_cidr.overlaps(service_cidr):
        raise Invalid("The pod network %s overlaps the service range %s."
                      % (pod_cidr, service_cidr))
    prefix = (labels.get('container_infra_prefix') or '').rstrip('/')
    extra_args = dict(
        (component, labels_mod.flags(labels.get(label), label)) for component, label in (
            ('kubelet', 'kubelet_options'), ('apiServer', 'kubeapi_options'),
            ('controllerManager', 'kubecontroller_options'),
            ('scheduler', 'kubescheduler_options'), ('kubeProxy', 'kubeproxy_options')))
    # Flags that labels of their own set; the *_options labels' own flags win.
    for component, flag, value in (
            ('controllerManager', 'node-cidr-mask-size',
             _node_subnet_length(labels, network_driver, pod_cidr)),
            ('apiServer', 'enable-admission-plugins',
             labels.get('admission_control_list', '').replace(' ', ''))):
        if value:
            _default_flag(extra_args[component], flag, value)
    keystone_auth = labels_mod.to_bool(labels.get('keystone_auth_enabled'))
    authz_api = keystone_authz_api(minor) if keystone_auth else None
    own = set(a['name'] for a in extra_args['apiServer'])
    flags = [('authentication-token-webhook-config-file', KEYSTONE_WEBHOOK_CONFIG),
             ('authentication-token-webhook-version', 'v1beta1')]
    if not own & set(('authorization-mode', 'authorization-config')):
        # Unless the kubeapi_options' own authorization stands.
        flags.append(('authorization-config', KEYSTONE_AUTHZ_CONFIG))
    for flag, value in flags if keystone_auth else ():
        _default_flag(extra_args['apiServer'], flag, value)
    dns_domain = labels.get('dns_cluster_domain') or 'cluster.local'
    infrastructure = registry.by_name(provider or 'none')
    if infrastructure.cloud and labels_mod.to_bool(labels.get('cloud_provider_enabled')):
        _default_flag(extra_args['kubelet'], 'cloud-provider', 'external')
    return {
        'cluster_uuid': cluster.get('uuid'),
        'project_id': cluster.get('project_id'),
        'master_count': int(cluster.get('master_count') or 1),
        'keystone_auth': keystone_auth,
        'keystone_authz_api': authz_api,
        'provider': provider,
        'volume_driver': template.get('volume_driver') or None,
        'kube_tag': tag,
        'version': tag.lstrip('v'),
        'kubeadm_api': 'kubeadm.k8s.io/' + _by_version(KUBEADM_APIS, minor),
        'pause_tag': _by_version(PAUSE_TAGS, minor),
        'preflight_ignored': list(PREFLIGHT_IGNORED),
        # The containerd_* labels (containerd_source).
        'containerd': dict((name, labels.get(name) or None) for name in (
            'containerd_version', 'containerd_tarball_url', 'containerd_tarball_sha256')),
        'fail_cgroup_v1_field': minor >= KUBELET_FAIL_CGROUP_V1,
        'network_driver': network_driver,
        'flannel_backend': labels.get('flannel_backend') or 'vxlan',
        # None: the manifest's own (the offline directory's), else DEFAULT_CALICO_TAG's.
        'calico_tag': labels.get('calico_tag') or None,
        'calico_ipip': _calico_ipip(labels),
        'pod_cidr': str(pod_cidr),
        'service_cidr': str(service_cidr),
        # kubernetes.default is the range's first address, CoreDNS its tenth.
        'dns_service_ip': str(service_cidr[10]),
        'dns_domain': dns_domain,
        'proxy': proxy_env(template, ['.svc', '.' + dns_domain, str(pod_cidr), str(service_cidr)]),
        'image_repository': prefix or UPSTREAM_REGISTRY,
        'container_infra_prefix': prefix or None,
        'images': dict((name, addon_image(ref, prefix, labels.get(ADDON_TAG_LABELS.get(name, ''))))
                       for name, ref in (addon_images or {}).items()),
        'coredns_tag': labels.get('coredns_tag') or None,
        # systemd: the nodes run systemd and containerd uses SystemdCgroup (README).
        'cgroup_driver': labels.get('cgroup_driver') or 'systemd',
        'extra_args': extra_args,
        'availability_zone': labels.get('availability_zone') or None,
        'dns_nameserver': template.get('dns_nameserver') or None,
        'resolv_conf': RESOLV_CONF,
        # Nodes on the host's own filesystem (the docker provider's) evict nothing for its
        # fullness, as kind's nodes: the kubelet's 10-15 % thresholds would read the whole
        # host's disk and taint every node with disk-pressure (no new pod, CoreDNS pending).
        'eviction_hard': dict(SHARED_DISK_EVICTION) if infrastructure.shared_disk else None,
        'insecure_registry': registries.host(template.get('insecure_registry')),
        'registry_ca': _registry_ca(registry_ca),
        'registry_hosts_dir': REGISTRY_HOSTS_DIR,
        'registry_hosts_mark': REGISTRY_HOSTS_MARK,
    }


def _registry_ca(pem):
    """The operator's registry CA, PEM certificates and nothing else (it is written as
    the node's ca.crt), or None."""
    if pem in (None, ''):
        return None
    if not _PEM_CERTIFICATES.match(str(pem)):
        raise Invalid("MAGNUM_K8S_REGISTRY_CA does not hold PEM certificates only (-----BEGIN "
                      "CERTIFICATE----- ... -----END CERTIFICATE-----): ask the operator to "
                      "name the registry's CA bundle.")
    return str(pem).strip() + '\n'


def _node_subnet_length(labels, network_driver, pod_cidr):
    """flannel_network_subnetlen (network_driver flannel): the prefix length of each
    node's pod subnet, which kube-controller-manager allocates (node-cidr-mask-size)
    and flannel routes; None when unset."""
    value = labels.get('flannel_network_subnetlen')
    if network_driver != 'flannel' or value in (None, ''):
        return None
    try:
        length = int(value)
    except (TypeError, ValueError):
        raise Invalid("Label flannel_network_subnetlen: %r is not a prefix length." % (value,))
    # kube-controller-manager's bounds: longer than the pod network's, by 16 bits at most.
    longest = min(pod_cidr.prefixlen + 16, pod_cidr.max_prefixlen - 2)
    if not pod_cidr.prefixlen < length <= longest:
        raise Invalid("Label flannel_network_subnetlen: /%d does not divide the pod network %s "
                      "into node subnets (from /%d to /%d)." % (
                          length, pod_cidr, pod_cidr.prefixlen + 1, longest))
    return length


def _calico_ipip(labels):
    """calico_ipv4pool_ipip (labels.validate checked it) as calico-node's
    CALICO_IPV4POOL_IPIP: Magnum's ``Off``, the default, is Calico's ``Never``."""
    ipip = labels.get('calico_ipv4pool_ipip') or 'Off'
    return CALICO_IPIP_MODES.get(ipip, ipip)


def pause_tag(images_list, fallback):
    """The pause image's tag among the images ``kubeadm config images list`` printed
    (one reference a line), else ``fallback`` (PAUSE_TAGS')."""
    for line in str(images_list or '').splitlines():
        ref = line.strip()
        name, colon, tag = ref.rpartition(':')
        if '/' in tag or not colon or not name:
            continue
        if name.rpartition('/')[2] == 'pause' and tag:
            return tag
    return fallback


def kubeadm_command(conf, args):
    """``kubeadm <args>`` as an argv, with the cluster's preflight settings for the
    commands that run preflight checks (PREFLIGHT_COMMANDS): the one place every kubeadm
    command of the driver gets them."""
    args = [str(a) for a in args]
    runs_preflight = any(tuple(args[:len(c)]) == c for c in PREFLIGHT_COMMANDS)
    ignored = list(conf.get('preflight_ignored') or ())
    flags = ['--ignore-preflight-errors=%s' % ','.join(ignored)] if runs_preflight and ignored \
        else []
    if args[:1] == ['upgrade'] and upgrade_configured(conf):
        flags += ['--config', UPGRADE_CONFIG]
    return ['kubeadm'] + args + flags


def upgrade_configured(conf):
    """Whether kubeadm upgrade reads a configuration file (UpgradeConfiguration,
    kubeadm's v1beta4 on): the driver writes one (kubeadm_upgrade) and runs every kubeadm
    upgrade with it."""
    return conf['kubeadm_api'].endswith('v1beta4')


def kubeadm_upgrade(conf, node):
    """kubeadm upgrade's ``--config`` document (UpgradeConfiguration) for ``node``, or
    None before kubeadm's v1beta4: the version, and the waits (``timeouts``) and a
    master's static pods' patches init and join were given. Without them kubeadm upgrades
    with its own defaults: the startup probe of every static pod (made from
    controlPlaneComponentHealthCheck) changes, so even an upgrade to the same version
    restarts etcd and each component of a master - on one master, the API down meanwhile
    - and a master loses the probes the role patched."""
    if not upgrade_configured(conf):
        return None
    patches = _patches(conf) if node['role'] == 'master' else {}
    doc = {'apiVersion': conf['kubeadm_api'], 'kind': 'UpgradeConfiguration',
           'apply': dict({'kubernetesVersion': conf['kube_tag']}, **patches)}
    if patches:
        doc['node'] = dict(patches)
    doc.update(_timeouts(conf))
    return doc


def _by_version(table, minor):
    """The value of the first (newest) row of ``table`` ((since, value), ...) that the
    release ``minor`` has reached."""
    return next(value for since, value in table if minor >= since)


def proxy_env(template, cluster_names):
    """The template's proxies as containerd's environment (its image pulls), or {}.
    NO_PROXY adds to the template's no_proxy what never goes through a proxy: localhost
    and ``cluster_names`` (the pod and service networks, the service domain)."""
    http, https = template.get('http_proxy'), template.get('https_proxy')
    if not (http or https):
        return {}
    names = [n.strip() for n in (template.get('no_proxy') or '').split(',') if n.strip()]
    names += [n for n in ['localhost', '127.0.0.1'] + list(cluster_names) if n not in names]
    env = {'NO_PROXY': ','.join(names)}
    if http:
        env['HTTP_PROXY'] = http
    if https:
        env['HTTPS_PROXY'] = https
    return env


def node_labels(role, nodegroup, availability_zone=None):
    """The labels a node registers with (kubelet --node-labels)."""
    labels = {ROLE_LABEL: role, NODEGROUP_LABEL: nodegroup}
    if availability_zone:
        labels[ZONE_LABEL] = availability_zone
    return labels


def _extra_args(conf, args):
    """Flags (name/value pairs) in the form the kubeadm API of the version takes."""
    if not conf['kubeadm_api'].endswith('v1beta4'):
        return dict((arg['name'], arg['value']) for arg in args)
    return list(args)


def _flags(conf, component):
    """The flags of a control-plane ``component`` (apiServer, controllerManager, scheduler,
    etcd): its ``*_options`` label's, then the role's own for it (``component_flags``;
    kubernetes_component_flags) where the label does not set them - timing that a slow
    master keeps (leader election, etcd's health check and heartbeat)."""
    args = list(conf['extra_args'].get(component) or [])
    if component in ELECTING and not leader_election_on(conf):
        _default_flag(args, 'leader-elect', 'false')
    for name, value in sorted(((conf.get('component_flags') or {}).get(component) or {}).items()):
        _default_flag(args, name, value)
    return args


# The control plane's components that elect a leader among the masters' instances.
ELECTING = ('controllerManager', 'scheduler')


def leader_election_on(conf):
    """Whether the controllers of the masters (controller manager, scheduler, the cloud's
    controller manager) elect a leader: always with several masters; with one, unless the
    operator turned it off there (``single_master_leader_election``; the role's
    kubernetes_single_master_leader_election) - one instance has nothing to elect, and a
    master too slow to renew its lease in time (QEMU without KVM) restarts them over and
    over for nothing."""
    return conf.get('master_count', 1) != 1 or conf.get('single_master_leader_election', True)


def _kubelet_args(conf, node):
    labels = node_labels(node['role'], node['nodegroup'], conf['availability_zone'])
    args = [{'name': 'node-labels',
             'value': ','.join('%s=%s' % item for item in sorted(labels.items()))},
            {'name': 'node-ip', 'value': node['address']}]
    return _extra_args(conf, args + conf['extra_args']['kubelet'])


def _registration(conf, node, master):
    reg = {'name': node['name'], 'criSocket': 'unix:///run/containerd/containerd.sock',
           'kubeletExtraArgs': _kubelet_args(conf, node),
           'ignorePreflightErrors': list(conf['preflight_ignored'])}
    # Masters do not run user pods.
    reg['taints'] = ([{'key': 'node-role.kubernetes.io/control-plane', 'effect': 'NoSchedule'}]
                     if master else [])
    return reg


def kubeadm_init(conf, node, endpoint_host, sans=()):
    """The documents of ``kubeadm init --config`` for the first master ``node``
    (``name``, ``address``, ``role``, ``nodegroup``), with the control-plane
    endpoint ``endpoint_host`` (a load balancer's address, or the master's)."""
    cluster = {
        'apiVersion': conf['kubeadm_api'], 'kind': 'ClusterConfiguration',
        'kubernetesVersion': conf['kube_tag'],
        'controlPlaneEndpoint': '%s:%d' % (endpoint_host, API_PORT),
        'imageRepository': conf['image_repository'],
        'networking': {'podSubnet': conf['pod_cidr'], 'serviceSubnet': conf['service_cidr'],
                       'dnsDomain': conf['dns_domain']},
        'apiServer': {'certSANs': sorted(set([endpoint_host, node['address']] + list(sans))),
                      'extraArgs': _extra_args(conf, _flags(conf, 'apiServer'))},
        'controllerManager': {'extraArgs': _extra_args(conf, _flags(conf, 'controllerManager'))},
        'scheduler': {'extraArgs': _extra_args(conf, _flags(conf, 'scheduler'))},
    }
    if _flags(conf, 'etcd'):
        cluster['etcd'] = {'local': {'extraArgs': _extra_args(conf, _flags(conf, 'etcd'))}}
    if conf['coredns_tag']:
        cluster['dns'] = {'imageTag': conf['coredns_tag']}
    if conf.get('keystone_auth'):
        cluster['apiServer']['extraVolumes'] = [{
            'name': 'keystone-webhook', 'hostPath': KEYSTONE_WEBHOOK_DIR,
            'mountPath': KEYSTONE_WEBHOOK_DIR, 'readOnly': True,
            'pathType': 'DirectoryOrCreate'}]
    init = {'apiVersion': conf['kubeadm_api'], 'kind': 'InitConfiguration',
            'localAPIEndpoint': {'advertiseAddress': node['address'], 'bindPort': API_PORT},
            'nodeRegistration': _registration(conf, node, master=True)}
    init.update(_timeouts(conf))
    init.update(_patches(conf))
    return [init, cluster, kubelet_config(conf), kube_proxy_config(conf)]


def control_plane_patches(conf):
    """{file name: strategic merge patch} for a master's static pods: the probes the role
    gives (``control_plane_probes``; kubernetes_control_plane_probes, e.g.
    ``{'livenessProbe': {'timeoutSeconds': 60, 'failureThreshold': 30}}``) over kubeadm's,
    for masters too slow for kubeadm's (on QEMU without KVM the kubelet kills an API
    server still starting, which then starts again). Only the probes kubeadm gives a pod
    (KUBEADM_PROBES): a readinessProbe is the API server's alone. None before kubeadm's
    v1beta3."""
    probes = conf.get('control_plane_probes') or {}
    if not probes or conf['kubeadm_api'].endswith('v1beta2'):
        return {}
    patches = {}
    for pod, kinds in sorted(KUBEADM_PROBES.items()):
        changed = dict((kind, dict(probes[kind])) for kind in kinds if probes.get(kind))
        if changed:
            patches['%s+strategic.yaml' % pod] = {'spec': {'containers': [
                dict({'name': pod}, **changed)]}}
    return patches


def _patches(conf):
    return {'patches': {'directory': PATCHES_DIR}} if control_plane_patches(conf) else {}


def _timeouts(conf):
    """kubeadm's own waits (``timeouts`` of v1beta4: kubernetesAPICall, tlsBootstrap, ...)
    as the role gives them (``kubeadm_timeouts``; kubernetes_kubeadm_timeouts): its
    defaults (one minute for an API call) are too short for a control plane on slow
    machines, such as guests of QEMU without KVM. Older kubeadm APIs have no such field."""
    if conf['kubeadm_api'].endswith('v1beta4') and conf.get('kubeadm_timeouts'):
        return {'timeouts': dict(conf['kubeadm_timeouts'])}
    return {}


def keystone_webhook_kubeconfig():
    """The kubeconfig the API server reaches k8s-keystone-auth with (its serving
    certificate is the API server's own, on the same master: not verified, as
    upstream's example)."""
    return json.dumps({
        'apiVersion': 'v1', 'kind': 'Config', 'preferences': {},
        'clusters': [{'name': 'webhook', 'cluster': {
            'server': 'https://%s/webhook' % KEYSTONE_WEBHOOK_ADDRESS,
            'insecure-skip-tls-verify': True}}],
        'users': [{'name': 'webhook', 'user': {}}],
        'contexts': [{'name': 'webhook', 'context': {'cluster': 'webhook', 'user': 'webhook'}}],
        'current-context': 'webhook'}, indent=2, sort_keys=True) + '\n'


def keystone_authz_api(minor):
    """The AuthorizationConfiguration apiVersion of Kubernetes ``minor`` (major, minor)."""
    for major, since, api in AUTHZ_CONFIG_APIS:
        if tuple(minor) >= (major, since):
            return api
    raise Invalid("keystone_auth_enabled needs Kubernetes v%d.%d or later (the API server's "
                  "structured authorization)." % KEYSTONE_AUTH_FROM)


def keystone_authorization_config(conf):
    """The API server's structured authorization (--authorization-config) with
    keystone_auth: the node authorizer, then k8s-keystone-auth for users that are not
    the cluster's own (a webhook that does not answer in 3 s is no opinion), then RBAC."""
    webhook = {'timeout': '3s', 'authorizedTTL': '5m', 'unauthorizedTTL': '30s',
               'subjectAccessReviewVersion': 'v1beta1',
               'matchConditionSubjectAccessReviewVersion': 'v1',
               'failurePolicy': 'NoOpinion',
               'connectionInfo': {'type': 'KubeConfigFile',
                                  'kubeConfigFile': KEYSTONE_WEBHOOK_CONFIG},
               'matchConditions': [{'expression': e} for e in KEYSTONE_SKIPS]}
    return json.dumps({'apiVersion': conf['keystone_authz_api'],
                       'kind': 'AuthorizationConfiguration',
                       'authorizers': [{'type': 'Node', 'name': 'node'},
                                       {'type': 'Webhook', 'name': 'keystone', 'webhook': webhook},
                                       {'type': 'RBAC', 'name': 'rbac'}]},
                      indent=2, sort_keys=True) + '\n'


def kubeadm_join(conf, node, endpoint_host, token, ca_cert_hash, certificate_key=None):
    """The ``kubeadm join --config`` document for ``node``; a master (role
    ``master``) joins the control plane with ``certificate_key``."""
    master = node['role'] == 'master'
    doc = {'apiVersion': conf['kubeadm_api'], 'kind': 'JoinConfiguration',
           'discovery': {'bootstrapToken': {
               'apiServerEndpoint': '%s:%d' % (endpoint_host, API_PORT), 'token': token,
               'caCertHashes': [ca_cert_hash]}},
           'nodeRegistration': _registration(conf, node, master=master)}
    doc.update(_timeouts(conf))
    if master:
        if not certificate_key:
            raise Invalid("A master joins the control plane with a certificate key.")
        doc['controlPlane'] = {'localAPIEndpoint': {'advertiseAddress': node['address'],
                                                    'bindPort': API_PORT},
                               'certificateKey': certificate_key}
        doc.update(_patches(conf))
    return doc


def kubeconfig(endpoint_host, ca_pem, token=None):
    """A kubeconfig for the API at ``endpoint_host`` trusting ``ca_pem``: with a
    bootstrap ``token``, the one a kubelet bootstraps its client certificate with;
    without, the cluster-only one kube-public/cluster-info publishes for joining nodes."""
    if not ca_pem or 'BEGIN CERTIFICATE' not in ca_pem:
        raise Invalid("A kubeconfig needs the cluster's CA certificate (PEM).")
    ca_data = base64.b64encode(ca_pem.encode('ascii')).decode('ascii')
    doc = {'apiVersion': 'v1', 'kind': 'Config',
           'clusters': [{'name': 'kubernetes', 'cluster': {
               'server': 'https://%s:%d' % (endpoint_host, API_PORT),
               'certificate-authority-data': ca_data}}],
           'contexts': [], 'current-context': '', 'users': []}
    if token:
        if not re.match(r'^[a-z0-9]{6}\.[a-z0-9]{16}$', token):
            raise Invalid("A bootstrap token looks like abcdef.0123456789abcdef.")
        doc['users'] = [{'name': 'kubelet-bootstrap', 'user': {'token': token}}]
        doc['contexts'] = [{'name': 'kubelet-bootstrap@kubernetes', 'context': {
            'cluster': 'kubernetes', 'user': 'kubelet-bootstrap'}}]
        doc['current-context'] = 'kubelet-bootstrap@kubernetes'
    return doc


def admin_kubeconfig(api_address, cred_dir):
    """A kubeconfig for the controller's tools (helm) at the cluster's ``api_address``
    (``https://host:port``) with the admin credential admin_credential.yml wrote in
    ``cred_dir`` (ca.crt, admin.crt, admin.key), named by path."""
    if not str(api_address or '').startswith('https://'):
        raise Invalid("The cluster has no API address (https://host:port) to reach it at.")
    return {'apiVersion': 'v1', 'kind': 'Config',
            'clusters': [{'name': 'cluster', 'cluster': {
                'server': str(api_address),
                'certificate-authority': os.path.join(cred_dir, 'ca.crt')}}],
            'users': [{'name': 'magnum-driver', 'user': {
                'client-certificate': os.path.join(cred_dir, 'admin.crt'),
                'client-key': os.path.join(cred_dir, 'admin.key')}}],
            'contexts': [{'name': 'magnum-driver', 'context': {
                'cluster': 'cluster', 'user': 'magnum-driver'}}],
            'current-context': 'magnum-driver'}


def kubelet_config(conf):
    doc = {'apiVersion': 'kubelet.config.k8s.io/v1beta1', 'kind': 'KubeletConfiguration',
           'cgroupDriver': conf['cgroup_driver'], 'failSwapOn': False,
           'clusterDNS': [conf['dns_service_ip']], 'clusterDomain': conf['dns_domain'],
           'resolvConf': conf['resolv_conf']}
    if conf['fail_cgroup_v1_field']:
        doc['failCgroupV1'] = False
    if conf.get('eviction_hard'):
        doc['evictionHard'] = dict(conf['eviction_hard'])
    return doc


def resolv_conf(conf, node_text, controller_text=''):
    """The resolv.conf (RESOLV_CONF) the kubelet gives pods of dnsPolicy Default, CoreDNS
    among them (it forwards outside names to these servers): the node's own
    (``node_text``: systemd-resolved's upstream file where it runs, else /etc/resolv.conf),
    its search and options kept, with the template's dns_nameserver as the server when it
    has one. Loopback servers (Docker's embedded DNS 127.0.0.11 on local nodes,
    systemd-resolved's stub 127.0.0.53) would be each pod's own loopback, and CoreDNS
    asking itself stops on its loop check: they are replaced by the controller's
    (``controller_text``) servers that are not loopback."""
    def servers(text):
        return [line.split()[1] for line in (text or '').splitlines()
                if len(line.split()) > 1 and line.split()[0] == 'nameserver']

    def reachable(names):
        return [n for n in names if not _is_loopback(n)]
    kept = [line.strip() for line in (node_text or '').splitlines()
            if line.split() and line.split()[0] in ('search', 'domain', 'options')]
    chosen = (node_values.dns_servers(conf.get('dns_nameserver')) or
              reachable(servers(node_text)) or reachable(servers(controller_text)))
    if not chosen:
        raise Invalid("No DNS server for the cluster's pods to forward to: the nodes resolve "
                      "through loopback only (%s) and so does the controller; set the "
                      "template's dns_nameserver." % (', '.join(servers(node_text)) or 'none'))
    return ''.join('nameserver %s\n' % name for name in chosen[:3]) + \
        ''.join(line + '\n' for line in kept)


def _is_loopback(name):
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def kube_proxy_config(conf):
    """iptables mode (no IPVS in these kernels); no conntrack sysctl writes."""
    doc = {'apiVersion': 'kubeproxy.config.k8s.io/v1alpha1', 'kind': 'KubeProxyConfiguration',
           'mode': 'iptables', 'clusterCIDR': conf['pod_cidr'],
           'conntrack': {'maxPerCore': 0}}
    known = {'proxy-mode': 'mode', 'cluster-cidr': 'clusterCIDR',
             'metrics-bind-address': 'metricsBindAddress',
             'healthz-bind-address': 'healthzBindAddress'}
    for arg in conf['extra_args']['kubeProxy']:
        if arg['name'] not in known:
            raise Invalid("Label kubeproxy_options: --%s has no kube-proxy configuration "
                          "field here (known: %s)." % (arg['name'], ', '.join(sorted(known))))
        doc[known[arg['name']]] = arg['value']
    if doc['mode'] == 'ipvs':
        raise Invalid("Label kubeproxy_options: IPVS is not available on these nodes; "
                      "kube-proxy runs in iptables mode.")
    return doc


def containerd_config(conf):
    """containerd's config for kubeadm nodes (version 2: Debian's 1.6/1.7 read it, and
    2.x migrates it), as TOML text; ``runc_binary`` when runc is not the PATH's."""
    pause = '%s/pause:%s' % (conf['image_repository'], conf['pause_tag'])
    systemd = 'true' if conf['cgroup_driver'] == 'systemd' else 'false'
    return '\n'.join([
        'version = 2',
        '',
        '[plugins."io.containerd.grpc.v1.cri"]',
        '  sandbox_image = %s' % node_values.toml_string(pause),
        # Without CAP_SYS_RESOURCE a negative oom_score_adj cannot be set in a node.
        '  restrict_oom_score_adj = true',
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '  runtime_type = "io.containerd.runc.v2"',
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        '  SystemdCgroup = %s' % systemd,
    ] + (['  BinaryName = %s' % node_values.toml_string(conf['runc_binary'])]
         if conf.get('runc_binary') else []) + [
        # Per-registry settings (registry_hosts: the template's insecure_registry).
        '[plugins."io.containerd.grpc.v1.cri".registry]',
        '  config_path = %s' % node_values.toml_string(conf['registry_hosts_dir']),
        ''])


def registry_host(prefix):
    """The registry a container_infra_prefix names (its first part when that is a host,
    as container engines read an image name), or None for Docker Hub's."""
    first = (prefix or '').partition('/')[0]
    return first if first and _names_registry(first) else None


def _hosts_toml(conf, server, host, setting):
    """containerd's hosts.toml (this driver's mark first): ``server``, then ``host`` to
    pull and resolve from with ``setting`` (how its certificate is taken)."""
    return '\n'.join([
        conf['registry_hosts_mark'],
        'server = %s' % node_values.toml_string(server),
        '',
        '[host.%s]' % node_values.toml_string(host),
        '  capabilities = ["pull", "resolve"]',
        '  ' + setting,
        ''])


def registry_hosts(conf):
    """containerd's per-registry settings (``registry_hosts_dir/<host>/``):
    ``{host: {file name: text}}``. The template's insecure_registry as Docker's
    insecure-registries treats one: HTTPS without verifying its certificate, then plain
    HTTP; with the operator's registry CA, container_infra_prefix's registry over HTTPS
    verified with it (``ca.crt`` beside its ``hosts.toml``) - unless it is the insecure
    one."""
    found = {}
    insecure = conf.get('insecure_registry')
    if insecure:
        found[insecure] = {'hosts.toml': _hosts_toml(
            conf, 'http://' + insecure, 'https://' + insecure, 'skip_verify = true')}
    mirror = registry_host(conf.get('container_infra_prefix'))
    if conf.get('registry_ca') and mirror and mirror != insecure:
        ca = '%s/%s/ca.crt' % (conf['registry_hosts_dir'], mirror)
        found[mirror] = {'ca.crt': conf['registry_ca'], 'hosts.toml': _hosts_toml(
            conf, 'https://' + mirror, 'https://' + mirror,
            'ca = %s' % node_values.toml_string(ca))}
    return found


def pull_sources(conf, held=()):
    """For the job's log: where the cluster's images come from (``held``: the image
    names the nodes are given or hold, from the offline directory or their node image),
    as registry_hosts sets the nodes up for the prefix's registry."""
    files = registry_hosts(conf).get(registry_host(conf.get('container_infra_prefix')), {})
    if 'ca.crt' in files:
        how = 'HTTPS verified with the operator\'s CA (MAGNUM_K8S_REGISTRY_CA)'
    elif files:
        how = 'plain HTTP or unverified HTTPS (the template\'s insecure_registry)'
    else:
        how = 'HTTPS verified with the nodes\' CAs'
    lines = ['Images the nodes lack are pulled from %s%s: %s' % (
        conf['image_repository'],
        ' (container_infra_prefix)' if conf.get('container_infra_prefix') else '', how)]
    held = sorted(set(held))
    lines.append('%d images come with the nodes (offline directory or node image)%s' % (
        len(held), ': ' + ', '.join(held) if held else ''))
    return lines


def artifact_source(kube_tag, offline_dir=None, download_url=None, crictl_url=None,
                    cache_dir=None, arch=None):
    """Where binaries and images come from: the offline directory
    (``MAGNUM_K8S_ARTIFACTS``: ``bin/`` and ``images/*.tar``, or one such directory
    per version, ``<kube_tag>/bin`` ..., which an upgrade needs; ``dir``: the one taken,
    where its ``manifests/`` are too) when given, else downloads for ``kube_tag`` into
    ``cache_dir/<kube_tag>/<arch>`` (``download_dir``): ``downloads`` (each file's ``url``,
    ``dest`` and ``mode``; upstream, or the mirrors ``download_url`` / ``crictl_url``) and
    ``unpack`` (crictl comes in cri-tools' tarball). Either way ``binaries`` maps each
    binary's name to its path on the controller. ``arch``: the nodes' (``node_arch``;
    DEFAULT_ARCH when not given); an offline directory's binaries and images built for
    another are refused."""
    arch = arch or DEFAULT_ARCH
    if offline_dir:
        if os.path.isdir(os.path.join(offline_dir, kube_tag)):
            offline_dir = os.path.join(offline_dir, kube_tag)
        bin_dir = os.path.join(offline_dir, 'bin')
        missing = [b for b in BINARIES if not os.path.isfile(os.path.join(bin_dir, b))]
        images_dir = os.path.join(offline_dir, 'images')
        images = sorted(f for f in (os.listdir(images_dir) if os.path.isdir(images_dir) else [])
                        if f.endswith('.tar'))
        if missing or not images:
            raise Invalid("MAGNUM_K8S_ARTIFACTS=%s is incomplete: %s." % (offline_dir, '; '.join(
                (['missing bin/' + ', bin/'.join(missing)] if missing else [])
                + ([] if images else ['no images/*.tar']))))
        images = [os.path.join(images_dir, f) for f in images]
        manifests = dict((i, archive_manifest(i)) for i in images)
        _check_offline_arch(offline_dir, arch, manifests, bin_dir)
        names = dict((i, [image_name(tag) for tag in manifests[i]['tags']]) for i in images)
        return {'mode': 'offline', 'dir': offline_dir,
                'binaries': dict((b, os.path.join(bin_dir, b)) for b in BINARIES),
                'images': images,
                'worker_images': [i for i in images if not control_plane_only(names[i])],
                'image_names': names}
    if not cache_dir:
        raise Invalid('Downloading Kubernetes %s needs a cache directory to keep it in.'
                      % kube_tag)
    download_dir = os.path.join(cache_dir, kube_tag, arch)
    base = (download_url or UPSTREAM_DOWNLOADS).rstrip('/')
    crictl = 'v%d.%d.0' % labels_mod.version_tuple(kube_tag)[:2]
    tarball = CRICTL_PATH % {'base': (crictl_url or UPSTREAM_CRICTL).rstrip('/'),
                             'version': crictl, 'arch': arch}
    crictl_tarball = {'url': tarball, 'dest': os.path.join(download_dir, tarball.rpartition(
        '/')[2]), 'mode': '0644'}
    downloads = [{'url': BINARY_PATH % {'base': base, 'tag': kube_tag, 'arch': arch, 'name': b},
                  'dest': os.path.join(download_dir, b), 'mode': '0755'}
                 for b in BINARIES if b != 'crictl']
    return {'mode': 'upstream', 'download_dir': download_dir,
            'binaries': dict((b, os.path.join(download_dir, b)) for b in BINARIES),
            'downloads': downloads + [crictl_tarball],
            'unpack': [{'src': crictl_tarball['dest'], 'member': 'crictl'}],
            'images': [], 'worker_images': [], 'image_names': {}}


def containerd_source(conf, offline_dir=None, cache_dir=None, arch=None, containerd_url=None,
                      runc_url=None):
    """Where the nodes' containerd comes from. ``{'mode': 'package'}``: Debian's
    (containerd and runc in the packages), for releases before CONTAINERD_TARBALL_FROM
    when no containerd_version / containerd_tarball_url label is set. Else
    ``mode: 'tarball'`` with ``version``, ``tarball`` and ``runc`` (paths on the
    controller) and ``downloads`` (``url``, ``dest``, ``checksum`` for get_url; empty
    offline): the offline directory's ``containerd/containerd-<version>-linux-<arch>.tar.gz``
    and ``containerd/runc.<arch>``, else the containerd_tarball_url label's (checked
    against containerd_tarball_sha256 when set, else the ``.sha256sum`` beside it), else
    containerd's release for containerd_version (default DEFAULT_CONTAINERD_VERSION) from
    upstream or the mirror ``containerd_url``; runc DEFAULT_RUNC_VERSION from upstream or
    ``runc_url``, checked against the release's runc.sha256sum. On the nodes it is
    unpacked in ``prefix`` and runc is ``runc_binary``."""
    labels = conf.get('containerd') or {}
    arch = arch or DEFAULT_ARCH
    version = (labels.get('containerd_version') or '').lstrip('v')
    url = labels.get('containerd_tarball_url') or ''
    sha256 = (labels.get('containerd_tarball_sha256') or '').strip().lower()
    if not (version or url) and parse_version(conf['kube_tag'])[:2] < CONTAINERD_TARBALL_FROM:
        return {'mode': 'package'}
    if sha256 and not re.match(r'^[0-9a-f]{64}$', sha256):
        raise Invalid("Label containerd_tarball_sha256 is not a SHA-256 (64 hex digits).")
    version = version or DEFAULT_CONTAINERD_VERSION
    if not re.match(r'^[0-9]+\.[0-9]+\.[0-9]+([.+~-][0-9A-Za-z.+~-]*)?$', version):
        raise Invalid("Label containerd_version %r is not a containerd version (e.g. %s)."
                      % (version, DEFAULT_CONTAINERD_VERSION))
    name = 'containerd-%s-linux-%s.tar.gz' % (version, arch)
    if offline_dir and not url:
        where = os.path.join(offline_dir, 'containerd')
        tarball, runc = os.path.join(where, name), os.path.join(where, 'runc.' + arch)
        missing = [p for p in (tarball, runc) if not os.path.isfile(p)]
        if missing:
            raise Invalid("MAGNUM_K8S_ARTIFACTS=%s has no containerd %s for %s (Kubernetes %s "
                          "needs containerd's release, not Debian's): missing %s."
                          % (offline_dir, version, arch, conf['kube_tag'], ', '.join(
                              os.path.relpath(p, offline_dir) for p in missing)))
        return {'mode': 'tarball', 'version': version, 'tarball': tarball, 'runc': runc,
                'downloads': [], 'prefix': CONTAINERD_PREFIX, 'runc_binary': RUNC_BINARY}
    if not cache_dir:
        raise Invalid('Downloading containerd needs a cache directory to keep it in.')
    if url:
        name = url.rstrip('/').rpartition('/')[2] or name
    else:
        url = CONTAINERD_PATH % {'base': (containerd_url or UPSTREAM_CONTAINERD).rstrip('/'),
                                 'version': version, 'arch': arch}
    download_dir = os.path.join(cache_dir, 'containerd', version, arch)
    runc = RUNC_PATH % {'base': (runc_url or UPSTREAM_RUNC).rstrip('/'),
                        'version': DEFAULT_RUNC_VERSION, 'arch': arch}
    tarball = os.path.join(download_dir, name)
    runc_dest = os.path.join(download_dir, 'runc.' + arch)
    return {'mode': 'tarball', 'version': version, 'tarball': tarball, 'runc': runc_dest,
            'prefix': CONTAINERD_PREFIX, 'runc_binary': RUNC_BINARY, 'downloads': [
                {'url': url, 'dest': tarball, 'mode': '0644',
                 'checksum': 'sha256:' + (sha256 or url + '.sha256sum')},
                {'url': runc, 'dest': runc_dest, 'mode': '0755',
                 'checksum': 'sha256:' + runc.rpartition('/')[0] + '/runc.sha256sum'}]}


def calico_source(conf, offline_dir=None, calico_url=None, cache_dir=None, manifest=None):
    """Where network_driver calico's manifest is on the controller (``path``): ``manifest``
    when given, else the offline directory's ``manifests/calico.yaml`` (``offline_dir``:
    the one k8s_artifacts took), else calico's for the cluster's calico_tag, downloaded
    from ``url`` (upstream, or the mirror ``calico_url``) into ``cache_dir/calico/<tag>``
    (``url`` is None when nothing is to be downloaded)."""
    where = manifest or (offline_dir and os.path.join(offline_dir, 'manifests', 'calico.yaml'))
    if where:
        if not os.path.isfile(where):
            raise Invalid("network_driver calico needs its manifest: %s is not a file%s." % (
                where, '' if manifest else ' (MAGNUM_K8S_ARTIFACTS=%s is incomplete, its '
                'calico images belong in images/)' % offline_dir))
        return {'path': where, 'url': None}
    if not cache_dir:
        raise Invalid("Downloading calico's manifest needs a cache directory to keep it in.")
    tag = conf.get('calico_tag') or DEFAULT_CALICO_TAG
    return {'path': os.path.join(cache_dir, 'calico', tag, 'calico.yaml'),
            'url': CALICO_MANIFEST_PATH % {'base': (calico_url or UPSTREAM_CALICO).rstrip('/'),
                                           'tag': tag}}


def calico_manifest(text, conf):
    """Calico's manifest (YAML documents, as Calico publishes it) for the cluster: its
    IPv4 pool the pod network with the calico_ipv4pool_ipip mode, its images from
    container_infra_prefix when given. A calico_tag label must be the manifest's version
    (calico-node's image tag)."""
    import yaml
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    dumper = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)
    try:
        docs = [doc for doc in yaml.load_all(text, Loader=loader) if doc]
    except yaml.YAMLError as exc:
        raise Invalid("The calico manifest is not YAML: %s" % exc)
    node = None
    for doc in docs:
        if not isinstance(doc, dict) or doc.get('kind') not in ('DaemonSet', 'Deployment'):
            continue
        pod = ((doc.get('spec') or {}).get('template') or {}).get('spec') or {}
        for container in (pod.get('initContainers') or []) + (pod.get('containers') or []):
            if doc['kind'] == 'DaemonSet' and container.get('name') == 'calico-node':
                node = container
            if container.get('image') and conf.get('container_infra_prefix'):
                container['image'] = addon_image(container['image'],
                                                 conf['container_infra_prefix'])
    if node is None:
        raise Invalid("The calico manifest has no calico-node container (in a DaemonSet): "
                      "it is not Calico's manifest.")
    tag = str(node.get('image', '')).rpartition(':')[2]
    if conf.get('calico_tag') and conf['calico_tag'] != tag:
        raise Invalid("Label calico_tag %s: the calico manifest deploys %s (calico-node's "
                      "image)." % (conf['calico_tag'], tag or 'no tagged image'))
    wanted = {'CALICO_IPV4POOL_CIDR': conf['pod_cidr'], 'CALICO_IPV4POOL_IPIP': conf['calico_ipip']}
    env = [e for e in node.get('env') or [] if e.get('name') not in wanted]
    node['env'] = env + [{'name': k, 'value': v} for k, v in sorted(wanted.items())]
    return yaml.dump_all(docs, Dumper=dumper, default_flow_style=False, sort_keys=False)


def _names_registry(first):
    """Whether an image name's first part is a registry (docker's rule: a host with a
    '.' or a port, or localhost), not a path under Docker Hub."""
    return '.' in first or ':' in first or first == 'localhost'


def image_name(ref):
    """An image reference as containerd names it (docker's normalisation):
    ``busybox`` -> ``docker.io/library/busybox:latest``."""
    first, rest = ref.partition('/')[::2]
    if not rest or not _names_registry(first):
        first, rest = 'docker.io', ref
    if first == 'docker.io' and '/' not in rest:
        rest = 'library/' + rest
    if '@' not in rest and ':' not in rest.rpartition('/')[2]:
        rest += ':latest'
    return '%s/%s' % (first, rest)


def archive_manifest(path):
    """What a docker-archive tarball holds: ``tags``, the image names (its manifest.json's
    RepoTags), and ``arches``, the architectures its images' configs name; nothing when it
    is not one."""
    try:
        with tarfile.open(path) as tar:
            manifest = json.load(tar.extractfile('manifest.json'))
            configs = [json.load(tar.extractfile(entry['Config'])) for entry in manifest
                       if entry.get('Config') in tar.getnames()]
        return {'tags': [tag for entry in manifest for tag in entry.get('RepoTags') or []],
                'arches': sorted(set(c['architecture'] for c in configs
                                     if isinstance(c, dict) and c.get('architecture')))}
    except (tarfile.TarError, KeyError, OSError, ValueError, TypeError, AttributeError):
        return {'tags': [], 'arches': []}


def elf_arch(path):
    """The architecture an ELF executable is built for (ELF_ARCHES' name, else its
    machine number); None when the file is not ELF (a script runs anywhere)."""
    with open(path, 'rb') as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b'\x7fELF' or head[5] not in (1, 2):
        return None
    machine = int.from_bytes(head[18:20], 'little' if head[5] == 1 else 'big')
    return ELF_ARCHES.get((machine, head[5]), 'ELF machine %d' % machine)


def node_arch(unames, image_machine=None):
    """The one architecture of the nodes being given Kubernetes (``unames``: node ->
    ``uname -m``), as its downloads name it; ``image_machine``: the machine the provider
    says its image is (before any node exists: the nodes must agree); DEFAULT_ARCH when
    neither says. An architecture Kubernetes is not released for, or nodes of more than
    one, is refused (one operation gives its nodes one architecture's binaries)."""
    image_arch = None
    if image_machine:
        image_arch = UNAME_ARCHES.get(str(image_machine).strip())
        if image_arch is None:
            raise Invalid("The cluster's image is a %s machine (its architecture property): "
                          "Kubernetes is released for %s." % (
                              image_machine, ', '.join(sorted(UNAME_ARCHES))))
    by_arch = {}
    for node, machine in sorted(unames.items()):
        machine = str(machine).strip()
        if machine not in UNAME_ARCHES:
            raise Invalid("Node %s is a %s machine: Kubernetes is released for %s." % (
                node, machine or 'unknown', ', '.join(sorted(UNAME_ARCHES))))
        by_arch.setdefault(UNAME_ARCHES[machine], []).append(node)
    if len(by_arch) > 1:
        raise Invalid("The nodes are of more than one architecture (%s): an operation gives "
                      "its nodes one architecture's Kubernetes (a node group per architecture "
                      "is created and resized on its own; an upgrade takes every node)."
                      % '; '.join(
                          '%s: %s' % (arch, ', '.join(nodes)) for arch, nodes in sorted(
                              by_arch.items())))
    if image_arch and by_arch and image_arch not in by_arch:
        nodes = next(iter(by_arch.values()))
        raise Invalid("The nodes %s are %s machines, and their image's architecture property "
                      "says %s, for which Kubernetes was found before they were made: correct "
                      "the image's property (openstack image set --property architecture=%s)."
                      % (', '.join(nodes), str(unames[nodes[0]]).strip(), image_machine,
                         str(unames[nodes[0]]).strip()))
    return image_arch or next(iter(by_arch), DEFAULT_ARCH)


def _check_offline_arch(offline_dir, arch, manifests, bin_dir):
    wrong = ['bin/%s is built for %s' % (b, built) for b in BINARIES
             for built in [elf_arch(os.path.join(bin_dir, b))] if built and built != arch]
    wrong += ['images/%s holds %s images' % (os.path.basename(path), '/'.join(m['arches']))
              for path, m in sorted(manifests.items()) if m['arches'] and arch not in m['arches']]
    if wrong:
        raise Invalid("MAGNUM_K8S_ARTIFACTS=%s is not for the nodes, which are %s: %s." % (
            offline_dir, arch, '; '.join(wrong)))


def control_plane_only(tags):
    """Whether every image named is one only the control plane runs (a tarball whose
    names are unknown is given to every node)."""
    names = [tag.rsplit('/', 1)[-1].split(':')[0].split('@')[0] for tag in tags]
    return bool(names) and all(name in CONTROL_PLANE_IMAGES for name in names)


def _binaries(binaries, bin_dir):
    return [{'src': src, 'dest': '%s/%s' % (bin_dir, name), 'mode': '0755'}
            for name, src in sorted(binaries.items())]


def binary_files(nodes, binaries, bin_dir):
    """The ``binaries`` (name -> path on the controller) each node is given, in
    ``bin_dir``. Returns ``[{'node', 'files': [{'src', 'dest', 'mode'}]}]``."""
    return [{'node': node, 'files': _binaries(binaries, bin_dir)} for node in nodes]


def node_files(nodes, masters, binaries, artifacts, bin_dir, images_dir, containerd=None,
               containerd_dir=None):
    """What each node is given from the controller: ``binaries`` (name -> path on the
    controller) in ``bin_dir``, the image archives of ``artifacts`` (``k8s_artifacts``)
    in ``images_dir`` — all of them on ``masters``, the ``worker_images`` elsewhere — and,
    with ``containerd`` (``k8s_containerd_source``) of mode tarball, containerd's tarball
    in ``containerd_dir`` and runc as its ``runc_binary``.
    Returns ``[{'node', 'files': [{'src', 'dest', 'mode'}]}]``; an archive's entry also
    ``images``, the names it holds (a node whose containerd has them all is not given it)."""
    def archives(node):
        return [{'src': src, 'dest': '%s/%s' % (images_dir, os.path.basename(src)),
                 'mode': '0644', 'images': list(artifacts['image_names'].get(src) or [])}
                for src in artifacts['images' if node in masters else 'worker_images']]
    runtime = []
    if (containerd or {}).get('mode') == 'tarball':
        tarball = containerd_tarball_on_node(containerd, containerd_dir)
        runtime = [{'src': containerd['tarball'], 'dest': tarball, 'mode': '0644'},
                   {'src': containerd['runc'], 'dest': containerd['runc_binary'], 'mode': '0755'}]
    return [{'node': entry['node'], 'files': entry['files'] + runtime + archives(entry['node'])}
            for entry in binary_files(nodes, binaries, bin_dir)]


def containerd_tarball_on_node(containerd, containerd_dir):
    """Where a node keeps containerd's tarball (unpacked from there into /usr/local)."""
    return '%s/%s' % (containerd_dir.rstrip('/'), os.path.basename(containerd['tarball']))


def node_images(wanted, pushed, names):
    """Each node's image archives, as module k8s_node_setup takes them: ``wanted`` /
    ``pushed``: ``[{'node', 'files': [{'src', 'dest'}]}]`` (``node_files``, and what
    ``files_to_push`` found different); ``names``: archive -> image names (the files that
    are not archives are not in it). Returns ``{node: [{'archive': dest, 'names': [...],
    'fresh': pushed now}]}`` (the node imports the fresh ones and those holding an image
    its containerd lacks: k8s_node.archives_to_import)."""
    fresh = set((entry['node'], f['src']) for entry in pushed for f in entry['files'])
    return dict((entry['node'], [
        {'archive': f['dest'], 'names': list(names[f['src']]),
         'fresh': (entry['node'], f['src']) in fresh}
        for f in entry['files'] if f['src'] in names]) for entry in wanted)


def nodes_to_remove(nodes, count, named=None, pods=None):
    """Which ``count`` worker nodes a shrink removes: the named ones, then the
    emptiest (fewest non-DaemonSet pods, from ``pods``: name -> count), then the
    highest-numbered."""
    named = list(named or [])
    unknown = [n for n in named if n not in nodes]
    if unknown:
        raise Invalid("nodes_to_remove names nodes that are not in the group: %s"
                      % ', '.join(unknown))
    pods = pods or {}
    rest = sorted((n for n in nodes if n not in named),
                  key=lambda n: (pods.get(n, 0), -_index(n)))
    return (named + rest)[:max(count, len(named))]


def emptiest_nodes(nodes, pods, count):
    """Which ``count`` of ``nodes`` (Node objects as the API lists them) a shrink that
    names none removes: those running the fewest pods (``pods``: Pod objects; finished
    pods, DaemonSet pods and static pods' mirrors do not count), then the
    highest-numbered."""
    names = [n['metadata']['name'] for n in nodes]
    running = {}
    for pod in pods:
        meta, spec = pod.get('metadata') or {}, pod.get('spec') or {}
        owners = [o.get('kind') for o in meta.get('ownerReferences') or []]
        if ((pod.get('status') or {}).get('phase') in ('Succeeded', 'Failed')
                or 'DaemonSet' in owners
                or 'kubernetes.io/config.mirror' in (meta.get('annotations') or {})):
            continue
        node = spec.get('nodeName')
        if node:
            running[node] = running.get(node, 0) + 1
    return nodes_to_remove(names, count, pods=running)


def _index(name):
    match = re.search(r'-(\d+)$', name)
    return int(match.group(1)) if match else 0


def health(nodes, expected, api):
    """The cluster's health as Magnum's monitor reports it: ``<node>.Ready`` per node
    (the Ready condition's status, ``not registered`` for a server of the cluster
    the API does not list) and ``api`` (what the API server answered to /readyz, or
    why it could not be asked). ``nodes``: Node objects, None when no one could list
    them (then UNKNOWN); ``expected``: the cluster's server names. HEALTHY when the
    API says ``ok`` and every server is a Ready node."""
    if nodes is None:
        return health_mod.unknown()
    reason = {}
    for node in nodes:
        conditions = (node.get('status') or {}).get('conditions') or []
        ready = [c.get('status') for c in conditions if c.get('type') == 'Ready']
        reason['%s.Ready' % node['metadata']['name']] = str(ready[0] if ready else 'Unknown')
    for name in expected or []:
        reason.setdefault('%s.Ready' % name, 'not registered')
    reason['api'] = str(api or health_mod.NOT_ACCESSIBLE).strip()
    healthy = reason['api'] == 'ok' and all(
        value == 'True' for key, value in reason.items() if key != 'api')
    return {'status': 'HEALTHY' if healthy else 'UNHEALTHY', 'reason': reason}
