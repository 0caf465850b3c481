# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's access to a Kubernetes API: kubeconfigs held in memory (never a play
variable; written only as 0600 files for Helm) and clients of the kubernetes library."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import socket
import traceback

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2 (ansible-test's sanity)
    from urlparse import urlsplit

from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

try:
    from kubernetes import config as kube_config, dynamic
    from kubernetes.client.rest import ApiException
    HAS_KUBERNETES = True
    KUBERNETES_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_ERROR = traceback.format_exc()
    ApiException = Exception


def _b64(text):
    return base64.b64encode(text.encode()).decode()


def kubeconfig(server, ca_pem, cert_pem, key_pem, name='magnum'):
    """A kubeconfig (dict) of a client certificate for ``server``."""
    return {'apiVersion': 'v1', 'kind': 'Config', 'current-context': name,
            'clusters': [{'name': name, 'cluster': {
                'server': server, 'certificate-authority-data': _b64(ca_pem)}}],
            'users': [{'name': name, 'user': {'client-certificate-data': _b64(cert_pem),
                                              'client-key-data': _b64(key_pem)}}],
            'contexts': [{'name': name, 'context': {'cluster': name, 'user': name}}]}


def cluster_admin(store, cluster, common_name='magnum-federation'):
    """A kubeconfig of an admin certificate issued for the occasion from a cluster's CA
    (the store's), for its API address."""
    if not cluster.get('api_address'):
        raise Invalid('Cluster %s has no API address to reach it through.' % cluster['name'])
    ca = store.certificate(cluster['uuid'])
    cert, key = tls.issue_keypair(ca['cert_pem'], ca['key_pem'], common_name,
                                  'system:masters', server=False)
    return kubeconfig(cluster['api_address'], ca['cert_pem'], cert, key, cluster['name'])


def reachable(config, timeout=5):
    """Raise unless the kubeconfig's server takes a TCP connection within ``timeout``
    seconds (the kubernetes library would wait on an address that does not answer)."""
    parsed = urlsplit(config['clusters'][0]['cluster']['server'])
    socket.create_connection((parsed.hostname, parsed.port or 443), timeout=timeout).close()


def client(config):
    """A dynamic client of the kubernetes library for kubeconfig ``config``. It follows
    no redirect: a server answering 3xx (to send the controller elsewhere, its own
    loopback say) gets an error, not a second request."""
    api_client = kube_config.new_client_from_config_dict(config)
    pool = api_client.rest_client.pool_manager
    send = pool.request   # every request of the kubernetes library's REST client

    def request(method, url, *args, **kwargs):
        kwargs['redirect'] = False
        return send(method, url, *args, **kwargs)

    pool.request = request
    return dynamic.DynamicClient(api_client)


def ca_of(config):
    """The CA (PEM) a kubeconfig trusts."""
    return base64.b64decode(config['clusters'][0]['cluster'][
        'certificate-authority-data']).decode()


def resource(api, api_version, kind):
    return api.resources.get(api_version=api_version, kind=kind)


def get(api, obj):
    """``obj``'s current state (a dict) or None."""
    meta = obj['metadata']
    try:
        return resource(api, obj['apiVersion'], obj['kind']).get(
            name=meta['name'], namespace=meta.get('namespace')).to_dict()
    except ApiException as exc:
        if getattr(exc, 'status', None) == 404:
            return None
        raise


def apply(api, obj):
    """Create ``obj``, or bring the fields it gives to it (a merge patch); returns
    whether it changed."""
    meta = obj['metadata']
    res = resource(api, obj['apiVersion'], obj['kind'])
    current = get(api, obj)
    if current is None:
        res.create(body=obj, namespace=meta.get('namespace'))
        return True
    if _contains(current, obj):
        return False
    res.patch(body=obj, name=meta['name'], namespace=meta.get('namespace'),
              content_type='application/merge-patch+json')
    return True


def delete(api, obj):
    """Delete ``obj`` when it is there; returns whether it was."""
    meta = obj['metadata']
    try:
        resource(api, obj['apiVersion'], obj['kind']).delete(
            name=meta['name'], namespace=meta.get('namespace'))
        return True
    except ApiException as exc:
        if getattr(exc, 'status', None) == 404:
            return False
        raise


def listed(api, api_version, kind, label_selector=None, namespace=None):
    items = resource(api, api_version, kind).get(
        namespace=namespace, label_selector=label_selector).to_dict()['items']
    for item in items:
        item.setdefault('apiVersion', api_version)
        item.setdefault('kind', kind)
    return items


def _contains(current, wanted):
    """Whether ``current`` has every field of ``wanted`` (metadata's labels and
    annotations included) at the same value."""
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(
            _contains(current.get(key), value) for key, value in wanted.items())
    return current == wanted


def error_text(exc):
    """What an API error says (its Status message), else the exception's text."""
    body = getattr(exc, 'body', None)
    if body:
        try:
            import json
            return json.loads(body).get('message') or str(exc)
        except ValueError:
            return str(body)[:300]
    return str(exc)
