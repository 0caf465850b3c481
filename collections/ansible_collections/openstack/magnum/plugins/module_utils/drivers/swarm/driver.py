# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Docker Swarm mode (role swarm): its entry in the registry, what it refuses and what its
nodes install."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as L
from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import (
    Driver, coe_facts)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import health

# What roles/swarm installs from Debian (its swarm_packages; a unit test keeps them equal).
PACKAGES = ('docker.io',)


def refuses(template, labels):
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


# What Magnum's API takes for Swarm templates; its API: the Docker API with TLS and without;
# the labels the user guide gives Swarm clusters.
FACTS = coe_facts(('docker', 'flannel'), 'docker', ('rexray',), health.TLS_PORT,
                  api_ports=(health.TLS_PORT, health.PLAIN_PORT),
                  labels={'swarm_strategy': (L.STR, ('spread', 'binpack', 'random')),
                          'rexray_preempt': (L.BOOL, None)})

DRIVER = Driver('swarm_mode', 'swarm', ('debian', 'ubuntu'), ('swarm',), facts=FACTS,
                refuse=refuses,
                packages=lambda labels: PACKAGES, health_reader=health.read)
