# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes cluster's health read over its API server, without a playbook
(module_utils/core/health.py): ``/readyz`` and the nodes, judged by k8s_config.health - the
rule roles/kubernetes/tasks/health.yml applies through the k8s_health filter."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.openstack.magnum.plugins.module_utils.core import health as health_mod
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_config


def read(cluster, template, nodes, http):
    """The health of ``cluster`` through its api_address (None when it has none: only its
    masters, over SSH, can say - the playbook's way)."""
    api = (cluster.get('api_address') or '').rstrip('/')
    if not api:
        return None
    try:
        status, body = http.get(api + '/readyz')
    except health_mod.Unreachable:
        return health_mod.unknown()
    text = body.decode('utf-8', 'replace').strip()
    answer = text if status == 200 else 'HTTP %s: %s' % (status, text)
    try:
        status, body = http.get(api + '/api/v1/nodes')
        listed = json.loads(body)['items'] if status == 200 else None
    except (health_mod.Unreachable, ValueError, KeyError, TypeError):
        listed = None
    if not isinstance(listed, list):
        listed = None
    return k8s_config.health(listed, [n['name'] for n in nodes], answer)
