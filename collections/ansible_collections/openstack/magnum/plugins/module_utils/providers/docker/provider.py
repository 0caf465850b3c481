# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The docker provider: nodes are systemd containers on the controller's Docker
engine, made by the role infra_docker (providers/contract.py, "Provider")."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import images
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers.contract import Provider
from ansible_collections.openstack.magnum.plugins.module_utils.providers.docker import (
    nodes as docker_nodes)


class DockerChecks(object):
    """What the docker provider refuses before a record is made: a template whose image it
    does not have, a cluster whose keypair's name cannot name a file."""

    @staticmethod
    def template(record):
        problem = docker_nodes.image_problem(record['image_id'], images.catalog())
        if problem:
            raise Invalid(problem)

    @staticmethod
    def cluster(cluster):
        problem = docker_nodes.keypair_problem(cluster.get('keypair'))
        if problem:
            raise Invalid(problem)


PROVIDER = Provider('docker', roles=('infra_docker',), checks=DockerChecks(), shared_disk=True)
