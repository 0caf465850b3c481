import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import states
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    OperationNotAllowed)


def test_every_status_of_the_reference():
    assert len(states.CLUSTER_STATUSES) == 18
    assert set(states.FAILED) == {'CREATE_FAILED', 'UPDATE_FAILED', 'DELETE_FAILED',
                                  'ROLLBACK_FAILED', 'RESUME_FAILED'}


@pytest.mark.parametrize('op', ['update', 'resize', 'upgrade', 'ca_rotate', 'nodegroup_create'])
@pytest.mark.parametrize('status', states.IN_PROGRESS)
def test_updates_refused_while_in_progress(op, status):
    with pytest.raises(OperationNotAllowed, match='not allowed until'):
        states.check_can_start(op, status, 'c')


@pytest.mark.parametrize('status', states.CLUSTER_STATUSES)
def test_delete_always_allowed(status):
    states.check_can_start('delete', status, 'c')


@pytest.mark.parametrize('op', ['resize', 'update', 'upgrade'])
@pytest.mark.parametrize('status', states.FAILED)
def test_failed_cluster_can_be_changed_unlike_magnum(op, status):
    states.check_can_start(op, status, 'c')


def test_create_retry_only_from_create_states():
    states.check_can_start('create', 'CREATE_FAILED', 'c')
    with pytest.raises(OperationNotAllowed):
        states.check_can_start('create', 'UPDATE_COMPLETE', 'c')


def test_final_statuses():
    assert states.final_status('resize', True) == 'UPDATE_COMPLETE'
    assert states.final_status('delete', False) == 'DELETE_FAILED'
    assert states.operation_of('DELETE_IN_PROGRESS') == ('delete', 'DELETE_FAILED')
