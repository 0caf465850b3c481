# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The infrastructure providers this collection has, each the descriptor of its folder
(providers/<name>/provider.py; static imports, as Ansible's module packaging needs them),
and ``none``: nothing is made (for drivers that bring their own infrastructure, or to run
an operation's bookkeeping alone). A new provider is a folder, a role and a line here."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers.contract import Provider
from ansible_collections.openstack.magnum.plugins.module_utils.providers.docker import (
    provider as docker)
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    provider as openstack)

PROVIDERS = (docker.PROVIDER, openstack.PROVIDER, Provider('none'))
NAMES = tuple(p.name for p in PROVIDERS)


def by_name(name):
    """The provider the deployment names (``MAGNUM_PROVIDER``, ``--provider``)."""
    for provider in PROVIDERS:
        if provider.name == name:
            return provider
    raise Invalid("Unknown infrastructure provider %r: one of %s." % (name, ', '.join(NAMES)))
