"""Asking a node about an asynchronous job without starting Python there (role node_jobs):
one shell command reads the job's file once, prints it and removes it once it holds the
result; the answer is made what async_status returns. The command runs in a real shell on
real files, written as Ansible's async_wrapper writes them."""

import json
import shlex
import subprocess

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError

JID = 'j123456789.4242'


def ask(home, async_dir, jid=JID):
    """The poll command run by sh with ``home`` as HOME, as the raw task registers it."""
    proc = subprocess.run(['sh', '-c', node_steps.job_poll_command(async_dir, jid)],
                          env={'HOME': str(home), 'PATH': '/usr/bin:/bin'},
                          capture_output=True, text=True, check=False)
    return {'rc': proc.returncode, 'stdout': proc.stdout, 'stderr': proc.stderr,
            'item': {'ansible_job_id': jid, 'item': 'node-1'}}


def test_a_running_job_is_kept_a_finished_one_returned_and_removed(tmp_path):
    jobs = tmp_path / '.ansible_async'
    jobs.mkdir()
    job = jobs / JID
    job.write_text(json.dumps({'started': True, 'finished': False, 'ansible_job_id': JID}))

    running = node_steps.job_result(ask(tmp_path, '~/.ansible_async'))
    assert running['finished'] is False and job.exists()
    assert running['item']['item'] == 'node-1'

    job.write_text(json.dumps({'changed': True, 'changes': ['started the engine'],
                               'version': '20.10.24', 'swarm_state': 'active'}))
    done = node_steps.job_result(ask(tmp_path, '~/.ansible_async'))
    assert done['finished'] is True and done['changed'] and done['version'] == '20.10.24'
    assert done['ansible_job_id'] == JID and done['item']['item'] == 'node-1'
    assert not job.exists()

    # Asked again (a retry after the answer was lost): the result is gone, said as such.
    gone = node_steps.job_result(ask(tmp_path, '~/.ansible_async'))
    assert gone['failed'] and gone['finished'] and 'gone from the node' in gone['msg']


def test_a_failed_job_is_a_failure_with_its_message(tmp_path):
    job = tmp_path / JID
    job.write_text(json.dumps({'failed': True, 'msg': 'Waiting for the engine: docker info '
                               'did not succeed within 60s', 'changes': []}))
    result = node_steps.job_result(ask(tmp_path / 'home', str(tmp_path)))
    assert result['failed'] and result['finished'] and 'Waiting for the engine' in result['msg']
    assert not job.exists()


def test_the_path_is_quoted_and_the_job_id_only_ansibles():
    command = node_steps.job_poll_command("/run/a dir/it's", 'j1.2; rm -rf /')
    assert command.startswith('f=%s;' % shlex.quote("/run/a dir/it's/j1.2"))
    with pytest.raises(MagnumError):
        node_steps.job_poll_command('/run', '$(reboot)')


def test_an_unreadable_answer_or_a_failed_ask_is_a_failure_naming_it():
    item = {'ansible_job_id': JID, 'item': 'node-1'}
    garbled = node_steps.job_result({'rc': 0, 'stdout': 'sudo: a password is required\n',
                                     'item': item})
    assert garbled['failed'] and 'not its result' in garbled['msg']
    refused = node_steps.job_result({'rc': 1, 'stdout': '', 'stderr': 'Permission denied',
                                     'item': item})
    assert refused['failed'] and 'Permission denied' in refused['msg']
    unreachable = {'unreachable': True, 'msg': 'ssh: connect to host 10.0.0.5: timed out',
                   'item': item}
    assert node_steps.job_result(unreachable) is unreachable
