"""A conductor's playbook server: ansible-playbook runs forked from a warm process.

Every job and health round is one ``ansible-playbook`` run through ansible-runner; a
fresh one spends most of a no-op operation's CPU importing Ansible, reading its
configuration and importing the collection's store (SQLAlchemy) before its first task.
This server (one process per conductor, started by api/executor.py) imports all that
once and forks a process per run, which is that run's ``ansible-playbook``:

- ansible-runner keeps its interface: its ``binary`` is a launcher
  (api/playbook_client.py) that hands the server its arguments, working directory,
  environment and standard streams over a Unix socket in a private directory (mode
  0700; the server only answers processes of its own user), and exits with the run's
  exit code. Events, artifacts, cancel and timeout work as with the real binary.
- A run gets exactly the launcher's environment and working directory; Ansible's
  configuration is read again from it in the run (the constants of ansible.constants).
  What Ansible reads only once, when it is imported - the ``ANSIBLE_*`` settings (plugin
  paths, the config file), HOME, PYTHONPATH, the working directory - is the server's
  "warm key": a run whose key differs from the one the server warmed with (apart from
  what ansible-runner sets per run, PER_RUN) is not forked warm but made the real
  ``ansible-playbook`` (exec), as cold and as correct as without the server.
- A run's process, and the workers Ansible forks from it, show the launcher's command
  line (the job's private directory in it): the server leaves room for it in its own
  arguments and the run writes it there (/proc/self/mem, as setproctitle does), so the
  conductor's clean-up (kill_job_processes) and its look for live runs find a forked
  run as they find the real ansible-playbook. A run that cannot be so named is the real
  one (exec).
- Each run is a process group and session of its own; when the launcher goes away
  before its run ended (ansible-runner killed it: a cancel, a timeout), the server
  kills the run's whole process tree.
- The server warms with the first run's environment (nothing is imported before a
  conductor's first run), then goes back to its own environment. It ends with its
  conductor (within PARENT_CHECK seconds of a kill -9), killing its runs.
"""

import atexit
import errno
import importlib
import json
import logging
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from api import processes

LOG = logging.getLogger(__name__)

SOCKET_NAME = 'socket'
LAUNCHER_NAME = 'ansible-playbook'   # the conductors' clean-up looks for 'ansible'
ARGV_ROOM = 4096   # bytes of the server's arguments a run's command line may take
# Set by ansible-runner for each run; read again by the run, so not part of the key.
PER_RUN = frozenset(('ANSIBLE_CACHE_PLUGIN_CONNECTION',))
# What Ansible reads at import besides its settings' variables (all named *ANSIBLE*,
# but NO_COLOR, EDITOR and PAGER).
KEY_VARIABLES = ('HOME', 'PYTHONPATH', 'NO_COLOR', 'EDITOR', 'PAGER')
# The collection's modules and store imported with Ansible (the operation strategy's
# own preload, plugins/strategy/operation.py).
PRELOAD = 'ansible_collections.openstack.magnum.plugins.strategy.operation'
REQUEST_TIMEOUT = 10.0
PARENT_CHECK = 5.0   # seconds between looks whether the conductor is still there


def warm_key(env, cwd):
    """What a run's Ansible reads when it is imported: runs with the same key can share
    one import."""
    return json.dumps([cwd, sorted((name, value) for name, value in env.items()
                                   if ('ANSIBLE' in name and name not in PER_RUN)
                                   or name in KEY_VARIABLES)])


def real_playbook():
    """The ansible-playbook beside this Python (the venv's), else the PATH's."""
    beside = Path(sys.executable).parent / 'ansible-playbook'
    if beside.exists():
        return str(beside)
    for directory in os.environ.get('PATH', '').split(os.pathsep):
        found = Path(directory) / 'ansible-playbook'
        if directory and found.exists():
            return str(found)
    return 'ansible-playbook'


def write_launcher(path, socket_path, playbook):
    """The launcher: api/playbook_client.py after a shebang of this Python, its two
    constants written by Python's own literal encoder (repr)."""
    body = (Path(__file__).parent / 'playbook_client.py').read_text()
    for name, value in (('SOCKET', socket_path), ('PLAYBOOK', playbook)):
        if '\n%s = None' % name not in body:
            raise RuntimeError('api/playbook_client.py lost its constant %s' % name)
        body = body.replace('\n%s = None' % name, '\n%s = %r' % (name, str(value)), 1)
    Path(path).write_text('#!%s -IS\n' % sys.executable + body)
    os.chmod(path, 0o700)


def kill_tree(root):
    """SIGKILL to ``root``'s process tree and each of its process groups (Ansible's
    workers are sessions of their own), until none of them is left."""
    for _ in range(5):
        if not processes.kill(processes.tree([root], processes.table()), set(),
                              os.getpgid(0)):
            return
        time.sleep(0.05)


def remove_private_dir(directory):
    """The server's socket and launcher and the directory that holds them."""
    for name in (SOCKET_NAME, LAUNCHER_NAME):
        try:
            os.unlink(os.path.join(str(directory), name))
        except FileNotFoundError:
            pass
    try:
        os.rmdir(str(directory))
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            LOG.warning('could not remove %s: %s', directory, exc)


def name_process(words):
    """Make this process's command line ``words`` (in the room its arguments have, as
    setproctitle does: /proc/self/mem at the arguments' addresses); False if it cannot."""
    try:
        with open('/proc/self/stat', 'rb') as handle:
            fields = handle.read().rsplit(b')', 1)[1].split()
        start, end = int(fields[45]), int(fields[46])   # arg_start, arg_end
        text = '\0'.join(words).encode('utf-8', 'surrogateescape')
        if len(text) >= end - start:
            return False
        with open('/proc/self/mem', 'r+b', buffering=0) as mem:
            mem.seek(start)
            mem.write(text + b'\0' * (end - start - len(text)))
        with open('/proc/self/cmdline', 'rb') as handle:
            return handle.read().startswith(text)
    except (OSError, ValueError, IndexError):
        return False


class Server:
    """The server's process: accept, fork, reap (one thread; SIGCHLD wakes it up)."""

    def __init__(self, socket_path, playbook):
        self.socket_path = str(socket_path)
        self.playbook = playbook
        self.key = None          # the warm key, once warmed
        self.runs = {}           # pid -> the launcher's connection (None once it went)
        self.selector = selectors.DefaultSelector()

    # ------------------------------------------------------------ server side
    def serve(self):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.socket_path)
        os.chmod(self.socket_path, 0o600)
        listener.listen(64)
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_read, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        self.listener, self.wake = listener, (wake_read, wake_write)
        self.selector.register(listener, selectors.EVENT_READ, 'accept')
        self.selector.register(wake_read, selectors.EVENT_READ, 'wake')
        parent = os.getppid()
        try:
            while os.getppid() == parent:   # a conductor's server ends with it
                for key, _mask in self.selector.select(timeout=PARENT_CHECK):
                    if key.data == 'accept':
                        self._accept()
                    elif key.data == 'wake':
                        try:
                            os.read(wake_read, 4096)
                        except BlockingIOError:
                            pass
                    else:
                        self._launcher_readable(key.fileobj, key.data)
                self._reap()
        finally:
            for pid in list(self.runs):
                kill_tree(pid)
            # its private directory goes with it (a conductor killed cannot remove it)
            remove_private_dir(os.path.dirname(self.socket_path))

    def _accept(self):
        conn, _ = self.listener.accept()
        try:
            uid = struct.unpack('3i', conn.getsockopt(
                socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize('3i')))[1]
            if uid != os.getuid():
                raise PermissionError('a process of uid %d' % uid)
            conn.settimeout(REQUEST_TIMEOUT)
            head, fds, _flags, _addr = socket.recv_fds(conn, 8, 3)
            if len(head) != 8 or len(fds) != 3:
                raise ValueError('no request')
            size, data = struct.unpack('!Q', head)[0], b''
            while len(data) < size:
                chunk = conn.recv(min(1 << 20, size - len(data)))
                if not chunk:
                    raise ValueError('a request cut short')
                data += chunk
            request = json.loads(data)
        except (OSError, ValueError) as exc:
            LOG.warning('playbook server: a request refused: %s', exc)
            conn.close()
            return
        try:
            if self.key is None:
                self._warm(request)
            try:
                pid = os.fork()
            except OSError as exc:   # the launcher sees its end without an exit code
                LOG.warning('playbook server: could not fork: %s', exc)
                conn.close()
                return
            if pid == 0:
                code = 255
                try:
                    code = self._run(request, fds, conn)
                finally:
                    os._exit(code)
        finally:
            for fd in fds:
                os.close(fd)
        conn.setblocking(False)
        self.runs[pid] = conn
        self.selector.register(conn, selectors.EVENT_READ, pid)
        self._send(conn, {'pid': pid})

    def _warm(self, request):
        """Import Ansible, its configuration and the collection's store with the first
        run's environment and working directory; nothing a run changes is kept."""
        own_env, own_cwd = dict(os.environ), os.getcwd()
        os.environ.clear()
        os.environ.update(request['env'])
        try:
            os.chdir(request['cwd'])
            importlib.import_module('ansible.cli.playbook')
            importlib.import_module('ansible.plugins.loader').init_plugin_loader()
            importlib.import_module(PRELOAD).preload()
            self.key = warm_key(request['env'], request['cwd'])
        except Exception:   # then every run is the real ansible-playbook
            LOG.exception('playbook server: could not import Ansible')
            self.key = ''
        finally:
            os.environ.clear()
            os.environ.update(own_env)
            os.chdir(own_cwd)

    def _launcher_readable(self, conn, pid):
        """A launcher never writes after its request: readable means it went away (EOF)
        while its run goes on - killed by ansible-runner - so the run goes too."""
        try:
            if conn.recv(1):
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        self.selector.unregister(conn)
        conn.close()
        self.runs[pid] = None
        kill_tree(pid)

    def _reap(self):
        while self.runs:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.runs.pop(pid, None)
            if conn is not None:
                self.selector.unregister(conn)
                self._send(conn, {'exit': os.waitstatus_to_exitcode(status) % 256})
                conn.close()

    @staticmethod
    def _send(conn, message):
        try:
            conn.setblocking(True)
            conn.sendall(json.dumps(message).encode('utf-8') + b'\n')
            conn.setblocking(False)
        except OSError:   # the launcher is gone: _launcher_readable sees it
            pass

    # ------------------------------------------------------------ a run's side
    def _run(self, request, fds, conn):
        """In the forked process: become the run's ansible-playbook. Returns its exit
        code (never returns when it execs the real one)."""
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.selector.close()
        for item in [self.listener, conn] + [c for c in self.runs.values() if c]:
            item.close()
        for fd in self.wake:
            os.close(fd)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        env, argv = request['env'], [str(arg) for arg in request['argv']]
        os.chdir(request['cwd'])
        os.environ.clear()
        os.environ.update(env)
        if not (self.key and warm_key(env, request['cwd']) == self.key
                and name_process([request['launcher']] + argv)):
            os.execve(self.playbook, [self.playbook] + argv, env)
        return self._run_warm(argv)

    def _run_warm(self, argv):
        from ansible import constants
        from ansible.cli.playbook import PlaybookCLI
        atexit._clear()   # the server's (its temporary directory) are not the run's
        # Ansible's settings from this run's environment (its per-run ones, a temporary
        # directory of its own).
        for name in constants.config.get_configuration_definitions():
            constants.set_constant(name, constants.config.get_config_value(
                name, variables=vars(constants)))
        warnings.filterwarnings('ignore', 'AnsibleCollectionFinder has already been configured')
        sys.argv = [self.playbook] + argv
        code = 0
        try:
            PlaybookCLI.cli_executor([self.playbook] + argv)
        except SystemExit as end:
            code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
        finally:
            atexit._run_exitfuncs()
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        return code


class PlaybookServer:
    """The conductor's handle on its server: a private directory (0700) with the socket
    and the launcher, the server process (at niceness ``nice``), its end."""

    def __init__(self, nice=0):
        self.dir = Path(tempfile.mkdtemp(prefix='magnum-playbooks-'))
        self.socket = self.dir / SOCKET_NAME
        self.launcher = self.dir / LAUNCHER_NAME
        playbook = real_playbook()
        write_launcher(self.launcher, self.socket, playbook)
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'api.playbook_server', str(self.socket), playbook,
             str(nice), ' ' * ARGV_ROOM], cwd=str(Path(__file__).resolve().parent.parent),
            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while not self.socket.exists() and self.process.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.02)

    @property
    def alive(self):
        return self.process.poll() is None

    def stop(self):
        if self.alive:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        remove_private_dir(self.dir)


def main(argv=None):
    socket_path, playbook, nice = (argv or sys.argv[1:])[:3]
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(name)s %(message)s')
    try:
        os.setpriority(os.PRIO_PROCESS, 0, max(int(nice), os.getpriority(os.PRIO_PROCESS, 0)))
    except OSError:
        pass
    Server(socket_path, playbook).serve()


if __name__ == '__main__':
    main()
