"""module_utils/external_clusters: a federation's external member's kubeconfig reduced to
what reaches its cluster, and refused when it would run a program, read the
controller's files or reach a denied network; the store keeps it sealed."""

import base64
import tempfile
from pathlib import Path

import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    secrets, store as store_mod, tls)
from ansible_collections.openstack.magnum.plugins.module_utils.federation import (
    external_clusters as ext)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Conflict, Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.core.secrets import Secrets

CA, CA_KEY = tls.create_ca('ext')


def enc(text):
    return base64.b64encode(text.encode()).decode()


def kubeconfig(cluster=None, user=None, **top):
    config = {
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'b',
        'clusters': [{'name': 'one', 'cluster': {'server': 'https://10.0.0.9'}},
                     {'name': 'two', 'cluster': dict({
                         'server': 'https://k8s.example.com:6443',
                         'certificate-authority-data': enc(CA)}, **(cluster or {}))}],
        'users': [{'name': 'u', 'user': user if user is not None else {'token': 'abc'}}],
        'contexts': [{'name': 'a', 'context': {'cluster': 'one', 'user': 'u'}},
                     {'name': 'b', 'context': {'cluster': 'two', 'user': 'u',
                                               'namespace': 'x'}}],
        'preferences': {'colors': True}}
    config.update(top)
    return yaml.safe_dump(config)


def test_only_what_reaches_the_current_context_is_kept():
    kept = ext.parse(kubeconfig())
    assert kept == {
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'external',
        'clusters': [{'name': 'external', 'cluster': {
            'server': 'https://k8s.example.com:6443',
            'certificate-authority-data': enc(CA)}}],
        'users': [{'name': 'external', 'user': {'token': 'abc'}}],
        'contexts': [{'name': 'external', 'context': {'cluster': 'external',
                                                      'user': 'external'}}]}
    assert ext.server(kept) == 'https://k8s.example.com:6443'
    assert ext.loads(ext.dumps(kept)) == kept
    cert, key = tls.issue_keypair(CA, CA_KEY, 'admin', 'system:masters', server=False)
    user = {'client-certificate-data': enc(cert), 'client-key-data': enc(key)}
    assert ext.parse(kubeconfig(user=user))['users'][0]['user'] == user


@pytest.mark.parametrize('text, message', [
    (kubeconfig(user={'exec': {'command': 'aws'}}), "user sets 'exec'"),
    (kubeconfig(user={'auth-provider': {'name': 'gcp'}}), "user sets 'auth-provider'"),
    (kubeconfig(user={'tokenFile': '/etc/shadow'}), "user sets 'tokenFile'"),
    (kubeconfig(user={'client-key': '/root/.ssh/id_rsa', 'client-certificate': '/x'}),
     "user sets 'client-certificate'"),
    (kubeconfig(user={'username': 'a', 'password': 'b'}), "user sets 'password'"),
    (kubeconfig(cluster={'certificate-authority': '/etc/ssl/x.pem'}),
     "cluster sets 'certificate-authority'"),
    (kubeconfig(cluster={'insecure-skip-tls-verify': True}),
     "cluster sets 'insecure-skip-tls-verify'"),
    (kubeconfig(cluster={'proxy-url': 'http://10.0.0.1:3128'}), "cluster sets 'proxy-url'"),
    (kubeconfig(cluster={'certificate-authority-data': ''}), 'no certificate-authority-data'),
    (kubeconfig(cluster={'certificate-authority-data': 'bm90IGEgcGVt'}), 'not base64 of a PEM'),
    (kubeconfig(user={}), 'has no credential'),
    (kubeconfig(user={'client-key-data': enc(CA)}), 'has no credential'),
    (kubeconfig(cluster={'server': 'http://k8s.example.com'}), 'is not an https:// URL'),
    (kubeconfig(cluster={'server': 'https://127.0.0.1:6443'}), 'is in 127.0.0.0/8'),
    (kubeconfig(cluster={'server': 'https://[::1]:6443'}), 'is in ::1/128'),
    (kubeconfig(cluster={'server': 'https://169.254.169.254'}), 'is in 169.254.0.0/16'),
    (kubeconfig(**{'current-context': 'c'}), "names context 'c'"),
    (kubeconfig(**{'current-context': None}), 'not exactly one context'),
    ('!!python/object/apply:os.system ["touch /tmp/x"]', 'not valid YAML'),
    ('- a list', 'not a mapping'),
    ('[' * 30000, 'nested too deep'),
    ('', 'needs a kubeconfig'),
    ('x' * (ext.MAX_KUBECONFIG + 1), 'larger than'),
])
def test_refused_with_the_reason(text, message):
    with pytest.raises(Invalid) as err:
        ext.parse(text)
    assert message in str(err.value)


def test_denied_networks_are_the_operators(monkeypatch):
    monkeypatch.setenv(ext.ENV_DENIED, '10.0.0.0/8')
    assert ext.check_server('https://127.0.0.1:6443') == 'https://127.0.0.1:6443'
    with pytest.raises(Invalid, match='is in 10.0.0.0/8'):
        ext.check_server('https://10.1.2.3')
    monkeypatch.setenv(ext.ENV_DENIED, '127.0.0.0/8')
    with pytest.raises(Invalid, match='is in 127.0.0.0/8'):   # a name, once resolved
        ext.pinned(as_config('https://localhost:6443'))
    assert ext.check_server('https://localhost:6443') == 'https://localhost:6443'


# The loopback, the metadata address and the service host's own, however written
# (issue #43: ``[::ffff:127.0.0.1]`` was accepted and connected to at join).
DENIED_FORMS = ['https://[::ffff:127.0.0.1]:6443', 'https://[::ffff:7f00:1]',
                'https://[::ffff:169.254.169.254]', 'https://[::127.0.0.1]',
                'https://[64:ff9b::7f00:1]', 'https://[2002:7f00:1::]', 'https://2130706433',
                'https://0x7f.1', 'https://0177.0.0.1', 'https://127.1', 'https://127.0.0.1.',
                'https://[fe80::1%25eth0]', 'https://224.0.0.1', 'https://0.0.0.0']


@pytest.mark.parametrize('server', DENIED_FORMS)
def test_every_form_of_a_denied_address_is_refused(server):
    with pytest.raises(Invalid, match='may not be'):
        ext.parse(kubeconfig(cluster={'server': server}))


def own_address():
    """An address of this machine off the loopback (its route out)."""
    import socket
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(('198.51.100.1', 9))
        return probe.getsockname()[0]
    except OSError:
        pytest.skip('this machine has no address off the loopback')
    finally:
        probe.close()


def test_the_service_hosts_own_addresses_are_refused_unless_the_operator_allows(monkeypatch):
    server = 'https://%s:6443' % own_address()
    with pytest.raises(Invalid, match="address of the service's own host"):
        ext.check_server(server)
    monkeypatch.setenv(ext.ENV_DENIED, '169.254.0.0/16')   # an operator's list without host
    assert ext.check_server(server) == server


@pytest.mark.parametrize('server', ['https://198.51.100.7/\r\nX: y', 'https://198.51.100.7/ x',
                                    'https://198.51.100.7/\x00', 'https://198.51.100.7\t'])
def test_a_server_with_a_control_character_is_refused(server):
    with pytest.raises(Invalid, match='control character'):
        ext.parse(kubeconfig(cluster={'server': server}))


def listener():
    import socket
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock


def accepted(sock):
    try:
        sock.accept()[0].close()
        return True
    except BlockingIOError:
        return False


def as_config(server):
    return ext.loads(ext.dumps({'clusters': [{'name': 'external', 'cluster': {
        'server': server, 'certificate-authority-data': enc(CA)}}]}))


def test_each_connection_is_checked_and_pinned_to_the_checked_address(monkeypatch):
    """At join, what the store holds is checked again on every address its name resolves
    to (a record from before, or a name that now resolves to the loopback): refused
    before any connection; an allowed one is connected to at the address checked, its
    certificate still checked against its name."""
    from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
        kube_access)
    sock = listener()
    port = sock.getsockname()[1]
    try:
        for server in ['https://localhost:%d' % port, 'https://[::ffff:127.0.0.1]:%d' % port,
                       'https://2130706433:%d' % port, 'https://127.1:%d' % port]:
            with pytest.raises(Invalid, match='may not be'):
                kube_access.reachable(ext.pinned(as_config(server)))
        assert not accepted(sock), 'a denied server was connected to'
        monkeypatch.setenv(ext.ENV_DENIED, '169.254.0.0/16')
        config = ext.pinned(as_config('https://localhost:%d/base' % port))
        cluster = config['clusters'][0]['cluster']
        assert cluster['server'] in ('https://127.0.0.1:%d/base' % port,
                                     'https://[::1]:%d/base' % port)
        assert cluster['tls-server-name'] == 'localhost'
        if cluster['server'].startswith('https://127.0.0.1'):
            kube_access.reachable(config)
            assert accepted(sock)
    finally:
        sock.close()


def test_the_controller_follows_no_redirect_of_a_cluster():
    """A member's API that answers 302 to the controller's loopback gets an error, not a
    second request there."""
    import http.server
    import ssl
    import threading

    from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
        kube_access)
    target = listener()
    cert, key = tls.issue_keypair(CA, CA_KEY, 'member', sans=['127.0.0.1'], client=False)
    cert_file = Path(tempfile.mkdtemp()) / 'c.pem'
    cert_file.write_text(cert + key)

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header('Location', 'https://127.0.0.1:%d/api' % target.getsockname()[1])
            self.send_header('Content-Length', '0')
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Redirect)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert_file))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = kube_access.kubeconfig('https://127.0.0.1:%d' % server.server_address[1],
                                        CA, *tls.issue_keypair(CA, CA_KEY, 'admin',
                                                               server=False))
        errors = []

        def connect():
            try:
                kube_access.client(config)
            except Exception as exc:   # the 302 itself, as an API error
                errors.append(exc)

        attempt = threading.Thread(target=connect, daemon=True)
        attempt.start()
        attempt.join(60)   # a client that followed waits on the target for ever
        assert not accepted(target), 'the redirect was followed'
        assert errors and '302' in str(errors[0])
    finally:
        server.shutdown()
        target.close()


@pytest.mark.parametrize('name', ['', 'Upper', '-a', 'a-', 'a_b', 'a' * 64, None, 3])
def test_names_are_dns_labels(name):
    with pytest.raises(Invalid):
        ext.check_name(name)


def test_the_store_keeps_the_kubeconfig_sealed(tmp_path):
    key_file = tmp_path / 'keys'
    key_file.write_text(secrets.new_key() + '\n')
    url = 'sqlite:///%s' % (tmp_path / 's.sqlite')
    store = store_mod.Store(url, secrets=Secrets(str(key_file)))
    token = 'a-bearer-token-sealed-in-the-store'  # long: never in a ciphertext by chance
    text = ext.dumps(ext.parse(kubeconfig(user={'token': token})))
    made = store.add_external_cluster('fed-1', 'aws', 'https://k8s.example.com:6443', text)
    with pytest.raises(Conflict, match='already has an external cluster named aws'):
        store.add_external_cluster('fed-1', 'aws', 'https://k8s.example.com:6443', text)
    store.add_external_cluster('fed-2', 'aws', 'https://k8s.example.com:6443', text)
    assert store.external_clusters('fed-1') == [made]
    assert store.external_cluster('fed-1', 'aws', kubeconfig=True)['kubeconfig'] == text
    with store.read() as conn:
        raw = conn.execute(store.t['external_clusters'].select()).first()._mapping
    assert raw['kubeconfig'].startswith('fernet:') and token not in raw['kubeconfig']
    store.forget_external_clusters('fed-1')
    assert store.external_cluster('fed-1', made['uuid'], missing_ok=True) is None
    assert len(store.external_clusters('fed-2')) == 1
