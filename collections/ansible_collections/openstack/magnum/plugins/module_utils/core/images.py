# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which OS distribution an image carries (Magnum reads Glance's ``os_distro``).

Without a cloud, images are resolved from a catalogue: the JSON mapping in
``MAGNUM_IMAGE_CATALOG`` (image name or id -> os_distro) if set, else the
image name's well-known prefix. Infrastructure providers that have a real
image service replace this lookup with their own; the docker provider boots its node
image only (docker_nodes.image_problem).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

# Longest prefixes first: "fedora-coreos" before "fedora".
_PREFIXES = (
    ('fedora-coreos', 'fedora-coreos'), ('fedora-atomic', 'fedora-atomic'),
    ('coreos', 'coreos'), ('ubuntu', 'ubuntu'), ('debian', 'debian'), ('flatcar', 'flatcar'),
)


def catalog():
    raw = os.environ.get('MAGNUM_IMAGE_CATALOG')
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise Invalid("MAGNUM_IMAGE_CATALOG is not a JSON object.")
    if not isinstance(data, dict):
        raise Invalid("MAGNUM_IMAGE_CATALOG is not a JSON object.")
    return data


def os_distro(image_id, images=None):
    """os_distro of ``image_id``; Magnum's 400 when it has none. ``images``: a mapping
    (image -> os_distro), or a function that looks the image up (a cloud's Glance)."""
    images = catalog() if images is None else images
    if callable(images):
        return images(image_id)
    if image_id in images:
        return images[image_id]
    name = (image_id or '').lower()
    for prefix, distro in _PREFIXES:
        if name.startswith(prefix):
            return distro
    raise Invalid("Image %s doesn't contain os_distro field." % image_id)


def upgrade_image(group, old_template, new_template):
    """The image a node group's nodes have after an upgrade to ``new_template``: the
    new template's, unless the group was given an image of its own (not the one the
    old template named), which it keeps."""
    own = group.get('image_id')
    if own and own != old_template.get('image_id'):
        return own
    return new_template.get('image_id') or own


def rebuild_plan(servers, nodegroups, old_template, new_template, image_ids=None,
                 nodegroup=None):
    """The servers an upgrade rebuilds on a new image, in the order they go one at a
    time: masters first, then the workers, each group by node index.

    ``servers`` are shaped as openstack.cloud.server_info returns them (``name``,
    ``image.id`` and the cluster's ``metadata``: magnum_role, magnum_nodegroup_uuid,
    magnum_index); ``image_ids`` maps image names to Glance ids; ``nodegroup`` (a
    uuid) limits the plan to that group's servers. A server already ACTIVE on its image
    is left alone, so a retried upgrade goes on where the last one stopped (a server
    whose rebuild failed is rebuilt again).
    """
    image_ids = image_ids or {}
    groups = dict((g['uuid'], g) for g in nodegroups)
    plan = []
    for server in servers:
        meta = server.get('metadata') or {}
        group = groups.get(meta.get('magnum_nodegroup_uuid'))
        if group is None or (nodegroup and group['uuid'] != nodegroup):
            continue
        wanted = upgrade_image(group, old_template, new_template)
        image = server.get('image')
        current = image.get('id') if isinstance(image, dict) else image
        on_it = image_ids.get(wanted, wanted) == current
        if not wanted or (on_it and server.get('status', 'ACTIVE') == 'ACTIVE'):
            continue
        plan.append({'name': server['name'], 'image': wanted,
                     'role': meta.get('magnum_role') or group.get('role'),
                     'nodegroup': group['name'], 'index': int(meta.get('magnum_index') or 0)})
    plan.sort(key=lambda n: (n['role'] != 'master', n['nodegroup'], n['index'], n['name']))
    return plan
