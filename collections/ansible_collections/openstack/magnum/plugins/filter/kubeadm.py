# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The Kubernetes (kubeadm) driver's filters: settings, artifacts, configuration files,
# add-ons, health. Documentation: one YAML file per filter in this folder.

from ansible.errors import AnsibleFilterError

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    addons, k8s_config, k8s_node, k8s_plane)
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import plain, wrap_all


def k8s_document(conf, kind, node=None, endpoint=None, token=None, ca_cert_hash=None,
                 certificate_key=None, ca=None, resolv=None, fallback_resolv=None, sans=None):
    """A Kubernetes driver configuration file as text: ``init`` / ``join`` / ``upgrade``
    (kubeadm YAML documents for ``node``; ``init``'s API server certificate also names
    ``sans``; ``upgrade`` is empty before kubeadm's v1beta4, which has no
    UpgradeConfiguration), ``kubeconfig`` (the API at ``endpoint`` trusting ``ca``,
    with a bootstrap ``token`` if given), ``containerd`` (TOML) or ``resolv`` (the
    kubelet's resolv.conf from the node's ``resolv`` and the controller's
    ``fallback_resolv``)."""
    import yaml
    conf, node = plain(conf), plain(node)
    endpoint, token, ca_cert_hash, certificate_key, ca = [
        None if v is None else str(v) for v in (endpoint, token, ca_cert_hash, certificate_key, ca)]
    try:
        if kind == 'containerd':
            return k8s_config.containerd_config(conf)
        if kind == 'resolv':
            return k8s_config.resolv_conf(conf, str(resolv or ''), str(fallback_resolv or ''))
        if kind == 'init':
            docs = k8s_config.kubeadm_init(conf, node, endpoint,
                                           [str(name) for name in sans or () if name])
        elif kind == 'kubeconfig':
            docs = [k8s_config.kubeconfig(endpoint, ca, token)]
        elif kind == 'join':
            docs = [k8s_config.kubeadm_join(conf, node, endpoint, token, ca_cert_hash,
                                            certificate_key)]
        elif kind == 'upgrade':
            doc = k8s_config.kubeadm_upgrade(conf, node)
            if doc is None:
                return ''
            docs = [doc]
        else:
            raise AnsibleFilterError('k8s_document: unknown kind %r' % kind)
        return yaml.safe_dump_all(docs, default_flow_style=False, sort_keys=False)
    except MagnumError as exc:
        raise AnsibleFilterError('k8s_document: %s' % exc)


def k8s_calico_manifest(text, conf):
    """Calico's manifest for the cluster (k8s_config.calico_manifest), as text."""
    return k8s_config.calico_manifest(str(text), plain(conf))


def k8s_pod_network(cluster, template):
    return str(k8s_config.pod_network(cluster, template))


class FilterModule(object):
    def filters(self):
        table = wrap_all({
            'k8s_settings': k8s_config.settings,
            'k8s_pull_sources': k8s_config.pull_sources,
            'k8s_pod_network': k8s_pod_network,
            'k8s_artifacts': k8s_config.artifact_source,
            'k8s_node_arch': k8s_config.node_arch,
            'k8s_calico_source': k8s_config.calico_source,
            'k8s_calico_manifest': k8s_calico_manifest,
            'k8s_emptiest_nodes': k8s_config.emptiest_nodes,
            'k8s_node_files': k8s_config.node_files,
            'k8s_binary_files': k8s_config.binary_files,
            'k8s_node_images': k8s_config.node_images,
            'k8s_health': k8s_config.health,
            'k8s_pause_tag': k8s_config.pause_tag,
            'k8s_containerd_source': k8s_config.containerd_source,
            'k8s_containerd_on_node': k8s_config.containerd_tarball_on_node,
            'k8s_image_plan': k8s_node.image_plan,
            'k8s_kubeadm': k8s_config.kubeadm_command,
            'k8s_control_plane_patches': k8s_config.control_plane_patches,
            'k8s_probed': k8s_plane.probed,
            'k8s_addons': addons.plan,
            'k8s_admin_kubeconfig': k8s_config.admin_kubeconfig,
            'k8s_addon_charts': addons.chart_sources,
            'k8s_addon_labels': addons.upgrade_labels,
            'k8s_cloud_addons': addons.cloud_addons,
            'k8s_manifest': addons.manifest_objects,
            'k8s_manifest_addons': addons.manifest_addons,
        })
        table['k8s_document'] = k8s_document
        return table
