"""The first master's part of a Kubernetes converge in one run (module k8s_control_plane):
the control plane initialised only where none runs, kubeadm's add-on phase alone run again
when only it timed out, the network add-on applied, the joining nodes' token and the CA's
discovery hash; and the role's probe read (which master leads, which nodes join).
kubeadm's and kubectl's commands are the node's (recorded here); the files are written for
real, under a root of the test's."""

import hashlib
import json
import stat
import subprocess

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps, tls
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_plane

ADDONS_TIMED_OUT = ('error execution phase addon/coredns: unable to create ConfigMap: '
                    'context deadline exceeded')


class Node:
    """The commands a node was asked to run, answered in turn from ``answers`` (a
    command's first two words -> list of (rc, out, err); the last one repeats)."""

    def __init__(self, **answers):
        self.asked, self.answers = [], answers

    def __call__(self, argv, environ_update=None):
        self.asked.append(argv)
        key = '%s %s' % (argv[0], argv[1] if argv[1:] else '')
        queue = self.answers.get(key.strip()) or self.answers.get(argv[0]) or [(0, '', '')]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def ran(self, *words):
        return [argv for argv in self.asked if argv[:len(words)] == list(words)]


def plane(tmp_path, node, **kw):
    return k8s_plane.ControlPlane(node, root=str(tmp_path), sleep=lambda s: None, **kw)


@pytest.fixture
def ca():
    pem, key = tls.create_ca('cluster-ca')
    return {'pem': pem, 'key': key}


def params(ca, **more):
    return dict({'config': 'kind: InitConfiguration\n', 'ca_cert': ca['pem'],
                 'ca_key': ca['key'], 'patches': {'etcd+strategic.yaml': {'spec': {}}},
                 'cni_manifest': 'kind: DaemonSet\n', 'join': 'none'}, **more)


VERSION = json.dumps({'serverVersion': {'gitVersion': 'v1.36.2'}})
ANSWERS = {'kubectl': [(0, VERSION, '')],
           'containerd': [(0, 'containerd github.com/containerd/containerd 1.6.20 \n', '')]}


def test_a_master_without_a_control_plane_is_given_the_ca_and_initialised(tmp_path, ca):
    node = Node(**ANSWERS)
    steps = plane(tmp_path, node)
    initialised, join, versions = steps.all(params(ca))
    assert initialised and join == {}
    assert versions == {'kubernetes': 'v1.36.2', 'containerd': '1.6.20'}
    pki = tmp_path / 'etc/kubernetes/pki'
    assert (pki / 'ca.crt').read_text() == ca['pem']
    assert stat.S_IMODE((pki / 'ca.key').stat().st_mode) == 0o600
    assert stat.S_IMODE(pki.stat().st_mode) == 0o700
    assert json.loads((tmp_path / 'etc/kubernetes/patches/etcd+strategic.yaml').read_text()) \
        == {'spec': {}}
    assert (tmp_path / 'etc/kubernetes/kubeadm.yaml').read_text() == 'kind: InitConfiguration\n'
    assert node.ran('kubeadm', 'init') == [
        ['kubeadm', 'init', '--config', '/etc/kubernetes/kubeadm.yaml', '--upload-certs']]
    assert node.ran('kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', 'apply') == [
        ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', 'apply', '-f',
         '/etc/kubernetes/cni.yaml']]


def test_a_master_running_one_is_not_initialised_again_and_needs_no_configuration(
        tmp_path, ca):
    (tmp_path / 'etc/kubernetes').mkdir(parents=True)
    (tmp_path / 'etc/kubernetes/admin.conf').write_text('kind: Config\n')
    node = Node(**ANSWERS)
    initialised, _, _ = plane(tmp_path, node).all({'cni_manifest': 'kind: DaemonSet\n'})
    assert not initialised and node.ran('kubeadm') == []
    assert not (tmp_path / 'etc/kubernetes/pki').exists()


def test_without_a_control_plane_nor_its_configuration_the_run_says_so(tmp_path):
    with pytest.raises(node_steps.StepFailed, match='no kubeadm configuration and CA'):
        plane(tmp_path, Node()).all({'join': 'workers'})


def test_only_the_add_on_phase_is_run_again_when_only_it_timed_out(tmp_path, ca):
    node = Node(**dict(ANSWERS, kubeadm=[(1, '', ADDONS_TIMED_OUT), (1, '', 'again'),
                                         (0, '', '')]))
    assert plane(tmp_path, node).all(params(ca))[0]
    assert node.ran('kubeadm', 'init', 'phase', 'addon') == [
        ['kubeadm', 'init', 'phase', 'addon', 'all', '--config',
         '/etc/kubernetes/kubeadm.yaml']] * 2


@pytest.mark.parametrize('answers, message', [
    ([(1, '', 'error execution phase wait-control-plane: timed out')],
     'kubeadm init exited 1: error execution phase wait-control-plane'),
    ([(1, '', ADDONS_TIMED_OUT), (1, '', 'still no API')],
     'kubeadm init phase addon all --config /etc/kubernetes/kubeadm.yaml exited 1 3 times: '
     'still no API')], ids=['another phase', 'add-on retries spent'])
def test_a_failed_init_names_kubeadms_error(tmp_path, ca, answers, message):
    node = Node(**dict(ANSWERS, kubeadm=answers))
    with pytest.raises(node_steps.StepFailed, match=message):
        plane(tmp_path, node).all(params(ca, addon_retries=2))


def test_joining_masters_get_a_token_the_cas_hash_and_the_certificate_key(tmp_path, ca):
    (tmp_path / 'etc/kubernetes').mkdir(parents=True)
    (tmp_path / 'etc/kubernetes/admin.conf').write_text('kind: Config\n')
    (tmp_path / 'etc/kubernetes/pki').mkdir()
    (tmp_path / 'etc/kubernetes/pki/ca.crt').write_text(ca['pem'])
    public = subprocess.run(['openssl', 'x509', '-pubkey', '-noout', '-in',
                             str(tmp_path / 'etc/kubernetes/pki/ca.crt')],
                            capture_output=True, text=True, check=True).stdout
    node = Node(**dict(ANSWERS, **{
        'kubeadm token': [(0, 'abcdef.0123456789abcdef\n', '')],
        'openssl': [(0, public, '')],
        'kubeadm init': [(0, '[upload-certs] Using certificate key:\nfeedc0de\n', '')]}))
    join = plane(tmp_path, node).all({'join': 'masters'})[1]
    # kubeadm's documented way: openssl pkey -pubin -outform der | sha256
    der = subprocess.run(['openssl', 'pkey', '-pubin', '-outform', 'der'], input=public.encode(),
                         capture_output=True, check=True).stdout
    assert join == {'token': 'abcdef.0123456789abcdef', 'certificate_key': 'feedc0de',
                    'ca_cert_hash': 'sha256:' + hashlib.sha256(der).hexdigest()}
    workers = plane(tmp_path, Node(**dict(ANSWERS, openssl=[(0, public, '')]))).all(
        {'join': 'workers'})[1]
    assert set(workers) == {'token', 'ca_cert_hash'}


def test_the_network_add_on_reports_a_change_only_when_kubectl_changed_something(tmp_path):
    (tmp_path / 'etc/kubernetes').mkdir(parents=True)
    (tmp_path / 'etc/kubernetes/admin.conf').write_text('kind: Config\n')
    unchanged = Node(**dict(ANSWERS, **{'kubectl --kubeconfig': [
        (0, 'daemonset.apps/kube-flannel-ds unchanged\n', ''), (0, VERSION, '')]}))
    steps = plane(tmp_path, unchanged)
    steps.file(str(tmp_path / 'etc/kubernetes/cni.yaml'), 'kind: DaemonSet\n')
    steps.changes = []
    steps.all({'cni_manifest': 'kind: DaemonSet\n'})
    assert steps.changes == []
    configured = Node(**dict(ANSWERS, **{'kubectl --kubeconfig': [
        (0, 'daemonset.apps/kube-flannel-ds configured\n', ''), (0, VERSION, '')]}))
    steps = plane(tmp_path, configured)
    steps.all({'cni_manifest': 'kind: DaemonSet\n'})
    assert steps.changes == [
        'applied the network add-on: daemonset.apps/kube-flannel-ds configured']


def probe(item, *found):
    return {'item': item, 'stdout': ''.join(path + '\r\n' for path in found)}


ADMIN, KUBELET = '/etc/kubernetes/admin.conf', '/etc/kubernetes/kubelet.conf'


@pytest.mark.parametrize('results, expected', [
    ([probe('m0'), probe('m1'), probe('w0')],
     {'leader': 'm0', 'initialised': False, 'joining': ['m1', 'w0']}),
    ([probe('m0'), probe('m1', ADMIN, KUBELET), probe('w0', KUBELET), probe('w1')],
     {'leader': 'm1', 'initialised': True, 'joining': ['m0', 'w1']}),
    ([probe('m0', ADMIN, KUBELET), probe('w0', KUBELET)],
     {'leader': 'm0', 'initialised': True, 'joining': []}),
], ids=['new cluster', 'first master replaced', 'nothing to do'])
def test_the_probe_names_the_leader_and_the_nodes_to_join(results, expected):
    assert k8s_plane.probed(results, ADMIN, ['m0', 'm1']) == expected
