# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which OS distribution an image carries (Magnum reads Glance's ``os_distro``).

Without a cloud, images are resolved from a catalogue: the JSON mapping in
``MAGNUM_IMAGE_CATALOG`` (image name or id -> os_distro) if set, else the
image name's well-known prefix. Infrastructure providers that have a real
image service replace this lookup with their own.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from ansible_collections.openstack.magnum.plugins.module_utils.errors import Invalid

# Longest prefixes first: "fedora-coreos" before "fedora".
_PREFIXES = (
    ('fedora-coreos', 'fedora-coreos'), ('fedora-atomic', 'fedora-atomic'),
    ('coreos', 'coreos'), ('ubuntu', 'ubuntu'), ('debian', 'debian'),
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
    """os_distro of ``image_id``; Magnum's 400 when it has none."""
    images = catalog() if images is None else images
    if image_id in images:
        return images[image_id]
    name = (image_id or '').lower()
    for prefix, distro in _PREFIXES:
        if name.startswith(prefix):
            return distro
    raise Invalid("Image %s doesn't contain os_distro field." % image_id)
