# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed field tables of every resource and the coercion of input values."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import uuid as uuidlib

from ansible.module_utils.six import string_types, integer_types

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels, node_values
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, wrong)

STR, INT, BOOL, DICT, LIST = 'str', 'int', 'bool', 'dict', 'list'
# A UUID as Magnum takes one: 32 hex digits, dashes where the canonical form has them.
UUID_RE = re.compile(r'\A[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                     r'[0-9a-fA-F]{12}\Z')

# name -> (type, default). ``None`` default means unset.
CLUSTER_TEMPLATE = {
    'uuid': (STR, None), 'name': (STR, None), 'coe': (STR, None), 'image_id': (STR, None),
    'flavor_id': (STR, None), 'master_flavor_id': (STR, None),
    'dns_nameserver': (STR, None), 'keypair_id': (STR, None),
    'external_network_id': (STR, None), 'fixed_network': (STR, None),
    'fixed_subnet': (STR, None), 'network_driver': (STR, None), 'volume_driver': (STR, None),
    'apiserver_port': (INT, None), 'docker_volume_size': (INT, None),
    'docker_storage_driver': (STR, None), 'cluster_distro': (STR, None),
    'http_proxy': (STR, None), 'https_proxy': (STR, None), 'no_proxy': (STR, None),
    'registry_enabled': (BOOL, False), 'labels': (DICT, {}), 'tls_disabled': (BOOL, False),
    'public': (BOOL, False), 'server_type': (STR, 'vm'), 'insecure_registry': (STR, None),
    'master_lb_enabled': (BOOL, False), 'floating_ip_enabled': (BOOL, True),
    'hidden': (BOOL, False), 'tags': (STR, None), 'driver': (STR, None),
    'project_id': (STR, None), 'user_id': (STR, None),
    'created_at': (STR, None), 'updated_at': (STR, None),
}
TEMPLATE_MANDATORY = ('coe', 'image_id')
# A server's flavor when neither its node group, its cluster nor the template names one
# (Magnum's drivers' default): applied where servers are made, not written in the records.
DEFAULT_FLAVOR = 'm1.small'
TEMPLATE_READ_ONLY = ('uuid', 'cluster_distro', 'driver', 'project_id', 'user_id',
                      'created_at', 'updated_at')
# What a create request may give (a client may choose the uuid, as in Magnum).
TEMPLATE_CREATE_INPUT = tuple(n for n in CLUSTER_TEMPLATE
                              if n not in TEMPLATE_READ_ONLY or n == 'uuid')
# Fields that stay changeable once clusters use the template.
TEMPLATE_UPDATABLE_IN_USE = ('name', 'public', 'hidden')
# Fields a JSON-patch may not remove.
TEMPLATE_NOT_REMOVABLE = TEMPLATE_MANDATORY + (
    'external_network_id', 'network_driver', 'tls_disabled', 'public', 'server_type',
    'registry_enabled', 'cluster_distro', 'hidden')

CLUSTER = {
    'uuid': (STR, None), 'name': (STR, None), 'cluster_template_id': (STR, None),
    'keypair': (STR, None), 'node_count': (INT, 1), 'master_count': (INT, 1),
    'docker_volume_size': (INT, None), 'labels': (DICT, None),
    'master_flavor_id': (STR, None), 'flavor_id': (STR, None),
    'create_timeout': (INT, 60), 'discovery_url': (STR, None),
    'status': (STR, None), 'status_reason': (STR, None),
    'health_status': (STR, None), 'health_status_reason': (DICT, {}),
    'api_address': (STR, None), 'coe_version': (STR, None), 'container_version': (STR, None),
    'project_id': (STR, None), 'user_id': (STR, None),
    'node_addresses': (LIST, []), 'master_addresses': (LIST, []),
    'fixed_network': (STR, None), 'fixed_subnet': (STR, None),
    'floating_ip_enabled': (BOOL, None), 'master_lb_enabled': (BOOL, None),
    'merge_labels': (BOOL, False), 'labels_overridden': (DICT, {}),
    'labels_added': (DICT, {}), 'labels_skipped': (DICT, {}),
    'stack_id': (STR, None), 'created_at': (STR, None), 'updated_at': (STR, None),
}
CLUSTER_CREATE_INPUT = (
    'name', 'cluster_template_id', 'keypair', 'node_count', 'master_count',
    'docker_volume_size', 'labels', 'master_flavor_id', 'flavor_id', 'create_timeout',
    'discovery_url', 'fixed_network', 'fixed_subnet', 'floating_ip_enabled',
    'master_lb_enabled', 'merge_labels', 'uuid')
CLUSTER_UPDATABLE = ('node_count', 'health_status', 'health_status_reason')
# What a list (not detail) shows of each record, as Magnum's.
CLUSTER_LISTED = (
    'uuid', 'name', 'cluster_template_id', 'keypair', 'docker_volume_size', 'labels',
    'node_count', 'status', 'master_flavor_id', 'flavor_id', 'create_timeout',
    'master_count', 'health_status', 'merge_labels')

NODEGROUP = {
    'uuid': (STR, None), 'name': (STR, None), 'cluster_id': (STR, None),
    'project_id': (STR, None), 'docker_volume_size': (INT, None), 'labels': (DICT, None),
    'flavor_id': (STR, None), 'image_id': (STR, None), 'node_addresses': (LIST, []),
    'node_count': (INT, 1), 'role': (STR, 'worker'), 'min_node_count': (INT, 0),
    'max_node_count': (INT, None), 'is_default': (BOOL, False), 'stack_id': (STR, None),
    'status': (STR, None), 'status_reason': (STR, None), 'version': (STR, None),
    'merge_labels': (BOOL, False), 'labels_overridden': (DICT, {}),
    'labels_added': (DICT, {}), 'labels_skipped': (DICT, {}),
    'node_labels': (DICT, {}), 'node_taints': (LIST, []),
    'created_at': (STR, None), 'updated_at': (STR, None),
}
NODEGROUP_CREATE_INPUT = (
    'name', 'docker_volume_size', 'labels', 'flavor_id', 'image_id', 'node_count', 'role',
    'min_node_count', 'max_node_count', 'merge_labels', 'node_labels', 'node_taints')
NODEGROUP_UPDATABLE = ('min_node_count', 'max_node_count', 'node_labels', 'node_taints')
NODEGROUP_LISTED = ('uuid', 'name', 'flavor_id', 'node_count', 'role', 'is_default',
                    'image_id', 'status', 'stack_id', 'max_node_count', 'min_node_count',
                    'merge_labels')

FEDERATION = {
    'uuid': (STR, None), 'name': (STR, None), 'project_id': (STR, None),
    'hostcluster_id': (STR, None), 'member_ids': (LIST, []), 'status': (STR, None),
    'status_reason': (STR, None), 'properties': (DICT, {}),
    'created_at': (STR, None), 'updated_at': (STR, None),
}
FEDERATION_UPDATABLE = ('member_ids', 'properties')
FEDERATION_LISTED = ('uuid', 'name', 'hostcluster_id', 'member_ids', 'status',
                     'status_reason', 'properties')

QUOTA = {
    'id': (INT, None), 'project_id': (STR, None), 'resource': (STR, 'Cluster'),
    'hard_limit': (INT, None), 'created_at': (STR, None), 'updated_at': (STR, None),
}

# Dict fields that also accept the CLI's "k=v,k2=v2" form.
LABEL_FIELDS = ('labels', 'node_labels', 'properties')


# The store's limits (Magnum's too): strings of 255 characters, 32-bit integers.
MAX_STR = 255
# Labels (labels, node_labels, properties): how many, and a value's length (names are
# strings of MAX_STR). Room for every label of the user guide with long option lists,
# and for operators' own.
MAX_LABELS = 1000
MAX_LABEL_VALUE = 4096
# Items of a list field (member_ids, node_taints, addresses): a node group's most nodes.
MAX_LIST = 5000
INT_RANGE = (-2 ** 31, 2 ** 31 - 1)
# A node group's size at most: Kubernetes' largest supported cluster. A plan for more
# would only exhaust the memory of the playbook that makes it.
MAX_NODES = 5000
NODE_COUNT_FIELDS = ('node_count', 'master_count', 'min_node_count', 'max_node_count')
# The least value of an integer field (Magnum's wsme minimums): checked by
# check_minimum, published by the OpenAPI document.
MINIMUMS = {'node_count': 0, 'master_count': 1, 'min_node_count': 0, 'max_node_count': 0,
            'create_timeout': 0, 'docker_volume_size': 1}


# Fields that hold a UUID (a client may choose a resource's uuid at create, as in Magnum).
UUID_FIELDS = ('uuid',)


def canonical_uuid(field, value):
    """``value`` as a UUID in its canonical form (lower case, dashes), or Magnum's 400."""
    try:
        parsed = uuidlib.UUID(value) if isinstance(value, string_types) and \
            UUID_RE.match(value) else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise wrong(field, value, "Expected a uuid but received %s." % (value,))
    return str(parsed)


def id_number(text):
    """``text`` as a row id: a decimal number the store's integer ids can hold, else None
    (str.isdigit() alone also takes digits such as '²' that int() refuses)."""
    text = str(text)
    if not (text.isascii() and text.isdigit()) or int(text) > INT_RANGE[1]:
        return None
    return int(text)


class NotAnInteger(Invalid):
    """A body's integer field that int() refuses: Magnum (wsme) names the whole body."""

    def __init__(self, field, value):
        super(NotAnInteger, self).__init__(str(wrong(field, value, "unable to convert to int")))
        self.value = value


def _label_values(field, value):
    """Labels map names to scalars (Magnum stores them as strings), within the limits."""
    if len(value) > MAX_LABELS:
        raise wrong(field, value, "At most %d labels are allowed." % MAX_LABELS)
    for key, item in value.items():
        if isinstance(item, (dict, list)) or not isinstance(key, string_types):
            raise wrong(field, value, "Label values must be strings, numbers or booleans.")
        if not key or len(key) > MAX_STR:
            raise wrong(field, value, "A label's name has 1 to %d characters." % MAX_STR)
        if isinstance(item, string_types) and len(item) > MAX_LABEL_VALUE:
            raise wrong(field, value, "Label %s: a value has at most %d characters."
                        % (key[:80], MAX_LABEL_VALUE))
        node_values.check_label_value(field, key, item if isinstance(item, string_types) else '')
    return value


def coerce(table, field, value):
    """Convert ``value`` to the type of ``field`` in ``table``; raise Invalid."""
    if value is None:
        return None
    kind = table[field][0]
    if kind == STR:
        if isinstance(value, (dict, list, bool, float)):
            raise wrong(field, value, "Wrong type. Expected 'str'.")
        value = value if isinstance(value, string_types) else str(value)
        if len(value) > MAX_STR:
            raise wrong(field, value, "Value should have a maximum character requirement "
                                      "of %d" % MAX_STR)
        if '\x00' in value:
            raise wrong(field, value, "Value must not contain a NUL character.")
        if field in UUID_FIELDS:
            return canonical_uuid(field, value)
        return value
    if kind == INT:
        if isinstance(value, bool):
            raise wrong(field, value, "Wrong type. Expected 'int'.")
        if isinstance(value, integer_types):
            number = int(value)
        else:
            try:
                number = int(str(value).strip())
            except ValueError:
                raise NotAnInteger(field, value)
        if not INT_RANGE[0] <= number <= INT_RANGE[1]:
            raise wrong(field, value, "Value out of range (at most %d)." % INT_RANGE[1])
        if field in NODE_COUNT_FIELDS and number > MAX_NODES:
            raise wrong(field, value, "A node group has at most %d nodes (the largest "
                                      "cluster Kubernetes supports)." % MAX_NODES)
        return number
    if kind == BOOL:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in labels.TRUE_WORDS:
            return True
        if text in labels.FALSE_WORDS:
            return False
        raise wrong(field, value, "Wrong type. Expected 'bool'.")
    if kind == DICT:
        loaded = value
        if isinstance(value, string_types):
            import json
            try:
                loaded = json.loads(value)
            except ValueError:
                loaded = labels.parse(value) if field in LABEL_FIELDS else None
        if not isinstance(loaded, dict):
            raise wrong(field, value, "Wrong type. Expected 'dict'.")
        return _label_values(field, loaded) if field in LABEL_FIELDS else loaded
    if kind == LIST:
        if isinstance(value, list):
            if len(value) > MAX_LIST:
                raise wrong(field, value, "At most %d items are allowed." % MAX_LIST)
            return value
        if isinstance(value, string_types):
            import json
            try:
                loaded = json.loads(value)
            except ValueError:
                loaded = [v.strip() for v in value.split(',') if v.strip()]
            if isinstance(loaded, list):
                return loaded
        raise wrong(field, value, "Wrong type. Expected 'list'.")
    return value


def take(table, data, allowed=None, strict=True, argument='body'):
    """Coerce the known keys of ``data`` (the request body ``argument``, as Magnum's
    controller names it); unknown keys raise Invalid when strict, once the known ones
    converted, as wsme does."""
    out, unknown = {}, []
    for key, value in (data or {}).items():
        if key not in table or (allowed is not None and key not in allowed):
            unknown.append(key)
            continue
        try:
            out[key] = coerce(table, key, value)
        except NotAnInteger as exc:
            raise wrong(argument, data, "invalid literal for int() with base 10: %r"
                        % (exc.value,))
    if unknown and strict:
        raise Invalid("Unknown attribute for argument %s: %s" % (argument, ', '.join(unknown)))
    return out


def check_minimum(field, value):
    """``value`` is at least ``field``'s minimum (MINIMUMS), else Magnum's 400."""
    least = MINIMUMS.get(field)
    if value is not None and least is not None and value < least:
        raise wrong(field, value, "Value should be greater or equal to %d" % least)


def given_in(mapping, names):
    """The entries of ``mapping`` (a record, a body, a play's variables) named in
    ``names`` and set (not None)."""
    return dict((name, mapping[name]) for name in names
                if name in mapping and mapping[name] is not None)


def module_options(table, names, **overrides):
    """Ansible argument_spec entries of the fields ``names`` of ``table``: the modules'
    options are the field table's (labels as raw: a dict, or the CLI's k=v form), with
    ``overrides`` (name -> more of its spec: choices, no_log, elements)."""
    kinds = {STR: 'str', INT: 'int', BOOL: 'bool', DICT: 'dict', LIST: 'list'}
    spec = {}
    for name in names:
        kind = 'raw' if name in LABEL_FIELDS else kinds[table[name][0]]
        spec[name] = dict({'type': kind}, **overrides.get(name, {}))
    return spec


def project(table, record, extra=()):
    """The fields of ``table`` (and ``extra`` keys) of a stored record."""
    return dict((k, record.get(k)) for k in tuple(table) + tuple(extra))


def defaults(table):
    """Field -> default value (what a JSON-patch ``remove`` resets a field to)."""
    return dict((k, v[1]) for k, v in table.items())


def with_defaults(table, data):
    out = {}
    for key, (_kind, default) in table.items():
        value = data.get(key)
        if value is None and default is not None:
            value = default.copy() if isinstance(default, (dict, list)) else default
        out[key] = value
    return out


def flavor_of(*named):
    """The first flavor ``named`` (node group's, cluster's, template's...), else the
    default."""
    return next((name for name in named if name), DEFAULT_FLAVOR)


def check_count_range(name, node_count, low, high, error=Conflict):
    """min_node_count <= node_count <= max_node_count (a max of None or 0 is none): the
    one rule of a node group's bounds, in Magnum's words and status (its
    NodeGroupInvalidInput, a 409; ``error`` another, for bounds read from labels)."""
    def refuse(attr, expl):
        raise error("%s for %s is invalid (%s)." % (attr, name, expl))
    if high and high < low:
        refuse('max_node_count', 'min_node_count (%s) should be less or equal to '
                                 'max_node_count (%s)' % (low, high))
    if high and node_count > high:
        refuse('max_node_count', 'node_count (%s) should be less or equal to '
                                 'max_node_count (%s)' % (node_count, high))
    if low > node_count:
        refuse('min_node_count', 'min_node_count (%s) should be less or equal to '
                                 'node_count (%s)' % (low, node_count))
