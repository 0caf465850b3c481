# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The strategy of the collection's operation plays: linear, except that a node a
delegated task cannot reach fails the task (its block's rescue then records the
operation *_FAILED, naming the node and its SSH error) instead of making the
controller's own host unreachable, which would end the play without the rescue and
leave the operation *_IN_PROGRESS when it runs from ansible-playbook."""

from __future__ import annotations

DOCUMENTATION = r"""
name: operation
short_description: Linear, where a node that a delegated task cannot reach fails the task
description:
  - The collection's operation plays run on the controller (C(localhost)) and delegate
    each step to the cluster's nodes. With the C(linear) strategy a node that cannot
    be reached makes the B(controller) unreachable, and an unreachable host ends the play
    without its block's C(rescue) - a cluster operation run from C(ansible-playbook)
    would stay C(*_IN_PROGRESS) with no reason.
  - This strategy is C(linear) in every other way; the result of a delegated task that
    could not reach its node (for a loop, of the items that could not) is a failure,
    with its C(unreachable) flag and message kept (and, outside a loop, the node's name in
    C(unreachable_node)), so the rescue runs and names the node and its SSH error.
  - Tasks with C(ignore_unreachable) keep Ansible's meaning (they handle unreachable
    results themselves); a task that is not delegated is not changed.
author:
  - openstack.magnum contributors (@openstack)
"""

from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule


def unreachable_node_fails(task_fields, data):
    """Make ``data``, the result of a task with ``task_fields``, a failure if the task is
    delegated, does not ignore unreachable hosts and could not reach its node (or, for a
    loop, some item could not)."""
    if not task_fields.get('delegate_to') or task_fields.get('ignore_unreachable'):
        return
    items = [item for item in data.get('results') or []
             if isinstance(item, dict) and item.get('unreachable')]
    if not (data.get('unreachable') or items):
        return
    for item in items:
        item['failed'] = True
    if not items:  # a loop's items name their nodes; here the task's delegate_to does
        data['unreachable_node'] = str(task_fields['delegate_to'])
    data['failed'] = True


# The modules every operation and health round runs (in the controller's worker process:
# plugins/action/in_controller.py). Ansible forks a worker for each task: imported once
# here, in the playbook's own process, before any fork, each worker finds them (and the
# store, SQLAlchemy, the core) imported instead of importing them again.
PRELOADED = ('cluster_operation', 'cluster_info', 'cluster_ca', 'cluster_health')


def preload():
    """Import the modules of PRELOADED; one that cannot be imported (a missing library)
    is left to fail in its task, saying so."""
    try:
        from ansible_collections.openstack.magnum.plugins.action.in_controller import (
            module_class)
    except ImportError:
        return
    for name in PRELOADED:
        try:
            module_class(name)
        except Exception:   # its task reports it
            pass
    try:   # the store's tables and SQL driver, made and imported once here, not per worker
        from ansible_collections.openstack.magnum.plugins.module_utils.core import store
        store.metadata()
        store.load_dialect()
    except Exception:   # no SQLAlchemy, or no driver for the URL: the modules' tasks say so
        pass


class StrategyModule(LinearStrategyModule):
    def __init__(self, tqm):
        super().__init__(tqm)
        preload()

    # Every result a worker sends passes here (ansible-core 2.19's strategy base) before
    # the strategy reads it; a release that renames it makes tests/test_unreachable_nodes.py
    # fail, not this plugin.
    def _convert_wire_task_result_to_raw(self, wire_task_result):
        unreachable_node_fails(wire_task_result.task_fields or {},
                               wire_task_result.return_data)
        return super()._convert_wire_task_result_to_raw(wire_task_result)
