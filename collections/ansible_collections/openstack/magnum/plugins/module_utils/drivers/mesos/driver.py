# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mesos and Marathon (role mesos): its entry in the registry and what its nodes install."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import Driver
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import health

# What roles/mesos installs from Debian (its mesos_zookeeper_packages and
# mesos_agent_packages; a unit test keeps them equal).
PACKAGES = ('zookeeper', 'zookeeperd', 'docker.io')

DRIVER = Driver('mesos_debian', 'mesos', ('debian', 'ubuntu'), ('mesos',),
                packages=lambda labels: PACKAGES, preflight=True,
                health_reader=health.read)
