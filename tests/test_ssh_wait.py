"""The OpenStack provider's wait for new servers (module openstack_ssh_wait) against a real
sshd on this host's loopback: every server asked at once with a plain `ssh true`, one
reached through another asked only once that one answers, and one whose jump host stays
silent reported not asked - so that the role reboots the silent one only; the wait's bound
scaled by the cloud's record of its boots, which gains this wait's slowest answer."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import BIN, REPO

SSHD = shutil.which('sshd') or '/usr/sbin/sshd'
pytestmark = pytest.mark.skipif(not os.path.exists(SSHD) or os.geteuid() != 0, reason=(
    'needs sshd (Debian: openssh-server; .ci/run installs it) and root, to log in as root'))


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_sshd(tmp_path, port):
    host_key = tmp_path / 'host_key'
    if not host_key.exists():
        subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', str(host_key)],
                       check=True)
    config = tmp_path / 'sshd_config'
    config.write_text('\n'.join([
        'Port %d' % port, 'ListenAddress 127.0.0.1', 'HostKey %s' % host_key,
        'AuthorizedKeysFile %s' % (tmp_path / 'authorized_keys'), 'StrictModes no',
        'UsePAM no', 'PermitRootLogin prohibit-password', 'PidFile %s' % (tmp_path / 'pid'),
        'AllowTcpForwarding yes', '']))
    os.makedirs('/run/sshd', exist_ok=True)
    return subprocess.Popen([SSHD, '-D', '-e', '-f', str(config)], stderr=subprocess.DEVNULL)


def test_servers_are_asked_at_once_and_a_jump_hosts_silence_is_its_own(tmp_path):
    key = tmp_path / 'id_ed25519'
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', str(key)], check=True)
    (tmp_path / 'authorized_keys').write_text((tmp_path / 'id_ed25519.pub').read_text())
    up, closed = free_port(), free_port()
    options = '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'

    def through(port):
        return (' -o ProxyCommand="ssh -i %s %s -p %d -W %%h:%%p root@127.0.0.1"'
                % (key, options, port))
    routes = {
        # the first master: its floating IP, answering only some seconds into the wait
        'master-0': {'host': '127.0.0.1', 'args': '%s -p %d' % (options, up), 'through': ''},
        # a worker behind it (no floating IP): its fixed address through the master
        'node-0': {'host': '127.0.0.1', 'args': options + ' -p %d' % up + through(up),
                   'through': 'master-0'},
        # a silent server, and one behind it
        'master-1': {'host': '127.0.0.1', 'args': '%s -p %d' % (options, closed),
                     'through': ''},
        'node-1': {'host': '127.0.0.1', 'args': options + ' -p %d' % closed + through(closed),
                   'through': 'master-1'},
    }
    # the cloud's record: its slowest boot of late was 15 s, so the wait lasts 30 s, not 20
    record = tmp_path / 'boots.json'
    record.write_text(json.dumps({'boots': [12, 15]}))
    playbook = tmp_path / 'wait.yml'
    playbook.write_text(json.dumps([{
        'hosts': 'localhost', 'gather_facts': False, 'tasks': [
            {'name': 'Wait', 'register': 'waited', 'openstack.magnum.openstack_ssh_wait': {
                'names': sorted(routes), 'routes': routes, 'user': 'root',
                'key_file': str(key), 'timeout': 20, 'sleep': 1,
                'boot_record': str(record), 'max_timeout': 60}},
            {'name': 'Sort', 'vars': {'routes': routes}, 'ansible.builtin.copy': {
                'dest': str(tmp_path / 'out.json'),
                'content': '{{ {"waited": waited, "outcome": waited.results | '
                           'openstack.magnum.openstack_ssh_wait_outcome("root", routes)} '
                           '| to_json }}'}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
               HOME=str(tmp_path))
    env.pop('SSH_AUTH_SOCK', None)
    began = time.monotonic()
    job = subprocess.Popen([str(BIN / 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
                            '-e', 'ansible_python_interpreter=' + sys.executable, str(playbook)],
                           cwd=str(REPO), env=env, stdout=subprocess.PIPE, text=True)
    sshd = None
    try:
        time.sleep(6)   # the master's sshd comes up late, as a booting guest's does
        sshd = start_sshd(tmp_path, up)
        out, _ = job.communicate(timeout=240)
    finally:
        job.kill()
        if sshd:
            sshd.kill()
    assert job.returncode == 0, out[-3000:]
    found = json.loads((tmp_path / 'out.json').read_text())
    results = dict((r['item'], r) for r in found['waited']['results'])
    assert found['waited']['answered'].keys() == {'master-0', 'node-0'}, results
    # asked at once: the master answered soon after its sshd started, its worker right after
    assert 1 <= results['master-0']['elapsed'] <= results['node-0']['elapsed'] < 20, results
    assert found['waited']['timeout'] == 30 and found['waited']['boots'] == [12, 15]
    assert results['master-1']['elapsed'] >= 28, results
    # the record gains this create's slowest answer
    assert json.loads(record.read_text())['boots'] == [12, 15, results['node-0']['elapsed']]
    assert results['master-1']['failed'] and results['master-1']['asked']
    assert results['master-1']['msg'].startswith('timed out waiting for SSH: '), results
    assert 'refused' in results['master-1']['msg'].lower(), results
    # the worker behind the silent master was never asked: not silent itself
    assert results['node-1']['failed'] and not results['node-1']['asked'], results
    assert 'its jump host master-1 has not answered' in results['node-1']['msg'], results
    assert found['outcome'] == {'silent': ['master-1'], 'behind': ['node-1'], 'refused': ''}
    assert time.monotonic() - began < 200
