# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Driver registry: (coe, server_type, os_distro) -> driver, and its roles.

A driver is data plus roles. The registry declares which triples the project
knows; a driver is *installed* when every role it names is present in the
collection. A triple with no declared driver is refused at request time with
Magnum's "Cluster type (...) not supported"; a declared driver whose roles are
missing makes the operation end ``*_FAILED`` with the reason.

Each driver declares itself in its folder (module_utils/drivers/<driver>/driver.py:
``DRIVER``, what it refuses, what its nodes install); this module lists them, in the order
they are asked. What a driver is, and the per-COE facts (allowed network/volume/storage
drivers, their defaults, the API port), are driver_spec.py's.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import (
    COE_FACTS, COES)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    ClusterTypeNotSupported, Invalid)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import (
    driver as capi_driver)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    driver as kubeadm_driver)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import (
    driver as mesos_driver)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import (
    driver as swarm_driver)

REGISTRY = (kubeadm_driver.DRIVER, capi_driver.DRIVER, swarm_driver.DRIVER, mesos_driver.DRIVER)


def nodes_lacking(results):
    """The nodes (loop items) of a task looped over nodes that ran
    ``dpkg-query -W -f '${db:Status-Abbrev}\\n' <packages>`` on which a package is not
    installed (unknown to dpkg, removed, half-installed): those whose package step
    refreshes its lists and installs - the others' (a node image holding them, where no
    mirror may be reachable) touch nothing."""
    return [r.get('item') for r in results or []
            if node_steps.lacks_packages(r.get('rc'), r.get('stdout_lines') or [])]


def packages_held(installed):
    """Of ``installed`` (an image's package names), those a driver's nodes may need:
    what the image's Glance property magnum_packages lists."""
    needed = set(p for d in REGISTRY for p in d.node_packages({}))
    return sorted(set(installed) & needed)


def find(coe, server_type, os_distro, labels=None):
    """The driver for a triple (and the template's ``labels``, which may pick one), or
    raise Magnum's 400."""
    for driver in REGISTRY:
        if driver.handles(coe, server_type, os_distro, labels, REGISTRY):
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
