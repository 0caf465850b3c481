# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster labels: parsing, merging and the rules the user guide gives.

Labels arrive as ``k=v,k2=v2;k3=v3`` strings (CLI style) or as dicts.
Known labels have their values checked; unknown labels are kept untouched,
as Magnum's drivers do. Inter-dependencies are checked on the effective set
(template labels, cluster labels and the template fields they relate to).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import re

from ansible.module_utils.six import string_types

from ansible_collections.openstack.magnum.plugins.module_utils.core import drivers, node_values
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

BOOL = 'bool'
INT = 'int'
CIDR = 'cidr'
CIDRS = 'cidrs'
TAG = 'tag'
STR = 'str'
# Command-line flags (``--a=1 --b``), each value written as is into a component's flags.
OPTIONS = 'options'
# An image repository prefix (registry[:port]/path).
REPOSITORY = 'repository'

# The words a boolean is written in, a field's (oslo's bool_from_string) and a label's.
TRUE_WORDS = ('true', '1', 'yes', 'on', 't', 'y')
FALSE_WORDS = ('false', '0', 'no', 'off', 'f', 'n')

# name -> (type, allowed values or None): the labels of the user guide every COE's
# clusters take (the network, the load balancer, volumes, images' registry). Each COE's
# own are its drivers' (driver_spec.coe_facts' labels, Driver's own_labels): catalogue().
COMMON = {
    'fixed_subnet_cidr': (CIDR, None),
    'master_lb_floating_ip_enabled': (BOOL, None),
    'master_lb_allowed_cidrs': (CIDRS, None),
    'availability_zone': (STR, None),
    'container_infra_prefix': (REPOSITORY, None),
    'heat_container_agent_tag': (TAG, None),
    'docker_volume_type': (STR, None),
    'boot_volume_size': (INT, None),
    'boot_volume_type': (STR, None),
}

# Spellings the guide itself uses, accepted and normalised.
ALIASES = {'rexray-preempt': 'rexray_preempt', 'keystone-auth-enabled': 'keystone_auth_enabled'}

_KEY_RE = re.compile(r'^[A-Za-z0-9_.\-/]+$')
_TAG_RE = re.compile(r'^[A-Za-z0-9_.\-+]+$')
_FLAG_RE = re.compile(r'\A[A-Za-z0-9][A-Za-z0-9\-]*\Z')
_VERSION_RE = re.compile(r'^v?(\d+)\.(\d+)(?:\.(\d+))?')


def parse(value):
    """Parse labels given as a dict, a list of ``k=v`` strings or one string."""
    if value is None:
        return {}
    if isinstance(value, dict):
        items = list(value.items())
    else:
        if isinstance(value, string_types):
            value = [value]
        items = []
        for chunk in value:
            for part in re.split(r'[,;]', chunk):
                part = part.strip()
                if not part:
                    continue
                if '=' not in part:
                    # "a=b,c" -> the "c" continues the previous value (CIDR lists).
                    if items and COMMON.get(items[-1][0], (None,))[0] == CIDRS:
                        items[-1] = (items[-1][0], items[-1][1] + ',' + part)
                        continue
                    raise Invalid("Invalid label %r: expected KEY=VALUE." % part)
                key, val = part.split('=', 1)
                items.append((key.strip(), val.strip()))
    result = {}
    for key, val in items:
        if not isinstance(key, string_types) or not _KEY_RE.match(key):
            raise Invalid("Invalid label key %r." % (key,))
        key = ALIASES.get(key, key)
        result[key] = _to_str(val)
    return result


def _to_str(val):
    if isinstance(val, bool):
        return 'true' if val else 'false'
    if val is None:
        return ''
    return str(val)


def to_bool(value, default=False):
    if value is None or value == '':
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in TRUE_WORDS


def version_tuple(tag):
    m = _VERSION_RE.match(str(tag or ''))
    if not m:
        return None
    return tuple(int(x or 0) for x in m.groups())


def catalogue():
    """Every label whose value is checked: the common ones and the drivers' (their COEs'
    and their own: driver_spec.Drivers.labels)."""
    return dict(COMMON, **drivers.registry().labels)


def _check_value(key, value, kind, allowed):
    if kind == BOOL:
        if str(value).lower() not in TRUE_WORDS + FALSE_WORDS:
            raise Invalid("Label %s must be true or false, not %r." % (key, value))
    elif kind == INT:
        try:
            if int(value) < 0:
                raise ValueError()
        except ValueError:
            raise Invalid("Label %s must be a non-negative integer, not %r." % (key, value))
    elif kind in (CIDR, CIDRS):
        for cidr in [c for c in value.split(',') if c.strip()] if kind == CIDRS else [value]:
            try:
                ipaddress.ip_network(cidr.strip(), strict=False)
            except ValueError:
                raise Invalid("Label %s must be a CIDR, not %r." % (key, cidr))
    elif kind == TAG:
        if value and not _TAG_RE.match(value):
            raise Invalid("Label %s has an invalid tag %r." % (key, value))
    elif kind == OPTIONS:
        flags(value, key)
    elif kind == REPOSITORY:
        node_values.check_repository('Label %s' % key, value)
    if allowed is not None and value not in allowed:
        raise Invalid("Label %s must be one of %s, not %r."
                      % (key, ', '.join(repr(a) for a in allowed), value))


def flags(value, label):
    """``--a=1 --b`` (an ``*_options`` label) -> [{'name': 'a', 'value': '1'}, {'name': 'b',
    'value': 'true'}]: each a --flag or --flag=value, its name letters, digits and '-', its
    value nothing that quotes, escapes or expands (it is written as is into a component's
    flags: kubeadm's kubelet environment file, static pods' commands)."""
    args = []
    for word in (value or '').split():
        name, equals, val = word[2:].partition('=')
        if not word.startswith('--') or not _FLAG_RE.match(name):
            raise Invalid("Label %s: %r is not a --flag or --flag=value." % (label, word))
        node_values.check_plain('Label %s: flag --%s' % (label, name), val)
        args.append({'name': name, 'value': val if equals else 'true'})
    return args


def autoscaling_bounds(labels):
    """The default worker group's bounds the cluster autoscaler keeps
    (auto_scaling_enabled): min_node_count (default 1) and max_node_count (required)."""
    if labels.get('max_node_count') in (None, ''):
        raise Invalid("auto_scaling_enabled needs max_node_count (the most workers the "
                      "autoscaler may make).")
    low, high = int(labels.get('min_node_count') or 1), int(labels['max_node_count'])
    if high < low:
        raise Invalid("max_node_count (%d) is below min_node_count (%d)." % (high, low))
    return low, high


def csi_default(labels, volume_driver, cluster_user_trust):
    """The labels a cluster records: with volume_driver=cinder and cinder_csi_enabled unset,
    Cinder CSI (handed the cluster's OpenStack credential) follows cluster_user_trust, as
    Magnum's cloud_provider_enabled does - set false when the service does not hand
    credentials over, so the cluster says so (Magnum 23 accepts the template and deploys a
    CSI that cannot act without the trust; Horizon's template form picks Cinder by
    default)."""
    if volume_driver == 'cinder' and labels.get('cinder_csi_enabled') in (None, '') \
            and not cluster_user_trust:
        return dict(labels, cinder_csi_enabled='false')
    return labels


def check_controller_credential(labels, application_credential_only):
    """The cluster autoscaler's magnum provider signs in with a password or a trust: a
    service that would hand it the cluster's application credential (keystone auth
    without a trustee domain: ``application_credential_only``) refuses it up front."""
    if application_credential_only and to_bool((labels or {}).get('auto_scaling_enabled')):
        raise Invalid("auto_scaling_enabled: the cluster autoscaler's magnum provider cannot "
                      "sign in with the cluster's application credential (it takes a "
                      "password or a Keystone trust), and this service gives clusters no "
                      "trust: its operator sets a trustee domain (--trustee-domain).")


def validate(labels, coe=None, **context):
    """Check the known labels' values (the catalogue: the common ones and the handed
    drivers'), then, given the ``coe``, the rules among its labels its driver declares
    (coe_facts' ``check_labels``, called with the labels and ``context``: network_driver,
    volume_driver, cluster_distro, docker_storage_driver, cluster_user_trust).

    ``labels`` is the effective label dict. Raises ``Invalid``.
    """
    known = catalogue()
    for key, value in labels.items():
        if key in known:
            _check_value(key, value, *known[key])
    rules = drivers.coe_facts(coe).get('check_labels') if coe else None
    if rules is not None:
        rules(labels, **context)
    return labels


def merge(base, override, merge_labels):
    """Effective labels and the diff Magnum shows (overridden, added, skipped)."""
    base = dict(base or {})
    if override is None:
        effective = dict(base)
    elif merge_labels:
        effective = dict(base)
        effective.update(override)
    else:
        effective = dict(override)
    overridden = dict((k, v) for k, v in effective.items() if k in base and base[k] != v)
    added = dict((k, v) for k, v in effective.items() if k not in base)
    skipped = dict((k, v) for k, v in base.items() if k not in effective)
    return effective, overridden, added, skipped


def master_lb_allowed_cidrs(cluster_labels, subnet_cidr):
    """The sources the master load balancer lets in: [] (everyone) when the
    ``master_lb_allowed_cidrs`` label is unset, else its CIDRs and, as Magnum adds it,
    the cluster's own subnet ``subnet_cidr`` - the nodes reach their API through the
    load balancer (kubelets, joins), so a list that left them out would cut the cluster
    off from its own control plane. Networks in canonical form, each once."""
    value = (cluster_labels or {}).get('master_lb_allowed_cidrs') or ''
    given = [c.strip() for c in value.split(',') if c.strip()]
    if not given:
        return []
    _check_value('master_lb_allowed_cidrs', value, *COMMON['master_lb_allowed_cidrs'])
    allowed = []
    for cidr in given + ([subnet_cidr] if subnet_cidr else []):
        network = str(ipaddress.ip_network(str(cidr).strip(), strict=False))
        if network not in allowed:
            allowed.append(network)
    return allowed
