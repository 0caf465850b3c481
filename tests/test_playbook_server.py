"""A conductor's playbook server (api/playbook_server.py): the launcher it gives
ansible-runner runs a playbook in a process forked from the warm server - with the
launcher's arguments, working directory, environment, streams and exit code, and the
launcher's command line (so the conductor's clean-up finds it) -; a run whose Ansible
settings differ from the warm ones, or that finds no server, is the real
ansible-playbook; a run whose launcher is killed goes with its whole tree.

Every job of the API tiers runs through it as well (the conductor's default)."""

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from api import processes as host_processes
from api.playbook_server import PlaybookServer
from conftest import wait_for

REPO = Path(__file__).resolve().parent.parent


def processes():
    """pid -> (parent pid, command line with spaces) of this host's processes."""
    return dict((pid, (ppid, cmdline.replace('\0', ' ').strip()))
                for pid, (ppid, cmdline) in host_processes.table().items())


@pytest.fixture
def server():
    started = PlaybookServer()
    yield started
    started.stop()


def play(path, tasks):
    path.write_text(json.dumps([{'hosts': 'localhost', 'gather_facts': False,
                                 'tasks': tasks}]))
    return path.name


def launch(server, workdir, playbook, env=None, **kwargs):
    argv = [str(server.launcher), playbook, '-i', 'localhost,', '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % sys.executable]
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), **(env or {}))
    return subprocess.Popen(argv, cwd=str(workdir), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)


def the_run(server, marker):
    """The server's child running the play whose command line holds ``marker``:
    (pid, command line)."""
    for pid, (ppid, cmdline) in processes().items():
        if ppid == server.process.pid and marker in cmdline:
            return pid, cmdline
    return None


def test_a_run_is_the_launchers_playbook_forked_warm(server, tmp_path):
    """Each run has its own environment and working directory (a relative playbook), its
    output and exit code reach the launcher, and it is a child of the server that shows
    the launcher's command line (not the real ansible-playbook exec'd)."""
    name = play(tmp_path / 'env.yml', [
        {'ansible.builtin.debug': {'msg': 'value={{ lookup("env", "MAGNUM_TEST_VALUE") }}'}}])
    for value in ('first', 'second'):
        run = launch(server, tmp_path, name, {'MAGNUM_TEST_VALUE': value})
        out, _ = run.communicate(timeout=300)
        assert run.returncode == 0, out
        assert 'value=%s' % value in out
    failing = play(tmp_path / 'fail.yml', [{'ansible.builtin.fail': {'msg': 'as asked'}}])
    run = launch(server, tmp_path, failing)
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 2 and 'as asked' in out
    seconds = str(300 + uuid.uuid4().int % 600)
    slow = play(tmp_path / 'slow.yml', [{'ansible.builtin.command': 'sleep ' + seconds}])
    run = launch(server, tmp_path, slow)
    try:
        wait_for(lambda: any(cmd == 'sleep ' + seconds for _p, cmd in processes().values()),
                 timeout=120)
        _pid, cmdline = wait_for(lambda: the_run(server, slow), timeout=60)
        assert cmdline.startswith(str(server.launcher) + ' ' + slow), cmdline
    finally:
        run.kill()


def test_a_run_whose_launcher_is_killed_goes_with_its_tree(server, tmp_path):
    """ansible-runner kills the launcher's process group when it cancels a job or it
    times out: the run, its workers and what they run go too."""
    seconds = str(300 + uuid.uuid4().int % 600)
    name = play(tmp_path / 'slow.yml', [{'ansible.builtin.command': 'sleep ' + seconds}])
    run = launch(server, tmp_path, name, start_new_session=True)

    def sleeping():
        return [p for p, (_pp, cmd) in processes().items() if cmd == 'sleep ' + seconds]
    wait_for(sleeping, timeout=120)
    assert the_run(server, name)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait(30)
    wait_for(lambda: not sleeping() and not the_run(server, name), timeout=60)
    assert server.alive


def test_other_ansible_settings_or_no_server_run_the_real_ansible_playbook(server, tmp_path):
    """Ansible reads some settings once, when imported: a run with others than the warm
    ones is the real ansible-playbook, exec'd; so is a run that finds no server (the
    conductor starts another at its next run)."""
    name = play(tmp_path / 'ok.yml', [{'ansible.builtin.debug': {'msg': 'ran'}}])
    run = launch(server, tmp_path, name)   # warms the server
    assert run.communicate(timeout=300)[0].count('ran') and run.returncode == 0
    seconds = str(300 + uuid.uuid4().int % 600)
    slow = play(tmp_path / 'slow.yml', [{'ansible.builtin.command': 'sleep ' + seconds}])
    run = launch(server, tmp_path, slow, {'ANSIBLE_FORKS': '3'})
    try:
        wait_for(lambda: the_run(server, slow), timeout=120)
        assert 'bin/ansible-playbook ' + slow in the_run(server, slow)[1]
        assert not the_run(server, slow)[1].startswith(str(server.launcher))
    finally:
        run.kill()
    server.process.kill()   # gone without a word: its socket is left, refusing
    server.process.wait(30)
    run = launch(server, tmp_path, name)
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0 and 'ran' in out
