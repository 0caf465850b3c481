# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Statuses and the state machine of clusters, node groups and federations.

One rule, one place: which operation may start from which status, what
status an operation sets while it runs, and what it ends in.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import errors

CREATE_IN_PROGRESS = 'CREATE_IN_PROGRESS'
CREATE_FAILED = 'CREATE_FAILED'
CREATE_COMPLETE = 'CREATE_COMPLETE'
UPDATE_IN_PROGRESS = 'UPDATE_IN_PROGRESS'
UPDATE_FAILED = 'UPDATE_FAILED'
UPDATE_COMPLETE = 'UPDATE_COMPLETE'
DELETE_IN_PROGRESS = 'DELETE_IN_PROGRESS'
DELETE_FAILED = 'DELETE_FAILED'
DELETE_COMPLETE = 'DELETE_COMPLETE'
RESUME_COMPLETE = 'RESUME_COMPLETE'
RESUME_FAILED = 'RESUME_FAILED'
RESTORE_COMPLETE = 'RESTORE_COMPLETE'
ROLLBACK_IN_PROGRESS = 'ROLLBACK_IN_PROGRESS'
ROLLBACK_FAILED = 'ROLLBACK_FAILED'
ROLLBACK_COMPLETE = 'ROLLBACK_COMPLETE'
SNAPSHOT_COMPLETE = 'SNAPSHOT_COMPLETE'
CHECK_COMPLETE = 'CHECK_COMPLETE'
ADOPT_COMPLETE = 'ADOPT_COMPLETE'

CLUSTER_STATUSES = (
    CREATE_IN_PROGRESS, CREATE_FAILED, CREATE_COMPLETE,
    UPDATE_IN_PROGRESS, UPDATE_FAILED, UPDATE_COMPLETE,
    DELETE_IN_PROGRESS, DELETE_FAILED, DELETE_COMPLETE,
    RESUME_COMPLETE, RESUME_FAILED, RESTORE_COMPLETE,
    ROLLBACK_IN_PROGRESS, ROLLBACK_FAILED, ROLLBACK_COMPLETE,
    SNAPSHOT_COMPLETE, CHECK_COMPLETE, ADOPT_COMPLETE,
)
FAILED = (CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED, ROLLBACK_FAILED, RESUME_FAILED)
IN_PROGRESS = (CREATE_IN_PROGRESS, UPDATE_IN_PROGRESS, DELETE_IN_PROGRESS, ROLLBACK_IN_PROGRESS)
COMPLETE = tuple(s for s in CLUSTER_STATUSES if s.endswith('_COMPLETE'))

FEDERATION_STATUSES = (
    CREATE_IN_PROGRESS, CREATE_FAILED, CREATE_COMPLETE,
    UPDATE_IN_PROGRESS, UPDATE_FAILED, UPDATE_COMPLETE,
    DELETE_IN_PROGRESS, DELETE_FAILED, DELETE_COMPLETE,
)

HEALTHY = 'HEALTHY'
UNHEALTHY = 'UNHEALTHY'
UNKNOWN = 'UNKNOWN'
HEALTH_STATUSES = (HEALTHY, UNHEALTHY, UNKNOWN)

# Operation -> (status while running, status on success, status on failure).
OPERATIONS = {
    'create': (CREATE_IN_PROGRESS, CREATE_COMPLETE, CREATE_FAILED),
    'update': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'resize': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'upgrade': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'ca_rotate': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'nodegroup_create': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'nodegroup_update': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'nodegroup_delete': (UPDATE_IN_PROGRESS, UPDATE_COMPLETE, UPDATE_FAILED),
    'delete': (DELETE_IN_PROGRESS, DELETE_COMPLETE, DELETE_FAILED),
}

# Which statuses an operation may start from. Unlike Magnum, a *_FAILED
# cluster may be retried (create), resized/updated, or deleted.
_SETTLED = COMPLETE + FAILED
ALLOWED_FROM = {
    'create': (CREATE_IN_PROGRESS, CREATE_FAILED),
    'update': _SETTLED,
    'resize': _SETTLED,
    'upgrade': _SETTLED,
    'ca_rotate': _SETTLED,
    'nodegroup_create': _SETTLED,
    'nodegroup_update': _SETTLED,
    'nodegroup_delete': _SETTLED,
    'delete': CLUSTER_STATUSES,
}


def running_status(operation):
    return OPERATIONS[operation][0]


def final_status(operation, ok):
    return OPERATIONS[operation][1 if ok else 2]


def operation_of(status):
    """The operation a *_IN_PROGRESS status belongs to, as (running, failed)."""
    for op, (running, _ok, failed) in OPERATIONS.items():
        if running == status:
            return op, failed
    return None, None


def is_in_progress(status):
    return status in IN_PROGRESS


def check_can_start(operation, status, name):
    """Raise OperationNotAllowed unless ``operation`` may start from ``status``.

    ``create`` from CREATE_IN_PROGRESS is accepted so that the playbook can
    pick up a record the API has just written.
    """
    if operation not in ALLOWED_FROM:
        raise errors.NotSupported("Unknown operation %s." % operation)
    if status in ALLOWED_FROM[operation]:
        return
    if status in IN_PROGRESS:
        raise errors.OperationNotAllowed(
            "Cluster %s is %s: %s is not allowed until the running operation ends."
            % (name, status, operation))
    raise errors.OperationNotAllowed(
        "Cluster %s is %s: %s is not allowed from this status." % (name, status, operation))
