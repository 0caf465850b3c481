# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The service's own processes (the API and its conductors, roles/service) as the host
supervises them: a systemd unit where systemd runs, a supervisord program where it does
not. Each is written by its format's rules from one description - a program:

``name`` (the unit's or program's name), ``command`` (the argument list), ``environment``
(name -> value), ``user``, ``directory`` (its working directory), ``description``, ``log``
(supervisord: the file its output goes to; systemd keeps it in the journal).

What cannot be written so that the host reads it back as given is refused, never
written: a control character anywhere, a name that is not one, a relative path; and for
supervisord a `` ;`` or `` #`` (its inline comments)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import shlex

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.core.node_values import (
    CONTROL, systemd_environment, systemd_quote)

NAME = re.compile(r'\A[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}\Z')
ENV_NAME = re.compile(r'\A[A-Za-z_][A-Za-z0-9_]*\Z')
USER = re.compile(r'\A[a-z_][a-z0-9_-]{0,31}\Z')
# supervisord's configuration parser ends a value at a ';' or '#' after whitespace.
INLINE_COMMENT = re.compile(r'\s[;#]')


def _program(program):
    """The program's fields, checked; strings throughout."""
    if not isinstance(program, dict):
        raise Invalid('a program is a mapping (name, command, environment, ...)')
    name = str(program.get('name') or '')
    if not NAME.match(name):
        raise Invalid('%r is not a service name (letters, digits, _ . @ -).' % name)
    command = [str(a) for a in program.get('command') or []]
    if not command or not command[0].startswith('/'):
        raise Invalid('the command of %s must start with an absolute path.' % name)
    env = dict((str(k), '' if v is None else str(v))
               for k, v in (program.get('environment') or {}).items())
    for key in env:
        if not ENV_NAME.match(key):
            raise Invalid('%r is not an environment variable name.' % key)
    user = str(program.get('user') or 'root')
    if not USER.match(user):
        raise Invalid('%r is not a user name.' % user)
    directory = str(program.get('directory') or '/')
    if not directory.startswith('/') or re.search(r'\s', directory):
        raise Invalid('%r: the working directory must be an absolute path without '
                      'whitespace.' % directory)
    fields = {'name': name, 'command': command, 'environment': env, 'user': user,
              'directory': directory,
              'description': str(program.get('description') or name),
              'log': str(program.get('log') or '')}
    for value in command + list(env.values()) + [fields['description'], fields['log']]:
        if CONTROL.search(value):
            raise Invalid('%r cannot be written into %s: it holds a control character.'
                          % (value, name))
    return fields


def _exec_word(value):
    """One word of ExecStart=: quoted as systemd_quote does, ``$`` doubled (ExecStart
    substitutes ``$NAME`` and ``${NAME}``, Environment= does not)."""
    return systemd_quote(value).replace('$', '$$')


def systemd_unit(program):
    """The text of a systemd service unit running ``program``."""
    p = _program(program)
    return ''.join([
        '[Unit]\n',
        'Description=%s\n' % p['description'].replace('%', '%%'),
        'After=network-online.target\n',
        'Wants=network-online.target\n',
        '\n[Service]\n',
        'Type=simple\n',
        'User=%s\n' % p['user'],
        'WorkingDirectory=%s\n' % p['directory'],
        systemd_environment(p['environment']),
        'ExecStart=%s\n' % ' '.join(_exec_word(a) for a in p['command']),
        'Restart=on-failure\n',
        'RestartSec=5\n',
        # A job's playbook and its SSH connections end with the process that runs them.
        'KillMode=control-group\n',
        'TimeoutStopSec=60\n',
        '\n[Install]\n',
        'WantedBy=multi-user.target\n'])


def _supervisor_value(value, name):
    if INLINE_COMMENT.search(value):
        raise Invalid('%r cannot be written into the supervisord program %s: a ";" or "#" '
                      'after whitespace starts a comment there.' % (value, name))
    return value.replace('%', '%%')


def _supervisor_env(env, name):
    """supervisord's environment=: KEY="value" pairs, split by its shell-like lexer."""
    return ','.join('%s="%s"' % (key, _supervisor_value(
        env[key].replace('\\', '\\\\').replace('"', '\\"'), name))
        for key in sorted(env) if env[key] != '')


def supervisor_program(program):
    """The text of a supervisord ``[program:...]`` section running ``program``: restarted
    when it exits, its whole process group stopped with it, its output in ``log``."""
    p = _program(program)
    name = p['name']
    lines = [
        '; %s' % _supervisor_value(p['description'], name),
        '[program:%s]' % name,
        'command=%s' % _supervisor_value(shlex.join(p['command']), name),
        'directory=%s' % p['directory'],
        'user=%s' % p['user'],
        'autostart=true',
        'autorestart=true',
        'startsecs=5',
        'stopsignal=TERM',
        'stopwaitsecs=60',
        # A job's playbook and its SSH connections end with the process that runs them.
        'stopasgroup=true',
        'killasgroup=true',
        'redirect_stderr=true',
    ]
    if p['environment']:
        lines.append('environment=%s' % _supervisor_env(p['environment'], name))
    if p['log']:
        if not p['log'].startswith('/'):
            raise Invalid('%r: the log of %s must be an absolute path.' % (p['log'], name))
        lines += ['stdout_logfile=%s' % _supervisor_value(p['log'], name),
                  'stdout_logfile_maxbytes=50MB', 'stdout_logfile_backups=5']
    return '\n'.join(lines) + '\n'
