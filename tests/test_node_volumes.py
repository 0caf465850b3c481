"""openstack.magnum.openstack_node_volumes on a real block device: a loop device stands for the
Cinder volume a server has attached (listed by id as Nova's virtio disks are), on this
machine (the module runs on a node as root; a node's disks cannot be had in CI)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

BIN = Path(sys.executable).parent
VOLUME = '5d0c4f1e-0d7b-4b5e-9a53-8e2f6c1d2a47'


@pytest.fixture
def loop_device(tmp_path):
    backing = tmp_path / 'volume.img'
    with open(backing, 'wb') as handle:
        handle.truncate(64 * 1024 * 1024)
    made = subprocess.run(['losetup', '-f', '--show', str(backing)], capture_output=True,
                          text=True)
    if made.returncode != 0 or os.geteuid() != 0:
        pytest.skip('needs root and a free loop device (losetup): %s' % made.stderr.strip())
    device = made.stdout.strip()
    by_id = tmp_path / 'by-id'
    by_id.mkdir()
    (by_id / ('virtio-' + VOLUME[:20])).symlink_to(device)
    try:
        yield device, by_id
    finally:
        subprocess.run(['umount', str(tmp_path / 'mnt')], capture_output=True)
        subprocess.run(['losetup', '-d', device], capture_output=True)


def node_volumes(tmp_path, by_id, check=False, volume=VOLUME):
    args = {'volumes': [{'id': volume, 'purpose': 'docker'}],
            'paths': {'docker': str(tmp_path / 'mnt')}, 'by_id': str(by_id),
            'fstab': str(tmp_path / 'fstab'), 'timeout': 2}
    run = subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                          'openstack.magnum.openstack_node_volumes', '-a', json.dumps(args)]
                         + (['--check'] if check else []),
                         cwd=str(REPO), capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, ANSIBLE_CALLBACK_RESULT_FORMAT='json',
                                  ANSIBLE_CONFIG=str(REPO / 'ansible.cfg')))
    return dict(json.loads(run.stdout.split('=>', 1)[1]), rc=run.returncode)


def test_a_blank_volume_is_formatted_and_mounted_once_and_kept_after(tmp_path, loop_device):
    device, by_id = loop_device
    told = node_volumes(tmp_path, by_id, check=True)
    assert told['changed'] and told['formatted'] == [device]
    assert subprocess.run(['blkid', device], capture_output=True).returncode != 0
    done = node_volumes(tmp_path, by_id)
    assert done['changed'] and done['formatted'] == [device], done
    mounts = Path('/proc/self/mounts').read_text().split('\n')
    assert any(line.split()[:2] == [device, str(tmp_path / 'mnt')] for line in mounts if line)
    uuid = subprocess.run(['blkid', '-o', 'value', '-s', 'UUID', device], capture_output=True,
                          text=True).stdout.strip()
    assert (tmp_path / 'fstab').read_text() == 'UUID=%s %s ext4 defaults,nofail 0 2\n' % (
        uuid, tmp_path / 'mnt')
    (tmp_path / 'mnt' / 'data').write_text('kept')
    # Again (and after a reboot's unmount): never formatted again, the data stays.
    again = node_volumes(tmp_path, by_id)
    assert not again['changed'] and again['formatted'] == [], again
    subprocess.run(['umount', str(tmp_path / 'mnt')], check=True)
    remounted = node_volumes(tmp_path, by_id)
    assert remounted['changed'] and remounted['formatted'] == []
    assert (tmp_path / 'mnt' / 'data').read_text() == 'kept'


def test_a_volume_that_is_not_attached_fails_naming_it(tmp_path, loop_device):
    _device, by_id = loop_device
    failed = node_volumes(tmp_path, by_id, volume='0' * 36)
    assert failed['rc'] != 0 and 'Volume %s is not attached to this node' % ('0' * 36) in \
        failed['msg'], failed
