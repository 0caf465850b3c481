"""The ``ansible-playbook`` a conductor gives ansible-runner (its ``binary``): it asks the
conductor's playbook server (api/playbook_server.py) to run the playbook in a process
forked from one that has Ansible and the collection imported already, and ends as that
run ends, with its exit code.

This file is the launcher's body: api/playbook_server.py writes it after a shebang line
(this Python, ``-I -S``: no site, nothing of the environment - a start of a few
milliseconds) and the two constants below, into the server's private directory. Only the
standard library, so that it starts fast and alone.

The run gets this process's arguments, working directory, environment and standard
streams (the pseudo-terminal ansible-runner reads); SIGTERM, SIGINT or SIGHUP here are
passed to the run's process group (those this process was started ignoring stay
ignored, as they would be by the real one), and if this process is killed the server
kills the run's whole process tree. When the server cannot be reached, this process becomes the
real ``ansible-playbook`` (exec): a run never depends on the server being up.
"""

import json
import os
import signal
import socket
import struct
import sys

SOCKET = None      # the server's socket (set in the launcher)
PLAYBOOK = None    # the real ansible-playbook, when the server is away (set in the launcher)


def _exec_real(argv):
    os.execv(PLAYBOOK, [PLAYBOOK] + argv)


def _lines(sock):
    """The server's JSON lines, one at a time; ends when it closes."""
    buffered = b''
    while True:
        while b'\n' not in buffered:
            try:
                chunk = sock.recv(4096)
            except InterruptedError:
                continue
            if not chunk:
                return
            buffered += chunk
        line, buffered = buffered.split(b'\n', 1)
        yield json.loads(line)


def main(argv):
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(SOCKET)
        request = json.dumps({'argv': argv, 'cwd': os.getcwd(), 'env': dict(os.environ),
                              'launcher': sys.argv[0]}).encode('utf-8')
        socket.send_fds(sock, [struct.pack('!Q', len(request))], [0, 1, 2])
        sock.sendall(request)
    except OSError:
        _exec_real(argv)
    run = {'pid': None}

    def forward(signum, _frame):
        if run['pid']:
            try:
                os.killpg(run['pid'], signum)
            except OSError:
                pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        if signal.getsignal(signum) != signal.SIG_IGN:   # ansible-runner ignores SIGHUP
            signal.signal(signum, forward)
    for message in _lines(sock):
        if 'pid' in message:
            run['pid'] = message['pid']
        elif 'exit' in message:
            return message['exit']
    forward(signal.SIGKILL, None)   # the server went away: so does its run
    sys.stderr.write('The playbook server ended the run without its exit code.\n')
    return 255


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
