# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Kubernetes add-ons: which ones a cluster's labels enable (with the user guide's
defaults), the Helm chart of each (name, version, upstream repository) and the values it
is installed with, and where each chart comes from (the offline directory's
``charts/<chart>-<version>.tgz``, a mirror laid out the same way, or the chart's upstream
repository), checked before anything is applied."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_config
from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as labels_mod
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry


# What lets an add-on's pods run on masters too (a 1-master, 0-worker cluster).
CONTROL_PLANE_TOLERATIONS = ({'key': 'node-role.kubernetes.io/control-plane',
                              'operator': 'Exists', 'effect': 'NoSchedule'},)

# The CPU (and memory) the cluster's own controllers ask for (upstream's manifests' for
# k8s-keystone-auth and the autoscaler, the chart's suggestion for the cloud controller
# manager, the autoscaler's CPU for the octavia-ingress-controller): a pod that asks for
# none is BestEffort, whose processes the kernel gives almost no CPU on a busy master
# (cgroup weight 1 beside the control plane's); on the lab's QEMU-TCG master the cloud
# controller manager got 15 CPU-seconds in 22 minutes and initialised no worker
# (2026-12-03).
CONTROLLER_REQUESTS = {
    'openstack-cloud-controller-manager': {'requests': {'cpu': '200m'}},
    'k8s-keystone-auth': {'requests': {'cpu': '200m'}},
    'cluster-autoscaler': {'requests': {'cpu': '100m', 'memory': '300Mi'}},
    'octavia-ingress-controller': {'requests': {'cpu': '100m'}},
}


def _requests(name):
    return dict((k, dict(v)) for k, v in CONTROLLER_REQUESTS[name].items())


def _metrics_server_values(conf, labels):
    """metrics-server as Magnum runs it: it reads the kubelets by their internal address
    and accepts their self-signed serving certificates (kubeadm's default)."""
    values = {'args': ['--kubelet-insecure-tls',
                       '--kubelet-preferred-address-types=InternalIP'],
              # One replica on any node, masters included (a 1-master, 0-worker cluster).
              'tolerations': [dict(t) for t in CONTROL_PLANE_TOLERATIONS]}
    return values


def _node_problem_detector_values(conf, labels):
    """The chart's own defaults (a privileged DaemonSet on every node, masters included,
    reading the kernel log): nothing to add but the image (Addon.image, tag_label)."""
    return {}


def _traefik_values(conf, labels):
    """Traefik as Magnum ran its ingress controller: a DaemonSet on the nodes labelled
    ``role=<ingress_controller_role>`` (default ``ingress``, as the guide says: label the
    nodes that are to serve), answering on the nodes' ports 80 and 443 (hostPort), the
    cluster's default IngressClass; no LoadBalancer Service (the nodes are the entry)."""
    values = {'deployment': {'kind': 'DaemonSet'},
              'nodeSelector': {'role': labels.get('ingress_controller_role') or 'ingress'},
              'ports': {'web': {'hostPort': 80}, 'websecure': {'hostPort': 443}},
              # One pod per node holding the host's ports: a new one only once the old is gone.
              'updateStrategy': {'type': 'RollingUpdate',
                                 'rollingUpdate': {'maxUnavailable': 1, 'maxSurge': 0}},
              'service': {'spec': {'type': 'ClusterIP'}},
              'ingressClass': {'enabled': True, 'isDefaultClass': True}}
    return values


def _headlamp_values(conf, labels):
    """Headlamp, the Kubernetes dashboard's successor (the dashboard was archived
    upstream in 2026), where Magnum ran the dashboard: kube-system, a ClusterIP Service
    (`kubectl port-forward` or the API server's proxy), on any node, masters included.
    Users sign in with their own token: the chart's cluster-admin binding of its own
    service account is not made."""
    return {'clusterRoleBinding': {'create': False},
            'tolerations': [dict(t) for t in CONTROL_PLANE_TOLERATIONS]}


# kube-prometheus-stack's images (its own and its subcharts'), each named in the values
# by registry and repository: with container_infra_prefix, <prefix>/<last part>.
MONITORING_IMAGES = (
    (('alertmanager', 'alertmanagerSpec', 'image'), 'alertmanager'),
    (('prometheus', 'prometheusSpec', 'image'), 'prometheus'),
    (('prometheusOperator', 'image'), 'prometheus-operator'),
    (('prometheusOperator', 'prometheusConfigReloader', 'image'), 'prometheus-config-reloader'),
    (('prometheusOperator', 'admissionWebhooks', 'deployment', 'image'), 'admission-webhook'),
    (('prometheusOperator', 'admissionWebhooks', 'patch', 'image'), 'kube-webhook-certgen'),
    (('prometheusOperator', 'thanosImage'), 'thanos'),
    (('thanosRuler', 'thanosRulerSpec', 'image'), 'thanos'),
    (('crds', 'upgradeJob', 'image', 'kubectl'), 'kubectl'),
    (('crds', 'upgradeJob', 'image', 'busybox'), 'busybox'),
    (('grafana', 'image'), 'grafana'),
    (('grafana', 'sidecar', 'image'), 'k8s-sidecar'),
    (('grafana', 'initChownData', 'image'), 'busybox'),
    (('grafana', 'downloadDashboardsImage'), 'curl'),
    (('grafana', 'testFramework', 'image'), 'bats'),
    (('kube-state-metrics', 'image'), 'kube-state-metrics'),
    (('prometheus-node-exporter', 'image'), 'node-exporter'),
)


def _monitoring_values(conf, labels):
    """kube-prometheus-stack (Prometheus, Alertmanager, Grafana, node exporter,
    kube-state-metrics; the successor of Magnum's prometheus-operator chart) with the
    template's grafana_admin_passwd as Grafana's admin password (else the chart's own,
    random, in the grafana Secret), every image through container_infra_prefix."""
    values = {}
    if labels.get('grafana_admin_passwd'):
        values['grafana'] = {'adminPassword': str(labels['grafana_admin_passwd'])}
    prefix = conf.get('container_infra_prefix')
    for path, name in MONITORING_IMAGES if prefix else ():
        _set(values, path + ('registry',), prefix)
        _set(values, path + ('repository',), name)
    return values


def _monitoring_on(labels, conf):
    return by_name('kube-prometheus-stack').enabled(labels)


def _prometheus_adapter_values(conf, labels):
    """The custom metrics API from the monitoring stack's Prometheus; the rules of the
    ConfigMap prometheus_adapter_configmap names instead of the chart's when set."""
    values = {'prometheus': {'url': 'http://kube-prometheus-stack-prometheus.monitoring.svc',
                             'port': 9090}}
    if labels.get('prometheus_adapter_configmap'):
        values['rules'] = {'existing': str(labels['prometheus_adapter_configmap'])}
    return values


def _cloud_nodes(conf):
    """Whether the nodes are the cloud's servers (the OpenStack provider), so the
    cloud controller manager initializes them; local nodes pointed at a cloud get its
    load balancers and volumes only."""
    return registry.by_name(conf.get('provider') or 'none').cloud


def _cloud_provider_values(conf, labels):
    """openstack-cloud-controller-manager as Magnum runs it: on the masters, the
    cluster's UUID as its cluster name (its load balancers are then
    ``kube_service_<uuid>_...``, which the cluster's delete removes), the chart's
    cloud-config Secret holding openstack_cloud_config's file. On the cloud's servers it
    initializes the nodes (kubelets run with --cloud-provider=external) and serves
    LoadBalancer Services; on local nodes the Services only."""
    controllers = (['cloud-node', 'cloud-node-lifecycle', 'service'] if _cloud_nodes(conf)
                   else ['service'])
    values = {'cluster': {'name': conf['cluster_uuid']},
              'enabledControllers': controllers,
              'resources': _requests('openstack-cloud-controller-manager'),
              'secret': {'enabled': True, 'create': True, 'name': 'cloud-config'}}
    election = leader_election(conf)
    if election:
        # The chart renders controllerExtraArgs through Helm's tpl: only flags checked here.
        values['controllerExtraArgs'] = '\n'.join('- --%s=%s' % flag for flag in election)
    return values


LEADER_ELECTION_FLAG = re.compile(r'^leader-elect-(lease-duration|renew-deadline|retry-period)$')
DURATION = re.compile(r'^[0-9]+(ms|s|m)$')


def leader_election(conf):
    """The controller manager's leader-election timing (the role's component flags of
    controllerManager: kubernetes_component_flags), for the cloud's controller manager
    too: on a master too slow for Kubernetes' own (15 s lease, 10 s renew deadline) it
    loses its lease to its API server's slowness and exits before it initialises a node
    (the lab's QEMU-TCG masters: "leaderelection lost" every few minutes). (flag, value)
    pairs; a value that is not a duration is refused. None but ``leader-elect=false``
    where the masters' controllers elect no leader (k8s_config.leader_election_on)."""
    if not k8s_config.leader_election_on(conf):
        return [('leader-elect', 'false')]
    given = ((conf.get('component_flags') or {}).get('controllerManager') or {})
    flags = []
    for name, value in sorted(given.items()):
        if LEADER_ELECTION_FLAG.match(str(name)):
            if not DURATION.match(str(value)):
                raise Invalid("kubernetes_component_flags: controllerManager's %s must be a "
                              "duration (e.g. 60s), not %r." % (name, value))
            flags.append((str(name), str(value)))
    return flags


def _cinder_csi_values(conf, labels):
    """Cinder CSI with its own Secret of the same cloud-config, the cluster's UUID as
    its cluster ID (volume metadata ``cinder.csi.openstack.org/cluster``, which the
    cluster's delete looks for), and the chart's StorageClass ``csi-cinder-sc-delete``
    the cluster's default; sidecar images through container_infra_prefix and the
    guide's csi_*_tag labels."""
    values = {'clusterID': conf['cluster_uuid'],
              'secret': {'enabled': True, 'create': True, 'hostMount': False,
                         'name': 'cinder-csi-cloud-config'},
              'storageClass': {'enabled': True, 'delete': {'isDefault': True}}}
    prefix = conf.get('container_infra_prefix')
    for key, image, tag_label in CSI_SIDECARS:
        if prefix:
            _set(values, ('csi', key, 'image', 'repository'),
                 k8s_config.image_repository(image, prefix))
        if tag_label and labels.get(tag_label):
            _set(values, ('csi', key, 'image', 'tag'), str(labels[tag_label]))
    return values


# Cinder CSI's sidecars: the values key, the image, the guide's tag label.
CSI_SIDECARS = (
    ('attacher', 'registry.k8s.io/sig-storage/csi-attacher', 'csi_attacher_tag'),
    ('provisioner', 'registry.k8s.io/sig-storage/csi-provisioner', 'csi_provisioner_tag'),
    ('snapshotter', 'registry.k8s.io/sig-storage/csi-snapshotter', 'csi_snapshotter_tag'),
    ('resizer', 'registry.k8s.io/sig-storage/csi-resizer', 'csi_resizer_tag'),
    ('livenessprobe', 'registry.k8s.io/sig-storage/livenessprobe', None),
    ('nodeDriverRegistrar', 'registry.k8s.io/sig-storage/csi-node-driver-registrar',
     'csi_node_driver_registrar_tag'),
)


def _cinder_csi_on(labels, conf):
    return conf.get('volume_driver') == 'cinder'


class Addon(object):
    """One add-on: ``label`` turns it on (``default``: the guide's value when unset),
    ``chart`` of ``repo`` at ``version`` (or the ``version_label``'s value) installed as
    release ``name`` in ``namespace`` with ``values(conf, labels)``; ``image`` (the
    chart's image, ``image_key`` the path of its repository in the values) is taken
    from ``container_infra_prefix`` when set, and its tag from the ``tag_label``'s value
    (``tag_key`` its path in the values) when set."""

    def __init__(self, name, label, default, chart, repo, version, version_label,
                 namespace, values, image=None, image_key=('image', 'repository'),
                 tag_label=None, tag_key=('image', 'tag'), when=None, image_split=False,
                 also=(), cloud_conf_key=None):
        self.name, self.label, self.default = name, label, default
        self.chart, self.repo, self.version = chart, repo, version
        self.version_label = version_label
        self.namespace, self.values = namespace, values
        self.image, self.image_key = image, image_key
        self.tag_label, self.tag_key = tag_label, tag_key
        # A label whose value picks the add-on (ingress_controller=traefik), not a boolean;
        # or a function of the labels that must hold too (the add-on another needs).
        self.when = when
        # The chart names its image by image.registry and image.repository (the mirror
        # is then the registry), not by one repository.
        self.image_split = image_split
        # Older labels that turn it on too (prometheus_monitoring).
        self.also = also
        # Where in its values the chart takes the cloud-config's text (the keys from the
        # top), if it does: openstack_cloud_config writes such an add-on's values, so the
        # credential never is a variable of the play.
        self.cloud_conf_key = cloud_conf_key

    def enabled(self, labels, conf=None):
        if callable(self.when):
            return self.when(labels, conf or {}) and labels_mod.to_bool(
                labels.get(self.label), self.default)
        if self.when is not None:
            return labels.get(self.label) == self.when
        return labels_mod.to_bool(labels.get(self.label), self.default) or any(
            labels_mod.to_bool(labels.get(label)) for label in self.also)


ADDONS = (
    Addon('openstack-cloud-controller-manager', label='cloud_provider_enabled', default=False,
          chart='openstack-cloud-controller-manager',
          repo='https://kubernetes.github.io/cloud-provider-openstack', version='2.36.0',
          version_label=None, namespace='kube-system', values=_cloud_provider_values,
          image='registry.k8s.io/provider-os/openstack-cloud-controller-manager',
          tag_label='cloud_provider_tag', cloud_conf_key=('cloudConfigContents',)),
    Addon('cinder-csi', label='cinder_csi_enabled', default=True, when=_cinder_csi_on,
          chart='openstack-cinder-csi',
          repo='https://kubernetes.github.io/cloud-provider-openstack', version='2.36.0',
          version_label=None, namespace='kube-system', values=_cinder_csi_values,
          image='registry.k8s.io/provider-os/cinder-csi-plugin',
          image_key=('csi', 'plugin', 'image', 'repository'),
          tag_label='cinder_csi_plugin_tag', tag_key=('csi', 'plugin', 'image', 'tag'),
          cloud_conf_key=('secret', 'data', 'cloud.conf')),
    Addon('metrics-server', label='metrics_server_enabled', default=True,
          chart='metrics-server', repo='https://kubernetes-sigs.github.io/metrics-server/',
          version='3.13.0', version_label='metrics_server_chart_tag', namespace='kube-system',
          values=_metrics_server_values, image='registry.k8s.io/metrics-server/metrics-server'),
    Addon('node-problem-detector', label='npd_enabled', default=True,
          chart='node-problem-detector',
          repo='https://raw.githubusercontent.com/deliveryhero/helm-charts/refs/heads/master/',
          version='2.4.1', version_label=None, namespace='kube-system',
          values=_node_problem_detector_values,
          image='registry.k8s.io/node-problem-detector/node-problem-detector',
          tag_label='node_problem_detector_tag'),
    Addon('traefik', label='ingress_controller', default=False, when='traefik',
          chart='traefik', repo='https://traefik.github.io/charts', version='41.3.0',
          version_label=None, namespace='kube-system', values=_traefik_values,
          image='docker.io/traefik', image_split=True,
          tag_label='traefik_ingress_controller_tag'),
    Addon('headlamp', label='kube_dashboard_enabled', default=True, chart='headlamp',
          repo='https://kubernetes-sigs.github.io/headlamp/', version='0.45.0',
          version_label=None, namespace='kube-system', values=_headlamp_values,
          image='ghcr.io/headlamp-k8s/headlamp', image_split=True),
    Addon('kube-prometheus-stack', label='monitoring_enabled', default=False,
          also=('prometheus_monitoring',), chart='kube-prometheus-stack',
          repo='https://prometheus-community.github.io/helm-charts', version='88.5.3',
          version_label='prometheus_operator_chart_tag', namespace='monitoring',
          values=_monitoring_values),
    Addon('prometheus-adapter', label='prometheus_adapter_enabled', default=True,
          when=_monitoring_on, chart='prometheus-adapter',
          repo='https://prometheus-community.github.io/helm-charts', version='5.3.0',
          version_label='prometheus_adapter_chart_tag', namespace='monitoring',
          values=_prometheus_adapter_values,
          image='registry.k8s.io/prometheus-adapter/prometheus-adapter'),
)


# The user guide's add-on labels this driver does not deploy (yet): turned on, a
# template or cluster is refused (a 400 saying so), never accepted and ignored. Each
# label with what it would run; an add-on moves to ADDONS when it is built.
NOT_DEPLOYED = (
    ('ingress_controller', None),
    ('influx_grafana_dashboard_enabled', 'InfluxDB and Grafana fed by Heapster, retired '
                                         'upstream; monitoring_enabled gives Grafana on '
                                         'Prometheus'),
    ('auto_healing_controller', None),
    ('heapster_enabled', 'Heapster (retired upstream; metrics_server_enabled serves the '
                         'metrics API)'),
    ('tiller_enabled', 'Tiller (Helm 2, retired upstream)'),
)


# The values the guide names for a label that are not deployed: the ingress
# controllers, and the auto-healers (with auto_healing_enabled).
VALUES_NOT_DEPLOYED = {
    'ingress_controller': {
        'nginx': 'ingress-nginx, retired upstream in March 2026; ingress_controller=traefik '
                 'serves the same Ingress resources',
    },
    'auto_healing_controller': {
        'draino': 'draino, archived upstream; magnum-auto-healer, the default, replaces '
                  'broken workers',
    },
}


def not_deployed(labels):
    """What the labels turn on that this driver does not deploy, as ``label=value
    (what)`` strings; empty when nothing."""
    found = []
    for label, what in NOT_DEPLOYED:
        value = (labels or {}).get(label)
        if label in VALUES_NOT_DEPLOYED:
            what = VALUES_NOT_DEPLOYED[label].get(value)
            on = bool(what) and (label != 'auto_healing_controller' or labels_mod.to_bool(
                (labels or {}).get('auto_healing_enabled')))
        else:
            on = labels_mod.to_bool(value)
        if on:
            found.append('%s=%s (%s)' % (label, value, what))
    return found


def _service_account(name, namespace, account, rules=None, role=None):
    """The service account ``account`` of add-on ``name`` and its cluster-wide binding:
    to ``role`` (an existing ClusterRole), or to the ClusterRole ``name`` of ``rules``
    made with it."""
    labels = {'k8s-app': name}
    made = [{'apiVersion': 'v1', 'kind': 'ServiceAccount',
             'metadata': {'name': account, 'namespace': namespace, 'labels': labels}}]
    if rules is not None:
        made.append({'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRole',
                     'metadata': {'name': name, 'labels': labels}, 'rules': rules})
    made.append({'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding',
                 'metadata': {'name': name, 'labels': labels},
                 'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole',
                             'name': role or name},
                 'subjects': [{'kind': 'ServiceAccount', 'name': account,
                               'namespace': namespace}]})
    return made


def cloud_addons(labels, template):
    """What the labels and template turn on that is given the cloud: ``addons`` (names),
    ``sections`` (of the cloud-config they need) and ``makes`` (those that make load
    balancers, floating IPs or volumes on the cloud for the cluster, which its delete
    removes)."""
    labels = labels or {}
    conf = {'volume_driver': (template or {}).get('volume_driver')}
    makes = [a.name for a in ADDONS if a.cloud_conf_key and a.enabled(labels, conf)]
    if labels.get('ingress_controller') == 'octavia':
        makes.append(OCTAVIA_INGRESS)
    names = list(makes)
    if labels_mod.to_bool(labels.get('keystone_auth_enabled')):
        names.append(KEYSTONE_AUTH)
    if labels_mod.to_bool(labels.get('auto_scaling_enabled')):
        names.append(AUTOSCALER)
    return {'addons': names, 'makes': makes,
            'sections': ['Global', 'LoadBalancer'] if makes else ['Global']}


def manifest_addons(conf, labels, keystone_url=None, policy_text=None):
    """The add-ons upstream ships as manifests only, whose objects are made here and
    applied as they are: each ``name``, ``objects``; ``placeholders`` (made only where
    missing: users edit them); ``secret`` (a Secret the module openstack_cloud_config
    completes with the cloud-config, in ``config_format``, of ``sections``, at
    ``secret_key``)."""
    labels = labels or {}
    made = []
    if conf.get('keystone_auth'):
        made.append(dict(keystone_auth(conf, labels, keystone_url, policy_text),
                         name=KEYSTONE_AUTH))
    if labels_mod.to_bool(labels.get('auto_scaling_enabled')):
        made.append(dict(cluster_autoscaler(conf, labels), name=AUTOSCALER,
                         sections=['Global'], config_format='autoscaler'))
    if labels.get('ingress_controller') == 'octavia':
        made.append(dict(octavia_ingress(conf, labels), name=OCTAVIA_INGRESS,
                         sections=['Global', 'LoadBalancer'], config_format='octavia_ingress'))
    return made


KEYSTONE_AUTH = 'k8s-keystone-auth'
AUTOSCALER = 'cluster-autoscaler'
OCTAVIA_INGRESS = 'octavia-ingress-controller'
OCTAVIA_INGRESS_IMAGE = 'registry.k8s.io/provider-os/octavia-ingress-controller'


def octavia_ingress(conf, labels):
    """The octavia-ingress-controller (ingress_controller=octavia): one replica, any
    node, masters included; Ingresses become Octavia load balancers named
    ``kube_ingress_<cluster uuid>_...`` (the cluster's delete removes them); its
    configuration (credential, subnet, floating network) in the Secret ``secret``."""
    namespace, name = 'kube-system', OCTAVIA_INGRESS
    image = k8s_config.addon_image('%s:%s' % (OCTAVIA_INGRESS_IMAGE, CLOUD_PROVIDER_OPENSTACK_TAG),
                                   conf.get('container_infra_prefix'),
                                   (labels or {}).get('octavia_ingress_controller_tag'))
    meta = {'name': name, 'namespace': namespace, 'labels': {'k8s-app': name}}
    pod = {'serviceAccountName': name, 'priorityClassName': 'system-cluster-critical',
           'tolerations': [dict(t) for t in CONTROL_PLANE_TOLERATIONS],
           'containers': [{
               'name': name, 'image': image,
               'args': ['/bin/octavia-ingress-controller', '--config=/etc/config/config.yaml'],
               'resources': _requests(name),
               'volumeMounts': [{'name': 'config', 'mountPath': '/etc/config',
                                 'readOnly': True}]}],
           'volumes': [{'name': 'config', 'secret': {'secretName': name + '-config'}}]}
    # As upstream's manifest: it watches and annotates every namespace's Ingresses,
    # Services, Secrets and nodes.
    objects = _service_account(name, namespace, name, role='cluster-admin') + [
        {'apiVersion': 'apps/v1', 'kind': 'StatefulSet', 'metadata': meta,
         'spec': {'replicas': 1, 'serviceName': name,
                  'selector': {'matchLabels': {'k8s-app': name}},
                  'template': {'metadata': {'labels': {'k8s-app': name}}, 'spec': pod}}},
    ]
    secret = {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'Opaque',
              'metadata': {'name': name + '-config', 'namespace': namespace}}
    return {'objects': objects, 'secret': secret, 'secret_key': ['stringData', 'config.yaml']}


# k8s-keystone-auth (keystone_auth_enabled): upstream ships manifests only, so its
# objects are made here and applied as they are.
KEYSTONE_AUTH_IMAGE = 'registry.k8s.io/provider-os/k8s-keystone-auth'
# cloud-provider-openstack's release the manifests are of (its images' default tag).
CLOUD_PROVIDER_OPENSTACK_TAG = 'v1.36.0'
KEYSTONE_AUTH_POLICY = 'k8s-keystone-auth-policy'
# The user guide's roles: k8s_admin everything, k8s_developer the workloads of every
# namespace, k8s_viewer reads; each in the cluster's project only.
KEYSTONE_ROLES = (
    ('k8s_admin', ['*'], '*'),
    ('k8s_developer', ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], '*'),
    ('k8s_viewer', ['get', 'list', 'watch'], '*'),
)
DISCOVERY_PATHS = ('/api', '/api/*', '/apis', '/apis/*', '/version', '/healthz')


def keystone_auth_policy(project_id, text=None):
    """The placeholder policy (the ConfigMap users then edit): the operator's ``text``
    (Magnum's keystone_auth_default_policy, a JSON list, ``$PROJECT_ID`` standing for the
    cluster's project) or the guide's three roles in the cluster's project."""
    import json
    if text:
        try:
            policy = json.loads(text.replace('$PROJECT_ID', project_id or ''))
        except ValueError as exc:
            raise Invalid("The Keystone auth policy is not JSON: %s" % exc)
        if not isinstance(policy, list):
            raise Invalid("The Keystone auth policy must be a JSON list of rules.")
        return json.dumps(policy, indent=2)
    project = {'type': 'project', 'values': [project_id]}
    policy = [{'resource': {'verbs': verbs, 'resources': ['*'], 'version': '*',
                            'namespace': namespace},
               'match': [{'type': 'role', 'values': [role]}, project]}
              for role, verbs, namespace in KEYSTONE_ROLES]
    policy += [{'nonresource': {'verbs': ['get'], 'path': path},
                'match': [{'type': 'role', 'values': [r[0] for r in KEYSTONE_ROLES]}, project]}
               for path in DISCOVERY_PATHS]
    return json.dumps(policy, indent=2)


def keystone_auth(conf, labels, keystone_url, policy_text=None):
    """k8s-keystone-auth as Magnum ran it: on every master, on the host's network, on the
    loopback (the API server's webhook kubeconfig, k8s_config.KEYSTONE_WEBHOOK_CONFIG,
    names it) with the API server's own serving certificate, asking ``keystone_url``
    about tokens and reading its policy from the ConfigMap k8s-keystone-auth-policy.
    Returns ``objects`` (applied as they are at every run) and ``placeholders`` (the
    policy ConfigMap, made only where missing: users edit it)."""
    if not keystone_url:
        raise Invalid("keystone_auth_enabled needs the cloud whose Keystone authenticates "
                      "(MAGNUM_CLOUD).")
    labels = labels or {}
    namespace, name = 'kube-system', 'k8s-keystone-auth'
    meta = {'name': name, 'namespace': namespace, 'labels': {'k8s-app': name}}
    image = k8s_config.addon_image('%s:%s' % (KEYSTONE_AUTH_IMAGE, CLOUD_PROVIDER_OPENSTACK_TAG),
                                   conf.get('container_infra_prefix'),
                                   labels.get('k8s_keystone_auth_tag'))
    pki = '/etc/kubernetes/pki'
    pod = {
        'serviceAccountName': 'k8s-keystone', 'hostNetwork': True,
        'priorityClassName': 'system-node-critical',
        'nodeSelector': {'node-role.kubernetes.io/control-plane': ''},
        'tolerations': [dict(t) for t in CONTROL_PLANE_TOLERATIONS] + [
            {'key': 'node.cloudprovider.kubernetes.io/uninitialized', 'value': 'true',
             'effect': 'NoSchedule'}],
        'containers': [{
            'name': name, 'image': image, 'command': ['/bin/k8s-keystone-auth'],
            'args': ['--tls-cert-file=%s/apiserver.crt' % pki,
                     '--tls-private-key-file=%s/apiserver.key' % pki,
                     '--keystone-url=%s' % keystone_url,
                     '--policy-configmap-name=%s' % KEYSTONE_AUTH_POLICY,
                     '--listen=%s' % k8s_config.KEYSTONE_WEBHOOK_ADDRESS],
            # The API server's key is root's.
            'securityContext': {'runAsUser': 0},
            'resources': _requests(name),
            'volumeMounts': [{'name': 'pki', 'mountPath': pki, 'readOnly': True}]}],
        'volumes': [{'name': 'pki', 'hostPath': {'path': pki, 'type': 'Directory'}}]}
    objects = _service_account(name, namespace, 'k8s-keystone', rules=[
        {'apiGroups': [''], 'resources': ['configmaps'], 'verbs': ['get', 'watch', 'list']}]) + [
        {'apiVersion': 'apps/v1', 'kind': 'DaemonSet', 'metadata': meta,
         'spec': {'selector': {'matchLabels': {'k8s-app': name}},
                  'updateStrategy': {'type': 'RollingUpdate'},
                  'template': {'metadata': {'labels': {'k8s-app': name}}, 'spec': pod}}},
    ]
    placeholders = [{
        'apiVersion': 'v1', 'kind': 'ConfigMap',
        'metadata': {'name': KEYSTONE_AUTH_POLICY, 'namespace': namespace},
        'data': {'policies': keystone_auth_policy(conf.get('project_id'), policy_text)}}]
    return {'objects': objects, 'placeholders': placeholders}


# The cluster autoscaler (auto_scaling_enabled) with its magnum provider: it asks this
# project's API (the catalog's container-infra endpoint) about the node groups and
# resizes them, and reads their servers from the Heat view (api/heat_stacks.py, the
# catalog's orchestration endpoint).
AUTOSCALER_IMAGE = 'registry.k8s.io/autoscaling/cluster-autoscaler'
AUTOSCALER_TAG = 'v1.36.0'
AUTOSCALER_SECRET = 'cluster-autoscaler-cloud-config'
AUTOSCALER_RULES = (
    ([''], ['events', 'endpoints'], ['create', 'patch']),
    ([''], ['pods/eviction'], ['create']),
    ([''], ['pods/status'], ['update']),
    ([''], ['nodes'], ['watch', 'list', 'get', 'update']),
    ([''], ['namespaces', 'pods', 'services', 'replicationcontrollers',
            'persistentvolumeclaims', 'persistentvolumes'], ['watch', 'list', 'get']),
    (['batch'], ['jobs'], ['watch', 'list', 'get']),
    (['policy'], ['poddisruptionbudgets'], ['watch', 'list']),
    (['apps'], ['daemonsets', 'replicasets', 'statefulsets'], ['watch', 'list', 'get']),
    (['storage.k8s.io'], ['storageclasses', 'csinodes', 'csidrivers', 'csistoragecapacities',
                          'volumeattachments'], ['watch', 'list', 'get']),
    # Dynamic resource allocation: the autoscaler's scheduler framework waits for these
    # informers' caches before its first loop, forever without them (seen on v1.36.0).
    (['resource.k8s.io'], ['deviceclasses', 'resourceslices', 'resourceclaims'],
     ['watch', 'list', 'get']),
    ([''], ['configmaps'], ['create', 'list', 'watch', 'get', 'update', 'delete']),
    (['coordination.k8s.io'], ['leases'], ['create', 'get', 'update']),
)


def cluster_autoscaler(conf, labels):
    """The cluster autoscaler as Magnum ran it: one replica on the masters, its magnum
    provider scaling the worker groups that have bounds - the default one between the
    labels ``min_node_count`` (default 1) and ``max_node_count`` (required), which the
    cluster's record gives it (model.default_nodegroups) -, named by the cluster's UUID, its
    cloud-config (openstack_cloud_config's [Global] in the keys its magnum provider reads:
    the cluster's trust, where it has one) in the Secret ``secret`` describes (``secret_key``: where the file goes in it)."""
    labels = labels or {}
    labels_mod.autoscaling_bounds(labels)
    namespace, name = 'kube-system', 'cluster-autoscaler'
    image = k8s_config.addon_image('%s:%s' % (AUTOSCALER_IMAGE, AUTOSCALER_TAG),
                                   conf.get('container_infra_prefix'),
                                   labels.get('autoscaler_tag'))
    pod = {
        'serviceAccountName': name, 'priorityClassName': 'system-cluster-critical',
        'nodeSelector': {'node-role.kubernetes.io/control-plane': ''},
        'tolerations': [dict(t) for t in CONTROL_PLANE_TOLERATIONS],
        'containers': [{
            'name': name, 'image': image, 'command': ['./cluster-autoscaler'],
            'args': ['--cloud-provider=magnum', '--cluster-name=%s' % conf['cluster_uuid'],
                     '--cloud-config=/config/cloud-config',
                     # the worker groups with bounds (the default one's are the labels'):
                     # v1.36's magnum provider builds no node template for a --nodes
                     # group and panics on its first loop (seen on the lab's guests)
                     '--node-group-auto-discovery=magnum:role=worker']
            + ['--%s=%s' % flag for flag in autoscaler_flags(conf)] + ['--v=2'],
            'resources': _requests(name),
            'volumeMounts': [{'name': 'cloud-config', 'mountPath': '/config',
                              'readOnly': True}]}],
        'volumes': [{'name': 'cloud-config', 'secret': {'secretName': AUTOSCALER_SECRET}}]}
    meta = {'name': name, 'namespace': namespace, 'labels': {'k8s-app': name}}
    objects = _service_account(name, namespace, name, rules=[
        {'apiGroups': list(groups), 'resources': list(kinds), 'verbs': list(verbs)}
        for groups, kinds, verbs in AUTOSCALER_RULES]) + [
        {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': meta,
         'spec': {'replicas': 1, 'selector': {'matchLabels': {'k8s-app': name}},
                  'template': {'metadata': {'labels': {'k8s-app': name}}, 'spec': pod}}},
    ]
    secret = {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'Opaque',
              'metadata': {'name': AUTOSCALER_SECRET, 'namespace': namespace}}
    return {'objects': objects, 'secret': secret, 'secret_key': ['stringData', 'cloud-config']}


AUTOSCALER_OWN_FLAGS = ('cloud-provider', 'cluster-name', 'cloud-config', 'nodes',
                        'node-group-auto-discovery')
FLAG_NAME = re.compile(r'^[a-z][a-z0-9-]*$')


def autoscaler_flags(conf):
    """The operator's flags of the cluster autoscaler (kubernetes_autoscaler_flags:
    name -> value, Magnum's scale-down timing by default), as (flag, value) pairs; the
    flags that make it this cluster's (provider, name, cloud-config, node group bounds) are
    the driver's."""
    flags = []
    for name, value in sorted((conf.get('autoscaler_flags') or {}).items()):
        if not FLAG_NAME.match(str(name)) or name in AUTOSCALER_OWN_FLAGS:
            raise Invalid("kubernetes_autoscaler_flags: %r is not a flag the operator "
                          "sets." % (name,))
        if isinstance(value, (dict, list)) or value is None:
            raise Invalid("kubernetes_autoscaler_flags: %s must be one value, not %r."
                          % (name, value))
        flags.append((str(name), str(value).lower() if isinstance(value, bool) else str(value)))
    return flags


def manifest_objects(text, source):
    """The Kubernetes objects of a manifest's text (YAML documents, a ``List``'s items
    taken one by one), each checked to name its apiVersion and kind; ``source`` names
    the manifest in errors. YAML tags are not evaluated (safe loading)."""
    import yaml
    try:
        documents = [d for d in yaml.safe_load_all(text or '') if d is not None]
    except yaml.YAMLError as exc:
        raise Invalid("The manifest %s is not YAML: %s" % (source, exc))
    objects = []
    for number, doc in enumerate(documents, 1):
        items = doc.get('items') if isinstance(doc, dict) and doc.get('kind') == 'List' else [doc]
        for item in items or []:
            if not isinstance(item, dict) or not item.get('apiVersion') or not item.get('kind'):
                raise Invalid("The manifest %s: document %d is not a Kubernetes object "
                              "(apiVersion and kind)." % (source, number))
            objects.append(item)
    if not objects:
        raise Invalid("The manifest %s holds no Kubernetes object." % source)
    return objects


def by_name(name):
    for addon in ADDONS:
        if addon.name == name:
            return addon
    raise Invalid("No add-on %s." % name)


def chart_version(addon, labels):
    """The chart version: the version label's (Magnum's tags carry a leading v, chart
    versions none) or the add-on's default."""
    value = (labels.get(addon.version_label) if addon.version_label else None) or addon.version
    return str(value)[1:] if str(value)[:1] == 'v' else str(value)


def upgrade_labels(cluster_labels, target_labels):
    """The labels the add-ons take in an upgrade: the cluster's, with the target
    template's chart versions and image tags (an upgrade moves the add-ons to them; what is turned on
    stays the cluster's)."""
    merged = dict(cluster_labels or {})
    for addon in ADDONS:
        for label in (addon.version_label, addon.tag_label):
            if label and (target_labels or {}).get(label):
                merged[label] = target_labels[label]
    return merged


def merged(values, overrides):
    """``values`` with ``overrides`` over them, mappings merged key by key (as Helm
    merges a chart's values), anything else replaced."""
    result = dict(values or {})
    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def _set(values, path, value):
    for key in path[:-1]:
        values = values.setdefault(key, {})
    values[path[-1]] = value


def plan(conf, labels):
    """The add-ons the cluster runs, in order: each a dict with ``name``, ``chart``,
    ``version``, ``repo``, ``archive`` (the chart's file name), ``namespace`` and
    ``values`` (images from ``conf['container_infra_prefix']`` when set, the operator's
    ``conf['addon_values']`` of the add-on over them)."""
    labels = labels or {}
    prefix = conf.get('container_infra_prefix')
    made = []
    for addon in ADDONS:
        if not addon.enabled(labels, conf):
            continue
        version = chart_version(addon, labels)
        values = addon.values(conf, labels) or {}
        if prefix and addon.image and addon.image_split:
            _set(values, ('image', 'registry'), prefix)
            _set(values, ('image', 'repository'),
                 k8s_config.image_repository(addon.image, prefix)[len(prefix) + 1:])
        elif prefix and addon.image:
            _set(values, addon.image_key, k8s_config.image_repository(addon.image, prefix))
        if addon.tag_label and labels.get(addon.tag_label):
            _set(values, addon.tag_key, str(labels[addon.tag_label]))
        operators = (conf.get('addon_values') or {}).get(addon.name)
        if operators is not None and not isinstance(operators, dict):
            raise Invalid("kubernetes_addon_values: %s's must be a mapping of Helm values."
                          % addon.name)
        values = merged(values, operators)
        made.append({'name': addon.name, 'chart': addon.chart, 'version': version,
                     'repo': addon.repo, 'archive': '%s-%s.tgz' % (addon.chart, version),
                     'namespace': addon.namespace, 'values': values,
                     'cloud_conf_key': list(addon.cloud_conf_key or ()) or None})
    return made


def chart_sources(addons, offline_dir=None, charts_url=None, cache_dir=None):
    """Where each add-on's chart is on the controller (``charts``: name -> path) and
    what is to be fetched first (``downloads``: each ``name``, ``dest`` and either
    ``url``, a mirror's file, or ``repo``/``chart``/``version`` for ``helm pull``).

    ``offline_dir`` (the Kubernetes offline directory, for this version) must hold every
    chart as ``charts/<chart>-<version>.tgz``: missing ones are an error naming them.
    Otherwise charts are kept in ``cache_dir/charts`` once fetched, from ``charts_url``
    (``<url>/<chart>-<version>.tgz``) when given, else from the chart's repository."""
    charts, downloads, missing = {}, [], []
    for addon in addons:
        if offline_dir:
            path = os.path.join(offline_dir, 'charts', addon['archive'])
            if not os.path.isfile(path):
                missing.append(os.path.relpath(path, offline_dir))
            charts[addon['name']] = path
            continue
        if not cache_dir:
            raise Invalid("Add-on charts need a cache directory on the controller.")
        dest = os.path.join(cache_dir, 'charts', addon['archive'])
        charts[addon['name']] = dest
        if os.path.isfile(dest):
            continue
        fetch = {'name': addon['name'], 'dest': dest}
        if charts_url:
            fetch['url'] = '%s/%s' % (charts_url.rstrip('/'), addon['archive'])
        else:
            fetch.update(repo=addon['repo'], chart=addon['chart'], version=addon['version'])
        downloads.append(fetch)
    if missing:
        raise Invalid("MAGNUM_K8S_ARTIFACTS=%s lacks the add-ons' charts: %s (or turn the "
                      "add-ons off: %s)." % (offline_dir, ', '.join(missing), ', '.join(
                          '%s=false' % by_name(a['name']).label for a in addons
                          if os.path.join('charts', a['archive']) in missing)))
    return {'charts': charts, 'downloads': downloads}
