# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failed task's result says of its cause, as a cluster's status_reason names it.

A loop's own message is Ansible's "All items completed" (or "One or more items
failed"): the cause is in its first item that failed or could not reach its host, which
is named (the delegated host, else the item's label); outside a loop, the node the
operation plays' strategy names (plugins/strategy/operation.py). A command's stderr ends the
message, without the warnings it printed first (kubeadm's ``[WARNING ...]``, Go's ``W1128
...`` log lines): from its first line that says ``error`` when one does. An error raised
while Ansible templated the task's arguments (a filter's refusal) reads as its cause
alone, without Ansible's wrapping. Used by the
lifecycle playbooks' rescue (filter ``failure_reason``) and by the API's executor for a
run that ended without recording its failure.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

STDERR_TAIL = 1500
# Lines of a command's stderr that are not its error: kubeadm's preflight warnings, klog's
# warning lines (W<mmdd> <time>) and kubeadm's closing hint.
NOISE = (re.compile(r'^\s*\[WARNING\b'), re.compile(r'^W\d{4} \d'),
         re.compile(r'^To see the stack trace of this error'))


# Ansible's words around an error raised while it templated a task's arguments (ansible-core
# 2.19: "Task failed: Finalization of task args for 'ansible.builtin.set_fact' failed: Error
# while resolving value for 'x': The filter plugin 'openstack.magnum.f' failed: f: <cause>"),
# this collection's filters' own "f: " included: the cause alone is the reason.
WRAPPER = re.compile(r"(?:Task failed: |Finalization of task args for '[^']*' failed: "
                     r"|Error while resolving value for '[^']*': "
                     r"|The (?:filter|lookup|test) plugin '(?:[\w.]+\.)?(\w+)' failed: (?:\1: )?)")


def _unwrapped(message):
    while True:
        wrapper = WRAPPER.match(message)
        if not wrapper:
            return message
        message = message[wrapper.end():]


def _bad(result):
    return isinstance(result, dict) and bool(result.get('failed') or result.get('unreachable'))


def _where(result):
    """The host a loop item ran on (delegated), else its label."""
    delegated = result.get('_ansible_delegated_vars') or {}
    for name in (delegated.get('ansible_delegated_host'), delegated.get('ansible_host'),
                 result.get('_ansible_item_label'), result.get('item')):
        if name is not None and not isinstance(name, (dict, list)):
            return str(name)
    return None


def _error_text(stderr):
    """A command's stderr without its warnings; from its first ``error...`` line on, if any
    (``error execution phase addon/coredns: ...``)."""
    lines = [line for line in stderr.splitlines()
             if line.strip() and not any(pattern.match(line) for pattern in NOISE)]
    first = next((i for i, line in enumerate(lines)
                  if line.lstrip().lower().startswith(('error', 'fatal'))), 0)
    return '\n'.join(lines[first:]).strip()


def failure_reason(result, default='task failed'):
    """The cause of the failed (or unreachable) task ``result``, as one line of text."""
    if not isinstance(result, dict):
        return default
    items = [r for r in result.get('results') or [] if _bad(r)]
    cause = items[0] if items else result
    message = _unwrapped(str(cause.get('msg') or cause.get('reason') or default).strip())
    where = _where(cause) if items else result.get('unreachable_node')
    if cause.get('unreachable'):
        message = '%s is unreachable: %s' % (where or 'the host', message)
    elif where:
        message = '%s: %s' % (where, message)
    stderr = _error_text(str(cause.get('stderr') or ''))
    if stderr and stderr not in message:
        message = '%s: %s' % (message, stderr[-STDERR_TAIL:])
    return message
