# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Auto-healing (the ``auto_healing_enabled`` label): which worker nodes to replace.

The health rounds record each node's Ready condition (``<node>.Ready`` in
health_status_reason, as Magnum's monitor does). A worker whose condition has not been
``True`` for the whole grace period is replaced the way magnum-auto-healer repairs a
worker: a resize of its node group to the same count naming it in nodes_to_remove (a
new node is made, the broken one drained and removed). Masters are not replaced (a
resize cannot), and never more than half of a group's nodes (at least one) at once: a
network split or an outage of the API would otherwise make every node look broken.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as labels_mod

CONTROLLERS = ('magnum-auto-healer',)
# Ready values that say a node is broken (the API answered for it, or the server never
# registered); an unreachable API gives no node values at all.
BROKEN = ('False', 'Unknown', 'not registered')


def enabled(cluster):
    labels = cluster.get('labels') or {}
    return labels_mod.to_bool(labels.get('auto_healing_enabled')) and \
        (labels.get('auto_healing_controller') or CONTROLLERS[0]) in CONTROLLERS


def broken_workers(cluster, groups):
    """{group uuid: [names of its broken nodes]} from the cluster's last health round,
    worker groups only; empty when the API itself did not answer ``ok``."""
    reason = cluster.get('health_status_reason') or {}
    if not isinstance(reason, dict) or reason.get('api') != 'ok':
        return {}
    found = {}
    for group in groups:
        if group.get('role') == 'master':
            continue
        names = [n['name'] for n in group.get('nodes') or [] if n.get('name')
                 and reason.get('%s.Ready' % n['name']) in BROKEN]
        if names:
            found[group['uuid']] = sorted(names)
    return found


def due(broken, first_seen, now, grace, groups):
    """The repairs to start now, ``[(group uuid, node names)]``, given ``broken``
    (broken_workers) and ``first_seen`` (node name -> when it was first seen broken; updated
    here: nodes no longer broken are forgotten, new ones noted at ``now``). A node is due
    once broken for ``grace`` seconds; at most half of a group's nodes (at least one)."""
    current = set(name for names in broken.values() for name in names)
    for name in list(first_seen):
        if name not in current:
            del first_seen[name]
    sizes = dict((g['uuid'], len(g.get('nodes') or [])) for g in groups)
    repairs = []
    for group_uuid, names in sorted(broken.items()):
        ripe = []
        for name in names:
            first_seen.setdefault(name, now)
            if now - first_seen[name] >= grace:
                ripe.append(name)
        ripe = ripe[:max(1, sizes.get(group_uuid, 0) // 2)]
        if ripe:
            repairs.append((group_uuid, ripe))
    return repairs
