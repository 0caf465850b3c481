"""README's main command, `./quickstart.sh` and `./quickstart.sh down`, on a machine as a
fresh one of this project's kind has it: the Docker client and no engine, or nothing at
all - the engine stopped mid-create, the delete that then fails, the run that makes the
cluster again, `docker node ls` listing three Ready nodes, and `down` ending every time.

The fresh machine is a mount namespace of this one (util-linux `unshare`, as root): there,
docker, dockerd and debootstrap are not to be found (each folder that holds one is covered
by a folder of links to all its other files) and /run is empty, so no engine's socket
answers. Its `apt-get`, first on PATH, installs a package by linking its programs back,
and it records what it was asked; docker.io's `dockerd` is
tests/standins/engine_relay.py, which serves this host's engine at /run/docker.sock - the
machine's engine, which killing the relay stops for that machine alone. Everything else
is real: the script, the API it starts, the playbooks, the engine, the nodes.
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import uuid as uuidlib
from pathlib import Path

import pytest

from conftest import REPO, free_port, wait_for
from test_infra_docker import docker_ok, nothing_left, remove_leftovers

HOST_ENGINE = '/run/docker.sock'
pytestmark = [pytest.mark.real_node, pytest.mark.skipif(
    not docker_ok() or not os.path.exists(HOST_ENGINE) or os.getuid() != 0
    or not shutil.which('unshare') or not shutil.which('nsenter')
    or not (REPO / '.venv/bin/magnum-ansible-api').exists(),
    reason='needs root, util-linux unshare/nsenter, a running Docker engine at /run/docker.sock, '
           "debootstrap and README's .venv (.ci/run has them)")]
SEARCHED = ('/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin')


def programs(name):
    """Every file on this machine's PATH (and the system's bin directories) named ``name``."""
    found = []
    for folder in os.environ['PATH'].split(':') + list(SEARCHED):
        path = os.path.join(os.path.realpath(folder), name)
        if os.path.isfile(path) and path not in found:
            found.append(path)
    return found


class FreshMachine:
    """A mount namespace where ``hide`` (program names) are not to be found and no Docker
    engine answers; its apt-get installs docker.io (the client uncovered, dockerd as a
    relay to this host's engine - or, with ``dockerd='fails'``, a dockerd that dies at
    start) and debootstrap, or with ``apt='fails'`` cannot reach its archive."""

    def __init__(self, tmp_path, hide, apt='works', dockerd='relay'):
        self.dir = tmp_path / 'machine'
        self.bin = self.dir / 'bin'
        self.bin.mkdir(parents=True)
        self.state = tmp_path / 'state'
        self.port = free_port()
        self.cluster = 'qs-' + uuidlib.uuid4().hex[:8]
        self.apt_log = self.dir / 'apt.log'
        hidden = dict((name, programs(name)) for name in hide)
        relayed = self.dir / 'engine.sock'
        if dockerd == 'relay':
            dockerd_text = 'exec %s %s /run/docker.sock %s\n' % (
                sys.executable, REPO / 'tests/standins/engine_relay.py', relayed)
        else:
            dockerd_text = ('echo "failed to start daemon: Error initializing network controller:'
                            ' error creating default bridge network" >&2\nexit 1\n')
        # each folder holding a hidden program: its files seen through a bind mount of it,
        # and a folder of links to them, but for the hidden ones, mounted over it
        folders = sorted(set(os.path.dirname(p) for paths in hidden.values() for p in paths))
        setup = ['set -e', 'touch %s' % relayed, 'mount --bind %s %s' % (HOST_ENGINE, relayed)]
        covers = []
        for folder in folders:
            seen, cover = self.dir / ('seen' + folder), self.dir / ('cover' + folder)
            seen.mkdir(parents=True)
            cover.mkdir(parents=True)
            for entry in os.listdir(folder):
                if os.path.join(folder, entry) not in sum(hidden.values(), []):
                    os.symlink(seen / entry, cover / entry)
            setup.append('mount --bind %s %s' % (folder, seen))
            covers.append('mount --bind %s %s' % (cover, folder))
        setup += covers + ['mount -t tmpfs machine-run /run']

        def link_back(name):
            return ''.join('ln -s %s %s\n' % (self.dir / ('seen' + p), p)
                           for p in hidden.get(name, []))
        uncover = {
            'docker.io': link_back('docker')
            + 'cat >%s <<"EOF"\n#!/bin/sh\n%sEOF\nchmod +x %s\n' % (
                self.bin / 'dockerd', dockerd_text, self.bin / 'dockerd'),
            'debootstrap': link_back('debootstrap'),
        }
        (self.bin / 'apt-get').write_text(textwrap.dedent('''\
            #!/bin/bash
            echo "$*" >>%(log)s
            echo "Reading package lists... Done"
            echo "W: the noise an installer makes" >&2
            [ "$1" = update ] && exit 0
            %(fail)s
            for pkg in "$@"; do
              case $pkg in
                docker.io)
            %(docker)s
                ;;
                debootstrap)
            %(debootstrap)s
                ;;
              esac
            done
            ''') % {'log': self.apt_log, 'docker': uncover['docker.io'],
                    'debootstrap': uncover['debootstrap'] or ':',
                    'fail': ('echo "E: Unable to locate package docker.io" >&2; exit 100'
                             if apt == 'fails' else '')})
        (self.bin / 'apt-get').chmod(0o755)
        self.holder = subprocess.Popen(
            ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
             '; '.join(setup) + '; echo ready; exec sleep infinity'],
            stdout=subprocess.PIPE, text=True)
        assert self.holder.stdout.readline().strip() == 'ready'

    def env(self):
        env = dict(os.environ, PATH='%s:%s' % (self.bin, os.environ['PATH']),
                   MAGNUM_API_PORT=str(self.port), MAGNUM_STATE_DIR=str(self.state),
                   CLUSTER=self.cluster, TEMPLATE=self.cluster + '-tpl')
        env.pop('DOCKER_HOST', None)
        # the virtualenv README's command installs, not this test run's
        env.pop('VIRTUAL_ENV', None)
        env['PATH'] = ':'.join(p for p in env['PATH'].split(':')
                               if p != str(Path(sys.executable).parent))
        return env

    def start(self, *args):
        return subprocess.Popen(
            ['nsenter', '-t', str(self.holder.pid), '-m', '--', 'bash',
             str(REPO / 'quickstart.sh')] + list(args),
            env=self.env(), cwd='/', stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self, *args, timeout=1200):
        proc = self.start(*args)
        out = proc.communicate(timeout=timeout)[0]
        return proc.returncode, out

    def recorded_uuid(self):
        path = self.state / (self.cluster + '.uuid')
        return path.read_text().strip() if path.exists() else None

    def api_answers(self):
        return subprocess.run(['curl', '-sf', 'http://127.0.0.1:%d/' % self.port],
                              capture_output=True).returncode == 0

    def close(self):
        self.start('down').communicate(timeout=600)
        self.holder.kill()
        self.holder.wait()


def test_quickstart_on_a_machine_with_nothing(tmp_path):
    """Nothing installed: docker.io and debootstrap are installed quietly; the engine stops
    mid-create: CREATE_FAILED naming the engine, exit 1; `down` cannot delete, says why,
    stops the API and ends, exit 1; the next run starts the engine, deletes the failed
    cluster and makes it again: three Ready nodes; `down` deletes it all, exit 0."""
    machine = FreshMachine(tmp_path, hide=('docker', 'dockerd', 'debootstrap'))
    made = []
    try:
        proc = machine.start()
        made.append(wait_for(machine.recorded_uuid, timeout=600, interval=0.1))
        # the engine stops before the create's job has asked it anything
        os.kill(int((machine.state / 'dockerd.pid').read_text()), signal.SIGTERM)
        out = proc.communicate(timeout=900)[0]
        assert proc.returncode == 1, out
        assert machine.apt_log.read_text().splitlines() == [
            'update', 'install -y docker.io debootstrap'], out
        assert 'output in %s/install.log' % machine.state in out
        assert 'Reading package lists' not in out and 'noise' not in out, out
        assert 'ended CREATE_FAILED: Docker engine at unix:///var/run/docker.sock does not ' \
               'answer: ' in out, out

        rc, out = machine.run('down', timeout=600)
        assert rc == 1, out
        assert 'ended DELETE_FAILED: Docker engine at unix:///var/run/docker.sock does not ' \
               'answer' in out and 'then ./quickstart.sh down' in out, out
        assert '== stopped api' in out and not machine.api_answers()
        assert machine.recorded_uuid() == made[0]

        rc, out = machine.run()
        assert rc == 0, out
        assert 'is DELETE_FAILED' in out and 'deleting it to make it again' in out, out
        made.append(machine.recorded_uuid())
        nodes = out[out.index('== docker node ls'):].splitlines()[2:]
        assert len([line for line in nodes if ' Ready ' in line]) == 3, out
        nothing_left(made[0])

        rc, out = machine.run('down', timeout=600)
        assert rc == 0, out
        assert '== stopped api' in out and '== stopped dockerd' in out, out
        assert not machine.api_answers() and machine.recorded_uuid() is None
        nothing_left(made[1])
    finally:
        machine.close()
        for uuid in made:
            remove_leftovers(uuid)


@pytest.mark.parametrize('apt,dockerd,said', [
    ('works', 'fails', 'the Docker engine did not start (unix:///var/run/docker.sock does not '
                       'answer); the last lines of'),
    ('fails', 'relay', 'could not install docker.io debootstrap; the last lines of'),
])
def test_quickstart_stops_when_no_engine_can_be_had(tmp_path, apt, dockerd, said):
    """The Docker client alone, and an engine that cannot be had: the script stops with
    the reason and the log's end, exit 1, before starting the API."""
    machine = FreshMachine(tmp_path, hide=('dockerd', 'debootstrap'), apt=apt, dockerd=dockerd)
    try:
        rc, out = machine.run(timeout=300)
        assert rc == 1, out
        assert said in out, out
        assert ('failed to start daemon' if dockerd == 'fails'
                else 'Unable to locate package docker.io') in out, out
        assert 'magnum-ansible-api' not in out and not machine.api_answers()
    finally:
        machine.close()
