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

Usage: bake_kubernetes.py --bin-dir DIR [--binary NAME=PATH ...] [--archive PATH ...] ROOT
(build.sh runs it with ROOT last, before the filesystem is made)."""

from __future__ import absolute_import, division, print_function

import argparse
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
    parser.add_argument('root')
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, 'etc')):
        fail('%s is not a root filesystem' % args.root)
    install_binaries(args.root, args.bin_dir, args.binary)
    if args.archive:
        import_archives(args.root, args.archive)


if __name__ == '__main__':
    main()
