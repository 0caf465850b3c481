"""The Kubernetes driver (role `kubernetes`: kubeadm + containerd) on real container nodes.

No Kubernetes server binary or image is reachable from this machine's registries: the
tests that need a real control plane run when MAGNUM_K8S_ARTIFACTS names an offline
artifacts directory (bin/ and images/*.tar, docs "Kubernetes") and are skipped, by name,
otherwise. What runs everywhere: a create whose artifacts cannot be had (upstream
unreachable, an incomplete offline directory, or one built for another architecture than
the nodes') ends CREATE_FAILED saying what is missing, before anything is done on the
nodes, and its delete leaves nothing."""

import base64
import contextlib
import functools
import glob
import hashlib
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import tarfile
import threading
import time

import pytest
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    addons, k8s_config)
from ansible_collections.openstack.magnum.plugins.module_utils.core.labels import (
    parse as parse_labels, version_tuple)

from conftest import (ApiServer, BIN, LAB_CLOUD, LAB_CLOUDS_YAML, NEEDS_LAB, REPO, ansible_env,
                      chart_archive, free_port, host_lock, lab_connect, wait_for)
from test_infra_docker import (docker_ls, docker_ok, host_addresses, nothing_left, refused_from,
                               remove_leftovers)
from test_swarm import Playbooks, Rest

ARTIFACTS = os.environ.get('MAGNUM_K8S_ARTIFACTS')
CALICO_FIXTURE = pathlib.Path(__file__).parent / 'fixtures' / 'calico.yaml'
pytestmark = [pytest.mark.real_node, pytest.mark.skipif(
    not docker_ok(), reason='needs a running Docker engine (dockerd) and debootstrap; '
                            '.ci/run installs and starts them')]
needs_artifacts = pytest.mark.skipif(
    not ARTIFACTS, reason='needs a real control plane: set MAGNUM_K8S_ARTIFACTS to an offline '
                          'Kubernetes artifacts directory (bin/, images/*.tar)')
# An upgrade needs two versions: MAGNUM_K8S_ARTIFACTS/<tag>/{bin,images} for each.
UPGRADE_FROM = os.environ.get('MAGNUM_K8S_UPGRADE_FROM')
UPGRADE_TO = os.environ.get('MAGNUM_K8S_UPGRADE_TO')
needs_upgrade = pytest.mark.skipif(
    not (ARTIFACTS and UPGRADE_FROM and UPGRADE_TO),
    reason='needs a real control plane in two versions: set MAGNUM_K8S_ARTIFACTS with '
           '<tag>/bin and <tag>/images for MAGNUM_K8S_UPGRADE_FROM and MAGNUM_K8S_UPGRADE_TO')
TEMPLATE = ['--coe', 'kubernetes', '--image', 'debian-12', '--external-network', 'public',
            '--keypair', 'default', '--flavor', 'm1.tiny', '--master-flavor', 'm1.tiny',
            '--network-driver', 'flannel']
# A real control plane needs more than m1.tiny's 512 MB (infra_docker_flavors); its
# version is the one the offline directory holds (MAGNUM_K8S_TAG; the driver's default
# when unset), and MAGNUM_K8S_LABELS adds labels for what else it holds (e.g.
# flannel_tag=v0.13.0,flannel_cni_tag=v1.0.0 for a directory with those flannel images).
LABELS = parse_labels(os.environ.get('MAGNUM_K8S_LABELS'))
if os.environ.get('MAGNUM_K8S_TAG'):
    LABELS.setdefault('kube_tag', os.environ['MAGNUM_K8S_TAG'])


def real_template(**labels):
    """A real control plane's template arguments, ``labels`` over the run's (the client
    joins a label given twice into one value: each is given once)."""
    args = TEMPLATE[:-6] + [
        '--flavor', 'm1.small', '--master-flavor', 'm1.medium', '--network-driver', 'flannel']
    for label in sorted(dict(LABELS, **labels).items()):
        args += ['--labels', '%s=%s' % label]  # one each: the client splits a lone --labels only
    return args


REAL = real_template()


class Made:
    """The cluster 'k' a test makes through ``rest`` (its uuid once created)."""

    def __init__(self, rest):
        self.rest = rest
        self.uuid = None

    def create_failing(self, *template_args, before_nodes=False):
        """Template 'kt' (TEMPLATE and ``template_args``) and cluster 'k' of 1 master and
        1 worker, whose create is to fail (``before_nodes``: in its preflight, with no
        node made); returns its reason and the nodes made."""
        self.rest.coe('cluster', 'template', 'create', 'kt', *TEMPLATE, *template_args)
        cluster = self.rest.create('k', 'kt', 1)
        self.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_FAILED', cluster
        nodes = docker_ls('container', self.uuid)
        if before_nodes:
            assert nodes == [], 'the provider made nodes: %s' % cluster['status_reason']
        else:
            assert nodes, 'the provider made no node: %s' % cluster['status_reason']
        return cluster['status_reason'], nodes

    def retry_create(self):
        """Runs the create playbook again, as a retry does; returns the cluster."""
        server = self.rest.server
        self.log = Playbooks(server.db_url, REPO, server.env).playbook(
            'cluster_create', {'cluster_uuid': self.uuid}, check=False).stdout
        return self.rest.show('k')

    def kept_on_controller(self):
        """Where the driver keeps state of the cluster on the controller (the only
        master's, while an upgrade rebuilds it on a new image)."""
        return pathlib.Path(self.rest.server.env['XDG_DATA_HOME'], 'openstack-magnum',
                            'kubernetes', self.uuid)

    def delete_to_nothing(self):
        self.rest.coe('cluster', 'delete', 'k')
        assert self.rest.settled('k')['status'] == 'GONE'
        nothing_left(self.uuid)
        assert not self.kept_on_controller().exists()


@contextlib.contextmanager
def k8s_on_local_nodes(tmp_path, args=(), **env):
    """The API on the docker provider; whatever the test leaves of its cluster is
    removed on the way out."""
    env = dict({'XDG_DATA_HOME': str(tmp_path / 'data')}, **env)
    server = ApiServer('sqlite:///%s' % (tmp_path / 'm.sqlite'), REPO, tmp_path,
                       provider='docker', env=env, args=args)
    made = Made(Rest(server.start()))
    try:
        yield made
    finally:
        if made.uuid:
            remove_leftovers(made.uuid)
        server.stop()


@pytest.mark.skipif(bool(ARTIFACTS), reason='MAGNUM_K8S_ARTIFACTS is set: artifacts are there')
# End to end: no source reachable, and one of another architecture than the nodes (read
# from them). An incomplete offline directory and a missing calico manifest fail through
# the same task with their own messages (tests/unit/test_k8s_config.py has them).
@pytest.mark.parametrize('source', ['upstream', 'another architecture'])
def test_create_without_artifacts_fails_saying_so_and_deletes_to_nothing(tmp_path, source):
    env, template_args = {}, []
    offline = tmp_path / 'artifacts'
    # The nodes' architecture as Kubernetes names it (they run on this machine's kernel),
    # and another one.
    arch = {'x86_64': 'amd64', 'aarch64': 'arm64'}[platform.machine()]
    other = {'amd64': ('arm64', 183), 'arm64': ('amd64', 62)}[arch]
    if source == 'incomplete':
        (offline / 'bin').mkdir(parents=True)
        (offline / 'bin' / 'kubeadm').write_text('')
    elif source == 'no calico manifest':
        standin_artifacts(offline)
        template_args = ['--network-driver', 'calico']
    elif source == 'another architecture':
        standin_artifacts(offline)
        # An ELF header (all that is read of it) for the other architecture.
        (offline / 'bin' / 'kubelet').write_bytes(
            b'\x7fELF\x02\x01\x01' + bytes(11) + other[1].to_bytes(2, 'little') + bytes(44))
    if source != 'upstream':
        env['MAGNUM_K8S_ARTIFACTS'] = str(offline)
    with k8s_on_local_nodes(tmp_path, **env) as made:
        # found for the provider's image before any node is made: none is
        reason, _ = made.create_failing(*template_args, before_nodes=True)
        if source == 'upstream':
            assert 'Kubernetes v1.36.0 binaries could not be downloaded' in reason, reason
            assert 'https://dl.k8s.io/release/v1.36.0/bin/linux/%s/' % arch in reason, reason
            assert 'Set MAGNUM_K8S_ARTIFACTS' in reason, reason
        elif source == 'incomplete':
            assert ('MAGNUM_K8S_ARTIFACTS=%s is incomplete: missing bin/kubelet, bin/kubectl, '
                    'bin/crictl; no images/*.tar' % offline) in reason, reason
        elif source == 'another architecture':
            assert ('MAGNUM_K8S_ARTIFACTS=%s is not for the nodes, which are %s: bin/kubelet '
                    'is built for %s.' % (offline, arch, other[0])) in reason, reason
        else:
            assert ('network_driver calico needs its manifest: %s/manifests/calico.yaml is not '
                    'a file (MAGNUM_K8S_ARTIFACTS=%s is incomplete' % (offline, offline)) \
                in reason, reason
        # As a failed upgrade to a new image leaves the only master's state: delete
        # removes it with the rest.
        made.kept_on_controller().mkdir(parents=True)
        (made.kept_on_controller() / 'k-master-0-state.tgz').write_bytes(b'')
        made.delete_to_nothing()


CONTROL_PLANE_STANDIN = 'magnum-test/kube-apiserver:v0.0.0-standin'


def standin_binary(path, name):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\necho "stand-in %s: $*" >&2\nexit 1\n' % name)
    path.chmod(0o755)
    return path


# What the stand-in kubeadm lists for `kubeadm config images list` (a pause tag no table
# has: the driver must take it from kubeadm).
STANDIN_PAUSE_TAG = '3.99.7'
STANDIN_IMAGES_LIST = '\n'.join([
    'registry.k8s.io/kube-apiserver:v1.36.0', 'registry.k8s.io/coredns/coredns:v1.13.1',
    'registry.k8s.io/pause:' + STANDIN_PAUSE_TAG, 'registry.k8s.io/etcd:3.6.5-0'])


def standin_artifacts(path):
    """An offline directory laid out as MAGNUM_K8S_ARTIFACTS is, whose binaries are
    stand-ins (no Kubernetes binary can be had here) that say so and fail (but kubeadm's
    `config images list`, which prints STANDIN_IMAGES_LIST), and whose image is a real
    docker-archive tarball."""
    for name in ('kubeadm', 'kubelet', 'kubectl', 'crictl'):
        standin_binary(path / 'bin' / name, name)
    kubeadm = path / 'bin' / 'kubeadm'
    kubeadm.write_text('#!/bin/sh\nif [ "$1 $2 $3" = "config images list" ]; then\n'
                       'cat <<EOF\n%s\nEOF\nexit 0\nfi\n' % STANDIN_IMAGES_LIST
                       + kubeadm.read_text().split('\n', 1)[1])
    # The add-ons' charts (the default ones), real ones made by helm.
    for made in addons.plan(k8s_config.settings({}, {}), {}):
        chart_archive(path, made['chart'], made['version'])
    (path / 'images').mkdir()
    # The engine's tags are the host's: one test process at a time makes them.
    with host_lock('k8s-standin-images'):
        empty = path / 'empty'
        empty.mkdir()
        (empty / 'marker').write_text('magnum test image\n')
        subprocess.run('tar -C %s -c . | docker import - magnum-test/k8s-standin:1' % empty,
                       shell=True, check=True, capture_output=True)
        # And one named as a control-plane image is, which only masters are given.
        subprocess.run(['docker', 'tag', 'magnum-test/k8s-standin:1', CONTROL_PLANE_STANDIN],
                       check=True, capture_output=True)
        for name, image in (('standin.tar', 'magnum-test/k8s-standin:1'),
                            ('kube-apiserver.tar', CONTROL_PLANE_STANDIN)):
            subprocess.run(['docker', 'save', '-o', str(path / 'images' / name), image],
                           check=True, capture_output=True)
        # The tarballs are what the test needs: the engine keeps nothing (each import is new).
        subprocess.run(['docker', 'rmi', 'magnum-test/k8s-standin:1', CONTROL_PLANE_STANDIN],
                       check=True, capture_output=True)
    return path


def host_containerd_release(offline):
    """The offline directory's containerd/ as a release lays it out (a tarball of bin/,
    and runc.<arch>), made of this host's own containerd and runc (Debian's, real
    binaries; containerd's own releases cannot be downloaded here). Returns its version."""
    version = subprocess.run(['containerd', '--version'], capture_output=True, text=True,
                             check=True).stdout.split()[2].split('~')[0]
    where = offline / 'containerd'
    (where / 'bin').mkdir(parents=True)
    for name in ('containerd', 'containerd-shim-runc-v2', 'ctr'):
        shutil.copy2(shutil.which(name), where / 'bin' / name)
    with tarfile.open(where / ('containerd-%s-linux-amd64.tar.gz' % version), 'w:gz') as tar:
        tar.add(where / 'bin', arcname='bin')
    shutil.rmtree(where / 'bin')
    shutil.copy2(shutil.which('runc') or '/usr/sbin/runc', where / 'runc.amd64')
    return version


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
    containerd = host_containerd_release(offline)
    # The images the nodes lack come from a private registry over HTTPS, its certificate
    # signed by the operator's CA (MAGNUM_K8S_REGISTRY_CA): containerd on every node is
    # given it for the registry of container_infra_prefix.
    with private_registry(tmp_path, [offline / 'images' / 'standin.tar'], ca=True) as (
            registry, ca_file), k8s_on_local_nodes(
                tmp_path, MAGNUM_K8S_ARTIFACTS=str(offline),
                MAGNUM_K8S_REGISTRY_CA=str(ca_file)) as made:
        prefix = registry + '/k8s'
        reason, nodes = made.create_failing(
            '--http-proxy', 'http://proxy.invalid:3128', '--no-proxy',
            'registry.local,' + registry.partition(':')[0],
            '--insecure-registry', 'registry.local:5000', '--labels',
            'flannel_backend=udp,containerd_version=%s,container_infra_prefix=%s'
            % (containerd, prefix))
        assert 'stand-in kubeadm: init --config /etc/kubernetes/kubeadm.yaml' in reason, reason
        assert len(nodes) == 2
        # The first master is the one kubeadm init ran on.
        master = [n for n in nodes if on_node(n, 'test', '-e', '/etc/kubernetes/kubeadm.yaml')
                  .returncode == 0]
        assert len(master) == 1
        for node in nodes:
            assert on_node(node, 'cat', '/usr/local/bin/kubelet').stdout == \
                (offline / 'bin' / 'kubelet').read_text()
            config = on_node(node, 'cat', '/etc/containerd/config.toml').stdout
            assert 'SystemdCgroup = true' in config
            # The sandbox image the release's kubeadm names (not a table's).
            assert 'sandbox_image = "%s/pause:%s"' % (prefix, STANDIN_PAUSE_TAG) in config
            # containerd_version: containerd's release from the offline directory runs
            # (not the node image's Debian package), with the release's runc.
            running = on_node(node, 'sh', '-c', 'readlink /proc/$(systemctl show --property='
                              'MainPID --value containerd)/exe').stdout.strip()
            assert running == '/usr/local/bin/containerd', running
            assert 'BinaryName = "/usr/local/sbin/runc"' in config
            assert on_node(node, '/usr/local/sbin/runc', '--version').returncode == 0
            # The template's proxies are containerd's (for its pulls), the cluster's own
            # ranges excluded; systemd reloaded and containerd restarted with them.
            env = on_node(node, 'sh', '-c', 'tr "\\0" " " </proc/$(systemctl show '
                          '--property=MainPID --value containerd)/environ')
            assert 'HTTP_PROXY=http://proxy.invalid:3128' in env.stdout, env
            assert 'NO_PROXY=registry.local,%s,localhost,127.0.0.1,.svc,.cluster.local,' \
                '10.100.0.0/16,10.254.0.0/16' % registry.partition(':')[0] in env.stdout, env
            images = on_node(node, 'ctr', '--namespace', 'k8s.io', 'images', 'ls', '-q').stdout
            assert 'docker.io/magnum-test/k8s-standin:1' in images, images
            # The control plane's images are the masters' only.
            assert (('docker.io/' + CONTROL_PLANE_STANDIN) in images) == (node in master), images
            assert on_node(node, 'test', '-x', '/opt/cni/bin/bridge').returncode == 0
            # The node image's Docker engine is stopped (containerd is the kubelet's), and
            # its docker0 gone with its route to 172.17.0.0/16.
            assert on_node(node, 'systemctl', 'is-active', 'docker').stdout.strip() != 'active'
            assert on_node(node, 'ip', 'link', 'show', 'docker0').returncode != 0
            # The template's insecure registry: containerd pulls from it unverified.
            hosts = on_node(node, 'cat', '/etc/containerd/certs.d/registry.local:5000/'
                            'hosts.toml').stdout
            assert 'server = "http://registry.local:5000"' in hosts, hosts
            assert 'config_path = "/etc/containerd/certs.d"' in config
            # The private registry's image pulls through those settings: verified with
            # the operator's CA, which the node has nowhere else.
            pulled = on_node(node, 'ctr', '--namespace', 'k8s.io', 'images', 'pull',
                             '--hosts-dir', '/etc/containerd/certs.d', prefix + '/k8s-standin:1')
            assert pulled.returncode == 0, pulled.stdout + pulled.stderr
            # kubeadm's directory (a worker's join configuration is written there).
            assert on_node(node, 'test', '-d', '/etc/kubernetes/manifests').returncode == 0
            assert on_node(node, 'systemctl', 'is-enabled', 'kubelet').stdout.strip() == 'enabled'
            assert on_node(node, 'sysctl', '-n', 'net.ipv4.ip_forward').stdout.strip() == '1'
            # flannel's udp backend has its TUN device (a container node's /dev had none).
            assert on_node(node, 'test', '-c', '/dev/net/tun').returncode == 0
            # The kubelet's resolv.conf (CoreDNS's upstream) names no loopback server:
            # the node's own is Docker's embedded DNS, 127.0.0.11, where CoreDNS would loop.
            assert 'nameserver 127.0.0.11' in on_node(node, 'cat', '/etc/resolv.conf').stdout
            resolv = on_node(node, 'cat', '/etc/kubernetes/resolv.conf').stdout
            assert 'nameserver ' in resolv and 'nameserver 127.' not in resolv, resolv
        # The first master got the cluster's CA as the Kubernetes CA.
        ca = on_node(master[0], 'cat', '/etc/kubernetes/pki/ca.crt').stdout
        assert ca.strip() == made.rest.coe('ca', 'show', 'k').strip()
        # A retry imports what containerd lacks though the archive is there unchanged (a
        # run that stopped between the push and the import), and pushes again a binary
        # that is not the controller's (only that one: the others are left as they are).
        worker = [n for n in nodes if n not in master][0]
        assert on_node(worker, 'ctr', '--namespace', 'k8s.io', 'images', 'rm',
                       'docker.io/magnum-test/k8s-standin:1').returncode == 0
        assert on_node(worker, 'sh', '-c', 'echo other > /usr/local/bin/kubectl').returncode == 0
        # An insecure registry an earlier template named (this driver's hosts.toml) goes on
        # a retry; a registry setting that is not the driver's stays.
        mark = on_node(worker, 'head', '-n', '1', '/etc/containerd/certs.d/registry.local:5000/'
                       'hosts.toml').stdout.strip()
        assert mark.startswith('# openstack.magnum'), mark
        assert on_node(worker, 'sh', '-c', 'cd /etc/containerd/certs.d && mkdir old.local:5000 '
                       'own.local && echo "%s" > old.local:5000/hosts.toml && echo "server = '
                       '\\"http://own.local\\"" > own.local/hosts.toml' % mark).returncode == 0
        before = dict((n, on_node(n, 'stat', '-c', '%i', '/usr/local/bin/kubelet').stdout)
                      for n in nodes)
        # A node whose containerd holds an archive's images is not given the archive (a
        # node image with the release baked in holds the images, not the archives).
        assert on_node(master[0], 'rm', '/var/cache/openstack-magnum/images/standin.tar'
                       ).returncode == 0
        assert 'stand-in kubeadm: init' in made.retry_create()['status_reason']
        assert on_node(master[0], 'test', '-e', '/var/cache/openstack-magnum/images/standin.tar'
                       ).returncode != 0
        # The job's log says what each node is given and why.
        log = ' '.join(made.log.split())
        assert re.search(r'master-0: holds all \d+ files and images it is given \(its image '
                         r'or an earlier run\): nothing pushed', log), log[-3000:]
        assert re.search(r'node-0: pushing 1 of \d+ \(another version of: kubectl\); holds '
                         r'the other \d+', log), log[-3000:]
        assert ("Images the nodes lack are pulled from %s (container_infra_prefix): HTTPS "
                "verified with the operator''s CA (MAGNUM_K8S_REGISTRY_CA)" % prefix) in log, \
            log[log.find('Say where the images'):][:1500]
        images = on_node(worker, 'ctr', '--namespace', 'k8s.io', 'images', 'ls', '-q').stdout
        assert 'docker.io/magnum-test/k8s-standin:1' in images, images
        assert on_node(worker, 'cat', '/usr/local/bin/kubectl').stdout == \
            (offline / 'bin' / 'kubectl').read_text()
        assert on_node(worker, 'ls', '/etc/containerd/certs.d').stdout.split() == sorted([
            'own.local', 'registry.local:5000', registry])
        for node in nodes:
            assert on_node(node, 'stat', '-c', '%i', '/usr/local/bin/kubelet').stdout == \
                before[node], 'an unchanged binary was pushed again to %s' % node
            leftovers = on_node(node, 'find', '/usr/local/bin', '/var/cache/openstack-magnum',
                                '-name', '*.magnum-part').stdout
            assert not leftovers, leftovers
            # The asynchronous jobs' results were removed once waited for.
            jobs = on_node(node, 'sh', '-c', 'ls -A ~/.ansible_async 2>/dev/null').stdout
            assert not jobs, jobs
        made.delete_to_nothing()


def with_sha256(path):
    """Publish ``path``'s SHA-256 beside it, as dl.k8s.io and cri-tools do."""
    path.with_name(path.name + '.sha256').write_text(
        hashlib.sha256(path.read_bytes()).hexdigest() + '\n')
    return path


@contextlib.contextmanager
def http_mirror(root):
    """``root`` served over HTTP on the loopback; yields (base URL, paths requested)."""
    import http.server
    requested = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_request(self, *args):
            requested.append(self.path)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield 'http://127.0.0.1:%d' % server.server_address[1], requested
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(bool(ARTIFACTS), reason='MAGNUM_K8S_ARTIFACTS is set: artifacts are there')
def test_binaries_are_downloaded_from_mirrors_checked_against_their_sha256(tmp_path):
    """Without an offline directory the binaries are downloaded, here from mirrors of
    dl.k8s.io and cri-tools' releases (MAGNUM_K8S_DOWNLOAD_URL, MAGNUM_K8S_CRICTL_URL)
    served over real HTTP: a file that does not match its published SHA-256 fails the
    create naming it; a retry once the mirror is right downloads what is missing only,
    unpacks crictl from its tarball, and gives the nodes the binaries (the stand-in
    kubeadm then fails the create with its message). The template's network_driver is
    calico: its manifest for the calico_tag label comes from Calico's mirror
    (MAGNUM_K8S_CALICO_URL), before anything is done on the nodes (a manifest the
    mirror does not have fails the create naming it), and is kept per tag."""
    import tarfile
    mirror = tmp_path / 'mirror'
    bins = mirror / 'k8s/release/v1.36.0/bin/linux/amd64'
    for name in ('kubeadm', 'kubelet', 'kubectl'):
        with_sha256(standin_binary(bins / name, name))
    crictl = standin_binary(tmp_path / 'crictl-build' / 'crictl', 'crictl')
    tarball = mirror / 'cri-tools/v1.36.0/crictl-v1.36.0-linux-amd64.tar.gz'
    tarball.parent.mkdir(parents=True)
    with tarfile.open(tarball, 'w:gz') as tar:
        tar.add(crictl, arcname='crictl')
    with_sha256(tarball)
    good_kubelet = (bins / 'kubelet').read_text()
    (bins / 'kubelet').write_text(good_kubelet + '# tampered with\n')
    calico = mirror / 'calico/v3.30.2/manifests/calico.yaml'
    calico.parent.mkdir(parents=True)
    for made in addons.plan(k8s_config.settings({}, {}), {}):  # the default add-ons' charts
        chart_archive(mirror, made['chart'], made['version'])
    with http_mirror(mirror) as (url, requested), k8s_on_local_nodes(
            tmp_path, XDG_CACHE_HOME=str(tmp_path / 'cache'),
            MAGNUM_K8S_DOWNLOAD_URL=url + '/k8s', MAGNUM_K8S_CRICTL_URL=url + '/cri-tools',
            MAGNUM_K8S_CALICO_URL=url + '/calico', MAGNUM_K8S_CHARTS_URL=url + '/charts') as made:
        reason, _ = made.create_failing('--network-driver', 'calico',
                                        '--labels', 'calico_tag=v3.30.2', before_nodes=True)
        assert 'Kubernetes v1.36.0 binaries could not be downloaded (%s/k8s/release/v1.36.0/' \
            'bin/linux/amd64/kubelet: ' % url in reason, reason
        assert 'checksum' in reason.lower(), reason
        # The binaries put right, the mirror has no calico v3.30.2: still no node made.
        (bins / 'kubelet').write_text(good_kubelet)
        reason = made.retry_create()['status_reason']
        assert "calico's manifest could not be downloaded (%s/calico/v3.30.2/manifests/" \
            "calico.yaml: Request failed: HTTP Error 404" % url in reason, reason
        assert 'MAGNUM_K8S_CALICO_URL' in reason, reason
        assert docker_ls('container', made.uuid) == []
        # The mirror put right, a retry goes on to the nodes.
        calico.write_text(CALICO_FIXTURE.read_text().replace('v3.31.3', 'v3.30.2'))
        cluster = made.retry_create()
        nodes = docker_ls('container', made.uuid)
        assert cluster['status'] == 'CREATE_FAILED', cluster
        assert 'stand-in kubeadm: init' in cluster['status_reason'], cluster['status_reason']
        for node in nodes:
            for name in ('kubeadm', 'kubelet', 'kubectl'):
                assert on_node(node, 'cat', '/usr/local/bin/' + name).stdout == \
                    (bins / name).read_text()
            assert on_node(node, 'cat', '/usr/local/bin/crictl').stdout == crictl.read_text()
        # What the first run had downloaded was not downloaded again.
        for path in ('/k8s/release/v1.36.0/bin/linux/amd64/kubeadm',
                     '/cri-tools/v1.36.0/crictl-v1.36.0-linux-amd64.tar.gz'):
            assert requested.count(path) == 1, requested
        assert requested.count('/k8s/release/v1.36.0/bin/linux/amd64/kubelet') == 2, requested
        # Kept per version and architecture: the binaries executable, the tarball a plain
        # file; calico's manifest per tag.
        kept = tmp_path / 'cache/openstack-magnum/kubernetes'
        cache = kept / 'v1.36.0/amd64'
        binaries = ('kubeadm', 'kubelet', 'kubectl', 'crictl')
        assert all(os.access(cache / b, os.X_OK) for b in binaries)
        assert (cache / 'crictl-v1.36.0-linux-amd64.tar.gz').stat().st_mode & 0o777 == 0o644
        assert (kept / 'calico/v3.30.2/calico.yaml').read_text() == calico.read_text()
        assert requested.count('/calico/v3.30.2/manifests/calico.yaml') == 2, requested
        made.delete_to_nothing()


@contextlib.contextmanager
def standin_cluster(tmp_path, keep_alive=False):
    """A Kubernetes cluster 'k' in a store of its own, CA and all, whose api_address is a
    k8s_standin API (no kube-apiserver can run here); yields (store url, store, uuid, api).
    The playbooks, roles, modules and store the tests run on it are the real ones."""
    from ansible_collections.openstack.magnum.plugins.module_utils.core import (
        lifecycle, store as store_mod)
    from standins.k8s_standin import StandIn
    url = 'sqlite:///%s' % (tmp_path / 'm.sqlite')
    store, scope = store_mod.Store(url), lifecycle.Scope(lifecycle.DEFAULT_PROJECT)
    lifecycle.create_template(store, {'name': 'kt', 'coe': 'kubernetes', 'image_id': 'debian-12',
                                      'external_network_id': 'public', 'keypair_id': 'k'},
                              scope)
    uuid = lifecycle.record_cluster(store, {'name': 'k', 'cluster_template_id': 'kt'},
                                    scope)['uuid']
    _changed, ca = lifecycle.ensure_ca(store, store.get('cluster', uuid))
    api = StandIn(ca['cert_pem'], ca['key_pem'], tmp_path, keep_alive=keep_alive).start()
    store.update('cluster', uuid, {'status': 'CREATE_COMPLETE', 'api_address': api.url})
    try:
        yield url, store, uuid, api
    finally:
        api.stop()


def playbook(path, url, *args, expect_rc=0):
    run = subprocess.run(
        [str(BIN / 'ansible-playbook'), str(path)] + list(args), cwd=str(REPO),
        capture_output=True, text=True, timeout=300, env=ansible_env(url))
    assert run.returncode == expect_rc, run.stdout[-3000:]
    return run


def test_health_reads_the_api_through_its_address_with_a_certificate_of_the_cluster_ca(
        tmp_path):
    """cluster_health.yml on a Kubernetes cluster: /readyz and the nodes' Ready condition
    read from the controller through api_address, with an admin certificate the
    cluster_ca module issues from the store's CA (the API refuses any other), recorded
    as Magnum's monitor records them. The conductor's read without a playbook
    (api/health_check.py) finds and records the same, each time, over one kept
    connection."""
    from standins.k8s_standin import node
    from api.health_check import HealthChecks
    with standin_cluster(tmp_path, keep_alive=True) as (url, store, uuid, api):
        checks = HealthChecks(store)

        def health():
            """The playbook's round, then the conductor's read without one: the same."""
            playbook('playbooks/cluster_health.yml', url, '-e', 'cluster=k')
            shown = store.get('cluster', uuid)
            found = (shown['health_status'], shown['health_status_reason'])
            store.update('cluster', uuid, {'health_status': None, 'health_status_reason': {}})
            read = checks.check(store.get('cluster', uuid))
            assert (read['status'], read['reason']) == found, (read, found)
            shown = store.get('cluster', uuid)
            assert (shown['health_status'], shown['health_status_reason']) == found
            return found

        api.nodes = [node('k-master-0'), node('k-node-0'), node('k-node-1')]
        assert health() == ('HEALTHY', {'k-master-0.Ready': 'True', 'k-node-0.Ready': 'True',
                                        'k-node-1.Ready': 'True', 'api': 'ok'})
        # The conductor's read kept its connection and its certificate for the next round.
        connections = len(api.connections)
        store.update('cluster', uuid, {'health_status': None})
        assert checks.check(store.get('cluster', uuid))['status'] == 'HEALTHY'
        assert len(api.connections) == connections
        assert {request[0] for request in api.requests} >= {'/readyz', '/api/v1/nodes'}
        assert {request[1:] for request in api.requests} == {('magnum-driver',
                                                              'system:masters')}
        api.nodes[2] = node('k-node-1', 'False')
        status, reason = health()
        assert status == 'UNHEALTHY' and reason['k-node-1.Ready'] == 'False'
        api.nodes[2] = node('k-node-1')
        api.readyz = (500, '[-]etcd failed: reason withheld\nreadyz check failed')
        status, reason = health()
        assert status == 'UNHEALTHY' and reason['api'].startswith('HTTP 500: [-]etcd failed')
        api.stop()
        # nothing answers (and no master to ask): Magnum's fallback values
        assert health() == ('UNKNOWN', {'api': 'The cluster is not accessible'})


def test_auto_healing_replaces_a_worker_that_stays_not_ready(tmp_path):
    """auto_healing_enabled (magnum-auto-healer, the default): the API's health rounds
    read a worker NotReady through the cluster's API and, once the grace period is over,
    replace it as magnum-auto-healer repairs a worker: a resize job of its node group to
    the same count naming it in nodes_to_remove. Once, not every round; masters and
    healthy workers are left alone."""
    from ansible_collections.openstack.magnum.plugins.module_utils.core import jobs, lifecycle
    from standins.k8s_standin import node
    with standin_cluster(tmp_path) as (url, store, uuid, api):
        cluster = store.get('cluster', uuid)
        store.update('cluster', uuid, {'labels': dict(cluster['labels'],
                                                      auto_healing_enabled='true')})
        groups = dict((g['role'], g) for g in store.find('nodegroup', cluster_id=uuid))
        store.update('nodegroup', groups['worker']['uuid'], {'node_count': 2})
        lifecycle.set_facts(store, uuid, {'nodegroup_nodes': {
            groups['master']['uuid']: [{'name': 'k-master-0', 'address': '10.0.0.3'}],
            groups['worker']['uuid']: [{'name': 'k-node-0', 'address': '10.0.0.4'},
                                       {'name': 'k-node-1', 'address': '10.0.0.5'}]}})
        api.nodes = [node('k-master-0', 'False'), node('k-node-0'), node('k-node-1', 'False')]
        server = ApiServer(url, REPO, tmp_path, provider='none', args=[
            '--health-interval', '1', '--auto-healing-grace', '3']).start()
        try:
            started = wait_for(lambda: jobs.Jobs(store).for_cluster(uuid), timeout=180)
            assert [(j['operation'], j['resource_id']) for j in started] == [
                ('resize', groups['worker']['uuid'])]
            assert started[0]['extravars'] == {
                'cluster_uuid': uuid, 'nodegroup': groups['worker']['uuid'], 'node_count': 2,
                'nodes_to_remove': ['k-node-1']}
            # No stand-in provider builds nodes: the replacement ends UPDATE_FAILED,
            # retryable, and no round starts another.
            assert wait_for(lambda: store.get('cluster', uuid)['status'] in (
                'UPDATE_FAILED', 'UPDATE_COMPLETE'), timeout=300)
            time.sleep(5)
            assert len(jobs.Jobs(store).for_cluster(uuid)) == 1
        finally:
            server.stop()
        healths = [line for line in server.log.read_text().splitlines() if 'auto-healing' in line]
        assert len(healths) == 1 and 'replacing k-node-1' in healths[0], healths


def test_cluster_config_gives_a_kubeconfig_that_the_clusters_api_accepts(tmp_path):
    """`openstack coe cluster config` (python-magnumclient makes the kubeconfig itself from
    the cluster, its template, the CA and a certificate the API signs): it points at
    api_address, trusts the cluster's CA, and its admin certificate (CN admin, O
    system:masters) is accepted by an API server that requires the cluster's CA."""
    import yaml
    from kubernetes import client as kube_client, config as kube_config
    from standins.k8s_standin import node
    with standin_cluster(tmp_path) as (url, _store, _uuid, api):
        api.nodes = [node('k-master-0'), node('k-node-0')]
        server = ApiServer(url, REPO, tmp_path, provider='none').start()
        try:
            conf = cluster_config(Rest(server), 'k', tmp_path / 'cfg')
        finally:
            server.stop()
        assert yaml.safe_load(conf.read_text())['clusters'][0]['cluster']['server'] == api.url
        listed = kube_client.CoreV1Api(kube_config.new_client_from_config(
            config_file=str(conf))).list_node()
        assert [n.metadata.name for n in listed.items] == ['k-master-0', 'k-node-0']
        assert api.requests[-1] == ('/api/v1/nodes', 'admin', 'system:masters')


REMOVAL_ORDER = """
- name: The driver's removal_order step, as cluster_operation runs it for a shrink
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the cluster
      openstack.magnum.cluster_info:
        name: k
      register: info
    - name: Nothing named by the caller
      ansible.builtin.set_fact:
        magnum_nodes_to_remove: []
    - name: Pick
      ansible.builtin.include_role:
        name: openstack.magnum.kubernetes
        tasks_from: removal_order.yml
      vars:
        magnum_cluster: "{{ info.cluster }}"
        magnum_node_count: 1
        magnum_nodegroup_record: {name: default-worker, node_count: 3}
    - name: Say which
      ansible.builtin.copy:
        content: "{{ magnum_nodes_to_remove | to_json }}"
        dest: "{{ out }}"
        mode: "0600"
"""


def test_a_shrink_naming_no_node_picks_the_emptiest_of_the_group_from_the_api(tmp_path):
    """removal_order.yml reads the group's nodes (by label) and every pod through
    api_address: the nodes running the fewest pods that count leave (DaemonSet pods and
    finished ones do not count; another group's idle node is not a candidate); with the
    API out of reach the provider's choice stands and the shrink goes on."""
    from standins.k8s_standin import node, pod
    book, out = tmp_path / 'removal_order.yml', tmp_path / 'picked.json'
    book.write_text(REMOVAL_ORDER)
    group = {'magnum.openstack.org/nodegroup': 'default-worker'}
    with standin_cluster(tmp_path) as (url, _store, _uuid, api):
        api.nodes = [node('k-node-0', labels=group), node('k-node-1', labels=group),
                     node('k-node-2', labels=group),
                     node('k-other-0', labels={'magnum.openstack.org/nodegroup': 'other'})]
        api.pods = [pod('web-1', 'k-node-0', 'ReplicaSet'), pod('web-2', 'k-node-0', 'ReplicaSet'),
                    pod('flannel-a', 'k-node-1', 'DaemonSet'),
                    pod('job-done', 'k-node-1', 'Job', phase='Succeeded'),
                    pod('web-3', 'k-node-2', 'ReplicaSet'),
                    pod('flannel-b', 'k-node-2', 'DaemonSet')]
        playbook(book, url, '-e', 'out=%s' % out)
        assert sorted(json.loads(out.read_text())) == ['k-node-1', 'k-node-2']
        api.stop()
        playbook(book, url, '-e', 'out=%s' % out)
        assert json.loads(out.read_text()) == []


WAIT_VERSION = """
- name: The driver's wait for nodes on a new version, as a rolling upgrade's batch runs it
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Wait
      ansible.builtin.include_role:
        name: openstack.magnum.kubernetes_upgrade
        tasks_from: wait_version.yml
      vars:
        kubernetes_leader: localhost
        kubernetes_conf: {kube_tag: v1.36.1}
        kubernetes_upgrade_nodes: [k-node-0, k-node-1]
"""


def admin_kubeconfig(path, store, uuid, api):
    """A kubeconfig for ``api`` with an admin certificate of the cluster's CA."""
    import base64
    import yaml
    from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
    ca = store.certificate(uuid, 'ca')
    cert, key = tls.issue_keypair(ca['cert_pem'], ca['key_pem'], 'admin', 'system:masters')

    def b64(pem):
        return base64.b64encode(pem.encode()).decode()
    path.write_text(yaml.safe_dump({
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'k',
        'clusters': [{'name': 'k', 'cluster': {'server': api.url,
                                               'certificate-authority-data': b64(ca['cert_pem'])}}],
        'users': [{'name': 'admin', 'user': {'client-certificate-data': b64(cert),
                                             'client-key-data': b64(key)}}],
        'contexts': [{'name': 'k', 'context': {'cluster': 'k', 'user': 'admin'}}]}))
    return path


@pytest.mark.skipif(not shutil.which('kubectl'), reason='no kubectl (Debian: kubernetes-client)')
def test_an_upgrade_batch_waits_for_its_nodes_on_the_new_version(tmp_path):
    """Role kubernetes_upgrade's wait_version (a rolling upgrade's batch is done when its
    nodes are Ready on the new version) with kubectl against an API: it waits while a node
    is Ready on its old kubelet's version, goes on once it reports the new one, and after
    kubernetes_ready_timeout fails naming the nodes that are not there, with what the
    API says of them (or kubectl's error when the API cannot be reached)."""
    from standins.k8s_standin import node
    book = tmp_path / 'wait_version.yml'
    book.write_text(WAIT_VERSION)
    with standin_cluster(tmp_path) as (url, store, uuid, api):
        conf = admin_kubeconfig(tmp_path / 'admin.conf', store, uuid, api)

        def wait(timeout, expect_rc=0):
            return playbook(book, url, '-e', 'kubernetes_admin_conf=%s' % conf,
                            '-e', 'kubernetes_ready_timeout=%d' % timeout,
                            expect_rc=expect_rc).stdout

        api.nodes = [node('k-master-0', version='v1.36.1'), node('k-node-0', version='v1.36.1'),
                     node('k-node-1'), node('k-node-2')]   # k-node-2: not in the batch
        out = wait(4, expect_rc=2)
        assert 'k-node-1 not Ready on Kubernetes v1.36.1 within 4 s (name, kubelet version, ' \
            'Ready: k-node-1 v1.36.0 True)' in out, out
        # k-node-1's new kubelet reports while the task waits: once the task has asked
        # for the nodes twice (a loaded machine may take longer than any fixed delay to
        # start the playbook).
        asked_before, stop = len(api.requests), threading.Event()

        def report():
            while not stop.wait(0.2):
                if sum('/nodes' in r[0] for r in api.requests[asked_before:]) >= 2:
                    api.nodes[2] = node('k-node-1', version='v1.36.1')
                    return
        reported = threading.Thread(target=report, daemon=True)
        reported.start()
        try:
            out = wait(120)
        finally:
            stop.set()
        assert 'FAILED - RETRYING' in out and 'Stop when some are not' in out, out
        assert 'skipping' in out.split('Stop when some are not')[1], out
        api.nodes[1] = node('k-node-0', ready='False', version='v1.36.1')
        out = wait(2, expect_rc=2)
        assert 'k-node-0 not Ready on Kubernetes v1.36.1 within 2 s (name, kubelet version, ' \
            'Ready: k-node-0 v1.36.1 False)' in out, out
        api.stop()
        out = wait(2, expect_rc=2)
        assert re.search(r'k-node-0, k-node-1 not Ready on Kubernetes v1.36.1 within 2 s '
                         r'\(.*connect', out), out


@functools.lru_cache(maxsize=None)
def kubectl_binary():
    """The offline directory's kubectl: its bin/, or a version's (<tag>/bin/) when it holds
    one directory per version."""
    tags = ['', os.environ.get('MAGNUM_K8S_TAG'), UPGRADE_TO, UPGRADE_FROM]
    paths = [os.path.join(ARTIFACTS, tag, 'bin', 'kubectl') for tag in tags if tag is not None]
    return next((path for path in paths if os.path.exists(path)), paths[0])


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kubectl(kubeconfig, *args, check=True, stdin=None):
    given = ['--kubeconfig', str(kubeconfig)] if kubeconfig is not None else []
    run = subprocess.run([kubectl_binary()] + given + list(args), capture_output=True,
                         text=True, timeout=300, input=stdin)
    assert not check or run.returncode == 0, run.stdout + run.stderr
    return run.stdout if check else run


def cluster_config(rest, name, dest):
    """`openstack coe cluster config`: a kubeconfig made client-side from the API."""
    dest.mkdir(parents=True, exist_ok=True)
    rest.coe('cluster', 'config', name, '--dir', str(dest), '--force')
    return dest / 'config'


def ready_nodes(conf):
    """name -> (role label, node group label, Ready, kubelet version)."""
    out = kubectl(conf, 'get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} '
                  '{.metadata.labels.magnum\\.openstack\\.org/role} '
                  '{.metadata.labels.magnum\\.openstack\\.org/nodegroup} '
                  '{.status.conditions[?(@.type=="Ready")].status} '
                  '{.status.nodeInfo.kubeletVersion}{"\\n"}{end}')
    return dict((row[0], tuple(row[1:])) for row in (line.split() for line in out.splitlines()))


WORKLOAD = 'magnum-test/busybox:1'


def load_workload(uuid, tmp_path):
    """A workload image built here (busybox from the node image: no registry), imported
    into every node's containerd."""
    archive = workload_archive(tmp_path)
    for node in docker_ls('container', uuid):
        if on_node(node, 'test', '-e', '/etc/kubernetes/kubelet.conf').returncode == 0:
            subprocess.run('docker exec -i %s ctr -n k8s.io images import - < %s'
                           % (node, archive), shell=True, check=True, capture_output=True)


def workload_archive(tmp_path):
    """The archive of WORKLOAD (`docker save`), built once in ``tmp_path``: the local node
    image's busybox, or this host's where no node image was built (it is static)."""
    archive = tmp_path / 'busybox.tar'
    if not archive.exists():
        node_image = subprocess.run(['docker', 'images', 'magnum-node', '--format',
                                     '{{.Repository}}:{{.Tag}}'], capture_output=True,
                                    text=True, check=True).stdout.split()
        root = tmp_path / 'busybox-root'
        (root / 'bin').mkdir(parents=True)
        (root / 'www').mkdir()
        take = ('docker run --rm --entrypoint cat %s /bin/busybox' % node_image[0]
                if node_image else 'cat /bin/busybox')
        subprocess.run('%s > %s/bin/busybox && chmod 755 %s/bin/busybox && for a in sh wget '
                       'httpd hostname nslookup sleep cat; do ln -s busybox %s/bin/$a; done'
                       % (take, root, root, root), shell=True, check=True)
        subprocess.run('tar -C %s -c . | docker import -c "ENV PATH=/bin" - %s'
                       % (root, WORKLOAD), shell=True, check=True, capture_output=True)
        subprocess.run(['docker', 'save', '-o', str(archive), WORKLOAD], check=True)
        # The archive is what the nodes get: the engine keeps nothing of it.
        subprocess.run(['docker', 'rmi', WORKLOAD], check=True, capture_output=True)
    return archive


# On the workers, one replica more on a node than on another at most (the scheduler's
# own spreading allows three), and never fewer than one available while nodes drain.
WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %(replicas)d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {magnum.openstack.org/role: worker}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: web
        image: %(image)s
        imagePullPolicy: Never
        command: [sh, -c, 'hostname > /www/index.html && exec httpd -f -p 8080 -h /www']
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: %(pdb_api)s
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"""


def web(replicas, kubelet_version):
    """WEB for a cluster of ``kubelet_version`` (policy/v1 from 1.21, v1beta1 before)."""
    return WEB % {'replicas': replicas, 'image': WORKLOAD,
                  'pdb_api': 'policy/v1' if version_tuple(kubelet_version) >= (1, 21)
                  else 'policy/v1beta1'}


def run_pod(conf, name, script, node_selector=None):
    """A pod of the workload image that runs ``script`` to the end; its output."""
    overrides = {'spec': {'nodeSelector': node_selector}} if node_selector else {}
    kubectl(conf, 'run', name, '--image=' + WORKLOAD, '--image-pull-policy=Never',
            '--restart=Never', '--overrides=' + json.dumps(overrides), '--command', '--',
            'sh', '-c', script)
    wait_for(lambda: kubectl(conf, 'get', 'pod', name, '-o', 'jsonpath={.status.phase}')
             in ('Succeeded', 'Failed'), timeout=300, interval=2)
    assert kubectl(conf, 'get', 'pod', name, '-o', 'jsonpath={.status.phase}') == 'Succeeded', \
        kubectl(conf, 'logs', name, check=False)
    return kubectl(conf, 'logs', name), kubectl(conf, 'get', 'pod', name, '-o',
                                                'jsonpath={.spec.nodeName}')


def assert_flannel_backend(conf, node):
    """The other nodes' pod subnets are routed from ``node`` as the template's flannel
    backend does it (label flannel_backend; vxlan by default): through the flannel.1
    VXLAN device, (host-gw) straight to each node's address, or (udp) the whole pod
    network through the flannel0 TUN device. Each node's subnet has the length the
    label flannel_network_subnetlen gives (24 by default)."""
    backend = LABELS.get('flannel_backend', 'vxlan')
    rows = kubectl(conf, 'get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} '
                   '{.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}'
                   '{"\\n"}{end}')
    routes = on_node(node, 'ip', 'route').stdout
    for name, cidr, address in (line.split() for line in rows.splitlines()):
        assert cidr.endswith('/%s' % LABELS.get('flannel_network_subnetlen', 24)), rows
        if name == node:
            continue
        if backend == 'udp':
            pods = LABELS.get('flannel_network_cidr', '10.100.0.0/16')
            assert [line for line in routes.splitlines()
                    if line.startswith(pods + ' ') and 'dev flannel0' in line], routes
            continue
        route = [line for line in routes.splitlines() if line.startswith(cidr + ' ')]
        assert route, 'no route to %s pods (%s) on %s:\n%s' % (name, cidr, node, routes)
        if backend == 'host-gw':
            assert 'via %s ' % address in route[0] and 'flannel.1' not in route[0], route
        else:
            assert 'dev flannel.1' in route[0], route


def check_addons(conf):
    """The add-ons the labels turn on are installed as the driver planned them (the
    release's Deployment with the planned image and arguments); metrics-server answers
    `kubectl top nodes` when the offline directory holds its image."""
    planned = addons.plan(k8s_config.settings({'labels': LABELS}, {}), LABELS)
    kinds = {'metrics-server': 'deployment', 'node-problem-detector': 'daemonset',
             'traefik': 'daemonset', 'headlamp': 'deployment'}
    for made in planned:
        if made['name'] not in kinds:  # a release of many workloads (monitoring)
            continue
        spec = json.loads(kubectl(conf, '-n', made['namespace'], 'get', kinds[made['name']],
                                  made['name'], '-o', 'json'))['spec']['template']['spec']
        (container,) = spec['containers']
        assert set(made['values'].get('args', [])) <= set(container.get('args', [])), container
        if 'image' in made['values']:
            assert container['image'].startswith(made['values']['image']['repository'] + ':')
        if glob.glob(os.path.join(ARTIFACTS, '**', 'images', '*metrics-server*'),
                     recursive=True):
            wait_for(lambda: kubectl(conf, 'top', 'nodes', check=False).returncode == 0,
                     timeout=300, interval=5)


@needs_artifacts
def test_kubernetes_lifecycle_on_local_nodes(tmp_path):
    """create 1 master + 2 workers -> cluster config -> nodes Ready with the role and node
    group labels -> a Deployment of 3 replicas behind a Service answers across nodes, by
    its DNS name -> node group with role test, a pod selecting it runs there, the group
    resized to 2 -> resize naming a worker removes exactly it -> CA rotation: the old
    kubeconfig is refused, a fresh one works -> delete leaves nothing."""
    with k8s_on_local_nodes(tmp_path, MAGNUM_K8S_ARTIFACTS=ARTIFACTS) as made:
        rest = made.rest
        rest.coe('cluster', 'template', 'create', 'kt', *REAL)
        cluster = rest.create('k', 'kt', 2)
        uuid = made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        assert cluster['api_address'].startswith('https://')
        conf = cluster_config(rest, 'k', tmp_path / 'cfg')
        nodes = ready_nodes(conf)
        assert len(nodes) == 3 and all(n[2] == 'True' for n in nodes.values()), nodes
        assert sorted(n[:2] for n in nodes.values()) == [
            ('master', 'default-master'), ('worker', 'default-worker'),
            ('worker', 'default-worker')]
        workers = sorted(name for name, n in nodes.items() if n[0] == 'worker')
        master = [name for name, n in nodes.items() if n[0] == 'master'][0]
        assert 'NoSchedule' in kubectl(conf, 'get', 'node', master, '-o',
                                       'jsonpath={.spec.taints[*].effect}')
        if LABELS.get('admission_control_list'):   # the API server runs with them
            assert '--enable-admission-plugins=%s' % LABELS['admission_control_list'] in \
                kubectl(conf, '-n', 'kube-system', 'get', 'pod', 'kube-apiserver-' + master,
                        '-o', 'jsonpath={.spec.containers[0].command}')

        check_addons(conf)

        load_workload(uuid, tmp_path)
        kubectl(conf, 'apply', '-f', '-', stdin=web(3, nodes[master][3]))
        kubectl(conf, 'rollout', 'status', 'deployment/web', '--timeout=300s')
        placed = kubectl(conf, 'get', 'pods', '-l', 'app=web', '-o',
                         'jsonpath={.items[*].spec.nodeName}').split()
        assert set(placed) == set(workers), placed
        # The Service has the three pods (rollout status does not wait for the endpoints).
        wait_for(lambda: len(kubectl(conf, 'get', 'endpoints', 'web', '-o', 'jsonpath='
                                     '{.subsets[*].addresses[*].ip}').split()) == 3,
                 timeout=60, interval=1)
        out, _ = run_pod(conf, 'client', 'for i in $(seq 12); do '
                         'wget -qO- http://web.default.svc.cluster.local; done')
        answered = set(out.split())
        # The Service spreads over pods on both workers.
        assert len(answered) >= 2, (out, kubectl(conf, 'get', 'endpoints', 'web', '-o', 'yaml'),
                                    kubectl(conf, 'get', 'pods', '-o', 'wide'))
        assert_flannel_backend(conf, workers[0])

        rest.coe('nodegroup', 'create', 'k', 'tests', '--role', 'test', '--node-count', '1')
        wait_for(lambda: 'IN_PROGRESS' not in rest.coe('nodegroup', 'show', 'k', 'tests',
                                                       '-f', 'value', '-c', 'status'),
                 timeout=900, interval=3)
        assert rest.coe('nodegroup', 'show', 'k', 'tests', '-f', 'value', '-c',
                        'status').strip() == 'CREATE_COMPLETE'
        tests = [name for name, n in ready_nodes(conf).items() if n[0] == 'test']
        assert len(tests) == 1
        load_workload(uuid, tmp_path)
        _, ran_on = run_pod(conf, 'on-test', 'true', {'magnum.openstack.org/role': 'test'})
        assert ran_on == tests[0]
        rest.coe('cluster', 'resize', 'k', '2', '--nodegroup', 'tests')
        wait_for(lambda: 'IN_PROGRESS' not in rest.coe('nodegroup', 'show', 'k', 'tests',
                                                       '-f', 'value', '-c', 'status'),
                 timeout=900, interval=3)
        assert len([n for n in ready_nodes(conf).values() if n[0] == 'test']) == 2

        cluster = rest.resize('k', 1, [workers[0]])
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        nodes = ready_nodes(conf)
        assert workers[0] not in nodes and workers[1] in nodes, nodes

        rest.coe('ca', 'rotate', 'k')
        cluster = rest.settled('k')
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        old = kubectl(conf, 'get', 'nodes', check=False)
        assert old.returncode != 0, 'the old kubeconfig still works after ca rotate'
        fresh = cluster_config(rest, 'k', tmp_path / 'cfg2')
        assert all(n[2] == 'True' for n in ready_nodes(fresh).values())

        made.delete_to_nothing()


@needs_artifacts
def test_auto_healing_replaces_a_worker_whose_kubelet_stopped(tmp_path):
    """auto_healing_enabled on a real cluster: a worker's kubelet stops, the node goes
    NotReady; after the grace period the API's health rounds replace it (a resize naming
    it, at the same count): it is gone, a new worker is Ready, the cluster UPDATE_COMPLETE
    and HEALTHY again."""
    args = ['--health-interval', '10', '--auto-healing-grace', '30']
    with k8s_on_local_nodes(tmp_path, args, MAGNUM_K8S_ARTIFACTS=ARTIFACTS) as made:
        rest = made.rest
        rest.coe('cluster', 'template', 'create', 'kt', *real_template(
            auto_healing_enabled='true', metrics_server_enabled='false', npd_enabled='false',
            kube_dashboard_enabled='false'))
        cluster = rest.create('k', 'kt', 2)
        made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        conf = cluster_config(rest, 'k', tmp_path / 'cfg')
        workers = sorted(name for name, n in ready_nodes(conf).items() if n[0] == 'worker')
        on_node(workers[0], 'systemctl', 'stop', 'kubelet')

        def healed():
            shown = rest.show('k')
            nodes = ready_nodes(conf)
            return shown['status'] == 'UPDATE_COMPLETE' and workers[0] not in nodes and \
                len(nodes) == 3 and all(n[2] == 'True' for n in nodes.values()) and shown
        shown = wait_for(healed, timeout=1200, interval=5)
        assert workers[1] in ready_nodes(conf)
        assert wait_for(lambda: rest.show('k')['health_status'] == 'HEALTHY', timeout=120)
        assert shown['node_count'] == 2
        made.delete_to_nothing()


def cloud_conf_of(conf, namespace, secret, key='cloud.conf'):
    import base64
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
        cloud_config)
    data = kubectl(conf, '-n', namespace, 'get', 'secret', secret, '-o',
                   'jsonpath={.data.%s}' % key.replace('.', '\\.'))
    return cloud_config.parse(base64.b64decode(data).decode())


def cloud_made(conn, uuid):
    """What Kubernetes made on the cloud for cluster ``uuid`` (cloud.scan's K8S kinds)."""
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    found = cloud.scan(conn, {'name': 'k', 'uuid': uuid})
    return dict((kind, [r['name'] for r in found[kind]])
                for kind in ('load_balancers', 'volumes'))


@needs_artifacts
@pytest.mark.lab
@pytest.mark.skipif(not LAB_CLOUD or not LAB_CLOUDS_YAML, reason=NEEDS_LAB[1].kwargs['reason'])
def test_openstack_addons_on_local_nodes_pointed_at_the_lab(tmp_path):
    """cloud_provider_enabled and volume_driver=cinder on local nodes whose jobs are given
    the lab cloud: the cloud controller manager (Services only) and Cinder CSI are
    installed with the cloud-config of the lab's credential and the template's subnet; a
    LoadBalancer Service gets an Octavia load balancer and a PVC a Cinder volume (made by
    the controllers when the offline directory has their images, else made here as they
    name them), and the cluster's delete removes both. The operator's post-install
    manifest is applied too, as data. keystone_auth_enabled: the API server asks
    k8s-keystone-auth (the lab's Keystone) about bearer tokens before RBAC: a lab token
    lists pods as the operator's policy allows when the offline directory has the
    webhook's image, else is refused (the webhook does not answer), while certificates
    keep working."""
    labels = dict(LABELS, cloud_provider_enabled='true', keystone_auth_enabled='true',
                  auto_scaling_enabled='true', max_node_count='3', ingress_controller='octavia')
    planned = addons.plan(k8s_config.settings({'uuid': 'x', 'labels': labels},
                                              {'volume_driver': 'cinder'}, provider='docker'),
                          labels)
    charts = [os.path.join(ARTIFACTS, LABELS.get('kube_tag', ''), 'charts', a['archive'])
              for a in planned if a['cloud_conf_key']]
    missing = [c for c in charts if not os.path.isfile(c) and not os.path.isfile(
        os.path.join(ARTIFACTS, 'charts', os.path.basename(c)))]
    if missing:
        pytest.skip('the offline directory lacks the OpenStack add-ons\' charts: %s' % missing)
    conn = lab_connect(LAB_CLOUDS_YAML)
    name = 'magnum-test-occm-' + os.urandom(4).hex()
    network = conn.network.create_network(name=name)
    subnet = conn.network.create_subnet(name=name, network_id=network.id,
                                        cidr='10.81.0.0/24', ip_version=4)
    images = glob.glob(os.path.join(ARTIFACTS, '**', 'images', '*'), recursive=True)
    post_install = tmp_path / 'post-install.yaml'
    post_install.write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: site, namespace: '
                            'default}\ndata: {text: "{{ lookup(\'pipe\', \'id\') }}"}\n')
    policy = tmp_path / 'keystone-policy.json'
    policy.write_text(json.dumps([{
        'resource': {'verbs': ['get', 'list'], 'resources': ['pods'], 'version': '*',
                     'namespace': 'default'},
        'match': [{'type': 'project', 'values': [conn.current_project_id]}]}]))
    try:
        with k8s_on_local_nodes(tmp_path, args=['--cluster-user-trust'],
                                MAGNUM_K8S_ARTIFACTS=ARTIFACTS, MAGNUM_CLOUD=LAB_CLOUD,
                                OS_CLIENT_CONFIG_FILE=LAB_CLOUDS_YAML,
                                MAGNUM_K8S_POST_INSTALL_MANIFEST=str(post_install),
                                MAGNUM_K8S_KEYSTONE_AUTH_POLICY=str(policy)) as made:
            rest = made.rest
            rest.coe('cluster', 'template', 'create', 'kt',
                     *real_template(cloud_provider_enabled='true', keystone_auth_enabled='true',
                                    auto_scaling_enabled='true', max_node_count='3',
                                    ingress_controller='octavia'),
                     '--volume-driver', 'cinder',
                     '--fixed-network', network.id, '--fixed-subnet', subnet.id)
            cluster = rest.create('k', 'kt', 1)
            uuid = made.uuid = cluster['uuid']
            assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
            conf = cluster_config(rest, 'k', tmp_path / 'cfg')
            assert kubectl(conf, 'get', 'configmap', 'site', '-o', 'jsonpath={.data.text}') == \
                "{{ lookup('pipe', 'id') }}"
            occm = cloud_conf_of(conf, 'kube-system', 'cloud-config')
            assert occm == cloud_conf_of(conf, 'kube-system', 'cinder-csi-cloud-config')
            assert occm['LoadBalancer']['subnet-id'] == subnet.id
            assert occm['LoadBalancer']['floating-network-id'] == \
                conn.network.find_network('public').id
            assert occm['Global']['auth-url'].rstrip('/') == \
                conn.config.config['auth']['auth_url'].rstrip('/')
            args = kubectl(conf, '-n', 'kube-system', 'get', 'daemonset',
                           'openstack-cloud-controller-manager', '-o',
                           'jsonpath={.spec.template.spec.containers[0].args}')
            assert '--controllers=service' in args
            assert kubectl(conf, 'get', 'storageclass', 'csi-cinder-sc-delete', '-o',
                           'jsonpath={.metadata.annotations}').count('is-default-class')
            check_keystone_auth(conf, conn, any('k8s-keystone-auth' in i for i in images))
            # The autoscaler: its magnum provider with the same credential, in the keys it
            # reads (the user's domain as domain-name), on this cluster.
            scaler = cloud_conf_of(conf, 'kube-system', 'cluster-autoscaler-cloud-config',
                                   key='cloud-config')['Global']
            from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack \
                import cloud_config
            assert set(scaler) <= set(cloud_config.AUTOSCALER_KEYS), scaler
            assert (scaler['auth-url'], scaler['password'], scaler['domain-name']) == (
                occm['Global']['auth-url'], occm['Global']['password'],
                occm['Global']['user-domain-name'])
            ingress = json.loads(base64.b64decode(kubectl(
                conf, '-n', 'kube-system', 'get', 'secret', 'octavia-ingress-controller-config',
                '-o', 'jsonpath={.data.config\\.yaml}')))
            assert ingress['cluster-name'] == uuid and ingress['octavia']['subnet-id'] == subnet.id
            assert '--nodes=1:3:default-worker' in kubectl(
                conf, '-n', 'kube-system', 'get', 'deployment', 'cluster-autoscaler', '-o',
                'jsonpath={.spec.template.spec.containers[0].args}')
            if any('openstack-cloud-controller-manager' in i for i in images):
                kubectl(conf, 'create', 'service', 'loadbalancer', 'web', '--tcp=80:80')
                wait_for(lambda: cloud_made(conn, uuid)['load_balancers'], timeout=600,
                         interval=5)
            else:
                conn.load_balancer.create_load_balancer(
                    name='kube_service_%s_default_web' % uuid, vip_subnet_id=subnet.id)
            if any('cinder-csi-plugin' in i for i in images):
                kubectl(conf, 'apply', '-f', '-', stdin=PVC)
                wait_for(lambda: cloud_made(conn, uuid)['volumes'], timeout=600, interval=5)
            else:
                conn.block_storage.create_volume(
                    size=1, name='pvc-' + os.urandom(8).hex(),
                    metadata={'cinder.csi.openstack.org/cluster': uuid})
            assert all(cloud_made(conn, uuid).values())
            made.delete_to_nothing()
            assert not any(cloud_made(conn, uuid).values())
    finally:
        conn.network.delete_subnet(subnet, ignore_missing=True)
        conn.network.delete_network(network, ignore_missing=True)


def check_keystone_auth(conf, conn, webhook_runs):
    master = kubectl(conf, 'get', 'nodes', '-l', 'node-role.kubernetes.io/control-plane', '-o',
                     'jsonpath={.items[0].metadata.name}')
    command = kubectl(conf, '-n', 'kube-system', 'get', 'pod', 'kube-apiserver-' + master,
                      '-o', 'jsonpath={.spec.containers[0].command}')
    assert '--authorization-config=/etc/kubernetes/keystone-webhook/authorization.yaml' in command
    assert '--authentication-token-webhook-config-file=' in command
    args = kubectl(conf, '-n', 'kube-system', 'get', 'daemonset', 'k8s-keystone-auth', '-o',
                   'jsonpath={.spec.template.spec.containers[0].args}')
    assert '--keystone-url=%s' % conn.config.config['auth']['auth_url'] in args
    policy = kubectl(conf, '-n', 'kube-system', 'get', 'configmap', 'k8s-keystone-auth-policy',
                     '-o', 'jsonpath={.data.policies}')
    assert conn.current_project_id in policy
    server = kubectl(conf, 'config', 'view', '--minify', '-o',
                     'jsonpath={.clusters[0].cluster.server}')
    with_token = ['--server', server, '--insecure-skip-tls-verify', '--token',
                  conn.auth_token, '--kubeconfig', '/dev/null']
    if webhook_runs:
        kubectl(conf, '-n', 'kube-system', 'rollout', 'status', 'daemonset/k8s-keystone-auth',
                '--timeout=300s')
        wait_for(lambda: kubectl(None, *with_token, '-n', 'default', 'get', 'pods',
                                 check=False).returncode == 0, timeout=120, interval=3)
        denied = kubectl(None, *with_token, '-n', 'kube-system', 'get', 'secrets', check=False)
        assert denied.returncode != 0 and 'forbidden' in denied.stderr.lower(), denied.stderr
    else:
        refused = kubectl(None, *with_token, 'get', 'pods', check=False)
        assert refused.returncode != 0 and 'Unauthorized' in refused.stderr + refused.stdout, \
            refused.stderr
    assert kubectl(conf, 'get', 'nodes', check=False).returncode == 0


PVC = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""


@needs_upgrade
def test_rolling_upgrade_keeps_a_deployment_available(tmp_path):
    """A template with a newer kube_tag: masters then workers upgraded while a Deployment
    stays available; every node ends on the new version; a downgrade is refused."""
    with k8s_on_local_nodes(tmp_path, MAGNUM_K8S_ARTIFACTS=ARTIFACTS) as made:
        rest = made.rest
        rest.coe('cluster', 'template', 'create', 'k-old',
                 *real_template(kube_tag=UPGRADE_FROM))
        rest.coe('cluster', 'template', 'create', 'k-new', *real_template(kube_tag=UPGRADE_TO))
        cluster = rest.create('k', 'k-old', 2)
        uuid = made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        conf = cluster_config(rest, 'k', tmp_path / 'cfg')
        load_workload(uuid, tmp_path)
        kubectl(conf, 'apply', '-f', '-', stdin=web(2, UPGRADE_FROM))
        kubectl(conf, 'rollout', 'status', 'deployment/web', '--timeout=300s')

        # A worker's kubelet binary is replaced only once the worker is cordoned.
        workers = [name for name, n in ready_nodes(conf).items() if n[0] == 'worker']
        new_kubelet = sha256(pathlib.Path(ARTIFACTS, UPGRADE_TO, 'bin', 'kubelet'))
        available, cordoned, early = [], set(), set()
        done = threading.Event()

        def watch():
            while not done.is_set():
                run = kubectl(conf, 'get', 'deployment', 'web', '-o',
                              'jsonpath={.status.availableReplicas}', check=False)
                if run.returncode == 0:
                    available.append(int(run.stdout or 0))
                for worker in workers:
                    if kubectl(conf, 'get', 'node', worker, '-o',
                               'jsonpath={.spec.unschedulable}', check=False).stdout == 'true':
                        cordoned.add(worker)
                    if worker not in cordoned and on_node(
                            worker, 'sha256sum', '/usr/local/bin/kubelet').stdout.startswith(
                            new_kubelet):
                        early.add(worker)
                time.sleep(1)
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            rest.coe('cluster', 'upgrade', 'k', 'k-new', '--max-batch-size', '1')
            cluster = rest.settled('k')
        finally:
            done.set()
            watcher.join()
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        assert available and min(available) >= 1, available
        assert cordoned == set(workers) and not early, (cordoned, early)
        versions = set(n[3] for n in ready_nodes(conf).values())
        assert versions == {UPGRADE_TO}, versions
        assert rest.show('k')['cluster_template_id'] == rest.coe(
            'cluster', 'template', 'show', 'k-new', '-f', 'value', '-c', 'uuid').strip()
        refused = rest.coe('cluster', 'upgrade', 'k', 'k-old', check=False)
        assert refused.returncode != 0 and 'downgrading a cluster is not supported' in (
            refused.stdout + refused.stderr).lower()

        made.delete_to_nothing()


@needs_artifacts
def test_an_upgrade_to_a_new_image_rebuilds_the_nodes_one_at_a_time(tmp_path):
    """A template with another image (the same kube_tag): each node in turn (the only
    master first) leaves Kubernetes, is rebuilt as Nova rebuilds a server (a fresh root
    filesystem; name, address and volumes kept) and joins again; the cluster keeps its
    CA and workload, and references the new template."""
    image = REAL.index('--image') + 1
    rebuilt_image = REAL[:image] + ['debian-12-rebuilt'] + REAL[image + 1:]
    with k8s_on_local_nodes(tmp_path, MAGNUM_K8S_ARTIFACTS=ARTIFACTS) as made:
        rest = made.rest
        rest.coe('cluster', 'template', 'create', 'k-a', *REAL)
        rest.coe('cluster', 'template', 'create', 'k-b', *rebuilt_image)
        cluster = rest.create('k', 'k-a', 2)
        uuid = made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        conf = cluster_config(rest, 'k', tmp_path / 'cfg')
        version = list(ready_nodes(conf).values())[0][3]
        load_workload(uuid, tmp_path)
        kubectl(conf, 'apply', '-f', '-', stdin=web(2, version))
        kubectl(conf, 'rollout', 'status', 'deployment/web', '--timeout=300s')

        def containers():
            """node name -> (container id, image label)."""
            rows = [subprocess.run(
                ['docker', 'inspect', '-f', '{{.Name}} {{.Id}} {{index .Config.Labels '
                 '"magnum.openstack.org/image"}}', ident], capture_output=True, text=True,
                check=True).stdout.split() for ident in docker_ls('container', uuid)]
            return dict((row[0].lstrip('/'), tuple(row[1:])) for row in rows)
        before = containers()
        for node in before:   # on the root filesystem a rebuild replaces
            on_node(node, 'touch', '/etc/openstack-magnum-test-mark')
        rest.coe('cluster', 'upgrade', 'k', 'k-b')
        cluster = rest.settled('k')
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        after = containers()
        assert sorted(after) == sorted(before)
        assert all(after[n][0] != before[n][0] and after[n][1] == 'debian-12-rebuilt'
                   for n in after), (before, after)
        assert all(on_node(n, 'test', '-e', '/etc/openstack-magnum-test-mark').returncode
                   for n in after)
        # The old kubeconfig still works (the same CA), every node is back and Ready.
        nodes = ready_nodes(conf)
        assert sorted(nodes) == sorted(before) and all(
            n[2] == 'True' for n in nodes.values()), nodes
        kubectl(conf, 'rollout', 'status', 'deployment/web', '--timeout=300s')
        assert rest.show('k')['cluster_template_id'] == rest.coe(
            'cluster', 'template', 'show', 'k-b', '-f', 'value', '-c', 'uuid').strip()
        master = [n for n in after if '-master-' in n][0]
        saved = made.kept_on_controller() / (master + '-state.tgz')
        assert not saved.parent.exists()   # the only master's state, kept meanwhile
        # An upgrade that stopped once the only master's state was saved and its root
        # replaced (its kubelet stopped, its control plane's files gone): a retry puts
        # the state back first. Nothing is left to rebuild: no node changes.
        stop = on_node(master, 'sh', '-c', 'systemctl stop kubelet && crictl ps -q | xargs -r '
                       'crictl stop && tar -czf /root/state.tgz -C / etc/kubernetes '
                       'var/lib/etcd var/lib/kubelet/config.yaml var/lib/kubelet/kubeadm-flags.'
                       'env var/lib/kubelet/pki && rm -rf /etc/kubernetes/manifests '
                       '/var/lib/kubelet/pki')
        assert stop.returncode == 0, stop.stderr
        saved.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run('docker exec %s cat /root/state.tgz > %s' % (master, saved), shell=True,
                       check=True)
        assert kubectl(conf, 'get', 'nodes', check=False).returncode != 0
        rest.coe('cluster', 'upgrade', 'k', 'k-b')
        cluster = rest.settled('k')
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        assert containers() == after and not saved.parent.exists()
        assert sorted(ready_nodes(conf)) == sorted(before)
        made.delete_to_nothing()


def registry_certificate(where, address):
    """A CA, and a server certificate it signs for ``address`` (an IP), made by openssl:
    (ca.crt, server.crt, server.key) under ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    ca, ca_key = where / 'ca.crt', where / 'ca.key'
    crt, key, csr = where / 'server.crt', where / 'server.key', where / 'server.csr'
    (where / 'san.ext').write_text('subjectAltName=IP:%s\n' % address)
    for argv in (['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', ca_key, '-out', ca,
                  '-subj', '/CN=magnum test registry CA', '-days', '2'],
                 ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr,
                  '-subj', '/CN=%s' % address],
                 ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', ca_key, '-CAcreateserial',
                  '-out', crt, '-days', '2', '-extfile', where / 'san.ext']):
        subprocess.run(['openssl'] + [str(a) for a in argv], check=True, capture_output=True)
    return ca, crt, key


def host_address():
    """This machine's own address (not docker0's: a node's engine, if it runs one, has
    a docker0 of its own), which the nodes reach."""
    route = subprocess.run(['ip', '-4', '-o', 'route', 'get', '192.0.2.1'], check=True,
                           capture_output=True, text=True).stdout
    return re.search(r' src (\S+)', route).group(1)


@contextlib.contextmanager
def private_registry(tmp_path, archives, ca=False):
    """Debian's docker-registry on this machine holding the images of ``archives``
    (docker-archive tarballs) under k8s/<name>:<tag>; yields the registry as the nodes
    reach it (host:port) - over plain HTTP, or with ``ca`` over HTTPS with a certificate
    of a CA of the test's (then yields (host:port, the CA's file)). Images are pushed to
    a plain-HTTP server on the loopback; the HTTPS one serves the same storage."""
    root = tmp_path / 'registry'
    root.mkdir()
    address = host_address()
    servers = []

    def serve(name, port, tls=None):
        config = root / ('%s.yml' % name)
        config.write_text(
            'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\n'
            'http:\n  addr: 0.0.0.0:%d\n' % (root / 'data', port)
            + ('  tls:\n    certificate: %s\n    key: %s\n' % tls if tls else ''))
        servers.append(subprocess.Popen(['docker-registry', 'serve', str(config)],
                                        stdout=open(root / (name + '.log'), 'wb'),
                                        stderr=subprocess.STDOUT))
        return port

    try:
        port = serve('plain', free_port())
        if ca:
            ca_file, crt, key = registry_certificate(root / 'tls', address)
            tls_port = serve('tls', free_port(), (crt, key))
        for url in [['http://127.0.0.1:%d/v2/' % port]] + (
                [['--cacert', str(ca_file), 'https://%s:%d/v2/' % (address, tls_port)]]
                if ca else []):
            wait_for(lambda: subprocess.run(['curl', '-sf'] + url,
                                            capture_output=True).returncode == 0,
                     timeout=30, interval=0.5)
        # The engine's tags are the host's (standin_artifacts' too): one test at a time.
        with host_lock('k8s-standin-images'):
            for archive in archives:
                loaded = subprocess.run(['docker', 'load', '-i', str(archive)], check=True,
                                        capture_output=True, text=True).stdout
                for image in re.findall(r'^Loaded image: (\S+)$', loaded, re.M):
                    local = 'localhost:%d/k8s/%s' % (port, image.rsplit('/', 1)[-1])
                    for cmd in (['tag', image, local], ['push', local], ['rmi', local, image]):
                        subprocess.run(['docker'] + cmd, check=True, capture_output=True)
        if ca:
            yield '%s:%d' % (address, tls_port), ca_file
        else:
            yield '%s:%d' % (address, port)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)


@needs_artifacts
@pytest.mark.skipif(not shutil.which('docker-registry'),
                    reason="needs Debian's docker-registry (apt-get install docker-registry) "
                           "to serve the offline directory's images as a registry")
def test_a_cluster_from_download_mirrors_and_an_insecure_registry(tmp_path):
    """The default way, without an offline directory: the binaries downloaded (here from
    mirrors of dl.k8s.io and cri-tools' releases made of the offline directory's), every
    image pulled by containerd from container_infra_prefix, a registry the template names
    as its insecure_registry (plain HTTP) -> 1 master + 1 worker Ready, every system pod
    Ready from that registry -> delete leaves nothing."""
    import tarfile
    tag = os.environ.get('MAGNUM_K8S_TAG') or 'v1.36.0'
    source = pathlib.Path(ARTIFACTS)
    source = source / tag if (source / tag).is_dir() else source
    mirror = tmp_path / 'mirror'
    bins = mirror / 'k8s/release' / tag / 'bin/linux/amd64'
    bins.mkdir(parents=True)
    for name in ('kubeadm', 'kubelet', 'kubectl'):
        (bins / name).symlink_to(source / 'bin' / name)
        with_sha256(bins / name)
    crictl = 'v%d.%d.0' % version_tuple(tag)[:2]
    tarball = mirror / 'cri-tools' / crictl / ('crictl-%s-linux-amd64.tar.gz' % crictl)
    tarball.parent.mkdir(parents=True)
    with tarfile.open(tarball, 'w:gz') as tar:
        tar.add(source / 'bin' / 'crictl', arcname='crictl')
    with_sha256(tarball)
    with private_registry(tmp_path, sorted((source / 'images').glob('*.tar'))) as registry, \
            http_mirror(mirror) as (url, _), k8s_on_local_nodes(
                tmp_path, MAGNUM_K8S_ARTIFACTS='', XDG_CACHE_HOME=str(tmp_path / 'cache'),
                MAGNUM_K8S_DOWNLOAD_URL=url + '/k8s',
                MAGNUM_K8S_CRICTL_URL=url + '/cri-tools') as made:
        rest = made.rest
        prefix = registry + '/k8s'
        rest.coe('cluster', 'template', 'create', 'kt', *REAL, '--labels',
                 'container_infra_prefix=' + prefix, '--insecure-registry', registry)
        cluster = rest.create('k', 'kt', 1)
        uuid = made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        conf = cluster_config(rest, 'k', tmp_path / 'cfg')
        nodes = ready_nodes(conf)
        assert len(nodes) == 2 and all(n[2] == 'True' for n in nodes.values()), nodes
        kubectl(conf, '-n', 'kube-system', 'wait', 'pods', '--all', '--for=condition=Ready',
                '--timeout=300s')
        for node in docker_ls('container', uuid):
            images = on_node(node, 'ctr', '--namespace', 'k8s.io', 'images', 'ls',
                             '-q').stdout.split()
            assert any(i.startswith(prefix + '/kube-proxy:') for i in images), images
            assert any(i.startswith(prefix + '/flannel:') for i in images), images
            assert not [i for i in images if not i.startswith(prefix + '/')
                        and not i.startswith('sha256:')], images
        made.delete_to_nothing()


@needs_artifacts
def test_three_masters_behind_the_load_balancer_survive_one_stopping(tmp_path):
    """3 masters behind the load balancer, which master_lb_allowed_cidrs restricts to a
    network the host is not on: the nodes join and talk to their API through it all the
    same (the cluster's subnet is let in), another source is refused; with one master
    stopped, kubectl still works."""
    with k8s_on_local_nodes(tmp_path, MAGNUM_K8S_ARTIFACTS=ARTIFACTS) as made:
        rest = made.rest
        rest.coe('cluster', 'template', 'create', 'k-ha', *REAL, '--master-lb-enabled',
                 '--labels', 'master_lb_allowed_cidrs=198.51.100.0/24')
        cluster = rest.create('k', 'k-ha', 1, master_count=3)
        made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        conf = cluster_config(rest, 'k', tmp_path / 'cfg')
        nodes = ready_nodes(conf)
        masters = sorted(name for name, n in nodes.items() if n[0] == 'master')
        assert len(masters) == 3 and all(n[2] == 'True' for n in nodes.values()), nodes
        assert cluster['api_address'] not in ['https://%s:6443' % a
                                              for a in cluster['master_addresses']]
        lb_address = cluster['api_address'].split('//')[1].split(':')[0]
        inside, outside = host_addresses(lb_address, '198.51.100.0/24')
        assert not refused_from(inside, lb_address, 6443), inside
        assert refused_from(outside, lb_address, 6443), outside
        subprocess.run(['docker', 'stop', masters[0]], check=True, capture_output=True)
        wait_for(lambda: kubectl(conf, 'get', 'nodes', check=False).returncode == 0,
                 timeout=60, interval=2)
        kubectl(conf, 'create', 'namespace', 'still-writable')

        made.delete_to_nothing()
