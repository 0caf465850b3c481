"""The drivers' wait for their nodes' asynchronous jobs (role node_jobs): it reports what
the jobs changed and leaves none of their results on the nodes - each node asked, and its
job's result removed, with one shell command that starts no Python there (each Python
start is seconds on a slow guest)."""
import json
import os
import re
import subprocess
import sys

from conftest import BIN, REPO


def test_the_wait_reports_the_jobs_changes_and_removes_their_results(tmp_path):
    nodes = ('node-0', 'node-1')
    # nodes as the providers add them (group magnum_nodes), each keeping its jobs' results
    # in a directory of its own (ansible_async_dir), none on a tmpfs
    inventory = tmp_path / 'inventory.yml'
    inventory.write_text(json.dumps({'magnum_nodes': {'hosts': {node: {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
        'ansible_async_dir': str(tmp_path / ('async-' + node))} for node in nodes}}}))
    start = {'name': 'Start a job on every node', 'ansible.builtin.command': 'touch ' + str(
                 tmp_path / '{{ item }}.done'),
             'loop': list(nodes), 'delegate_to': '{{ item }}', 'async': 60, 'poll': 0,
             'changed_when': False, 'register': 'started'}
    wait = {'name': 'Wait as a step does',
            'vars': {'node_jobs_started': '{{ started }}', 'node_jobs_what': 'Touching',
                     'node_jobs_timeout': 120},
            'ansible.builtin.include_role': {'name': 'openstack.magnum.node_jobs',
                                             'tasks_from': 'wait'}}
    report = {'name': 'Report', 'ansible.builtin.copy': {
        'content': '{{ node_jobs_result.results | map(attribute="changed") | list | to_json }}',
        'dest': str(tmp_path / 'changed')}}
    playbook = tmp_path / 'wait.yml'
    playbook.write_text(json.dumps([{
        'hosts': 'localhost', 'gather_facts': False, 'strategy': 'openstack.magnum.operation',
        'tasks': [start, wait, report]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
               HOME=str(tmp_path))
    run = subprocess.run([str(BIN / 'ansible-playbook'), '-i', str(inventory), str(playbook)],
                         cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    assert all((tmp_path / (node + '.done')).exists() for node in nodes)
    assert json.loads((tmp_path / 'changed').read_text()) == [True, True]
    # the jobs wrote their results where each node keeps them, and the wait removed them
    for node in nodes:
        left = sorted(p.name for p in (tmp_path / ('async-' + node)).iterdir())
        assert left == [], (node, left)
    # asked with the shell command (raw), not async_status (the controller's jobs' task)
    assert 'TASK [openstack.magnum.node_jobs : Wait for the jobs on the nodes]' in run.stdout
    assert re.search(r'Wait for the jobs on the controller\] \**\nskipping', run.stdout)
