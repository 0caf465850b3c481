# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bake a Kubernetes release into a node image's root filesystem, as Cluster API's
image-builder makes node images per release: the binaries where the kubernetes role puts
them, and the image archives imported into containerd's store (namespace k8s.io, unpacked
for its overlayfs snapshotter) by the image's own containerd, run on this host against
the root filesystem's /var/lib/containerd. The nodes of a cluster of that release are
then given nothing (the role's push compares checksums and asks containerd which images
it holds).

With --plan (a JSON file, filter k8s_image_plan's result), the image is also left ready
for kubeadm as booted, as image-builder's are (Cluster API's bootstrap runs kubeadm from
cloud-init): the plan's files written, tarballs unpacked, files copied, directories of the
image copied, and systemd units enabled or disabled as ``systemctl enable`` / ``disable``
would (the [Install] section's WantedBy links), with no systemd run.

Usage: bake_kubernetes.py --bin-dir DIR [--binary NAME=PATH ...] [--archive PATH ...]
       [--plan PATH] ROOT
(build.sh runs it with ROOT last, before the filesystem is made)."""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

NAMESPACE = 'k8s.io'
CONFIG = '''version = 2
root = "%(root)s"
state = "%(state)s"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "%(socket)s"
'''


def fail(message):
    sys.stderr.write('bake_kubernetes: %s\n' % message)
    sys.exit(1)


def install_binaries(root, bin_dir, binaries):
    target = os.path.join(root, bin_dir.lstrip('/'))
    if not os.path.isdir(target):
        os.makedirs(target, 0o755)
    for spec in binaries:
        name, sep, path = spec.partition('=')
        if not sep or not name or '/' in name or not os.path.isfile(path):
            fail('--binary %s: expected NAME=PATH of a file' % spec)
        dest = os.path.join(target, name)
        shutil.copyfile(path, dest + '.part')
        os.chmod(dest + '.part', 0o755)
        os.rename(dest + '.part', dest)


UNIT_DIRS = ('etc/systemd/system', 'lib/systemd/system', 'usr/lib/systemd/system')


def inside(root, path):
    """``path`` (absolute, in the image) under ``root``; a path leaving it fails."""
    full = os.path.normpath(os.path.join(root, path.lstrip('/')))
    if not path.startswith('/') or not full.startswith(os.path.normpath(root) + os.sep):
        fail('%r is no absolute path inside the image' % path)
    return full


def place(root, dest, mode, write):
    full = inside(root, dest)
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755)
    write(full + '.part')
    os.chmod(full + '.part', int(mode, 8))
    os.rename(full + '.part', full)


def wanted_by(path):
    """The targets of a unit file's [Install] WantedBy= lines."""
    targets, section = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('['):
                section = line
            elif section == '[Install]' and line.startswith('WantedBy='):
                targets += line.partition('=')[2].split()
    return targets


def enable(root, unit):
    found = [d for d in UNIT_DIRS if os.path.isfile(os.path.join(root, d, unit))]
    if not found:
        fail('no unit %s in the image to enable' % unit)
    target = '/' + found[0] + '/' + unit
    for wants in wanted_by(os.path.join(root, found[0], unit)):
        link = os.path.join(root, 'etc/systemd/system', wants + '.wants', unit)
        if not os.path.isdir(os.path.dirname(link)):
            os.makedirs(os.path.dirname(link), 0o755)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)


def disable(root, unit):
    top = os.path.join(root, 'etc/systemd/system')
    for name in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        link = os.path.join(top, name, unit)
        if name.endswith(('.wants', '.requires')) and os.path.islink(link):
            os.unlink(link)


def carry_out(root, plan):
    """The plan's steps (k8s_node.image_plan), in order."""
    for entry in plan.get('files', []):
        def write(path, text=entry['content']):
            with open(path, 'w') as f:
                f.write(text)
        place(root, entry['dest'], entry.get('mode', '0644'), write)
    for entry in plan.get('unpack', []):
        dest = inside(root, entry['dest'])
        if not os.path.isdir(dest):
            os.makedirs(dest, 0o755)
        run = subprocess.run(['tar', '-C', dest, '-xzf', entry['src']], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        if run.returncode != 0:
            fail('unpacking %s: %s' % (entry['src'], run.stdout.strip()[-1500:]))
    for entry in plan.get('copies', []):
        if not os.path.isfile(entry['src']):
            fail('%s: no such file to copy into the image' % entry['src'])
        place(root, entry['dest'], entry.get('mode', '0644'),
              lambda path, src=entry['src']: shutil.copyfile(src, path))
    for entry in plan.get('trees', []):
        src, dest = inside(root, entry['src']), inside(root, entry['dest'])
        if not os.path.isdir(src):
            continue   # the image has none (the kubelet's node setup copies them later)
        if not os.path.isdir(dest):
            os.makedirs(dest, 0o755)
        for name in sorted(os.listdir(src)):
            if not os.path.exists(os.path.join(dest, name)):
                shutil.copy2(os.path.join(src, name), os.path.join(dest, name))
    for unit in plan.get('disable', []):
        disable(root, unit)
    for unit in plan.get('enable', []):
        enable(root, unit)
    print('ready for kubeadm: %d files, %d unpacked, units enabled: %s' % (
        len(plan.get('files', [])), len(plan.get('unpack', [])),
        ', '.join(plan.get('enable', []))))


def ctr(root, socket, *args):
    argv = [os.path.join(root, 'usr/bin/ctr'), '--address', socket, '--namespace', NAMESPACE]
    run = subprocess.run(argv + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    if run.returncode != 0:
        fail('ctr %s: %s' % (' '.join(args), run.stdout.strip()[-1500:]))
    return run.stdout


def import_archives(root, archives):
    containerd = os.path.join(root, 'usr/bin/containerd')
    if not os.access(containerd, os.X_OK):
        fail('the image has no containerd (%s)' % containerd)
    work = tempfile.mkdtemp(prefix='magnum-bake-')
    socket = os.path.join(work, 'containerd.sock')
    config = os.path.join(work, 'config.toml')
    with open(config, 'w') as f:
        f.write(CONFIG % {'root': os.path.join(root, 'var/lib/containerd'),
                          'state': os.path.join(work, 'state'), 'socket': socket})
    log = open(os.path.join(work, 'containerd.log'), 'w')
    daemon = subprocess.Popen([containerd, '--config', config], stdout=log, stderr=log)
    try:
        deadline = time.time() + 60
        while not os.path.exists(socket):
            if daemon.poll() is not None or time.time() > deadline:
                log.flush()
                with open(log.name) as f:
                    fail("the image's containerd did not start: %s" % f.read()[-1500:])
            time.sleep(0.2)
        for archive in archives:
            ctr(root, socket, 'images', 'import', archive)
        held = ctr(root, socket, 'images', 'ls', '--quiet').split()
        print('imported into containerd (%s): %s' % (NAMESPACE, ', '.join(sorted(held))))
    finally:
        daemon.terminate()
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    parser.add_argument('--bin-dir', required=True)
    parser.add_argument('--binary', action='append', default=[])
    parser.add_argument('--archive', action='append', default=[])
    parser.add_argument('--plan')
    parser.add_argument('root')
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, 'etc')):
        fail('%s is not a root filesystem' % args.root)
    plan = None
    if args.plan:
        try:
            with open(args.plan) as f:
                plan = json.load(f)
        except (IOError, OSError, ValueError) as exc:
            fail('--plan %s: %s' % (args.plan, exc))
    install_binaries(args.root, args.bin_dir, args.binary)
    if plan is not None:
        carry_out(args.root, plan)
    if args.archive:
        import_archives(args.root, args.archive)


if __name__ == '__main__':
    main()
