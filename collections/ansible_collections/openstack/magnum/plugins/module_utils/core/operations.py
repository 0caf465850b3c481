# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operations: one record each (its playbook, its statuses and the statuses it may
start from), and an operation's step plan - which roles run which of their tasks files,
in order.

A job carries out one operation by running its record's playbook (api/jobqueue.py);
roles/cluster_operation loops over the plan (operation_run.start gives it). The rules
live here, unit tested for every driver, provider and operation. The infrastructure provider builds (``infra_<provider>``,
none when the provider is ``none`` or the driver builds its servers itself), the COE
roles configure, then the provider removes the servers the COE let go (drained); a
delete runs the COE roles first and the provider last. Before a resize, a driver that
picks the nodes a shrink removes names them (``removal_order``). An operation that makes
nodes, for a driver with a preflight, first has the provider prepare (its checks, and the
architecture of the nodes it will make: ``magnum_node_machine``), then the COE roles find
what those nodes will need (``preflight``): when that cannot be had, nothing is made.
Neither runs when no provider makes the nodes (provider ``none`` for a driver that does not
bring its own infrastructure): they would read nodes, or fetch for nodes, that never are.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
from collections import namedtuple

from ansible_collections.openstack.magnum.plugins.module_utils.core import states
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

# ``statuses``: (while it runs, on success, on failure) and ``allowed_from``: the statuses
# it may start from, both the state machine's (core/states.py) - None for a federation's,
# whose statuses are the federation's own. ``action``: what its playbook is told to do to
# its resource (a federation's create, update or delete; a cluster's operation, itself).
Operation = namedtuple('Operation', 'name playbook statuses allowed_from action')


def _operation(name, playbook, action=None):
    return Operation(name, playbook, states.OPERATIONS.get(name), states.ALLOWED_FROM.get(name),
                     action or name)


RECORDS = dict((record.name, record) for record in (
    _operation('create', 'cluster_create.yml'),
    _operation('delete', 'cluster_delete.yml'),
    _operation('resize', 'cluster_resize.yml'),
    _operation('upgrade', 'cluster_upgrade.yml'),
    _operation('ca_rotate', 'ca_rotate.yml'),
    _operation('nodegroup_create', 'nodegroup_create.yml'),
    _operation('nodegroup_delete', 'nodegroup_delete.yml'),
    _operation('federation_create', 'federation.yml', 'create'),
    _operation('federation_update', 'federation.yml', 'update'),
    _operation('federation_delete', 'federation.yml', 'delete'),
))
# A cluster's operations: each runs roles/cluster_operation over its step plan.
OPERATIONS = tuple(name for name, record in RECORDS.items() if record.statuses)


def record(name):
    """The record of operation ``name``."""
    try:
        return RECORDS[name]
    except KeyError:
        raise Invalid("Unknown operation %r: one of %s." % (name, ', '.join(RECORDS)))


# Not an operation (no status of its own): the health round's steps, planned alike.
HEALTH = 'health'
# The role that runs the plan; an upgrade's last step is its own (tasks/rebuild.yml: the
# servers not on the new template's image rebuilt one at a time, through the provider's
# and the driver's rebuild steps).
OWN_ROLE = 'cluster_operation'
# The operations whose provider makes nodes.
MAKE_NODES = ('create', 'resize', 'nodegroup_create')


def plan(driver, operation, provider, coe=True):
    """{'provider_roles', 'driver_roles', 'steps': [[role, tasks file], ...]} of
    ``operation`` (or of the health round, ``health``) for ``driver`` on ``provider`` (its
    descriptor, providers/contract.py: the core asks it for its roles, never its name);
    ``coe`` false runs the infrastructure alone (playbooks/cluster_infra.yml)."""
    if operation not in OPERATIONS + (HEALTH,):
        raise Invalid("Unknown operation %r: one of %s." % (operation, ', '.join(OPERATIONS)))
    infra = provider.plan_roles(driver)
    cluster = list(driver.get('roles') or []) if coe else []
    if operation == HEALTH:
        # the provider's view of the servers, then the COE's of its nodes
        steps = [[role, HEALTH] for role in infra + cluster]
    elif operation == 'delete':
        steps = [[role, 'delete'] for role in cluster + infra]
    else:
        # With no provider to make its servers (provider none, for a driver that does not
        # bring its own), the COE roles read no node and fetch nothing for nodes that will
        # never be: no removal order, no preflight - the operation's own step says why it
        # cannot go on.
        nodes = bool(infra) or bool(driver.get('own_infrastructure'))
        picks = operation == 'resize' and driver.get('picks_nodes_to_remove') and nodes
        preflight = operation in MAKE_NODES and driver.get('preflight') and cluster and nodes
        steps = ([[role, 'removal_order'] for role in cluster] if picks else []) \
            + ([[role, 'prepare'] for role in infra]
               + [[role, 'preflight'] for role in cluster] if preflight else []) \
            + [[role, operation] for role in infra] \
            + [[role, operation] for role in cluster] \
            + [[role, 'remove_nodes'] for role in infra] \
            + ([[OWN_ROLE, 'rebuild']] if operation == 'upgrade' else [])
    return {'provider_roles': infra, 'driver_roles': cluster, 'steps': steps}


def roles_dir():
    """The collection's roles: a driver or provider is installed when its roles are."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, '..', '..', '..', 'roles'))


def missing_roles(names, where=None):
    """The role names among ``names`` that the collection (``where``) lacks."""
    where = where or roles_dir()
    return [name for name in names if not os.path.isdir(os.path.join(where, name))]
