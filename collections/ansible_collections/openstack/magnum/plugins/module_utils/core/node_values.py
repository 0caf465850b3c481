# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a value from a request may be where it ends up in a file on a node: one policy.

A template's, cluster's or node group's value that lands in a node's file (a systemd
unit, an environment file, YAML, TOML, resolv.conf, kubeadm's or Docker's configuration)
is either checked here for what it is - a proxy is a URL, ``no_proxy`` a list of hosts and
networks, a DNS server an IPv4 address (Magnum's rule), a label's value has no control
character and, where a label's type says more, is of that type - or written by that
format's encoder (YAML and JSON by their dumpers; systemd's ``Environment=`` and TOML's
strings by the encoders here). Nothing is fixed up: a value that is not what it must be is
refused, with Magnum's words for a field's bad value.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import json
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid, wrong

# Characters that end a line or a record in some format (C0 and C1 controls, DEL, Unicode's
# line and paragraph separators): never in a value that reaches a node.
CONTROL = re.compile(u'[\x00-\x1f\x7f-\x9f\u2028\u2029]')
# Characters that quote, escape or expand in units, environment files and shells.
QUOTING = re.compile(r'["\'\\`$]')
# What a name carried by nodes must not hold besides (it is one word of flags and lists).
_NAME_BREAKS = re.compile(r'[\s"\'\\`$,=]')
PROXY_SCHEMES = ('http', 'https', 'socks4', 'socks5', 'socks5h')
# scheme://[user[:password]@]host[:port][/] - the user and password percent-encoded.
_PROXY = re.compile(r'\A(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://'
                    r'(?:[A-Za-z0-9\-._~%]+(?::[A-Za-z0-9\-._~%]*)?@)?'
                    r'(?P<host>[A-Za-z0-9\-._~%]+|\[[0-9A-Fa-f:.]+\])'
                    r'(?::(?P<port>[0-9]{1,5}))?/?\Z')
# One entry of no_proxy: a host name, .domain or *.domain, an address, a CIDR, with a port.
_NO_PROXY_ENTRY = re.compile(r'\A[A-Za-z0-9.*_\-:/\[\]]+\Z')
# An image repository (container_infra_prefix): registry host[:port] and path.
_REPOSITORY = re.compile(r'\A[A-Za-z0-9][A-Za-z0-9._\-/:]*\Z')
# A Kubernetes label value (availability_zone becomes one on every node).
_K8S_LABEL_VALUE = re.compile(r'\A(?:[A-Za-z0-9](?:[A-Za-z0-9_.\-]{0,61}[A-Za-z0-9])?)?\Z')


def check_proxy(field, value):
    """``http_proxy`` / ``https_proxy``: a proxy URL or unset."""
    if not value:
        return value
    match = _PROXY.match(value)
    if not match or match.group('scheme').lower() not in PROXY_SCHEMES \
            or (match.group('port') and not 0 < int(match.group('port')) < 65536):
        raise wrong(field, value, "Expected a proxy URL: %s://[user[:password]@]host[:port], "
                                  "the user and password percent-encoded."
                    % '|'.join(PROXY_SCHEMES))
    return value


def check_no_proxy(value, field='no_proxy'):
    """``no_proxy``: host names, domains (``.example.com``), addresses and networks
    (CIDR), comma-separated."""
    for entry in (value or '').split(','):
        if entry.strip() and not _NO_PROXY_ENTRY.match(entry.strip()):
            raise wrong(field, value, "Expected a comma-separated list of host names, domains "
                                      "(.example.com), addresses and networks (CIDR).")
    return value


def dns_servers(value):
    """``dns_nameserver`` as Magnum takes it (one IPv4 address or a comma-separated list)
    -> the addresses; Invalid (Magnum's InvalidDNS) for anything else."""
    if value in (None, ''):
        return []
    servers = [entry.strip() for entry in value.split(',')]
    try:
        if CONTROL.search(value):
            raise ValueError(value)
        for server in servers:
            ipaddress.IPv4Address(server)
    except ValueError:
        raise wrong('dns_nameserver', value, "Expected a single dns address or comma "
                                             "separated dns list, but received %s." % value)
    return servers


def check_template(template):
    """The template's fields that reach nodes' files (proxies, DNS servers)."""
    for field in ('http_proxy', 'https_proxy'):
        check_proxy(field, template.get(field))
    check_no_proxy(template.get('no_proxy'))
    dns_servers(template.get('dns_nameserver'))
    return template


def check_label_value(field, key, value):
    """Any label's value (``labels``, ``node_labels``, ``properties``): no control
    character, whatever the label."""
    if CONTROL.search(key) or CONTROL.search(value):
        raise wrong(field, '%s=%s' % (key, value), "Label %s: a label must not contain "
                    "control characters (line breaks, tabs, NUL)." % CONTROL.sub('?', key))


def check_name(field, value):
    """A node group's name, which its nodes carry (a Kubernetes node label's value, among
    kubelet's flags): no control character, space, quote, backslash, '$', ',' or '='."""
    if value and (CONTROL.search(value) or _NAME_BREAKS.search(value)):
        raise wrong(field, value, "A node group's name must not contain control characters, "
                                  "spaces, quotes, backslashes, backquotes, '$', ',' or '='.")
    return value


def check_plain(what, value):
    """A value written as is into a flag, a unit or an environment file (an ``*_options``
    label's flag values): no quoting, escaping or expanding character."""
    if value and (QUOTING.search(value) or CONTROL.search(value)):
        raise Invalid("%s: %r must not contain quotes, backslashes, backquotes, $ or control "
                      "characters." % (what, value))
    return value


def check_repository(what, value):
    """An image repository prefix (``container_infra_prefix``)."""
    if value and not _REPOSITORY.match(value.rstrip('/')):
        raise Invalid("%s: %r is not an image repository (registry[:port]/path)." % (what, value))
    return value


def check_k8s_label_value(what, value):
    """A value that becomes a Kubernetes label's on every node (``availability_zone``)."""
    if value and not _K8S_LABEL_VALUE.match(value):
        raise Invalid("%s: %r cannot be a Kubernetes label value (at most 63 letters, digits, "
                      "'-', '_' or '.', beginning and ending with a letter or digit)."
                      % (what, value))
    return value


def bracketed(host):
    """``host`` as the host part of a URL or of ``host:port`` (scp's, SSH's): an IPv6
    address in brackets, anything else as it is."""
    host = str(host)
    return '[%s]' % host if ':' in host and not host.startswith('[') else host


def systemd_quote(value):
    """``value`` as one double-quoted word of a systemd unit setting: backslashes and
    quotes escaped, ``%`` (systemd's specifiers) doubled; a control character is refused
    (a unit's line cannot hold one)."""
    value = str(value)
    if CONTROL.search(value):
        raise Invalid("%r cannot be written into a systemd unit: it holds a control character."
                      % value)
    return '"%s"' % value.replace('\\', '\\\\').replace('"', '\\"').replace('%', '%%')


def systemd_environment(env):
    """``Environment=`` lines of a unit for the mapping ``env`` (names sorted, empty
    values left out)."""
    for name in env:
        if not re.match(r'\A[A-Za-z_][A-Za-z0-9_]*\Z', name):
            raise Invalid("%r is not an environment variable name." % (name,))
    return ''.join('Environment=%s\n' % systemd_quote('%s=%s' % (name, env[name]))
                   for name in sorted(env) if env[name] not in (None, ''))


def toml_string(value):
    """``value`` as a TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(str(value), ensure_ascii=True)
