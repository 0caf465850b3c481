# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a driver is: the data each driver declares (module_utils/drivers/<driver>/driver.py),
and the checks that data makes. The core knows no driver: module_utils/drivers/registry.py
lists them and hands them to it (core/drivers.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    ClusterTypeNotSupported, Invalid, NotSupported)

SERVER_TYPES = ('vm', 'bm')

# Minimum docker_volume_size (GB) per storage driver.
VOLUME_MINIMUM = {'devicemapper': 3, 'overlay': 1, 'overlay2': 1}


def coe_facts(network_drivers, default_network_driver, volume_drivers, api_port,
              api_ports=None, storage_drivers=('devicemapper', 'overlay', 'overlay2'),
              default_storage_driver='devicemapper', labels=None, check_labels=None):
    """What Magnum's API takes for a COE's templates (the choices of network, volume and
    storage drivers, their defaults), where its API listens (``api_ports``: the ports a
    load balancer in front of the masters serves, the first the API's) and the labels the
    user guide gives its clusters (``labels``: name -> (kind, allowed values or None), the
    kinds of core/labels.py), whose values the core checks, and the rules among them
    (``check_labels(labels, **context)``, raising Invalid; core/labels.py's validate says
    the context)."""
    return {'labels': dict(labels or {}), 'check_labels': check_labels,
            'network_drivers': tuple(network_drivers),
            'default_network_driver': default_network_driver,
            'volume_drivers': tuple(volume_drivers),
            'storage_drivers': tuple(storage_drivers),
            'default_storage_driver': default_storage_driver, 'api_port': api_port,
            'api_ports': tuple(api_ports or (api_port,))}


class Driver(object):
    def __init__(self, name, coe, os_distros, roles, facts=None, server_types=SERVER_TYPES,
                 refuse=None, picks_nodes_to_remove=False, rebuilds_nodes=False,
                 chosen_by_label=None, own_infrastructure=False, cannot=None, packages=None,
                 preflight=False, image_check=None, health_reader=None, own_labels=None):
        self.name = name
        self.coe = coe
        # The COE's facts (coe_facts()); a second driver of a COE leaves them to the one
        # that declares them (the registry hands them over: Drivers).
        self.facts = facts
        # Labels only this driver reads (as coe_facts' labels): the other drivers of its
        # COE refuse them.
        self.own_labels = dict(own_labels or {})
        # The other drivers of its COE (set by Drivers).
        self.siblings = ()
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
        equivalent for, rather than accept it and ignore it: another driver's own labels
        of its COE, then what its ``refuse`` finds."""
        labels = labels or {}
        for other in self.siblings:
            theirs = sorted(k for k in other.own_labels
                            if k not in self.own_labels and labels.get(k) not in (None, ''))
            if theirs:
                raise Invalid(
                    "Labels %s are driver %s's%s; driver %s does not use them - unset them."
                    % (', '.join(theirs), other.name,
                       ' (a template with the %s label)' % other.chosen_by_label
                       if other.chosen_by_label else '', self.name))
        reason = self.refuse(template, labels) if self.refuse else None
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
        facts = self.facts
        data = {'name': self.name, 'coe': self.coe, 'os_distros': list(self.os_distros),
                'server_types': list(self.server_types), 'roles': list(self.roles),
                'picks_nodes_to_remove': self.picks_nodes_to_remove,
                'rebuilds_nodes': self.rebuilds_nodes,
                'own_infrastructure': self.own_infrastructure,
                'preflight': self.preflight,
                # The masters' ports a load balancer in front of them serves.
                'api_ports': list(facts['api_ports'])}
        if roles_dir is not None:
            missing = self.missing_roles(roles_dir)
            data['installed'] = not missing
            data['missing_roles'] = missing
        return data


class Drivers(object):
    """The drivers a deployment has, as the registry lists them: each driver of a COE
    that declares no facts takes those of the one that does, and knows the others of its
    COE (whose own labels it refuses)."""

    def __init__(self, drivers):
        self.drivers = tuple(drivers)
        facts = {}
        for driver in self.drivers:
            if driver.facts is not None:
                facts.setdefault(driver.coe, driver.facts)
        self.facts = facts
        labels = {}
        for declared in [f['labels'] for f in facts.values()] + [
                d.own_labels for d in self.drivers]:
            for name, kind in declared.items():
                if labels.setdefault(name, kind) != kind:
                    raise ValueError("Label %s is declared twice, differently." % name)
        # Every label a driver declares (its COE's, its own): name -> (kind, allowed).
        self.labels = labels
        # The COEs, in the registry's order.
        self.coes = tuple(sorted(facts, key=[d.coe for d in self.drivers].index))
        for driver in self.drivers:
            if driver.coe not in facts:
                raise ValueError("No driver of COE %s declares its facts." % driver.coe)
            driver.facts = facts[driver.coe]
            driver.siblings = tuple(d for d in self.drivers
                                    if d is not driver and d.coe == driver.coe)

    def __iter__(self):
        return iter(self.drivers)

    def __len__(self):
        return len(self.drivers)

    def find(self, coe, server_type, os_distro, labels=None):
        """The driver for a triple (and the template's ``labels``, which may pick one), or
        raise Magnum's 400."""
        for driver in self.drivers:
            if driver.handles(coe, server_type, os_distro, labels, self.drivers):
                return driver
        raise ClusterTypeNotSupported(server_type, os_distro, coe)

    def by_name(self, name):
        for driver in self.drivers:
            if driver.name == name:
                return driver
        raise Invalid("Unknown driver %s." % name)

    def coe_facts(self, coe):
        if coe not in self.facts:
            raise Invalid("Invalid input for field/attribute coe. Value: '%s'. "
                          "Value should be one of: %s" % (coe, ', '.join(self.coes)))
        return self.facts[coe]

    def packages_held(self, installed):
        """Of ``installed`` (an image's package names), those a driver's nodes may need:
        what the image's Glance property magnum_packages lists."""
        needed = set(p for d in self.drivers for p in d.node_packages({}))
        return sorted(set(installed) & needed)
