# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The wait for new servers to answer over SSH, from the controller: every server asked
at once, each with a plain ``ssh ... true`` - no Python started on a guest (seconds each on
a slow one), no server waited for only after another - until it answers or the bound runs
out. A server reached through another (its jump host, ssh_routes' ``through``) is asked
once that one answered: nothing is known of it before, and it is never counted silent for
its jump host's silence."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import fcntl
import json
import os
import shlex
import subprocess
import threading
import time

# How many creates' slowest boots the cloud's record keeps.
KEEP_BOOTS = 10


def probe_command(route, user, key_file, connect_timeout=10):
    """The ssh command line asking a server (``route``: ssh_routes' entry, its ``host``
    and ``args``, Ansible's ansible_ssh_common_args) to run ``true``."""
    return (['ssh', '-i', key_file, '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR']
            + shlex.split(route.get('args') or '')
            # ssh takes an option's first value: the probe's own bound comes last, so a
            # route's ConnectTimeout wins, as it does for Ansible's connections
            + ['-o', 'ConnectTimeout=%d' % connect_timeout,
               '%s@%s' % (user, route['host']), 'true'])


def _error(run):
    text = (run.stderr or run.stdout or '').strip()
    return text.splitlines()[-1] if text else 'ssh exited %d' % run.returncode


def wait(names, routes, user, key_file, timeout, sleep=3, connect_timeout=10,
         run=subprocess.run, clock=time.monotonic):
    """Asks every server of ``names`` at once, again every ``sleep`` seconds, until each
    answers or ``timeout`` seconds have passed. ``routes``: {name: {'host', 'args',
    'through'}} (ssh_routes). Returns one result per name, in their order, as an Ansible
    loop's: {'item', 'failed', 'msg', 'elapsed'} (the seconds until it answered, or
    until the wait gave up on it)."""
    began = clock()
    deadline = began + timeout
    bound = max(connect_timeout * 3, 30)   # one try's, a hung ProxyCommand's included
    answered = dict((name, threading.Event()) for name in names)
    results = {}

    def ask(name):
        route = routes.get(name) or {}
        through = route.get('through') or ''
        error, asked = '', False
        while True:
            if not route.get('host'):
                error = 'no address to reach it at (no floating IP and no jump host)'
                break
            if through and through in answered and not answered[through].is_set():
                error = 'not asked: its jump host %s has not answered' % through
            else:
                asked = True
                try:
                    probe = run(probe_command(route, user, key_file, connect_timeout),
                                capture_output=True, text=True, check=False,
                                timeout=bound, stdin=subprocess.DEVNULL)
                except subprocess.TimeoutExpired:
                    error = 'no answer within %d s' % bound
                else:
                    if probe.returncode == 0:
                        answered[name].set()
                        results[name] = {'item': name, 'failed': False, 'msg': '',
                                         'elapsed': int(clock() - began)}
                        return
                    error = _error(probe)
            if clock() + sleep >= deadline:
                break
            time.sleep(sleep)
        results[name] = {'item': name, 'failed': True, 'asked': asked,
                         'elapsed': int(clock() - began),
                         'msg': 'timed out waiting for SSH: %s' % error}

    threads = [threading.Thread(target=ask, args=(name,), daemon=True) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results[name] for name in names]


def recorded_boots(path):
    """The slowest boot (seconds until its last new server answered) of each of the
    cloud's last creates, oldest first, from its record (``path``; [] when none)."""
    try:
        with open(path) as f:
            boots = json.load(f).get('boots') or []
    except (OSError, ValueError, AttributeError):
        return []
    return [int(b) for b in boots if isinstance(b, (int, float)) and b >= 0][-KEEP_BOOTS:]


def scaled_bound(least, boots, most):
    """The first wait's bound: twice the slowest boot the cloud's record holds (``boots``),
    at least ``least`` (the operator's) and at most ``most`` (half the whole wait's)."""
    bound = max([int(least)] + [2 * b for b in boots])
    return min(bound, int(most)) if most else bound


def remember_boot(path, seconds, keep=KEEP_BOOTS):
    """Adds a create's slowest boot to the cloud's record, under a lock (jobs of several
    conductors share it), keeping the last ``keep``; the file is replaced whole."""
    folder = os.path.dirname(path) or '.'
    os.makedirs(folder, exist_ok=True)
    with open(path + '.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        boots = recorded_boots(path) + [int(seconds)]
        temporary = '%s.%d' % (path, os.getpid())
        with open(temporary, 'w') as f:
            json.dump({'boots': boots[-keep:]}, f)
        os.replace(temporary, path)
