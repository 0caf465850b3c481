"""A node the controller cannot reach fails the step that asked it, naming the node and
its SSH error - a failure, which the operation's rescue records as *_FAILED - not an
unreachable host, which would end the play without the rescue and leave the cluster in
progress when the operation runs from ansible-playbook: the operation plays' strategy
(plugins/strategy/operation.py) for any delegated task, and the drivers' wait for their
nodes' jobs (role node_jobs), which handles unreachable results itself."""
import json
import os
import subprocess

from ansible_collections.openstack.magnum.plugins.module_utils.core import store as store_mod
from conftest import BIN, REPO, ansible_env, free_port as closed_port  # a port nothing listens on


def test_a_node_that_cannot_be_asked_about_its_job_fails_the_step_naming_it(tmp_path):
    inventory = tmp_path / 'inventory.yml'
    # a node as the providers add it (group magnum_nodes), whose sshd is gone
    inventory.write_text(json.dumps({'magnum_nodes': {'hosts': {'node-0': {
        'ansible_host': '127.0.0.1', 'ansible_port': closed_port(),
        'ansible_connection': 'ssh', 'ansible_ssh_retries': 0,
        'ansible_python_interpreter': '/usr/bin/python3'}}}}))
    wait = {'name': 'Wait as a step does',
            'vars': {'node_jobs_started': {'results': [{'ansible_job_id': 'j1.1',
                                                        'item': 'node-0'}]},
                     'node_jobs_what': 'Setting the nodes up',
                     'node_jobs_timeout': 30},
            'ansible.builtin.include_role': {'name': 'openstack.magnum.node_jobs',
                                             'tasks_from': 'wait'}}
    # as cluster_operation's rescue reads it
    record = {'name': 'Record the failure', 'ansible.builtin.copy': {
        'content': '{{ ansible_failed_result | openstack.magnum.failure_reason }}',
        'dest': str(tmp_path / 'reason')}}
    # as a health check asks a node: it handles an unreachable node itself
    check = {'name': 'Ask the node', 'ansible.builtin.command': 'true', 'delegate_to': 'node-0',
             'ignore_unreachable': True, 'changed_when': False}
    playbook = tmp_path / 'wait.yml'
    # the operation plays' strategy, which keeps ignore_unreachable's meaning: the check
    # and the wait's own poll see the node unreachable, and the play goes on
    playbook.write_text(json.dumps([{
        'hosts': 'localhost', 'gather_facts': False, 'strategy': 'openstack.magnum.operation',
        'tasks': [check, {'block': [wait], 'rescue': [record]}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
               HOME=str(tmp_path))
    run = subprocess.run([str(BIN / 'ansible-playbook'), '-i', str(inventory), str(playbook)],
                         cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    assert 'rescued=1' in run.stdout and 'unreachable=0' in run.stdout, run.stdout[-3000:]
    reason = (tmp_path / 'reason').read_text()
    assert 'Setting the nodes up failed on node-0: it could not be reached: ' in reason, reason
    assert 'Connection refused' in reason, reason


def test_an_operation_whose_node_does_not_answer_ends_failed_naming_it(project, tmp_path):
    """cluster_create.yml from ansible-playbook, its driver's step delegated to a node
    whose sshd is gone (the fixture driver's label test_unreachable_port)."""
    db = 'sqlite:///%s' % (tmp_path / 'pb.sqlite')
    env = ansible_env(db, project=project, ANSIBLE_NOCOLOR='1', HOME=str(tmp_path))
    template = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
                'external_network_id': 'public', 'keypair_id': 'kp'}
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps(template)], cwd=project, env=env, check=True,
                   capture_output=True, timeout=300)
    cluster = {'name': 'c1', 'cluster_template_id': 'tpl', 'node_count': 1,
               'labels': {'test_unreachable_port': str(closed_port())}}
    run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
                          '-e', json.dumps({'cluster': cluster})], cwd=project, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 0, run.stdout[-3000:]
    assert 'rescued=1' in run.stdout and 'unreachable=0' in run.stdout, run.stdout[-3000:]
    record = store_mod.Store(db).get('cluster', 'c1')
    assert record['status'] == 'CREATE_FAILED', record
    assert record['status_reason'].startswith('test-node-0 is unreachable: '), record
    assert 'Connection refused' in record['status_reason'], record


def test_the_do_nothing_provider_has_the_driver_reach_nothing(tmp_path):
    """Provider none (no servers) and the real Kubernetes driver: its create ends
    CREATE_FAILED saying the provider gave no servers, and no request leaves for where it
    would fetch Kubernetes from (every download URL is a recorder here; the preflight
    used to fetch before the driver found it had no nodes)."""
    import http.server
    import threading
    asked = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args):
            pass
    recorder = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Recorder)
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    url = 'http://127.0.0.1:%d' % recorder.server_address[1]
    db = 'sqlite:///%s' % (tmp_path / 'none.sqlite')
    env = ansible_env(db, ANSIBLE_NOCOLOR='1', HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path),
                      XDG_DATA_HOME=str(tmp_path), MAGNUM_K8S_ARTIFACTS='',
                      **dict((name, url) for name in (
                          'MAGNUM_K8S_DOWNLOAD_URL', 'MAGNUM_K8S_CRICTL_URL',
                          'MAGNUM_CONTAINERD_URL', 'MAGNUM_RUNC_URL', 'MAGNUM_K8S_CALICO_URL',
                          'MAGNUM_K8S_CHARTS_URL')))
    try:
        template = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
                    'external_network_id': 'public', 'keypair_id': 'kp'}
        subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                        'openstack.magnum.cluster_template', '-a', json.dumps(template)],
                       cwd=str(REPO), env=env, check=True, capture_output=True, timeout=300)
        run = subprocess.run(
            [str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml', '-e',
             json.dumps({'cluster': {'name': 'c1', 'cluster_template_id': 'tpl'}})],
            cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300)
        record = store_mod.Store(db).get('cluster', 'c1')
        assert record['status'] == 'CREATE_FAILED', run.stdout[-3000:]
        assert 'provider none gave none' in record['status_reason'], record['status_reason']
        assert asked == []
    finally:
        recorder.shutdown()
