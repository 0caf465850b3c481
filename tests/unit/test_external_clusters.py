"""module_utils/external_clusters: a federation's external member's kubeconfig reduced to
what reaches its cluster, and refused when it would run a program, read the
controller's files or reach a denied network; the store keeps it sealed."""

import base64

import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils import (
    external_clusters as ext, secrets, store as store_mod, tls)
from ansible_collections.openstack.magnum.plugins.module_utils.errors import Conflict, Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.secrets import Secrets

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
        ext.check_server('https://localhost:6443', resolve=True)
    assert ext.check_server('https://localhost:6443') == 'https://localhost:6443'


@pytest.mark.parametrize('name', ['', 'Upper', '-a', 'a-', 'a_b', 'a' * 64, None, 3])
def test_names_are_dns_labels(name):
    with pytest.raises(Invalid):
        ext.check_name(name)


def test_the_store_keeps_the_kubeconfig_sealed(tmp_path):
    key_file = tmp_path / 'keys'
    key_file.write_text(secrets.new_key() + '\n')
    url = 'sqlite:///%s' % (tmp_path / 's.sqlite')
    store = store_mod.Store(url, secrets=Secrets(str(key_file)))
    text = ext.dumps(ext.parse(kubeconfig()))
    made = store.add_external_cluster('fed-1', 'aws', 'https://k8s.example.com:6443', text)
    with pytest.raises(Conflict, match='already has an external cluster named aws'):
        store.add_external_cluster('fed-1', 'aws', 'https://k8s.example.com:6443', text)
    store.add_external_cluster('fed-2', 'aws', 'https://k8s.example.com:6443', text)
    assert store.external_clusters('fed-1') == [made]
    assert store.external_cluster('fed-1', 'aws', kubeconfig=True)['kubeconfig'] == text
    with store.read() as conn:
        raw = conn.execute(store.t['external_clusters'].select()).first()._mapping
    assert raw['kubeconfig'].startswith('fernet:') and 'abc' not in raw['kubeconfig']
    store.forget_external_clusters('fed-1')
    assert store.external_cluster('fed-1', made['uuid'], missing_ok=True) is None
    assert len(store.external_clusters('fed-2')) == 1
