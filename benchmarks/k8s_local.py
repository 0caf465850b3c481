#!/usr/bin/env python3
"""Benchmark (not a test): Kubernetes clusters on local container nodes, through the API.

Prints, in seconds:
  - create-to-Ready of a 1 master + 2 worker cluster through the API (the driver waits
    for every node to be Ready), next to a plain kubeadm script (plain_kubeadm.sh) on
    the same kind of nodes with the same packages, configuration, binaries and images,
    and their ratio (what the driver costs over the bare minimum);
  - the time to add 1 worker to a 2-worker and to a 6-worker cluster, and their ratio.

Needs what the Kubernetes tests need: a running Docker engine, debootstrap, the project
installed, and MAGNUM_K8S_ARTIFACTS (docs "Kubernetes"). Run from the checkout:

    MAGNUM_K8S_ARTIFACTS=/path/to/artifacts python3 benchmarks/k8s_local.py [--runs N]

As in the tests, MAGNUM_K8S_TAG names the version the directory holds (label kube_tag)
and MAGNUM_K8S_LABELS adds labels (key=value,...; e.g. the flannel tags it holds).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jinja2
import yaml

from swarm_local import Api, add_one, create, delete_all, report

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / 'collections'))
from ansible_collections.openstack.magnum.plugins.module_utils.core import labels  # noqa: E402
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (  # noqa: E402
    k8s_config, k8s_node)

ROLES = TOP / 'collections/ansible_collections/openstack/magnum/roles'
ROLE = ROLES / 'kubernetes'
TEMPLATE = {'name': 'bench', 'coe': 'kubernetes', 'image_id': 'debian-12',
            'external_network_id': 'public', 'keypair_id': 'default', 'flavor_id': 'm1.small',
            'master_flavor_id': 'm1.medium', 'network_driver': 'flannel'}
LABELS = labels.parse(os.environ.get('MAGNUM_K8S_LABELS'))
if os.environ.get('MAGNUM_K8S_TAG'):
    LABELS['kube_tag'] = os.environ['MAGNUM_K8S_TAG']
TEMPLATE['labels'] = LABELS
PLAIN_NET, PLAIN_SUBNET = 'magnum-bench-plain', '10.213.0'
# The way the docker provider runs a node (roles/infra_docker/tasks/converge.yml), with
# the CPU and memory of m1.medium (master) and m1.small (workers).
NODE_FLAGS = ['--cap-add=ALL', '--cap-drop=SYS_RESOURCE', '--security-opt=seccomp=unconfined',
              '--security-opt=apparmor=unconfined', '--security-opt=systempaths=unconfined',
              '--device-cgroup-rule=a *:* rwm', '--device=/dev/kmsg', '--cgroupns=private',
              '--tmpfs=/run', '--tmpfs=/run/lock', '--tmpfs=/tmp']


def docker(*args, check=True):
    return subprocess.run(['docker'] + list(args), capture_output=True, text=True, check=check)


def plain_files(work, master_address):
    """The files plain_kubeadm.sh installs, from the driver's own generators; returns the
    settings they were made with."""
    defaults = yaml.safe_load((ROLE / 'defaults/main.yml').read_text())
    conf = k8s_config.settings({'labels': LABELS}, TEMPLATE, {
        'flannel': defaults['kubernetes_flannel_image'],
        'flannel_cni': defaults['kubernetes_flannel_cni_plugin_image']})
    # and the role's own timing, as its settings.yml adds it (kubeadm's waits, the
    # components' flags and probes for a slow master)
    conf.update(kubeadm_timeouts=defaults['kubernetes_kubeadm_timeouts'],
                component_flags=defaults['kubernetes_component_flags'],
                # the role's default is its environment's (a lookup, not YAML)
                control_plane_probes=json.loads(
                    os.environ.get('MAGNUM_K8S_CONTROL_PLANE_PROBES') or '{}'))
    master = {'name': 'plain-master', 'address': master_address, 'role': 'master',
              'nodegroup': 'default-master'}
    (work / 'kubeadm.yaml').write_text(yaml.safe_dump_all(
        k8s_config.kubeadm_init(conf, master, master_address), sort_keys=False))
    (work / 'containerd.toml').write_text(k8s_config.containerd_config(conf))
    # The nodes resolve through Docker's embedded DNS (loopback): as the role does, the
    # kubelet's resolv.conf names this machine's servers instead.
    (work / 'resolv.conf').write_text(k8s_config.resolv_conf(
        conf, 'nameserver 127.0.0.11\n', Path('/etc/resolv.conf').read_text()))
    (work / 'kubelet.service').write_text(k8s_node.kubelet_unit('/usr/local/bin'))
    (work / '10-kubeadm.conf').write_text(k8s_node.kubeadm_dropin('/usr/local/bin'))
    templates = ROLES / 'kubernetes_control_plane/templates'
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)))
    (work / 'flannel.yml').write_text(env.get_template('flannel.yml.j2').render(
        ansible_managed='benchmarks/k8s_local.py', kubernetes_conf=conf))
    return conf


def plain(work, artifacts, workers):
    """Seconds from starting the nodes to every node Ready, with plain_kubeadm.sh."""
    image = docker('images', 'magnum-node', '--format',
                   '{{.Repository}}:{{.Tag}}').stdout.split()[0]
    docker('network', 'create', '--subnet', PLAIN_SUBNET + '.0/24', PLAIN_NET)
    names = ['plain-master'] + ['plain-node-%d' % i for i in range(workers)]
    conf = plain_files(work, PLAIN_SUBNET + '.10')
    try:
        start = time.monotonic()
        for i, name in enumerate(names):
            size = ['--cpus=2', '--memory=4g'] if i == 0 else ['--cpus=1', '--memory=2g']
            docker('run', '--detach', '--name', name, '--hostname', name, '--network', PLAIN_NET,
                   '--ip', '%s.%d' % (PLAIN_SUBNET, 10 + i), *NODE_FLAGS, *size,
                   '--volume=/var/lib/containerd', image)
        for name in names:
            while docker('exec', name, 'systemctl', 'is-system-running', '--wait',
                         check=False).stdout.strip() not in ('running', 'degraded'):
                time.sleep(0.5)
        # Workers get the images the driver gives them (not the control plane's).
        worker_images = k8s_config.artifact_source(conf['kube_tag'], artifacts)['worker_images']
        subprocess.run([str(Path(__file__).parent / 'plain_kubeadm.sh')], check=True, env=dict(
            os.environ, ARTIFACTS=artifacts, WORK=str(work), MASTER=names[0],
            WORKERS=' '.join(names[1:]), WORKER_IMAGES=' '.join(worker_images)))
        return time.monotonic() - start
    finally:
        for name in names:
            docker('rm', '-f', '-v', name, check=False)
        docker('network', 'rm', PLAIN_NET, check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=1, help='repeat each measure N times')
    args = parser.parse_args()
    artifacts = os.environ.get('MAGNUM_K8S_ARTIFACTS')
    if not artifacts:
        raise SystemExit('MAGNUM_K8S_ARTIFACTS is not set: no Kubernetes binaries or images '
                         '(docs "Kubernetes"); nothing to measure.')
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-k8s-'))
    api = Api(workdir)
    names = []
    try:
        api.call('POST', '/clustertemplates', json=TEMPLATE)
        # The node image is built (or found) and the packages cached before anything is timed.
        names.append('bench-warmup')
        create(api, 'bench-warmup', 1)
        # Only the cluster measured runs while it is measured (2 cores: a 6-worker cluster
        # beside the others starved its control plane), and each figure is printed as it
        # is taken.
        delete_all(api, ['bench-warmup'])
        figures = {'create 1+2 (driver)': [], 'create 1+2 (plain kubeadm)': [],
                   'add 1 to 2 workers': [], 'add 1 to 6 workers': []}

        def measure(key, seconds):
            figures[key].append(seconds)
            print('%s: %.1f s' % (key, seconds), flush=True)
        for run in range(args.runs):
            small, big = 'bench-small-%d' % run, 'bench-big-%d' % run
            names.append(small)
            measure('create 1+2 (driver)', create(api, small, 2))
            measure('add 1 to 2 workers', add_one(api, small, 2))
            delete_all(api, [small])
            measure('create 1+2 (plain kubeadm)', plain(workdir, artifacts, 2))
            names.append(big)
            create(api, big, 6)
            measure('add 1 to 6 workers', add_one(api, big, 6))
            delete_all(api, [big])
        report('Kubernetes on local container nodes', figures, [
            ('create (driver / plain kubeadm)', 'create 1+2 (driver)',
             'create 1+2 (plain kubeadm)'),
            ('add-1 (6 workers / 2 workers)', 'add 1 to 6 workers', 'add 1 to 2 workers')])
    finally:
        delete_all(api, names)
        api.stop()


if __name__ == '__main__':
    main()
