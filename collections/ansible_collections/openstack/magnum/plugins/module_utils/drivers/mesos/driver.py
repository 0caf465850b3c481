# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mesos and Marathon (role mesos): its entry in the registry and what its nodes install."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import (
    Driver, coe_facts)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import health

# What roles/mesos installs from Debian (its mesos_zookeeper_packages and
# mesos_agent_packages; a unit test keeps them equal).
PACKAGES = ('zookeeper', 'zookeeperd', 'docker.io')

# Magnum's API took a storage driver for every COE (devicemapper by default; its Mesos
# driver did not use it), and python-magnumclient sends overlay2 by default: taken. Mesos'
# agents run their containers with Docker, whose storage driver it is. Its API: the
# master's, and Marathon's.
FACTS = coe_facts(('docker',), 'docker', ('rexray',), health.MASTER_PORT,
                  api_ports=(health.MASTER_PORT, health.MARATHON_PORT))

DRIVER = Driver('mesos_debian', 'mesos', ('debian', 'ubuntu'), ('mesos',), facts=FACTS,
                packages=lambda labels: PACKAGES, preflight=True,
                health_reader=health.read)
