# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Swarm cluster's health from its managers' view: the rule (``judge``, which
roles/swarm/tasks/health.yml applies through the swarm_health filter to ``docker node ls``
on each manager) and the reader without a playbook (``read``: each manager's Docker API,
``GET /nodes``, over the cluster's TLS - module_utils/core/health.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.openstack.magnum.plugins.module_utils.core import health as health_mod

# `docker node ls --format` of the role's health task: one line per node.
NODE_LS_FORMAT = '{{.Hostname}} {{.Status}} {{.Availability}} {{.ManagerStatus}}'
GOOD_MANAGER = ('Leader', 'Reachable')
# The managers' Docker API: with TLS, and without it (tls_disabled).
TLS_PORT, PLAIN_PORT = 2376, 2375


def judge(views, masters):
    """``views``: manager name -> the lines of its node list (``NODE_LS_FORMAT``; absent or
    None for a manager that did not answer); ``masters``: the managers asked, in order.
    UNKNOWN when none answered; else HEALTHY when every node is Ready and Active, every
    manager Leader or Reachable and every manager answered, UNHEALTHY naming the rest
    (``<node>.status``: what the list says of it; ``<manager>.api``: not answering)."""
    answering = [m for m in masters if (views or {}).get(m) is not None]
    if not answering:
        return health_mod.unknown()
    reason = {}
    for line in views[answering[0]]:
        parts = str(line).split()
        if not parts:
            continue
        bad = parts[1:2] != ['Ready'] or parts[2:3] != ['Active'] or \
            (len(parts) > 3 and parts[3] not in GOOD_MANAGER)
        if bad:
            reason['%s.status' % parts[0]] = ' '.join(parts[1:])
    for master in masters:
        if master not in answering:
            reason['%s.api' % master] = 'not answering'
    status = 'UNHEALTHY' if reason else 'HEALTHY'
    reason['api'] = 'ok'
    return {'status': status, 'reason': reason}


def judge_results(results, masters):
    """``judge`` of the role's registered loop over the managers (``item``: the manager,
    ``rc`` 0 and ``stdout_lines`` where ``docker node ls`` answered)."""
    views = dict((r.get('item'), r.get('stdout_lines') or []) for r in results or []
                 if r.get('rc') == 0)
    return judge(views, list(masters or []))


def _pretty(value):
    value = str(value or '')
    return value[:1].upper() + value[1:]


def node_lines(listed):
    """The Docker API's ``GET /nodes`` as ``docker node ls`` prints it (NODE_LS_FORMAT)."""
    lines = []
    for node in listed or []:
        manager = node.get('ManagerStatus') or {}
        role = ('Leader' if manager.get('Leader') else _pretty(manager.get('Reachability'))) \
            if manager else ''
        lines.append(' '.join([(node.get('Description') or {}).get('Hostname') or node.get('ID', '?'),
                               _pretty((node.get('Status') or {}).get('State')),
                               _pretty((node.get('Spec') or {}).get('Availability')),
                               role]))
    return lines


def read(cluster, template, nodes, http):
    """Each manager's node list through its Docker API (on the managers' own port - the
    api_address may be a load balancer's; plain HTTP when the template has tls_disabled),
    judged as the role does; None when no manager's address is recorded."""
    scheme = 'http' if template.get('tls_disabled') else 'https'
    port = PLAIN_PORT if scheme == 'http' else TLS_PORT
    masters = [n for n in nodes if n['role'] == 'master']
    if not any(m.get('address') for m in masters):
        return None  # recorded before nodes kept their addresses: the playbook asks
    views = {}
    for master in masters:
        if not master.get('address'):
            continue
        try:
            status, body = http.get(health_mod.url(scheme, master['address'], port, '/nodes'))
            if status == 200:
                views[master['name']] = node_lines(json.loads(body))
        except (health_mod.Unreachable, ValueError, TypeError, AttributeError):
            continue
    return judge(views, [m['name'] for m in masters])
