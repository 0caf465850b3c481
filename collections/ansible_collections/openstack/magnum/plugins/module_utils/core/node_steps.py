# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's setup as one module run on the node (a driver's ``<coe>_node_setup``), every
node at once: the steps write only what differs, run commands, and say what they changed;
a failing step raises ``StepFailed`` naming the step, the command and its error.

One module per node and run, not one task per step and node: each task is Python started
on the node over SSH (seconds on a guest behind a jump host), and a looped task works on
one node after the other."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import shlex
import stat
import time

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError

# What dpkg-query prints for each package (``ii`` first: installed).
DPKG_STATUS = ['dpkg-query', '-W', '-f', '${db:Status-Abbrev}\n']


class StepFailed(Exception):
    pass


def lacks_packages(rc, lines):
    """Whether ``DPKG_STATUS + packages`` (its exit code, its lines) says one of them is not
    installed (unknown to dpkg, removed, half-installed)."""
    return rc != 0 or not lines or any(not line.startswith('ii') for line in lines)


def nodes_lacking(results):
    """The nodes (loop items) of a task looped over nodes that ran ``DPKG_STATUS +
    packages`` on which a package is not installed: those whose package step refreshes its
    lists and installs - the others' (a node image holding them, where no mirror may be
    reachable) touch nothing."""
    return [r.get('item') for r in results or []
            if lacks_packages(r.get('rc'), r.get('stdout_lines') or [])]


# What an asynchronous job's file holds while the job runs (Ansible's async_wrapper writes
# it first, then the module's result over it, each through a file renamed into place).
JOB_RUNNING = '{"started": true'


def _job_path(async_dir, jid):
    """The job file's path for a shell: ``async_dir`` (``~/...`` left for the shell to
    expand, the rest quoted) and the job id (Ansible's: j, digits and dots; anything else
    dropped)."""
    jid = re.sub(r'[^j0-9.]', '', str(jid))
    if not jid:
        raise MagnumError('node_job_poll: not a job id')
    path = '%s/%s' % (str(async_dir or '~/.ansible_async').rstrip('/'), jid)
    if path.startswith('~/'):
        return '~/' + shlex.quote(path[2:])
    return shlex.quote(path)


def job_poll_command(async_dir, jid):
    """One shell command (no Python on the node: async_status starts Python there, seconds
    of a slow guest's CPU per ask) printing the job's file, read once, and removing it once
    it holds the result; ``{}`` where there is no such file."""
    return ('f=%s; d=$(cat -- "$f" 2>/dev/null) || d={}; printf \'%%s\\n\' "$d"; '
            'case "$d" in \'%s\'*|{}) ;; *) rm -f -- "$f" ;; esac'
            % (_job_path(async_dir, jid), JOB_RUNNING))


def job_result(polled):
    """What async_status would have returned, from a ``job_poll_command`` looped over a
    started task's results (each ``polled`` one item's result; its ``item`` kept: the started
    result, whose own ``item`` is the node): ``finished`` false while the job runs, else the
    job's result, a missing file or an unreadable answer made a failure. An unreachable
    node's result is returned as it is."""
    if polled.get('unreachable'):
        return polled
    started = polled.get('item') or {}
    base = {'item': started, 'ansible_job_id': started.get('ansible_job_id')}
    out = (polled.get('stdout') or '').strip()
    if polled.get('rc') not in (0, None):
        return dict(base, failed=True, finished=True, msg='asking for the job failed (exit %s): %s' % (
            polled.get('rc'), detail(out, polled.get('stderr'))))
    start, end = out.find('{'), out.rfind('}')
    try:
        data = json.loads(out[start:end + 1]) if start >= 0 else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return dict(base, failed=True, finished=True, msg='the job\'s answer is not its result: %s'
                    % out[-500:])
    if not data:
        return dict(base, failed=True, finished=True,
                    msg='the job\'s result is gone from the node (was it restarted?)')
    if data.get('started') and not data.get('finished', False) and len(data) <= 3:
        return dict(base, started=True, finished=False)
    return dict(data, finished=True, **base)


def run_in_module(module, steps, work):
    """``work()``'s result; a failing step (or the node's I/O) fails ``module`` with its
    message and what ``steps`` changed before it."""
    try:
        return work()
    except (StepFailed, MagnumError, IOError, OSError) as exc:
        module.fail_json(msg=str(exc), changes=steps.changes)


def detail(out, err):
    """The end of a failed command's error (or output), for a step's message."""
    return (err or out or '').strip()[-1500:]


class NodeSteps(object):
    """The primitives of a node's steps. ``run(argv, environ_update=None)`` runs a command
    (AnsibleModule.run_command's (rc, out, err)); nothing is written or run but reads in
    ``check_mode``. ``changes`` lists what changed, in order; ``reload`` says a systemd
    unit changed (reloaded once, at the end)."""

    def __init__(self, run, check_mode=False, sleep=time.sleep, now=time.time):
        self._run = run
        self.check_mode = check_mode
        self.changes = []
        self.reload = False
        self._sleep, self._now = sleep, now

    def command(self, argv, what, check=True, env=None):
        """Run ``argv``: (rc, stdout); with ``check``, a StepFailed unless it exits 0."""
        rc, out, err = self._run(argv, environ_update=env) if env else self._run(argv)
        if rc != 0 and check:
            raise StepFailed('%s: %s exited %d: %s' % (what, ' '.join(argv), rc, detail(out, err)))
        return rc, out

    def changed(self, what):
        self.changes.append(what)

    def directory(self, path, mode=0o755):
        if os.path.isdir(path):
            return False
        self.changed('made ' + path)
        if not self.check_mode:
            os.makedirs(path, mode)
            os.chmod(path, mode)
        return True

    def file(self, path, content, mode=0o644):
        """Write ``content`` to ``path`` where it (or the file's mode) differs, through a
        file renamed over it; True when it did (or would)."""
        data = content.encode('utf-8')
        try:
            with open(path, 'rb') as f:
                same = f.read() == data
            same = same and stat.S_IMODE(os.stat(path).st_mode) == mode
        except (IOError, OSError):
            same = False
        if same:
            return False
        self.changed('wrote ' + path)
        if not self.check_mode:
            self.directory(os.path.dirname(path))
            tmp = path + '.magnum-tmp'
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, 'wb') as f:
                f.write(data)
            os.chmod(tmp, mode)
            os.rename(tmp, path)
        return True

    def read(self, path):
        """The text of ``path``, or None where it cannot be read."""
        try:
            with open(path) as f:
                return f.read()
        except (IOError, OSError):
            return None

    def wait(self, argv, what, timeout, delay=1):
        """Run ``argv`` until it exits 0 (its stdout), for up to ``timeout`` seconds; then
        a StepFailed with its last error."""
        deadline = self._now() + timeout
        while True:
            rc, out, err = self._run(argv)
            if rc == 0:
                return out
            if self._now() >= deadline:
                raise StepFailed('%s: %s did not succeed within %ds: %s' % (
                    what, ' '.join(argv), timeout, detail(out, err)))
            self._sleep(delay)

    def packages(self, names, env=None):
        """Debian's ``names`` installed where one is not (a node image holding them, where
        no mirror may be reachable, touches nothing): the lists refreshed, then installed
        without recommends, through ``env`` (the template's proxies)."""
        rc, out = self.command(DPKG_STATUS + list(names), 'Listing the packages', check=False)
        if not lacks_packages(rc, out.splitlines()):
            return False
        self.changed('installed ' + ', '.join(names))
        if self.check_mode:
            return True
        env = dict(env or {}, DEBIAN_FRONTEND='noninteractive')
        self.command(['apt-get', 'update', '-q'], 'Refreshing the package lists', env=env)
        self.command(['apt-get', 'install', '-q', '-y', '--no-install-recommends',
                      '-o', 'Dpkg::Options::=--force-confdef',
                      '-o', 'Dpkg::Options::=--force-confold'] + list(names),
                     'Installing ' + ', '.join(names), env=env)
        return True
