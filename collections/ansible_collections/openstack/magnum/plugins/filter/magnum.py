# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# Documentation: one YAML file per filter beside this file.

import os

from ansible.errors import AnsibleFilterError

from ansible_collections.openstack.magnum.plugins.module_utils import (
    addons, baremetal, cloud, cloud_servers, drivers, failures, images, k8s_config, labels,
    local_nodes, mesos_config, node_files, node_volumes, operations, registries)
from ansible_collections.openstack.magnum.plugins.module_utils.errors import MagnumError


def roles_dir():
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         '..', '..', 'roles'))


def driver_missing_roles(driver):
    try:
        return drivers.by_name(driver['name']).missing_roles(roles_dir())
    except (KeyError, TypeError, MagnumError) as exc:
        raise AnsibleFilterError('driver_missing_roles: %s' % exc)


def missing_roles(names):
    """The role names among ``names`` that this collection does not have."""
    if not isinstance(names, (list, tuple)):
        raise AnsibleFilterError('missing_roles: expected a list of role names')
    return [n for n in names if not os.path.isdir(os.path.join(roles_dir(), n))]


def magnum_labels(value):
    try:
        return labels.parse(value)
    except MagnumError as exc:
        raise AnsibleFilterError('magnum_labels: %s' % exc)


def k8s_document(conf, kind, node=None, endpoint=None, token=None, ca_cert_hash=None,
                 certificate_key=None, ca=None, resolv=None, fallback_resolv=None):
    """A Kubernetes driver configuration file as text: ``init`` / ``join`` (kubeadm
    YAML documents for ``node``), ``kubeconfig`` (the API at ``endpoint`` trusting ``ca``,
    with a bootstrap ``token`` if given), ``containerd`` (TOML), ``registry_hosts``
    (containerd's hosts.toml for the insecure registry) or ``resolv`` (the
    kubelet's resolv.conf from the node's ``resolv`` and the controller's
    ``fallback_resolv``)."""
    import yaml
    conf, node = _plain(conf), _plain(node)
    endpoint, token, ca_cert_hash, certificate_key, ca = [
        None if v is None else str(v) for v in (endpoint, token, ca_cert_hash, certificate_key, ca)]
    try:
        if kind == 'containerd':
            return k8s_config.containerd_config(conf)
        if kind == 'registry_hosts':
            return k8s_config.registry_hosts(conf)
        if kind == 'resolv':
            return k8s_config.resolv_conf(conf, str(resolv or ''), str(fallback_resolv or ''))
        if kind == 'init':
            docs = k8s_config.kubeadm_init(conf, node, endpoint)
        elif kind == 'kubeconfig':
            docs = [k8s_config.kubeconfig(endpoint, ca, token)]
        elif kind == 'join':
            docs = [k8s_config.kubeadm_join(conf, node, endpoint, token, ca_cert_hash,
                                            certificate_key)]
        else:
            raise AnsibleFilterError('k8s_document: unknown kind %r' % kind)
        return yaml.safe_dump_all(docs, default_flow_style=False, sort_keys=False)
    except MagnumError as exc:
        raise AnsibleFilterError('k8s_document: %s' % exc)


def k8s_calico_manifest(text, conf):
    """Calico's manifest for the cluster (k8s_config.calico_manifest), as text."""
    return k8s_config.calico_manifest(str(text), _plain(conf))


def _plain(value):
    """``value`` in plain Python types: Ansible hands over its own str subclasses,
    which YAML's safe dumper refuses."""
    import json
    return json.loads(json.dumps(value))


def k8s_pod_network(cluster, template):
    return str(k8s_config.pod_network(cluster, template))


def registry_host(value):
    return registries.host(value) or ''


def local_nodes_image_problem(create):
    """The local provider's refusal of the new nodes' images (the catalog from
    MAGNUM_IMAGE_CATALOG, as the API reads it), or ''."""
    return local_nodes.images_problem(create, images.catalog())


def _wrap(name, fn):
    def filter_fn(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MagnumError as exc:
            raise AnsibleFilterError('%s: %s' % (name, exc))
    return filter_fn


class FilterModule(object):
    def filters(self):
        return {'driver_missing_roles': driver_missing_roles, 'missing_roles': missing_roles,
                'driver_packages_held': _wrap('driver_packages_held', drivers.packages_held),
                'nodes_lacking_packages': _wrap('nodes_lacking_packages', drivers.nodes_lacking),
                'magnum_labels': magnum_labels,
                'master_lb_allowed_cidrs': _wrap('master_lb_allowed_cidrs',
                                                 labels.master_lb_allowed_cidrs),
                'local_subnet': _wrap('local_subnet', local_nodes.pick_subnet),
                'local_nodes_plan': _wrap('local_nodes_plan', local_nodes.plan),
                'local_nodes_existing': _wrap('local_nodes_existing',
                                              local_nodes.existing_nodes),
                'local_nodes_room': _wrap('local_nodes_room', local_nodes.room_problem),
                'local_nodes_image_problem': _wrap('local_nodes_image_problem',
                                                   local_nodes_image_problem),
                'provider_facts': _wrap('provider_facts', local_nodes.provider_facts),
                'servers_as_nodes': _wrap('servers_as_nodes', local_nodes.servers_as_nodes),
                'local_nodes_as_servers': _wrap('local_nodes_as_servers',
                                                local_nodes.nodes_as_servers),
                'cluster_stack_name': _wrap('cluster_stack_name', cloud.stack_name),
                'cluster_volumes': _wrap('cluster_volumes', cloud.node_volumes),
                'vm_servers': _wrap('vm_servers', cloud_servers.specs),
                'node_user_data': _wrap('node_user_data', cloud_servers.user_data),
                'server_floating_ips': _wrap('server_floating_ips',
                                             cloud_servers.floating_addresses),
                'floating_ip_nodes': _wrap('floating_ip_nodes', cloud_servers.floating_ip_nodes),
                'ssh_routes': _wrap('ssh_routes', cloud_servers.ssh_routes),
                'ssh_wait_outcome': _wrap('ssh_wait_outcome', cloud_servers.ssh_wait_outcome),
                'node_volume_list': _wrap('node_volume_list', node_volumes.of_node),
                'baremetal_servers': _wrap('baremetal_servers', baremetal.servers_for),
                'rebuild_plan': _wrap('rebuild_plan', images.rebuild_plan),
                'k8s_settings': _wrap('k8s_settings', k8s_config.settings),
                'k8s_pod_network': _wrap('k8s_pod_network', k8s_pod_network),
                'k8s_artifacts': _wrap('k8s_artifacts', k8s_config.artifact_source),
                'k8s_node_arch': _wrap('k8s_node_arch', k8s_config.node_arch),
                'k8s_calico_source': _wrap('k8s_calico_source', k8s_config.calico_source),
                'k8s_calico_manifest': _wrap('k8s_calico_manifest', k8s_calico_manifest),
                'k8s_emptiest_nodes': _wrap('k8s_emptiest_nodes', k8s_config.emptiest_nodes),
                'k8s_node_files': _wrap('k8s_node_files', k8s_config.node_files),
                'k8s_binary_files': _wrap('k8s_binary_files', k8s_config.binary_files),
                'registry_host': _wrap('registry_host', registry_host),
                'node_files_to_push': _wrap('node_files_to_push', node_files.files_to_push),
                'node_push_command': _wrap('node_push_command', node_files.push_command),
                'k8s_node_images': _wrap('k8s_node_images', k8s_config.node_images),
                'k8s_health': _wrap('k8s_health', k8s_config.health),
                'k8s_pause_tag': _wrap('k8s_pause_tag', k8s_config.pause_tag),
                'k8s_containerd_source': _wrap('k8s_containerd_source',
                                               k8s_config.containerd_source),
                'k8s_containerd_on_node': _wrap('k8s_containerd_on_node',
                                                k8s_config.containerd_tarball_on_node),
                'k8s_kubeadm': _wrap('k8s_kubeadm', k8s_config.kubeadm_command),
                'k8s_addons': _wrap('k8s_addons', addons.plan),
                'k8s_admin_kubeconfig': _wrap('k8s_admin_kubeconfig', k8s_config.admin_kubeconfig),
                'k8s_addon_charts': _wrap('k8s_addon_charts', addons.chart_sources),
                'k8s_addon_labels': _wrap('k8s_addon_labels', addons.upgrade_labels),
                'k8s_cloud_addons': _wrap('k8s_cloud_addons', addons.cloud_addons),
                'k8s_manifest': _wrap('k8s_manifest', addons.manifest_objects),
                'k8s_manifest_addons': _wrap('k8s_manifest_addons', addons.manifest_addons),
                'k8s_document': k8s_document,
                'mesos_settings': _wrap('mesos_settings', mesos_config.settings),
                'mesos_artifacts': _wrap('mesos_artifacts', mesos_config.artifact_source),
                'mesos_flag_files': _wrap('mesos_flag_files', mesos_config.flag_files),
                'mesos_health': _wrap('mesos_health', mesos_config.health),
                'mesos_maintenance': _wrap('mesos_maintenance', mesos_config.maintenance),
                'mesos_mirror_files': _wrap('mesos_mirror_files', mesos_config.mirror_files),
                'mesos_node_files': _wrap('mesos_node_files', mesos_config.node_files),
                'mesos_running_tasks': _wrap('mesos_running_tasks', mesos_config.running_tasks),
                'operation_plan': _wrap('operation_plan', operations.plan),
                'failure_reason': failures.failure_reason}
