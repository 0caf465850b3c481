# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The labels Magnum's user guide gives Kubernetes clusters, name -> (kind, allowed values
or None): the COE's, which both its drivers read (the kubeadm driver declares them with
the COE's facts; core/labels.py checks their values)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as L
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

LABELS = {
    # networking
    'flannel_network_cidr': (L.CIDR, None),
    'flannel_backend': (L.STR, ('udp', 'vxlan', 'host-gw')),
    'flannel_network_subnetlen': (L.INT, None),
    'flannel_tag': (L.TAG, None),
    'flannel_cni_tag': (L.TAG, None),
    'calico_ipv4pool': (L.CIDR, None),
    'calico_ipv4pool_ipip': (L.STR, ('Always', 'CrossSubnet', 'Never', 'Off')),
    'calico_tag': (L.TAG, None),
    'service_cluster_ip_range': (L.CIDR, None),
    # kubernetes components
    'kube_tag': (L.TAG, None),
    'etcd_tag': (L.TAG, None),
    'coredns_tag': (L.TAG, None),
    'cloud_provider_tag': (L.TAG, None),
    'cloud_provider_enabled': (L.BOOL, None),
    'hyperkube_prefix': (L.REPOSITORY, None),
    'admission_control_list': (L.STR, None),
    'kubelet_options': (L.OPTIONS, None),
    'kubeapi_options': (L.OPTIONS, None),
    'kubescheduler_options': (L.OPTIONS, None),
    'kubecontroller_options': (L.OPTIONS, None),
    'kubeproxy_options': (L.OPTIONS, None),
    'cgroup_driver': (L.STR, ('systemd', 'cgroupfs')),
    'keystone_auth_enabled': (L.BOOL, None),
    'k8s_keystone_auth_tag': (L.TAG, None),
    'use_podman': (L.BOOL, None),
    'selinux_mode': (L.STR, ('enforcing', 'permissive', 'disabled')),
    'container_runtime': (L.STR, ('', 'containerd')),
    'containerd_version': (L.STR, None),
    'containerd_tarball_url': (L.STR, None),
    'containerd_tarball_sha256': (L.STR, None),
    'cert_manager_api': (L.BOOL, None),
    'ostree_commit': (L.STR, None),
    'ostree_remote': (L.STR, None),
    # add-ons
    'heapster_enabled': (L.BOOL, None),
    'metrics_server_enabled': (L.BOOL, None),
    'metrics_server_chart_tag': (L.TAG, None),
    'monitoring_enabled': (L.BOOL, None),
    'prometheus_operator_chart_tag': (L.TAG, None),
    'prometheus_adapter_enabled': (L.BOOL, None),
    'prometheus_adapter_chart_tag': (L.TAG, None),
    'prometheus_adapter_configmap': (L.STR, None),
    'prometheus_monitoring': (L.BOOL, None),
    'grafana_admin_passwd': (L.STR, None),
    'influx_grafana_dashboard_enabled': (L.BOOL, None),
    'kube_dashboard_enabled': (L.BOOL, None),
    'kube_dashboard_version': (L.TAG, None),
    'metrics_scraper_tag': (L.TAG, None),
    'ingress_controller': (L.STR, ('', 'traefik', 'nginx', 'octavia')),
    'ingress_controller_role': (L.STR, None),
    'octavia_ingress_controller_tag': (L.TAG, None),
    'nginx_ingress_controller_tag': (L.TAG, None),
    'nginx_ingress_controller_chart_tag': (L.TAG, None),
    'traefik_ingress_controller_tag': (L.TAG, None),
    'tiller_enabled': (L.BOOL, None),
    'tiller_tag': (L.TAG, None),
    'tiller_namespace': (L.STR, None),
    'helm_client_url': (L.STR, None),
    'helm_client_sha256': (L.STR, None),
    'helm_client_tag': (L.TAG, None),
    'auto_healing_enabled': (L.BOOL, None),
    'auto_healing_controller': (L.STR, ('draino', 'magnum-auto-healer')),
    'magnum_auto_healer_tag': (L.TAG, None),
    'draino_tag': (L.TAG, None),
    'auto_scaling_enabled': (L.BOOL, None),
    'autoscaler_tag': (L.TAG, None),
    'min_node_count': (L.INT, None),
    'max_node_count': (L.INT, None),
    'npd_enabled': (L.BOOL, None),
    'node_problem_detector_tag': (L.TAG, None),
    'cinder_csi_enabled': (L.BOOL, None),
    'cinder_csi_plugin_tag': (L.TAG, None),
    'csi_attacher_tag': (L.TAG, None),
    'csi_provisioner_tag': (L.TAG, None),
    'csi_snapshotter_tag': (L.TAG, None),
    'csi_resizer_tag': (L.TAG, None),
    'csi_node_driver_registrar_tag': (L.TAG, None),
    # Services of type LoadBalancer (the cloud provider; Magnum from Wallaby)
    'octavia_provider': (L.STR, None),
    'octavia_lb_algorithm': (L.STR, ('ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP',
                                     'SOURCE_IP_PORT')),
    'octavia_lb_healthcheck': (L.BOOL, None),
    # volumes
    'etcd_volume_size': (L.INT, None),
    'etcd_volume_type': (L.STR, None),
}


def check(labels, network_driver=None, volume_driver=None, cluster_distro=None,
          docker_storage_driver=None, cluster_user_trust=False):
    """The user guide's rules among Kubernetes' labels (Magnum's API checks them for
    Kubernetes templates, clusters and node groups): add-ons that need the service to hand
    credentials over (``cluster_user_trust``), or other labels, or a version. Raises
    ``Invalid``."""
    def on(key):
        return L.to_bool(labels.get(key))

    def set_true(key):
        return key in labels and on(key)

    if set_true('cloud_provider_enabled') and not cluster_user_trust:
        raise Invalid("cloud_provider_enabled can not be set to True when "
                      "cluster_user_trust is False.")
    if set_true('cinder_csi_enabled'):
        if volume_driver != 'cinder':
            raise Invalid("cinder_csi_enabled requires volume_driver=cinder.")
        if not cluster_user_trust and not set_true('cloud_provider_enabled'):
            raise Invalid("cinder_csi_enabled requires cloud_provider_enabled=true "
                          "(and cluster_user_trust enabled in the service).")
    if on('auto_scaling_enabled'):
        L.autoscaling_bounds(labels)
        if not cluster_user_trust:
            raise Invalid("auto_scaling_enabled gives the cluster autoscaler the cluster's "
                          "OpenStack credential: that needs cluster_user_trust enabled in "
                          "the service.")
    if set_true('prometheus_adapter_enabled') and not on('monitoring_enabled'):
        raise Invalid("prometheus_adapter_enabled=true requires monitoring_enabled=true.")
    helm = L.version_tuple(labels.get('helm_client_tag'))
    if helm is not None and helm < (3, 0, 0):
        needs_tiller = [k for k in ('monitoring_enabled', 'metrics_server_enabled')
                        if on(k)]
        if labels.get('ingress_controller') == 'nginx':
            needs_tiller.append('ingress_controller=nginx')
        if needs_tiller and not on('tiller_enabled'):
            raise Invalid("helm_client_tag %s (< v3.0.0) needs tiller_enabled=true for %s."
                          % (labels['helm_client_tag'], ', '.join(needs_tiller)))
        if on('tiller_enabled') and labels.get('tiller_tag') and \
                labels['tiller_tag'] != labels['helm_client_tag']:
            raise Invalid("tiller_tag must equal helm_client_tag when helm < v3.0.0.")
    kube = L.version_tuple(labels.get('kube_tag'))
    if 'kube_tag' in labels and kube is None:
        raise Invalid("Label kube_tag must look like vX.Y.Z, not %r." % labels['kube_tag'])
    if on('keystone_auth_enabled') and kube is not None and kube < (1, 30, 0):
        raise Invalid("keystone_auth_enabled needs kube_tag v1.30.0 or later (the API "
                      "server's structured authorization).")
    if network_driver == 'calico' and kube is not None and kube < (1, 9, 3):
        raise Invalid("The calico network driver needs kube_tag v1.9.3 or later.")
    if cluster_distro == 'fedora-atomic' and kube is not None and kube >= (1, 16, 0) \
            and not on('use_podman'):
        raise Invalid("Fedora Atomic with kube_tag v1.16.0 or later requires use_podman=true.")
    if cluster_distro == 'fedora-coreos':
        if 'use_podman' in labels and not on('use_podman'):
            raise Invalid("The Fedora CoreOS driver only supports use_podman=true.")
        if docker_storage_driver == 'devicemapper':
            raise Invalid("The Fedora CoreOS driver does not support the devicemapper "
                          "docker storage driver.")
    if 'min_node_count' in labels and 'max_node_count' in labels and \
            int(labels['min_node_count']) > int(labels['max_node_count']):
        raise Invalid("Label min_node_count (%s) is greater than max_node_count (%s)."
                      % (labels['min_node_count'], labels['max_node_count']))
