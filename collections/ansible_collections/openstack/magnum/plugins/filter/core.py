# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The core's filters: drivers and their roles, labels, operation plans, failures, files
# for nodes. Documentation: one YAML file per filter in this folder.

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    failures, fields, images, labels, node_files, node_steps, node_values, operations,
    registries)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import DRIVERS
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


def driver_missing_roles(driver):
    try:
        return DRIVERS.by_name(driver['name']).missing_roles(operations.roles_dir())
    except (KeyError, TypeError, MagnumError) as exc:
        raise AnsibleFilterError('driver_missing_roles: %s' % exc)


def missing_roles(names):
    """The role names among ``names`` that this collection does not have."""
    if not isinstance(names, (list, tuple)):
        raise AnsibleFilterError('missing_roles: expected a list of role names')
    return operations.missing_roles(names)


def operation_plan(driver, operation, provider, coe=True):
    """The step plan of ``operation`` for ``driver`` on the provider named ``provider``."""
    return operations.plan(driver, operation, registry.by_name(provider), coe)


def cluster_create_input(variables):
    """The create fields among ``variables`` (but the name, which names the cluster)."""
    if not isinstance(variables, Mapping):
        raise AnsibleFilterError('cluster_create_input: expected a mapping of variables')
    return fields.given_in(variables, [f for f in fields.CLUSTER_CREATE_INPUT if f != 'name'])


def registry_host(value):
    return registries.host(value) or ''


class FilterModule(object):
    def filters(self):
        table = wrap_all({
            'dns_servers': node_values.dns_servers,
            'driver_packages_held': DRIVERS.packages_held,
            'nodes_lacking_packages': node_steps.nodes_lacking,
            'node_job': node_steps.job_result,
            'node_job_poll': node_steps.job_poll_command,
            'magnum_labels': labels.parse,
            'master_lb_allowed_cidrs': labels.master_lb_allowed_cidrs,
            'rebuild_plan': images.rebuild_plan,
            'node_files_to_push': node_files.files_to_push,
            'node_push_command': node_files.push_command,
            'node_push_report': node_files.push_report,
            'operation_plan': operation_plan,
            'systemd_environment': node_values.systemd_environment,
        })
        table.update(cluster_create_input=cluster_create_input,
                     driver_missing_roles=driver_missing_roles, missing_roles=missing_roles,
                     registry_host=registry_host, failure_reason=failures.failure_reason)
        return table
