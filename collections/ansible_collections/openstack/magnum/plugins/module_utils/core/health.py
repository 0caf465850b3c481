# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a driver's health reader is handed and gives back.

A cluster's health is read two ways with the same rules: by its driver's ``health`` tasks in
playbooks/cluster_health.yml (over SSH and the collection's modules: what one runs by hand
or from AWX), and by the conductor's health rounds without a playbook (api/health_check.py):
a driver that can be read over its COE's own API declares ``health_reader`` (its
``health.py``: ``read(cluster, template, nodes, http)``), which asks through ``http`` - a
client of the cluster's own CA and an admin certificate of it, that reuses its connections -
and judges what it read with the very function its role's filter applies."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_values

# Magnum's health_status_reason when the COE could not be asked at all.
NOT_ACCESSIBLE = 'The cluster is not accessible'


class Unreachable(Exception):
    """The COE's endpoint did not answer (refused, timed out, TLS failed): the text says
    how, as a playbook's failed request would."""


def unknown():
    """Magnum's fallback values: nobody could be asked."""
    return {'status': 'UNKNOWN', 'reason': {'api': NOT_ACCESSIBLE}}


def nodes(groups):
    """The cluster's nodes as its last operation recorded them (each node group's
    ``nodes``: name, id, address), in node group order, each with its ``role`` (master, or
    worker for any group not of masters)."""
    found = []
    for group in groups or []:
        role = 'master' if group.get('role') == 'master' else 'worker'
        for node in group.get('nodes') or []:
            if node.get('name'):
                found.append(dict(node, role=role))
    return found


def url(scheme, address, port, path):
    """``scheme://address:port/path``, an IPv6 address in brackets."""
    return '%s://%s:%s%s' % (scheme, node_values.bracketed(address), port, path)
