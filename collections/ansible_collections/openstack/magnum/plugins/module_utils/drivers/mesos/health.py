# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Mesos cluster's health read without a playbook (module_utils/core/health.py): the
masters' ``/master/state`` (a master that does not lead redirects to the leader) and
Marathon's ``/ping``, judged by mesos_config.health - the rule roles/mesos/tasks/health.yml
applies through the mesos_health filter."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.openstack.magnum.plugins.module_utils.core import health as health_mod
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import mesos_config

MASTER_PORT = 5050
MARATHON_PORT = 8080


def read(cluster, template, nodes, http):
    masters = [n['address'] for n in nodes if n['role'] == 'master' and n.get('address')]
    agents = [n['address'] for n in nodes if n['role'] != 'master' and n.get('address')]
    if not masters:
        return None  # recorded before nodes kept their addresses: the playbook asks
    state, pong = None, False
    for address in masters:
        if state is None:
            try:
                status, body = http.get(
                    health_mod.url('http', address, MASTER_PORT, '/master/state'))
                state = json.loads(body) if status == 200 else None
            except (health_mod.Unreachable, ValueError):
                state = None
        if not pong:
            try:
                pong = http.get(health_mod.url('http', address, MARATHON_PORT, '/ping'))[0] == 200
            except health_mod.Unreachable:
                pong = False
    return mesos_config.health(state if isinstance(state, dict) else None, agents, pong)
