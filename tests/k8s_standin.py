"""A stand-in for a Kubernetes API server, for the driver's tasks that read a cluster
from the controller (health, the emptiest nodes of a shrink) where no kube-apiserver
can run: this machine has no Kubernetes server binary. It speaks the little of the API
those tasks use (/readyz, discovery, nodes and pods, as JSON) over HTTPS with a server
certificate of the cluster's CA, and refuses clients without a certificate of that CA,
as kube-apiserver does with --client-ca-file. The tests with a real control plane are
tests/test_kubernetes.py's gated ones."""

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from ansible_collections.openstack.magnum.plugins.module_utils import tls

RESOURCES = {'nodes': 'Node', 'pods': 'Pod'}


def node(name, ready='True', labels=None, version='v1.36.0'):
    # nodeInfo complete: the kubernetes client refuses a Node whose nodeInfo lacks a field.
    info = dict((key, '') for key in (
        'architecture', 'bootID', 'containerRuntimeVersion', 'kernelVersion', 'machineID',
        'operatingSystem', 'osImage', 'systemUUID'))
    info.update(kubeletVersion=version, kubeProxyVersion=version)
    return {'apiVersion': 'v1', 'kind': 'Node',
            'metadata': {'name': name, 'labels': labels or {}},
            'status': {'conditions': [{'type': 'Ready', 'status': ready}], 'nodeInfo': info}}


def pod(name, node_name, owner=None, phase='Running'):
    owners = [{'kind': owner, 'name': name + '-owner'}] if owner else []
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'name': name, 'namespace': 'default', 'ownerReferences': owners},
            'spec': {'nodeName': node_name}, 'status': {'phase': phase}}


def selected(objects, selector):
    """``objects`` matching a labelSelector of ``key=value`` terms."""
    terms = [term.split('=', 1) for term in selector.split(',') if term]
    return [o for o in objects
            if all((o['metadata'].get('labels') or {}).get(k) == v for k, v in terms)]


class StandIn:
    """``nodes``: Node objects; ``readyz``: (status, body) of /readyz; both may be
    changed while it runs. ``requests`` records the paths asked, with the client
    certificate's CN and O."""

    def __init__(self, ca_cert_pem, ca_key_pem, tmp_path):
        self.nodes, self.pods, self.readyz, self.requests = [], [], (200, 'ok'), []
        cert, key = tls.issue_keypair(ca_cert_pem, ca_key_pem, 'kube-apiserver',
                                      sans=['127.0.0.1', 'localhost'], client=False)
        for name, pem in (('ca.crt', ca_cert_pem), ('server.crt', cert), ('server.key', key)):
            (tmp_path / name).write_text(pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tmp_path / 'server.crt'), str(tmp_path / 'server.key'))
        context.load_verify_locations(str(tmp_path / 'ca.crt'))
        context.verify_mode = ssl.CERT_REQUIRED
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), self._handler())
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = 'https://127.0.0.1:%d' % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path, query=None):
        """(status, body) for ``path`` (``query``: its parameters, as parse_qs gives)."""
        if path == '/readyz':
            return self.readyz
        if path == '/version':
            return 200, {'major': '1', 'minor': '36', 'gitVersion': 'v1.36.0'}
        if path == '/api':
            return 200, {'kind': 'APIVersions', 'versions': ['v1'],
                         'serverAddressByClientCIDRs': [
                             {'clientCIDR': '0.0.0.0/0', 'serverAddress': self.url[8:]}]}
        if path == '/apis':
            return 200, {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': []}
        if path == '/api/v1':
            return 200, {'kind': 'APIResourceList', 'groupVersion': 'v1', 'resources': [
                {'name': name, 'singularName': kind.lower(), 'namespaced': name == 'pods',
                 'kind': kind, 'verbs': ['get', 'list']} for name, kind in RESOURCES.items()]}
        for name, kind in RESOURCES.items():
            if path == '/api/v1/' + name:
                return 200, {'kind': kind + 'List', 'apiVersion': 'v1',
                             'metadata': {'resourceVersion': '1'},
                             'items': selected(getattr(self, name),
                                               (query or {}).get('labelSelector', [''])[0])}
        return 404, {'kind': 'Status', 'status': 'Failure', 'reason': 'NotFound', 'code': 404}

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                url = urlsplit(self.path)
                path = url.path
                subject = dict(x[0] for x in self.connection.getpeercert()['subject'])
                standin.requests.append((path, subject.get('commonName'),
                                         subject.get('organizationName')))
                status, body = standin.answer(path, parse_qs(url.query))
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'text/plain' if isinstance(body, str)
                                 else 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args):
                pass

        return Handler
