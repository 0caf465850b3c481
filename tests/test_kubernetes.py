"""The Kubernetes driver (role `kubernetes`: kubeadm + containerd) on real container nodes.

No Kubernetes server binary or image is reachable from this machine's registries: the
tests that need a real control plane run when MAGNUM_K8S_ARTIFACTS names an offline
artifacts directory (bin/ and images/*.tar, README "Kubernetes") and are skipped, by name,
otherwise. What runs everywhere: a create whose artifacts cannot be had (upstream
unreachable, or an incomplete offline directory) ends CREATE_FAILED saying what is
missing, before anything is done on the nodes, and its delete leaves nothing."""

import os
import subprocess

import pytest

from conftest import ApiServer, REPO, wait_for
from test_infra_docker import docker_ls, docker_ok, nothing_left, remove_leftovers
from test_swarm import Rest

ARTIFACTS = os.environ.get('MAGNUM_K8S_ARTIFACTS')
pytestmark = [pytest.mark.docker, pytest.mark.skipif(
    not docker_ok(), reason='needs a running Docker engine (dockerd) and debootstrap; '
                            '.ci/run installs and starts them')]
needs_artifacts = pytest.mark.skipif(
    not ARTIFACTS, reason='needs a real control plane: set MAGNUM_K8S_ARTIFACTS to an offline '
                          'Kubernetes artifacts directory (bin/, images/*.tar)')
TEMPLATE = ['--coe', 'kubernetes', '--image', 'debian-12', '--external-network', 'public',
            '--keypair', 'default', '--flavor', 'm1.tiny', '--master-flavor', 'm1.tiny',
            '--network-driver', 'flannel']


def api(tmp_path, **env):
    env = dict({'XDG_DATA_HOME': str(tmp_path / 'data')}, **env)
    return ApiServer('sqlite:///%s' % (tmp_path / 'm.sqlite'), REPO, tmp_path,
                     provider='docker', env=env)


@pytest.mark.skipif(bool(ARTIFACTS), reason='MAGNUM_K8S_ARTIFACTS is set: artifacts are there')
@pytest.mark.parametrize('source', ['upstream', 'incomplete'])
def test_create_without_artifacts_fails_saying_so_and_deletes_to_nothing(tmp_path, source):
    env = {}
    if source == 'incomplete':
        offline = tmp_path / 'artifacts'
        (offline / 'bin').mkdir(parents=True)
        (offline / 'bin' / 'kubeadm').write_text('')
        env['MAGNUM_K8S_ARTIFACTS'] = str(offline)
    server = api(tmp_path, **env)
    rest = Rest(server.start())
    uuid = None
    try:
        rest.coe('cluster', 'template', 'create', 'kt', *TEMPLATE)
        cluster = rest.create('k', 'kt', 1)
        uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_FAILED', cluster
        reason = cluster['status_reason']
        if source == 'upstream':
            assert 'Kubernetes v1.36.0 binaries could not be downloaded' in reason, reason
            assert 'https://dl.k8s.io/release/v1.36.0/bin/linux/amd64/' in reason, reason
            assert 'Set MAGNUM_K8S_ARTIFACTS' in reason, reason
        else:
            assert ('MAGNUM_K8S_ARTIFACTS=%s is incomplete: missing bin/kubelet, bin/kubectl, '
                    'bin/crictl; no images/*.tar' % offline) in reason, reason
        # Nothing was done on the nodes: no Kubernetes binary installed.
        nodes = docker_ls('container', uuid)
        assert nodes, 'the provider made no node'
        for node in nodes:
            probe = subprocess.run(['docker', 'exec', node, 'test', '-e',
                                    '/usr/local/bin/kubeadm'], capture_output=True)
            assert probe.returncode != 0
        rest.coe('cluster', 'delete', 'k')
        assert rest.settled('k')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        if uuid:
            remove_leftovers(uuid)
        server.stop()


def standin_artifacts(path):
    """An offline directory laid out as MAGNUM_K8S_ARTIFACTS is, whose binaries are
    stand-ins (no Kubernetes binary can be had here) that say so and fail, and whose
    image is a real docker-archive tarball."""
    (path / 'bin').mkdir(parents=True)
    for name in ('kubeadm', 'kubelet', 'kubectl', 'crictl'):
        script = path / 'bin' / name
        script.write_text('#!/bin/sh\necho "stand-in %s: $*" >&2\nexit 1\n' % name)
        script.chmod(0o755)
    (path / 'images').mkdir()
    empty = path / 'empty'
    empty.mkdir()
    (empty / 'marker').write_text('magnum test image\n')
    subprocess.run('tar -C %s -c . | docker import - magnum-test/k8s-standin:1' % empty,
                   shell=True, check=True, capture_output=True)
    subprocess.run(['docker', 'save', '-o', str(path / 'images' / 'standin.tar'),
                    'magnum-test/k8s-standin:1'], check=True, capture_output=True)
    return path


def on_node(node, *cmd):
    return subprocess.run(['docker', 'exec', node] + list(cmd), capture_output=True, text=True)


@pytest.mark.skipif(bool(ARTIFACTS), reason='MAGNUM_K8S_ARTIFACTS is set: the lifecycle test '
                                            'covers node preparation')
def test_nodes_are_prepared_from_an_offline_directory_up_to_kubeadm(tmp_path):
    """The node preparation for real (packages, kernel settings, containerd configured for
    kubeadm and restarted, CNI plugins, binaries, kubelet unit, images imported into
    containerd) from an offline directory; the stand-in kubeadm then fails the create
    with its message, and delete leaves nothing."""
    offline = standin_artifacts(tmp_path / 'artifacts')
    server = api(tmp_path, MAGNUM_K8S_ARTIFACTS=str(offline))
    rest = Rest(server.start())
    uuid = None
    try:
        rest.coe('cluster', 'template', 'create', 'kt', *TEMPLATE)
        cluster = rest.create('k', 'kt', 1)
        uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_FAILED', cluster
        assert 'stand-in kubeadm: init --config /etc/kubernetes/kubeadm.yaml' in \
            cluster['status_reason'], cluster['status_reason']
        nodes = docker_ls('container', uuid)
        assert len(nodes) == 2
        for node in nodes:
            assert on_node(node, 'cat', '/usr/local/bin/kubelet').stdout == \
                (offline / 'bin' / 'kubelet').read_text()
            config = on_node(node, 'cat', '/etc/containerd/config.toml').stdout
            assert 'SystemdCgroup = true' in config
            images = on_node(node, 'ctr', '--namespace', 'k8s.io', 'images', 'ls', '-q').stdout
            assert 'docker.io/magnum-test/k8s-standin:1' in images, images
            assert on_node(node, 'test', '-x', '/opt/cni/bin/bridge').returncode == 0
            assert on_node(node, 'systemctl', 'is-enabled', 'kubelet').stdout.strip() == 'enabled'
            assert on_node(node, 'sysctl', '-n', 'net.ipv4.ip_forward').stdout.strip() == '1'
        # The first master got the cluster's CA as the Kubernetes CA.
        master = [n for n in nodes if on_node(n, 'test', '-e', '/etc/kubernetes/kubeadm.yaml')
                  .returncode == 0]
        assert len(master) == 1
        ca = on_node(master[0], 'cat', '/etc/kubernetes/pki/ca.crt').stdout
        assert ca.strip() == rest.coe('ca', 'show', 'k').strip()
        rest.coe('cluster', 'delete', 'k')
        assert rest.settled('k')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        if uuid:
            remove_leftovers(uuid)
        server.stop()


def kubectl(kubeconfig, *args, check=True):
    run = subprocess.run([os.path.join(ARTIFACTS, 'bin', 'kubectl'), '--kubeconfig',
                          str(kubeconfig)] + list(args), capture_output=True, text=True,
                         timeout=300)
    assert not check or run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@needs_artifacts
def test_kubernetes_lifecycle_on_local_nodes(tmp_path):
    """create 1 master + 2 workers -> cluster config -> nodes Ready with the role and node
    group labels -> a Deployment of 3 replicas behind a Service, DNS -> node group with
    role test, a pod selecting it -> resize naming a worker -> delete leaves nothing."""
    server = api(tmp_path, MAGNUM_K8S_ARTIFACTS=ARTIFACTS)
    rest = Rest(server.start())
    uuid = None
    try:
        rest.coe('cluster', 'template', 'create', 'kt', *TEMPLATE)
        cluster = rest.create('k', 'kt', 2)
        uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        assert cluster['api_address'].startswith('https://')
        cfg = tmp_path / 'cfg'
        cfg.mkdir()
        rest.coe('cluster', 'config', 'k', '--dir', str(cfg), '--force')
        conf = cfg / 'config'
        nodes = kubectl(conf, 'get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} '
                        '{.metadata.labels.magnum\\.openstack\\.org/role} '
                        '{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}')
        rows = sorted(line.split() for line in nodes.splitlines())
        assert len(rows) == 3 and all(r[2] == 'True' for r in rows), rows
        assert sorted(r[1] for r in rows) == ['master', 'worker', 'worker']
        workers = [r[0] for r in rows if r[1] == 'worker']

        kubectl(conf, 'create', 'deployment', 'web', '--image=registry.k8s.io/pause:3.10',
                '--replicas=3')
        kubectl(conf, 'rollout', 'status', 'deployment/web', '--timeout=300s')
        placed = kubectl(conf, 'get', 'pods', '-l', 'app=web', '-o',
                         'jsonpath={.items[*].spec.nodeName}').split()
        assert set(placed) == set(workers), placed
        kubectl(conf, 'expose', 'deployment', 'web', '--port=80')
        kubectl(conf, 'run', 'dns', '--image=registry.k8s.io/pause:3.10', '--restart=Never')
        assert kubectl(conf, 'get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}')

        rest.coe('nodegroup', 'create', 'k', 'tests', '--role', 'test', '--node-count', '1')
        wait_for(lambda: 'IN_PROGRESS' not in rest.coe('nodegroup', 'show', 'k', 'tests',
                                                       '-f', 'value', '-c', 'status'),
                 timeout=900, interval=3)
        labelled = kubectl(conf, 'get', 'nodes', '-l', 'magnum.openstack.org/role=test', '-o',
                           'name').split()
        assert len(labelled) == 1

        cluster = rest.resize('k', 1, [workers[0]])
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        names = kubectl(conf, 'get', 'nodes', '-o', 'name')
        assert workers[0] not in names and workers[1] in names

        rest.coe('cluster', 'delete', 'k')
        assert rest.settled('k')['status'] == 'GONE'
        nothing_left(uuid)
    finally:
        if uuid:
            remove_leftovers(uuid)
        server.stop()
