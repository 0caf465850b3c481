# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drivers the core is handed: (coe, server_type, os_distro) -> driver, and its roles.

A driver is data plus roles. The registry (module_utils/drivers/registry.py, outside the
core) lists the drivers the collection has and hands them here when it is imported - every
entry point imports it: the API, the modules' base, the filters; the core imports no
driver. A driver is *installed* when every role it names is present in the collection. A
triple no driver serves is refused at request time with Magnum's "Cluster type (...) not
supported"; a driver whose roles are missing makes the operation end ``*_FAILED`` with the
reason. What a driver is, and its COE's facts (allowed network/volume/storage drivers,
their defaults, the API port), are driver_spec.py's.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import Drivers

_HANDED = []


def hand(drivers):
    """Give the core the deployment's drivers (a sequence of driver_spec.Driver)."""
    _HANDED[:] = [Drivers(drivers)]
    return _HANDED[0]


def registry():
    """The drivers handed to the core (a driver_spec.Drivers)."""
    if not _HANDED:
        raise RuntimeError("No drivers were handed to the core: import "
                           "module_utils.drivers.registry first.")
    return _HANDED[0]


def find(coe, server_type, os_distro, labels=None):
    return registry().find(coe, server_type, os_distro, labels)


def by_name(name):
    return registry().by_name(name)


def coe_facts(coe):
    return registry().coe_facts(coe)
