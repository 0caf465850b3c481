# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Driver registry: (coe, server_type, os_distro) -> driver, and its roles.

A driver is data plus roles. The registry declares which triples the project
knows; a driver is *installed* when every role it names is present in the
collection. A triple with no declared driver is refused at request time with
Magnum's "Cluster type (...) not supported"; a declared driver whose roles are
missing makes the operation end ``*_FAILED`` with the reason.

Per-COE facts (allowed network/volume/storage drivers, their defaults and the
API port) live here too, because they are what a driver supports.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.openstack.magnum.plugins.module_utils import addons, capi, k8s_config
from ansible_collections.openstack.magnum.plugins.module_utils import labels as labels_mod
from ansible_collections.openstack.magnum.plugins.module_utils.errors import (
    ClusterTypeNotSupported, Invalid, NotSupported)

COES = ('kubernetes', 'swarm', 'mesos')
SERVER_TYPES = ('vm', 'bm')

COE_FACTS = {
    'kubernetes': {
        'network_drivers': ('flannel', 'calico'), 'default_network_driver': 'flannel',
        'volume_drivers': ('cinder', 'unspecified'),  # Magnum 23's: 'unspecified' is none
        'storage_drivers': ('devicemapper', 'overlay', 'overlay2'),
        'default_storage_driver': 'devicemapper', 'api_port': 6443,
    },
    'swarm': {
        'network_drivers': ('docker', 'flannel'), 'default_network_driver': 'docker',
        'volume_drivers': ('rexray',),
        'storage_drivers': ('devicemapper', 'overlay', 'overlay2'),
        'default_storage_driver': 'devicemapper', 'api_port': 2376,
        # The Docker API with TLS, and without it (tls_disabled).
        'api_ports': (2376, 2375),
    },
    # Magnum's API took a storage driver for every COE (devicemapper by default; its Mesos
    # driver did not use it), and python-magnumclient sends overlay2 by default: taken.
    # Mesos' agents run their containers with Docker, whose storage driver it is.
    'mesos': {
        'network_drivers': ('docker',), 'default_network_driver': 'docker',
        'volume_drivers': ('rexray',),
        'storage_drivers': ('devicemapper', 'overlay', 'overlay2'),
        'default_storage_driver': 'devicemapper', 'api_port': 5050, 'api_ports': (5050, 8080),
    },
}

# Minimum docker_volume_size (GB) per storage driver.
VOLUME_MINIMUM = {'devicemapper': 3, 'overlay': 1, 'overlay2': 1}


class Driver(object):
    def __init__(self, name, coe, os_distros, roles, server_types=SERVER_TYPES, refuse=None,
                 picks_nodes_to_remove=False, rebuilds_nodes=False, chosen_by_label=None,
                 own_infrastructure=False, cannot=None, packages=None, preflight=False):
        self.name = name
        self.coe = coe
        self.os_distros = tuple(os_distros)
        self.server_types = tuple(server_types)
        self.roles = tuple(roles)
        # check(template, labels) -> reason, for options the driver cannot honour.
        self.refuse = refuse
        # Its roles' tasks/removal_order.yml names the nodes a shrink that names none
        # removes (magnum_nodes_to_remove), before the provider plans.
        self.picks_nodes_to_remove = picks_nodes_to_remove
        # Its roles' tasks/rebuild_leave.yml and rebuild_join.yml take one node
        # (magnum_rebuild_node) out of the COE before the provider rebuilds it on a new
        # image and back in after: an upgrade to a template with another image.
        self.rebuilds_nodes = rebuilds_nodes
        # A template label whose presence picks this driver over the others of its
        # triple (which only templates without it get).
        self.chosen_by_label = chosen_by_label
        # No infrastructure provider role runs for it: it builds its servers itself.
        self.own_infrastructure = own_infrastructure
        # Operations it cannot carry out: {operation: why} (refused with a 400).
        self.cannot = dict(cannot or {})
        # packages(labels) -> the Debian packages its roles install on the nodes (none
        # when the image has them): what a node image without a mirror must hold.
        self.packages = packages
        # Its roles' tasks/preflight.yml find what the nodes will need (artifacts, for
        # the architecture the provider's image is) before the provider makes any node:
        # a create, resize or node group create that cannot have them fails with nothing
        # made.
        self.preflight = preflight

    def node_packages(self, labels):
        """The Debian packages the nodes must have or install, Python (Ansible's)
        included; none for a driver that builds its own servers."""
        if self.own_infrastructure:
            return []
        return sorted(set(['python3'] + list(self.packages(labels or {}) if self.packages
                                             else [])))

    def check_image_packages(self, image, held, template):
        """Refuse (400) an image that lists the packages it holds (``held``: Glance's
        ``magnum_packages``, which playbooks/cloud_image.yml sets; None for an image that
        lists none, taken as it is) and lacks some the nodes need, when the template
        names no proxy the nodes could install them through."""
        if held is None or template.get('http_proxy') or template.get('https_proxy'):
            return
        lacking = [p for p in self.node_packages(template.get('labels')) if p not in held]
        if lacking:
            raise Invalid(
                "Image %s lacks packages the %s driver needs on its nodes: %s (its Glance "
                "property magnum_packages lists what it holds). Upload a node image that "
                "holds them (ansible-playbook playbooks/cloud_image.yml builds one), or give "
                "the template an http_proxy or https_proxy through which the nodes can "
                "install them." % (image, self.name, ', '.join(lacking)))

    def check(self, template, labels):
        """Raise Invalid (400) for a template/label option this driver has no
        equivalent for, rather than accept it and ignore it."""
        reason = self.refuse(template, labels or {}) if self.refuse else None
        if reason:
            raise Invalid("%s (driver %s)." % (reason, self.name))

    def check_operation(self, operation):
        """Raise NotSupported (400) for an operation this driver cannot carry out."""
        if operation in self.cannot:
            raise NotSupported("%s (driver %s)." % (self.cannot[operation], self.name))

    def handles(self, coe, server_type, os_distro, labels=None):
        chosen = bool(self.chosen_by_label) and (labels or {}).get(self.chosen_by_label) \
            not in (None, '')
        others = [d.chosen_by_label for d in REGISTRY if d.chosen_by_label and d is not self
                  and (labels or {}).get(d.chosen_by_label) not in (None, '')]
        if self.chosen_by_label and not chosen or others:
            return False
        return (coe == self.coe and server_type in self.server_types
                and os_distro in self.os_distros)

    def missing_roles(self, roles_dir):
        return [r for r in self.roles if not os.path.isdir(os.path.join(roles_dir, r))]

    def as_dict(self, roles_dir=None):
        facts = COE_FACTS[self.coe]
        data = {'name': self.name, 'coe': self.coe, 'os_distros': list(self.os_distros),
                'server_types': list(self.server_types), 'roles': list(self.roles),
                'picks_nodes_to_remove': self.picks_nodes_to_remove,
                'rebuilds_nodes': self.rebuilds_nodes,
                'own_infrastructure': self.own_infrastructure,
                'preflight': self.preflight,
                # The masters' ports a load balancer in front of them serves.
                'api_ports': list(facts.get('api_ports', (facts['api_port'],)))}
        if roles_dir is not None:
            missing = self.missing_roles(roles_dir)
            data['installed'] = not missing
            data['missing_roles'] = missing
        return data


def _swarm_mode_refuses(template, labels):
    """Options of Magnum's legacy Swarm that swarm mode cannot honour (README,
    "Swarm: template and label mapping")."""
    if labels.get('swarm_strategy') not in (None, '', 'spread'):
        return ("Label swarm_strategy=%s is not supported: the swarm mode scheduler always "
                "spreads tasks over the nodes; use spread or leave it unset"
                % labels['swarm_strategy'])
    if template.get('registry_enabled'):
        return ("registry_enabled is not supported: Magnum's Swift-backed registry has no "
                "equivalent here; run a registry service on the cluster instead")
    return None


def _kubeadm_refuses(template, labels):
    """The add-ons the user guide's labels name that this driver does not deploy yet
    (addons.NOT_DEPLOYED): refused together, never silently ignored."""
    found = addons.not_deployed(labels)
    if found:
        return ("The Kubernetes driver does not deploy these add-ons yet: %s. Unset them (or "
                "set them false) - docs, \"Kubernetes add-ons\", lists what it deploys"
                % ', '.join(found))
    theirs = sorted(k for k in capi.OWN_LABELS if labels.get(k) not in (None, ''))
    if theirs:
        return ("Labels %s are the Cluster API driver's (a template with the "
                "capi_helm_chart_version label); this driver does not use them - unset them"
                % ', '.join(theirs))
    if labels.get('cert_manager_api') not in (None, '') and \
            not labels_mod.to_bool(labels['cert_manager_api']):
        # Magnum's cert_manager_api=true gave the controller manager the cluster CA to sign
        # CertificateSigningRequests; kubeadm always does (kubelets join by TLS bootstrap).
        return ("Label cert_manager_api=%s cannot be honoured: the controller manager signs "
                "certificate signing requests with the cluster's CA on every kubeadm cluster "
                "(nodes join through it); leave the label unset or true"
                % labels['cert_manager_api'])
    return None


def _kubeadm_packages(labels):
    """roles/kubernetes' kubernetes_packages: containerd and runc are Debian's unless the
    labels (or a release from 1.37) take containerd's release tarball."""
    tarball = labels.get('containerd_version') or labels.get('containerd_tarball_url') or \
        k8s_config.parse_version(labels.get('kube_tag') or k8s_config.DEFAULT_KUBE_TAG)[:2] \
        >= k8s_config.CONTAINERD_TARBALL_FROM
    return KUBEADM_PACKAGES + (() if tarball else ('containerd', 'runc'))


# What each driver's roles install from Debian (their defaults: kubernetes_packages,
# swarm_packages, mesos_zookeeper_packages + mesos_agent_packages; a unit test keeps them
# equal).
KUBEADM_PACKAGES = ('containernetworking-plugins', 'conntrack', 'iptables', 'socat', 'ethtool',
                    'ebtables')
SWARM_PACKAGES = ('docker.io',)
MESOS_PACKAGES = ('zookeeper', 'zookeeperd', 'docker.io')

REGISTRY = (
    Driver('k8s_kubeadm', 'kubernetes', ('debian', 'ubuntu'), ('kubernetes',),
           picks_nodes_to_remove=True, rebuilds_nodes=True, refuse=_kubeadm_refuses,
           packages=_kubeadm_packages, preflight=True),
    # Kubernetes through Cluster API (docs "Clusters through Cluster API"): a template
    # with the capi_helm_chart_version label, as magnum-capi-helm's templates have.
    Driver('k8s_capi_helm', 'kubernetes', ('ubuntu', 'flatcar', 'debian'), ('capi_helm',),
           server_types=('vm',), chosen_by_label='capi_helm_chart_version',
           own_infrastructure=True, cannot={
               'ca_rotate': "Rotating the CA of a Cluster API cluster is not supported: Cluster "
                            "API's control plane keeps the CA it was given for the cluster's "
                            "life"}),
    Driver('swarm_mode', 'swarm', ('debian', 'ubuntu'), ('swarm',),
           refuse=_swarm_mode_refuses, packages=lambda labels: SWARM_PACKAGES),
    Driver('mesos_debian', 'mesos', ('debian', 'ubuntu'), ('mesos',),
           packages=lambda labels: MESOS_PACKAGES, preflight=True),
)


def nodes_lacking(results):
    """The nodes (loop items) of a task looped over nodes that ran
    ``dpkg-query -W -f '${db:Status-Abbrev}\\n' <packages>`` on which a package is not
    installed (unknown to dpkg, removed, half-installed): those whose package step
    refreshes its lists and installs - the others' (a node image holding them, where no
    mirror may be reachable) touch nothing."""
    return [r.get('item') for r in results or []
            if r.get('rc') != 0 or not (r.get('stdout_lines') or [])
            or any(not line.startswith('ii') for line in r['stdout_lines'])]


def packages_held(installed):
    """Of ``installed`` (an image's package names), those a driver's nodes may need:
    what the image's Glance property magnum_packages lists."""
    needed = set(p for d in REGISTRY for p in d.node_packages({}))
    return sorted(set(installed) & needed)


def find(coe, server_type, os_distro, labels=None):
    """The driver for a triple (and the template's ``labels``, which may pick one), or
    raise Magnum's 400."""
    for driver in REGISTRY:
        if driver.handles(coe, server_type, os_distro, labels):
            return driver
    raise ClusterTypeNotSupported(server_type, os_distro, coe)


def by_name(name):
    for driver in REGISTRY:
        if driver.name == name:
            return driver
    raise Invalid("Unknown driver %s." % name)


def coe_facts(coe):
    if coe not in COE_FACTS:
        raise Invalid("Invalid input for field/attribute coe. Value: '%s'. "
                      "Value should be one of: %s" % (coe, ', '.join(COES)))
    return COE_FACTS[coe]
