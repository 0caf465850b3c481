# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container registry a cluster template names as its ``insecure_registry``."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.core.node_values import CONTROL

_SCHEME = re.compile(r'^[a-z][a-z0-9+.-]*://', re.I)
_HOST = re.compile(r'\A(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?\Z')


def host(value):
    """``insecure_registry`` as container engines name a registry, ``host[:port]`` (a
    URL's scheme and path are dropped: Docker refuses them in insecure-registries), or
    None when unset; Invalid (400) when it names no registry."""
    raw, value = value or '', (value or '').strip()
    name = _SCHEME.sub('', value).split('/', 1)[0]
    if value and (not _HOST.match(name) or CONTROL.search(raw)):
        raise Invalid("Invalid input for field/attribute insecure_registry. Value: %r. "
                      "Value should be a registry's host[:port]" % value)
    return name or None
