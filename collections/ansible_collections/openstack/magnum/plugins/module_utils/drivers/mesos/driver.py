# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mesos and Marathon (role mesos): its entry in the registry and what its nodes install."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as L
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
                  api_ports=(health.MASTER_PORT, health.MARATHON_PORT),
                  labels={'rexray_preempt': (L.BOOL, None),
                          'mesos_slave_isolation': (L.STR, None),
                          'mesos_slave_image_providers': (L.STR, ('appc', 'docker',
                                                                  'appc,docker')),
                          'mesos_slave_work_dir': (L.STR, None),
                          'mesos_slave_executor_env_variables': (L.STR, None)})
# The isolators mesos_slave_isolation may name.
ISOLATORS = (
    'filesystem/posix', 'filesystem/linux', 'filesystem/shared', 'posix/cpu',
    'posix/mem', 'posix/disk', 'cgroups/cpu', 'cgroups/mem', 'docker/runtime',
    'namespaces/pid')


def refuses(template, labels):
    """Isolators the agents do not have."""
    bad = [v for v in (labels.get('mesos_slave_isolation') or '').split(',')
           if v and v not in ISOLATORS]
    if bad:
        return ("Label mesos_slave_isolation: unknown isolator(s) %s; allowed: %s"
                % (', '.join(bad), ', '.join(ISOLATORS)))
    return None


DRIVER = Driver('mesos_debian', 'mesos', ('debian', 'ubuntu'), ('mesos',), facts=FACTS,
                refuse=refuses,
                packages=lambda labels: PACKAGES, preflight=True,
                health_reader=health.read)
