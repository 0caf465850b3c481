# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drivers this collection has, each the declaration of its folder
(drivers/<driver>/driver.py; static imports, as Ansible's module packaging needs them), in
the order they are asked for a (coe, server_type, os_distro) triple - handed to the core
(core/drivers.py) when this is imported. A new driver is a folder, a role and a line here."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import drivers
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import (
    driver as capi)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    driver as kubeadm)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import (
    driver as mesos)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import (
    driver as swarm)

DRIVERS = drivers.hand((kubeadm.DRIVER, capi.DRIVER, swarm.DRIVER, mesos.DRIVER))
# The COEs the drivers serve (the cluster_template module's choices).
COES = DRIVERS.coes
