# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""External members of a federation (the federation spec's phase 4): Kubernetes
clusters that are not Magnum's, given as a kubeconfig. What is kept of it (sealed in the
store) is only what reaches the cluster: its server, the CA it is trusted through and a
credential given inline (a token or a client certificate). A kubeconfig that would make
the controller run a program (``exec``, ``auth-provider``) or read its own files
(``certificate-authority``, ``client-key``, ``tokenFile`` paths) is refused, and so is a
server in a network the operator denies (by default the service host's own addresses,
loopback and link-local: the controller's own services and the cloud's metadata
service), in whatever form its address is written, at registration and again at every
connection (``pinned``)."""

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

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_values
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

# Networks an external member's server may not be in (comma-separated CIDRs; ``host``
# stands for every address of the machine the service runs on).
ENV_DENIED = 'MAGNUM_EXTERNAL_CLUSTER_DENIED_NETWORKS'
HOST = 'host'
DEFAULT_DENIED = ('host,127.0.0.0/8,::1/128,169.254.0.0/16,fe80::/10,fd00:ec2::254/128,'
                  '0.0.0.0/8,::/128')
# Never a server: no single host is there.
NOT_A_HOST = ('224.0.0.0/4', 'ff00::/8', '255.255.255.255/32')
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
    """The operator's deny list: (networks, whether the host's own addresses are in it)."""
    text = os.environ.get(ENV_DENIED, DEFAULT_DENIED)
    names = [n.strip() for n in text.split(',') if n.strip()]
    nets = [ipaddress.ip_network(n, strict=False) for n in names if n != HOST]
    return nets + [ipaddress.ip_network(n) for n in NOT_A_HOST], HOST in names


def ip_forms(host):
    """Every IP address ``host`` (a URL's host, without brackets) stands for: an IPv6
    address with an IPv4 one inside (mapped ``::ffff:a.b.c.d``, compatible ``::a.b.c.d``,
    NAT64, 6to4) also as that IPv4 address; an IPv4 address in any form the C library
    takes (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``). Empty for a name."""
    host = host.split('%', 1)[0].rstrip('.')
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not re.match(r'^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$', host, re.I):
            return []
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(host))
        except (OSError, ValueError):
            return []
    forms = [ip]
    if ip.version == 6:
        inner = [ip.ipv4_mapped, ip.sixtofour]
        value = int(ip)
        if value >> 32 == 0 and value > 1:                       # ::a.b.c.d
            inner.append(ipaddress.IPv4Address(value & 0xffffffff))
        if ip in ipaddress.ip_network('64:ff9b::/96'):           # NAT64
            inner.append(ipaddress.IPv4Address(value & 0xffffffff))
        forms.extend(i for i in inner if i is not None)
    return forms


def is_own_address(ip):
    """Whether ``ip`` is an address of this machine (it can be bound here)."""
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_DGRAM)
    try:
        probe.bind((str(ip), 0))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def check_address(address, server):
    """Refuse an address (an IP, in any of its forms) in a denied network, or one of
    this machine's own when the deny list holds ``host``."""
    nets, own = denied_networks()
    for ip in ip_forms(address):
        for net in nets:
            if ip.version == net.version and ip in net:
                raise Invalid("External cluster server is in a network external clusters "
                              "may not be in: %s is in %s" % (server, net))
        if own and is_own_address(ip):
            raise Invalid("External cluster server is an address of the service's own "
                          "host, which external clusters may not be: %s (%s)" % (server, ip))


def _url(server):
    if not isinstance(server, str):
        raise Invalid("The kubeconfig's cluster has no server.")
    if any(ord(c) < 0x21 or ord(c) == 0x7f for c in server):
        raise Invalid("The kubeconfig's server holds a space or a control character: %r"
                      % server)
    try:
        parsed = urlsplit(server)
        port = parsed.port
    except ValueError:
        raise Invalid("The kubeconfig's server is not a URL: %r" % server)
    if parsed.scheme != 'https' or not parsed.hostname:
        raise Invalid("The kubeconfig's server is not an https:// URL: %r" % server)
    return parsed, port or 443


def check_server(server):
    """The server URL: https, a host, not in a denied network (an IP given in any form;
    a name is checked on the addresses it resolves to at each connection: ``pinned``)."""
    check_address(_url(server)[0].hostname, server)
    return server


def resolved(hostname, port, server):
    try:
        found = socket.getaddrinfo(hostname, port, 0, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Invalid("External cluster server cannot be resolved: %s (%s)" % (server, exc))
    return [info[4][0] for info in found]


def pinned(config):
    """The kubeconfig to connect to an external cluster with, at each connection: its
    server's name resolved once, every address checked, and the server replaced by the
    first address (its certificate still checked against the name: tls-server-name), so
    that a name that resolves elsewhere by the time of the connection is never
    followed."""
    server = config['clusters'][0]['cluster']['server']
    parsed, port = _url(server)
    addresses = resolved(parsed.hostname, port, server)
    for address in [parsed.hostname] + addresses:
        check_address(address, server)
    ip = ipaddress.ip_address(addresses[0].split('%', 1)[0])
    netloc = '%s:%d' % (node_values.bracketed(ip), port)
    cluster = dict(config['clusters'][0]['cluster'], server=parsed._replace(
        netloc=netloc).geturl())
    if not ip_forms(parsed.hostname):   # a name: the certificate is checked against it
        cluster.setdefault('tls-server-name', parsed.hostname)
    return dict(config, clusters=[dict(config['clusters'][0], cluster=cluster)])


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
