# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a driver is: the data the registry (drivers.py) holds for each, and the checks
that data makes. Each driver declares its own (module_utils/drivers/<driver>/driver.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Invalid, NotSupported)

SERVER_TYPES = ('vm', 'bm')
COES = ('kubernetes', 'swarm', 'mesos')

COE_FACTS = {
    'kubernetes': {
        # Magnum 23's list: what its API takes; each driver refuses what it cannot deploy
        # (the kubeadm driver cilium), in Magnum's words for a driver not allowed.
        'network_drivers': ('flannel', 'calico', 'cilium'), 'default_network_driver': 'flannel',
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
                 own_infrastructure=False, cannot=None, packages=None, preflight=False,
                 image_check=None, health_reader=None):
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
        # image_check(image, properties, template): raise Invalid (400) for a node image
        # whose Glance properties say it cannot serve the template (the kubeadm driver: a
        # release image of another kube_tag, when the operator requires release images).
        self.image_check = image_check
        # health_reader(cluster, template, nodes, http) -> {'status', 'reason'}, or None
        # when only the playbook can tell: the conductor's health rounds without a
        # playbook (module_utils/core/health.py; its drivers/<driver>/health.py).
        self.health_reader = health_reader

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

    def check_image(self, image, properties, template):
        """The template's node image, by its Glance ``properties``: the packages it lists
        (check_image_packages), then the driver's own image_check."""
        listed = (properties or {}).get('magnum_packages')
        self.check_image_packages(image, None if listed is None else set(str(listed).split()),
                                  template)
        if self.image_check:
            self.image_check(image, properties or {}, template)

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

    def handles(self, coe, server_type, os_distro, labels=None, registry=()):
        """Whether it serves the triple; ``registry``: the other drivers, whose choosing
        label in ``labels`` takes the triple from this one."""
        chosen = bool(self.chosen_by_label) and (labels or {}).get(self.chosen_by_label) \
            not in (None, '')
        others = [d.chosen_by_label for d in registry if d.chosen_by_label and d is not self
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
