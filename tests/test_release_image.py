"""Release images (issue #62): the cloud_image role's cloud_image_kube_tag bakes a
Kubernetes release into the node image, as Cluster API's image-builder does - the
kubernetes role's binaries where it puts them, the release's images imported into
containerd - so that a cluster of that kube_tag is given nothing (the push side:
test_kubernetes' node preparation; the Glance check: test_openstack_provider).

The bake itself runs here against a root filesystem whose containerd is this host's (a
real containerd importing a real docker-archive); the whole role (debootstrap, the
release image's ext4 and qcow2) is the built-image tier, gated on
MAGNUM_TEST_BUILD_IMAGES=1 (minutes and ~2 GB under ~/.cache)."""

import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import tarfile
import time

import pytest

from conftest import BIN, REPO, ansible_env

ROLE = REPO / 'collections/ansible_collections/openstack/magnum/roles/cloud_image'
BAKE = ROLE / 'files' / 'bake_kubernetes.py'
needs_containerd = pytest.mark.skipif(
    not (shutil.which('containerd') and shutil.which('ctr')),
    reason="needs containerd and ctr (Debian's containerd, which docker.io brings)")


def docker_archive(path, name, content):
    """A docker-archive tarball (what `docker save` writes and MAGNUM_K8S_ARTIFACTS'
    images/ hold) of one image ``name`` holding one file."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode='w') as tar:
        info = tarfile.TarInfo('marker')
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    layer = layer.getvalue()
    config = json.dumps({'architecture': 'amd64', 'os': 'linux', 'config': {},
                         'rootfs': {'type': 'layers', 'diff_ids': [
                             'sha256:' + hashlib.sha256(layer).hexdigest()]}}).encode()
    config_name = hashlib.sha256(config).hexdigest() + '.json'
    manifest = json.dumps([{'Config': config_name, 'RepoTags': [name],
                            'Layers': ['layer/layer.tar']}]).encode()
    with tarfile.open(path, 'w') as tar:
        for member, data in (('layer/layer.tar', layer), (config_name, config),
                             ('manifest.json', manifest)):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def images_in(root):
    """The images the root filesystem's containerd store holds (namespace k8s.io), read
    by a containerd of this host run against it, as the guest's will at boot."""
    work = pathlib.Path(root).parent / 'read'
    work.mkdir(exist_ok=True)
    socket = work / 'sock'
    config = work / 'config.toml'
    config.write_text('version = 2\nroot = "%s"\nstate = "%s"\ndisabled_plugins = '
                      '["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "%s"\n'
                      % (pathlib.Path(root) / 'var/lib/containerd', work / 'state', socket))
    daemon = subprocess.Popen(['containerd', '--config', str(config)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while not socket.exists():
            assert daemon.poll() is None and time.time() < deadline, 'containerd did not start'
            time.sleep(0.2)
        listed = subprocess.run(['ctr', '--address', str(socket), '--namespace', 'k8s.io',
                                 'images', 'ls', '--quiet'], capture_output=True, text=True,
                                check=True).stdout.split()
        # unpacked for the overlayfs snapshotter (the kubelet's), not only stored
        snapshots = subprocess.run(['ctr', '--address', str(socket), '--namespace', 'k8s.io',
                                    'snapshots', '--snapshotter', 'overlayfs', 'ls'],
                                   capture_output=True, text=True, check=True).stdout
        return listed, snapshots
    finally:
        daemon.terminate()
        daemon.wait(30)


@needs_containerd
def test_the_release_is_baked_into_a_root_filesystem(tmp_path):
    """Binaries in the bin dir (mode 0755), every archive's image imported into the
    root's containerd store (k8s.io) and unpacked; a bad binary spec or a root without
    containerd fails naming it."""
    root = tmp_path / 'root'
    (root / 'etc').mkdir(parents=True)
    (root / 'usr/bin').mkdir(parents=True)
    for tool in ('containerd', 'ctr'):   # the image's own, as Debian's package puts them
        (root / 'usr/bin' / tool).symlink_to(shutil.which(tool))
    kubelet = tmp_path / 'kubelet'
    kubelet.write_text('#!/bin/sh\necho kubelet\n')
    archives = [docker_archive(tmp_path / 'pause.tar', 'registry.k8s.io/pause:3.10.2', b'p'),
                docker_archive(tmp_path / 'etcd.tar', 'registry.k8s.io/etcd:3.6.8-0', b'e')]
    run = subprocess.run(['python3', str(BAKE), '--bin-dir', '/usr/local/bin',
                          '--binary', 'kubelet=%s' % kubelet]
                         + ['--archive=%s' % a for a in archives] + [str(root)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    baked = root / 'usr/local/bin/kubelet'
    assert baked.read_text() == kubelet.read_text() and os.stat(baked).st_mode & 0o777 == 0o755
    listed, snapshots = images_in(root)
    assert sorted(listed) == ['registry.k8s.io/etcd:3.6.8-0', 'registry.k8s.io/pause:3.10.2']
    assert len(snapshots.strip().splitlines()) == 3, snapshots   # a header and two layers
    # nothing of the bake's containerd is left running or mounted
    assert str(root) not in pathlib.Path('/proc/self/mounts').read_text()

    bad = subprocess.run(['python3', str(BAKE), '--bin-dir', '/usr/local/bin', '--binary',
                          'kubelet', str(root)], capture_output=True, text=True)
    assert bad.returncode == 1 and 'bake_kubernetes: --binary kubelet: expected NAME=PATH' \
        in bad.stderr, bad.stderr
    (root / 'usr/bin/containerd').unlink()
    bad = subprocess.run(['python3', str(BAKE), '--bin-dir', '/usr/local/bin',
                          '--archive', str(archives[0]), str(root)],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and 'the image has no containerd' in bad.stderr, bad.stderr


def test_a_release_image_is_left_ready_for_kubeadm_as_booted(tmp_path):
    """The bake's --plan (k8s_image_plan): the node setup's files written, containerd's
    release unpacked with runc, the CNI plugins copied where containerd looks, the kubelet
    and containerd enabled and the Docker engine disabled as systemctl would link them;
    a path leaving the image fails naming it."""
    from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
        k8s_config, k8s_node)
    root = tmp_path / 'root'
    system = root / 'lib/systemd/system'
    system.mkdir(parents=True)
    (system / 'docker.service').write_text('[Service]\nExecStart=/usr/bin/dockerd\n'
                                           '[Install]\nWantedBy=multi-user.target\n')
    wants = root / 'etc/systemd/system/multi-user.target.wants'
    wants.mkdir(parents=True)
    (wants / 'docker.service').symlink_to('/lib/systemd/system/docker.service')
    (root / 'usr/lib/cni').mkdir(parents=True)
    (root / 'usr/lib/cni/bridge').write_text('bridge')
    release = tmp_path / 'release'
    (release / 'bin').mkdir(parents=True)
    (release / 'bin/containerd').write_text('#!/bin/sh\n')
    tarball = tmp_path / 'containerd-2.1.4-linux-amd64.tar.gz'
    with tarfile.open(tarball, 'w:gz') as tar:
        tar.add(release / 'bin', arcname='bin')
    runc = tmp_path / 'runc.amd64'
    runc.write_text('runc')
    source = {'mode': 'tarball', 'version': '2.1.4', 'tarball': str(tarball),
              'runc': str(runc), 'prefix': k8s_config.CONTAINERD_PREFIX,
              'runc_binary': k8s_config.RUNC_BINARY, 'downloads': []}
    conf = k8s_config.settings({'labels': {'kube_tag': 'v1.36.2'}}, {})
    plan = tmp_path / 'plan.json'
    plan.write_text(json.dumps(k8s_node.image_plan(conf, '/usr/local/bin', source)))
    run = subprocess.run(['python3', str(BAKE), '--bin-dir', '/usr/local/bin', '--plan',
                          str(plan), str(root)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert (root / 'etc/systemd/system/kubelet.service').read_text() == \
        k8s_node.kubelet_unit('/usr/local/bin')
    assert k8s_config.RUNC_BINARY in (root / 'etc/containerd/config.toml').read_text()
    assert (root / 'usr/local/bin/containerd').exists()
    assert (root / 'usr/local/sbin/runc').read_text() == 'runc' and \
        os.stat(root / 'usr/local/sbin/runc').st_mode & 0o777 == 0o755
    assert (root / 'opt/cni/bin/bridge').read_text() == 'bridge'
    assert sorted(os.listdir(wants)) == ['containerd.service', 'kubelet.service']
    assert os.readlink(wants / 'kubelet.service') == '/etc/systemd/system/kubelet.service'

    plan.write_text(json.dumps({'files': [{'dest': '/etc/../../outside', 'content': 'x'}]}))
    bad = subprocess.run(['python3', str(BAKE), '--bin-dir', '/usr/local/bin', '--plan',
                          str(plan), str(root)], capture_output=True, text=True)
    assert bad.returncode == 1 and "'/etc/../../outside' is no absolute path inside the image" \
        in bad.stderr, bad.stderr
    assert not (tmp_path / 'outside').exists()


@pytest.mark.skipif(os.environ.get('MAGNUM_TEST_BUILD_IMAGES') != '1',
                    reason='the built-image tier: set MAGNUM_TEST_BUILD_IMAGES=1 (debootstrap, '
                           'minutes, ~2 GB under ~/.cache)')
@needs_containerd
def test_the_cloud_image_role_makes_a_release_image(tmp_path):
    """playbooks/cloud_image.yml with cloud_image_kube_tag (not uploaded): the base image,
    then the release image from its root with the offline directory's binaries and images,
    left ready for kubeadm; run again, it builds nothing."""
    offline = tmp_path / 'artifacts'
    for name in ('kubeadm', 'kubelet', 'kubectl', 'crictl'):
        (offline / 'bin').mkdir(parents=True, exist_ok=True)
        (offline / 'bin' / name).write_text('#!/bin/sh\necho %s\n' % name)
    (offline / 'images').mkdir()
    docker_archive(offline / 'images' / 'pause.tar', 'registry.k8s.io/pause:3.10.2', b'p')
    env = dict(ansible_env('sqlite:///%s' % (tmp_path / 'unused.sqlite'), 'none', REPO),
               MAGNUM_K8S_ARTIFACTS=str(offline))
    extra = json.dumps({'cloud_image_upload': False, 'cloud_image_kube_tag': 'v1.36.0'})
    for attempt in (1, 2):
        run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cloud_image.yml',
                              '-e', extra], cwd=str(REPO), env=env, capture_output=True,
                             text=True, timeout=3600)
        assert run.returncode == 0, run.stdout[-3000:]
        # run again, nothing is built: its build directory is named after its definition
        assert attempt == 1 or 'changed=0' in run.stdout, run.stdout[-2000:]
    cache = pathlib.Path(env.get('XDG_CACHE_HOME') or pathlib.Path.home() / '.cache')
    made = sorted((cache / 'openstack-magnum/cloud-image').glob('*-v1.36.0-*/disk.qcow2'),
                  key=os.path.getmtime)
    assert made, run.stdout[-2000:]
    root = made[-1].parent / 'root'
    assert (root / 'usr/local/bin/kubeadm').read_text() == '#!/bin/sh\necho kubeadm\n'
    # left ready for kubeadm as booted (the plan: test_a_release_image_is_left_ready_...)
    assert (root / 'etc/systemd/system/multi-user.target.wants/kubelet.service').is_symlink()
    assert (root / 'etc/containerd/config.toml').exists()
    assert images_in(root)[0] == ['registry.k8s.io/pause:3.10.2']
