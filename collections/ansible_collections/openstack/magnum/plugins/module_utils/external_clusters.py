# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""External members of a federation (the federation spec's phase 4): Kubernetes
clusters that are not Magnum's, given as a kubeconfig. What is kept of it (sealed in the
store) is only what reaches the cluster: its server, the CA it is trusted through and a
credential given inline (a token or a client certificate). A kubeconfig that would make
the controller run a program (``exec``, ``auth-provider``) or read its own files
(``certificate-authority``, ``client-key``, ``tokenFile`` paths) is refused, and so is a
server in a network the operator denies (loopback and link-local by default: the
controller's own services and the cloud's metadata service)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import binascii
import ipaddress
import json
import os
import re
import socket

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2 (ansible-test's sanity)
    from urlparse import urlsplit

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - the modules only read what the API kept
    HAS_YAML = False

from ansible_collections.openstack.magnum.plugins.module_utils.errors import Invalid

# Networks an external member's server may not be in (comma-separated CIDRs).
ENV_DENIED = 'MAGNUM_EXTERNAL_CLUSTER_DENIED_NETWORKS'
DEFAULT_DENIED = '127.0.0.0/8,::1/128,169.254.0.0/16,fe80::/10,0.0.0.0/8,::/128'
MAX_KUBECONFIG = 64 * 1024
NAME = re.compile(r'^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$')
# What a user entry may hold: a credential given inline.
USER_KEYS = ('token', 'client-certificate-data', 'client-key-data')
CLUSTER_KEYS = ('server', 'certificate-authority-data', 'tls-server-name')


def check_name(name):
    if not isinstance(name, str) or not NAME.match(name):
        raise Invalid("External cluster name is not valid (1 to 63 lower case letters, "
                      "digits and '-', starting and ending with a letter or digit): %r"
                      % (name,))
    return name


def _entry(config, section, name, what):
    for item in config.get(section) or []:
        if isinstance(item, dict) and item.get('name') == name:
            if not isinstance(item.get(what), dict):
                break
            return item[what]
    raise Invalid("The kubeconfig names %s %r but has no such entry in %s." % (
        what, name, section))


def _pem(value, what):
    try:
        text = base64.b64decode(value, validate=True).decode('ascii')
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise Invalid("The kubeconfig's %s is not base64 of a PEM text." % what)
    if '-----BEGIN ' not in text:
        raise Invalid("The kubeconfig's %s is not base64 of a PEM text." % what)
    return value


def denied_networks():
    text = os.environ.get(ENV_DENIED, DEFAULT_DENIED)
    return [ipaddress.ip_network(n.strip(), strict=False) for n in text.split(',') if n.strip()]


def check_address(address, server):
    """Refuse an address (an IP) in a denied network."""
    ip = ipaddress.ip_address(address.split('%', 1)[0])
    for net in denied_networks():
        if ip.version == net.version and ip in net:
            raise Invalid("External cluster server is in a network external clusters may "
                          "not be in: %s is in %s" % (server, net))


def check_server(server, resolve=False):
    """The server URL: https, a host, not in a denied network (its addresses, with
    ``resolve``; an IP given literally in any case)."""
    if not isinstance(server, str):
        raise Invalid("The kubeconfig's cluster has no server.")
    try:
        parsed = urlsplit(server)
        port = parsed.port
    except ValueError:
        raise Invalid("The kubeconfig's server is not a URL: %r" % server)
    if parsed.scheme != 'https' or not parsed.hostname:
        raise Invalid("The kubeconfig's server is not an https:// URL: %r" % server)
    try:
        check_address(parsed.hostname, server)
        return server
    except ValueError:
        pass   # a name
    if resolve:
        try:
            found = socket.getaddrinfo(parsed.hostname, port or 443, 0, socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise Invalid("External cluster server cannot be resolved: %s (%s)"
                          % (server, exc))
        for info in found:
            check_address(info[4][0], server)
    return server


def parse(text):
    """The kubeconfig ``text`` (YAML or JSON) reduced to what reaches its current
    context's cluster: a kubeconfig dict of one cluster, user and context."""
    if not isinstance(text, str) or not text.strip():
        raise Invalid("An external cluster needs a kubeconfig (its text).")
    if not HAS_YAML:
        raise Invalid("PyYAML is required to read a kubeconfig.")
    if len(text) > MAX_KUBECONFIG:
        raise Invalid("The kubeconfig is larger than %d bytes." % MAX_KUBECONFIG)
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise Invalid("The kubeconfig is not valid YAML: %s" % str(exc).splitlines()[0])
    except RuntimeError:   # RecursionError: nested deeper than the parser goes
        raise Invalid("The kubeconfig is nested too deep.")
    if not isinstance(config, dict):
        raise Invalid("The kubeconfig is not a mapping.")
    contexts = [c for c in config.get('contexts') or [] if isinstance(c, dict)]
    current = config.get('current-context')
    if not current:
        if len(contexts) != 1:
            raise Invalid("The kubeconfig has no current-context, and not exactly one context.")
        current = contexts[0].get('name')
    context = _entry(config, 'contexts', current, 'context')
    cluster = _entry(config, 'clusters', context.get('cluster'), 'cluster')
    user = _entry(config, 'users', context.get('user'), 'user')
    for key in sorted(cluster):
        if key not in CLUSTER_KEYS:
            raise Invalid("The kubeconfig's cluster sets %r: an external cluster is reached "
                          "through its server, a CA given inline "
                          "(certificate-authority-data) and nothing else." % key)
    for key in sorted(user):
        if key not in USER_KEYS:
            raise Invalid("The kubeconfig's user sets %r: an external cluster's credential "
                          "is given inline, as a token or as client-certificate-data and "
                          "client-key-data (no program is run, no file read)." % key)
    if not cluster.get('certificate-authority-data'):
        raise Invalid("The kubeconfig's cluster has no certificate-authority-data: the "
                      "external cluster's API is trusted through its CA only.")
    has_cert = bool(user.get('client-certificate-data')) + bool(user.get('client-key-data'))
    if has_cert == 1 or (not has_cert and not user.get('token')):
        raise Invalid("The kubeconfig's user has no credential: a token, or both "
                      "client-certificate-data and client-key-data.")
    kept_cluster = {'server': check_server(cluster.get('server')),
                    'certificate-authority-data': _pem(
                        cluster['certificate-authority-data'], 'certificate-authority-data')}
    if cluster.get('tls-server-name'):
        kept_cluster['tls-server-name'] = str(cluster['tls-server-name'])
    kept_user = {}
    if user.get('token'):
        kept_user['token'] = str(user['token'])
    if has_cert:
        kept_user['client-certificate-data'] = _pem(user['client-certificate-data'],
                                                    'client-certificate-data')
        kept_user['client-key-data'] = _pem(user['client-key-data'], 'client-key-data')
    return {'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'external',
            'clusters': [{'name': 'external', 'cluster': kept_cluster}],
            'users': [{'name': 'external', 'user': kept_user}],
            'contexts': [{'name': 'external', 'context': {
                'cluster': 'external', 'user': 'external'}}]}


def server(config):
    return config['clusters'][0]['cluster']['server']


def dumps(config):
    return json.dumps(config, sort_keys=True)


def loads(text):
    return json.loads(text)


def by_ident(records):
    """External cluster records by uuid and by name."""
    found = dict((r['name'], r) for r in records)
    found.update((r['uuid'], r) for r in records)
    return found


def as_member(record):
    """An external cluster as the federation's code sees a member cluster."""
    return {'uuid': record['uuid'], 'name': record['name'], 'api_address': record['server'],
            'external': True}
