"""The wait for the jobs a step started on its nodes (roles/kubernetes/tasks/wait_jobs.yml):
a node the controller cannot reach fails the step naming the node and its SSH error - a
failure, which the operation's rescue records as *_FAILED, not an unreachable host, which
would end the play without the rescue and leave the cluster in progress when the operation
runs from ansible-playbook."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def closed_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_a_node_that_cannot_be_asked_about_its_job_fails_the_step_naming_it(tmp_path):
    inventory = tmp_path / 'inventory.yml'
    # a node as the providers add it (group magnum_nodes), whose sshd is gone
    inventory.write_text(json.dumps({'magnum_nodes': {'hosts': {'node-0': {
        'ansible_host': '127.0.0.1', 'ansible_port': closed_port(),
        'ansible_connection': 'ssh', 'ansible_ssh_retries': 0,
        'ansible_python_interpreter': '/usr/bin/python3'}}}}))
    playbook = tmp_path / 'wait.yml'
    playbook.write_text(json.dumps([{
        'hosts': 'localhost', 'gather_facts': False, 'tasks': [{'block': [{
            'name': 'Wait as a step does',
            'vars': {'kubernetes_jobs': {'results': [{'ansible_job_id': 'j1.1', 'item': 'node-0'}]},
                     'kubernetes_jobs_what': 'Setting the nodes up',
                     'kubernetes_jobs_timeout': 30},
            'ansible.builtin.include_role': {'name': 'openstack.magnum.kubernetes',
                                             'tasks_from': 'wait_jobs'}}],
            # as cluster_operation's rescue reads it
            'rescue': [{'name': 'Record the failure',
                        'ansible.builtin.copy': {
                            'content':
                                '{{ ansible_failed_result | openstack.magnum.failure_reason }}',
                            'dest': str(tmp_path / 'reason')}}]}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
               HOME=str(tmp_path))
    run = subprocess.run([str(BIN / 'ansible-playbook'), '-i', str(inventory), str(playbook)],
                         cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    assert 'rescued=1' in run.stdout and 'unreachable=0' in run.stdout, run.stdout[-3000:]
    reason = (tmp_path / 'reason').read_text()
    assert 'Setting the nodes up failed on node-0: it could not be reached: ' in reason, reason
    assert 'Connection refused' in reason, reason
