# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the collection's filter files share: a module_utils function as a filter whose
refusal (MagnumError) is Ansible's filter error, named after the filter."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError


def wrap(name, fn):
    def filter_fn(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MagnumError as exc:
            raise AnsibleFilterError('%s: %s' % (name, exc))
    return filter_fn


def wrap_all(table):
    """{filter name: function} -> the same names, each function wrapped."""
    return dict((name, wrap(name, fn)) for name, fn in table.items())


def plain(value):
    """``value`` in plain Python types: Ansible hands over its own str subclasses,
    which YAML's safe dumper refuses."""
    return json.loads(json.dumps(value))
