"""A stand-in for a Kubernetes API server, for the tasks that talk to a cluster from the
controller (health, the emptiest nodes of a shrink, a Cluster API management cluster's
Helm releases and CAPI objects, a federation's host, members and Karmada) where no
kube-apiserver can run: this machine has no Kubernetes server binary. It speaks the
little of the API those use over HTTPS with a server certificate of the cluster's CA,
and refuses clients without a certificate of that CA (--client-ca-file) or the token of
a service account it keeps (it fills in Secrets of type service-account-token, as the
token controller does): /readyz, /version, discovery (legacy, and the OpenAPI v3
documents whose fieldValidation parameter makes clients leave validation to the
server), nodes and pods (lists the tests set), and any resource of STORED kept as
objects: get, list (label selectors), create (JSON, or protobuf for Secrets and
ConfigMaps, which client-go sends so), replace, merge-patch, delete. It does not
validate, watch, run controllers or garbage-collect. The tests with a real control plane
are tests/test_kubernetes.py's gated ones."""

import base64
import copy
import itertools
import json
import re
import socket
import ssl
import threading
import uuid as uuidlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from ansible_collections.openstack.magnum.plugins.module_utils.core import tls

from standins import k8s_protobuf

RESOURCES = {'nodes': 'Node', 'pods': 'Pod'}
# (group, version) -> [(plural, kind, namespaced)] kept as objects.
STORED = {
    ('', 'v1'): [('namespaces', 'Namespace', False), ('secrets', 'Secret', True),
                 ('configmaps', 'ConfigMap', True), ('serviceaccounts', 'ServiceAccount', True),
                 ('services', 'Service', True)],
    ('cluster.x-k8s.io', 'v1beta1'): [
        ('clusters', 'Cluster', True), ('machinedeployments', 'MachineDeployment', True),
        ('machines', 'Machine', True), ('machinehealthchecks', 'MachineHealthCheck', True)],
    ('controlplane.cluster.x-k8s.io', 'v1beta1'): [
        ('kubeadmcontrolplanes', 'KubeadmControlPlane', True)],
    ('bootstrap.cluster.x-k8s.io', 'v1beta1'): [
        ('kubeadmconfigtemplates', 'KubeadmConfigTemplate', True)],
    ('infrastructure.cluster.x-k8s.io', 'v1beta1'): [
        ('openstackclusters', 'OpenStackCluster', True),
        ('openstackmachinetemplates', 'OpenStackMachineTemplate', True)],
    ('rbac.authorization.k8s.io', 'v1'): [
        ('roles', 'Role', True), ('rolebindings', 'RoleBinding', True),
        ('clusterroles', 'ClusterRole', False),
        ('clusterrolebindings', 'ClusterRoleBinding', False)],
    ('apps', 'v1'): [('deployments', 'Deployment', True)],
    # The openstack-cluster chart's add-ons (azimuth-cloud's cluster-api-addon-provider).
    ('addons.stackhpc.com', 'v1alpha1'): [('helmreleases', 'HelmRelease', True),
                                          ('manifests', 'Manifests', True)],
    # Karmada's API server (a federation's control plane) keeps its member clusters.
    ('cluster.karmada.io', 'v1alpha1'): [('clusters', 'Cluster', False)],
    ('apiextensions.k8s.io', 'v1'): [
        ('customresourcedefinitions', 'CustomResourceDefinition', False)],
}
_PATH = re.compile(r'^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))'
                   r'(?:/namespaces/(?P<namespace>[^/]+))?(?:/(?P<plural>[^/]+))?'
                   r'(?:/(?P<name>[^/]+))?(?:/(?P<sub>status))?$')


def _gv_path(group, version):
    return 'api/v1' if not group else 'apis/%s/%s' % (group, version)


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def status_body(code, reason, message):
    return {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
            'reason': reason, 'message': message, 'code': code}


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


def _matches(labels, term):
    if '!=' in term:
        key, value = term.split('!=', 1)
        return labels.get(key.strip()) != value.strip()
    if '=' in term:
        key, value = term.replace('==', '=').split('=', 1)
        return labels.get(key.strip()) == value.strip()
    if term.startswith('!'):
        return term[1:].strip() not in labels
    return term.strip() in labels


def selected(objects, selector):
    """``objects`` matching a labelSelector (``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``)."""
    terms = [term for term in (selector or '').split(',') if term]
    return [o for o in objects if all(_matches(o['metadata'].get('labels') or {}, t)
                                      for t in terms)]


class StandIn:
    """``nodes``: Node objects; ``readyz``: (status, body) of /readyz; both may be
    changed while it runs. ``requests`` records the paths asked, with the client
    certificate's CN and O; ``connections`` the connections accepted. With
    ``keep_alive`` it speaks HTTP/1.1 and keeps a connection open between requests (closed
    when it stops), as an API server does."""

    def __init__(self, ca_cert_pem, ca_key_pem, tmp_path, port=0, keep_alive=False):
        self.nodes, self.pods, self.readyz, self.requests = [], [], (200, 'ok'), []
        self.keep_alive, self.connections = keep_alive, []
        # (group, version, plural, namespace or None, name) -> object
        self.objects, self._lock = {}, threading.Lock()
        self._versions = itertools.count(1)
        cert, key = tls.issue_keypair(ca_cert_pem, ca_key_pem, 'kube-apiserver',
                                      sans=['127.0.0.1', 'localhost'], client=False)
        for name, pem in (('ca.crt', ca_cert_pem), ('server.crt', cert), ('server.key', key)):
            (tmp_path / name).write_text(pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tmp_path / 'server.crt'), str(tmp_path / 'server.key'))
        context.load_verify_locations(str(tmp_path / 'ca.crt'))
        # A client certificate of the CA, or a service account's token (Bearer).
        context.verify_mode = ssl.CERT_OPTIONAL
        self.httpd = ThreadingHTTPServer(('127.0.0.1', port), self._handler())
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = 'https://127.0.0.1:%d' % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        for connection in self.connections:  # kept-alive ones answer no more
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def token_subject(self, authorization):
        """The service account a Bearer token is of (its Secret's annotation), or None."""
        if not (authorization or '').startswith('Bearer '):
            return None
        token = base64.b64encode(authorization[7:].strip().encode()).decode()
        for obj in list(self.objects.values()):
            if obj['kind'] == 'Secret' and (obj.get('data') or {}).get('token') == token:
                return 'system:serviceaccount:%s:%s' % (
                    obj['metadata'].get('namespace'), (obj['metadata'].get('annotations') or {})
                    .get('kubernetes.io/service-account.name'))
        return None

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
            return 200, {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': [
                {'name': group, 'versions': [{'groupVersion': group + '/' + version,
                                              'version': version}],
                 'preferredVersion': {'groupVersion': group + '/' + version,
                                      'version': version}}
                for group, version in STORED if group]}
        if path.startswith('/openapi/v3'):
            return self._openapi(path[len('/openapi/v3'):].strip('/'))
        if path == '/api/v1':
            listed = [{'name': name, 'singularName': kind.lower(), 'namespaced': name == 'pods',
                       'kind': kind, 'verbs': ['get', 'list']}
                      for name, kind in RESOURCES.items()]
            return 200, dict(self._resources('', 'v1'), resources=listed + self._resources(
                '', 'v1')['resources'])
        for name, kind in RESOURCES.items():
            if path == '/api/v1/' + name:
                return 200, {'kind': kind + 'List', 'apiVersion': 'v1',
                             'metadata': {'resourceVersion': '1'},
                             'items': selected(getattr(self, name),
                                               (query or {}).get('labelSelector', [''])[0])}
        return self.handle('GET', path, query or {})

    # ------------------------------------------------------------ stored objects
    def _resources(self, group, version):
        return {'kind': 'APIResourceList', 'apiVersion': 'v1',
                'groupVersion': group + '/' + version if group else version,
                'resources': [{'name': plural, 'singularName': kind.lower(),
                               'namespaced': namespaced, 'kind': kind,
                               'verbs': ['create', 'delete', 'get', 'list', 'patch', 'update']}
                              for plural, kind, namespaced in STORED[(group, version)]]}

    def _openapi(self, gv_path):
        """OpenAPI v3: the index, and per group version the create and patch operations
        with their fieldValidation parameter (what makes client-go validate on the server,
        where the stand-in accepts everything)."""
        if not gv_path:
            return 200, {'paths': dict((_gv_path(g, v), {'serverRelativeURL': '/openapi/v3/'
                                                         + _gv_path(g, v)})
                                       for g, v in STORED)}
        for (group, version), kinds in STORED.items():
            if gv_path != _gv_path(group, version):
                continue
            paths = {}
            for plural, kind, namespaced in kinds:
                operation = {'x-kubernetes-group-version-kind': {
                    'group': group, 'version': version, 'kind': kind},
                    'parameters': [{'name': 'fieldValidation', 'in': 'query',
                                    'schema': {'type': 'string'}}], 'responses': {}}
                base = '/%s/%s%s' % (gv_path, 'namespaces/{namespace}/' if namespaced else '',
                                     plural)
                paths[base] = {'post': operation}
                paths[base + '/{name}'] = {'put': operation, 'patch': operation}
            return 200, {'openapi': '3.0.0', 'info': {'title': 'stand-in', 'version': version},
                         'paths': paths, 'components': {'schemas': {}}}
        return 404, status_body(404, 'NotFound', 'no OpenAPI document ' + gv_path)

    def put_object(self, obj):
        """Store ``obj`` as it is (a test playing a controller: Cluster API's status)."""
        group, _, version = obj['apiVersion'].rpartition('/')
        plural = [p for p, kind, _ns in STORED[(group, version)] if kind == obj['kind']][0]
        meta = obj['metadata']
        with self._lock:
            meta.setdefault('uid', str(uuidlib.uuid4()))
            meta['resourceVersion'] = str(next(self._versions))
            self.objects[(group, version, plural, meta.get('namespace'), meta['name'])] = obj
        return obj

    def find(self, kind, namespace=None):
        """The stored objects of ``kind`` (in ``namespace``), by name."""
        return dict((o['metadata']['name'], o) for o in list(self.objects.values())
                    if o['kind'] == kind and namespace in (None, o['metadata'].get('namespace')))

    def handle(self, method, path, query, body=None, content_type=''):
        match = _PATH.match(path)
        if not match:
            return 404, status_body(404, 'NotFound', 'the server could not find the '
                                                     'requested resource')
        group = match.group('group') or ''
        version = match.group('version') or match.group('core')
        if (group, version) not in STORED:
            return 404, status_body(404, 'NotFound', 'no group version %s/%s' % (group, version))
        namespace, plural, name = match.group('namespace'), match.group('plural'), \
            match.group('name')
        if plural is None and namespace is None:
            return 200, self._resources(group, version)
        if plural is None:   # /api/v1/namespaces/<name>
            plural, name, namespace = 'namespaces', namespace, None
        kinds = dict((p, (kind, ns)) for p, kind, ns in STORED[(group, version)])
        if plural not in kinds:
            return 404, status_body(404, 'NotFound', 'no resource %s' % plural)
        kind, namespaced = kinds[plural]
        key = (group, version, plural, namespace if namespaced else None, name)
        if method == 'DELETE':
            body = None   # DeleteOptions: propagation is not modelled
        if body is not None:
            body = k8s_protobuf.decode(body) if 'protobuf' in content_type else \
                json.loads(body or b'null')
        with self._lock:
            return self._act(method, key, kind, query, body, content_type, match.group('sub'))

    def _act(self, method, key, kind, query, body, content_type, sub):
        group, version, plural, namespace, name = key
        api_version = group + '/' + version if group else version
        current = self.objects.get(key)
        missing = (404, status_body(404, 'NotFound', '%s "%s" not found' % (plural, name)))
        if method == 'GET' and name is None:
            items = [o for k, o in self.objects.items() if k[:3] == key[:3]
                     and (namespace is None or k[3] == namespace)]
            return 200, {'kind': kind + 'List', 'apiVersion': api_version,
                         'metadata': {'resourceVersion': str(next(self._versions))},
                         'items': selected(items, query.get('labelSelector', [''])[0])}
        if method == 'GET':
            return (200, current) if current else missing
        if method == 'DELETE':
            if current is None:
                return missing
            del self.objects[key]
            return 200, current
        if method == 'POST':
            meta = body.setdefault('metadata', {})
            if not meta.get('name') and meta.get('generateName'):
                meta['name'] = meta['generateName'] + uuidlib.uuid4().hex[:5]
            key = (group, version, plural, namespace, meta['name'])
            if key in self.objects:
                return 409, status_body(409, 'AlreadyExists', '%s "%s" already exists'
                                        % (plural, meta['name']))
            current = {}
        elif current is None:
            return missing
        elif method == 'PATCH':
            if 'json-patch' in content_type:
                return 415, status_body(415, 'UnsupportedMediaType', 'JSON patch is not '
                                                                     'supported here')
            body = merge_patch(current, body)
        body.update(apiVersion=api_version, kind=kind)
        meta = body.setdefault('metadata', {})
        meta.update(name=key[4], uid=(current.get('metadata') or {}).get('uid')
                    or str(uuidlib.uuid4()), resourceVersion=str(next(self._versions)),
                    creationTimestamp=(current.get('metadata') or {}).get(
                        'creationTimestamp') or '2026-01-01T00:00:00Z')
        if namespace:
            meta['namespace'] = namespace
        if sub == 'status' and current:
            body = dict(current, status=body.get('status'))
        if kind == 'Secret' and body.get('stringData'):
            data = body.setdefault('data', {})
            for k, v in body.pop('stringData').items():
                data[k] = base64.b64encode(v.encode()).decode()
        if kind == 'Secret' and body.get('type') == 'kubernetes.io/service-account-token' \
                and not (body.get('data') or {}).get('token'):
            # kube-controller-manager's token controller: the service account's token.
            body.setdefault('data', {})['token'] = base64.b64encode(
                ('standin-%s' % uuidlib.uuid4().hex).encode()).decode()
        self.objects[key] = body
        return (201 if method == 'POST' else 200), body

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1' if standin.keep_alive else 'HTTP/1.0'

            def setup(self):
                super().setup()
                standin.connections.append(self.connection)

            def do_GET(self):  # noqa: N802 - http.server's name
                self._serve('GET')

            def do_POST(self):  # noqa: N802
                self._serve('POST')

            def do_PUT(self):  # noqa: N802
                self._serve('PUT')

            def do_PATCH(self):  # noqa: N802
                self._serve('PATCH')

            def do_DELETE(self):  # noqa: N802
                self._serve('DELETE')

            def _serve(self, method):
                url = urlsplit(self.path)
                path = url.path
                peer = self.connection.getpeercert() or {}
                subject = dict(x[0] for x in peer.get('subject', ()))
                if not subject:
                    account = standin.token_subject(self.headers.get('Authorization'))
                    if account is None:
                        return self._send(401, status_body(401, 'Unauthorized',
                                                           'Unauthorized'))
                    subject = {'commonName': account}
                standin.requests.append((path, subject.get('commonName'),
                                         subject.get('organizationName')))
                size = int(self.headers.get('Content-Length') or 0)
                data = self.rfile.read(size) if size else None
                if method == 'GET':
                    status, body = standin.answer(path, parse_qs(url.query))
                else:
                    try:
                        status, body = standin.handle(
                            method, path, parse_qs(url.query),
                            data if data is not None else b'',
                            self.headers.get('Content-Type') or '')
                    except ValueError as exc:
                        status, body = 400, status_body(400, 'BadRequest', str(exc))
                self._send(status, body)

            def _send(self, status, body):
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
