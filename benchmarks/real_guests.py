#!/usr/bin/env python3
"""Benchmark (not a test): a Swarm or Kubernetes cluster on real guests next to its floor.

On a cloud whose Nova boots real guests (the lab's real-guest mode: `LAB_VIRT=libvirt
LAB_NET=ovs ../shared/openstack-lab/up.sh`), with the node image uploaded
(`ansible-playbook playbooks/cloud_image.yml`), prints in seconds:

  - the floor: N guests (the node image, the master flavor for the first and the flavor
    for the others; a network, router and floating IPs made beforehand) from the servers'
    create until every one answers over SSH;
  - a cluster of 1 master + (N - 1) workers created with `ansible-playbook` (network,
    router, security groups, servers, floating IPs, the COE), from the start of the
    playbook until it is usable at the cluster's address - Swarm: `docker node ls` through
    TLS lists every node Ready; Kubernetes: the API lists every node Ready - and its
    delete, with where the create's time went: every task of 2 s or more, the others
    summed by role (profile_tasks' times, which add up to the playbook's);
  - the ratio cluster / floor: what the driver and the provider add to booting the guests.

With `--coe kubernetes` on a release image (Glance `kube_version`: playbooks/cloud_image.yml
with cloud_image_kube_tag), the floor goes on past SSH as a plain script would, no Ansible:
the driver's own configuration files (containerd's, the kubelet's unit, kubeadm's, flannel's
manifest: benchmarks/k8s_local.py's plain_files) copied to the guests, `kubeadm init` on
the first, flannel applied, `kubeadm join` on the others at once, until every node is Ready -
the kubeadm floor issue #62 measures the driver against, each of its steps timed.

    python3 benchmarks/real_guests.py [--coe swarm] [--nodes 3] [--cloud lab]
        [--flavor g1.small] [--master-flavor FLAVOR]
    MAGNUM_K8S_ARTIFACTS=... MAGNUM_K8S_LABELS=kube_tag=v1.36.2,... \
        python3 benchmarks/real_guests.py --coe kubernetes --nodes 2 --master-flavor m1.medium

Needs the project installed (`pip install -e .`), `OS_CLIENT_CONFIG_FILE` naming the
cloud's clouds.yaml, and the docker CLI (Swarm) or the offline directory's kubectl
(Kubernetes: MAGNUM_K8S_ARTIFACTS, its bin/kubectl). Everything it makes is deleted at
the end.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import openstack

from ansible_collections.openstack.magnum.plugins.module_utils.core.labels import (
    parse as parse_labels)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_config

TOP = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SSH = ['ssh', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
       '-o', 'ConnectTimeout=5', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR']


def floor(conn, args, work):
    """Seconds from the servers' create until all answer over SSH (the image's user)."""
    key = work / 'floor-key'
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', str(key)], check=True)
    prefix = 'bench-floor-%d-' % os.getpid()
    image = conn.image.find_image(args.image, ignore_missing=False)
    user = image.properties.get('os_admin_user', 'debian')
    public = conn.network.find_network('public', ignore_missing=False)
    net = conn.network.create_network(name=prefix + 'net')
    sub = conn.network.create_subnet(name=prefix + 'subnet', network_id=net.id, ip_version=4,
                                     cidr='10.0.0.0/24')
    router = conn.network.create_router(name=prefix + 'router',
                                        external_gateway_info={'network_id': public.id})
    conn.network.add_interface_to_router(router, subnet_id=sub.id)
    group = conn.network.create_security_group(name=prefix + 'sg')
    conn.network.create_security_group_rule(security_group_id=group.id, direction='ingress',
                                            protocol='tcp', port_range_min=22,
                                            port_range_max=22, remote_ip_prefix='0.0.0.0/0')
    # the guests reach one another (the kubeadm floor: the API, kubelets, flannel's vxlan)
    conn.network.create_security_group_rule(security_group_id=group.id, direction='ingress',
                                            remote_group_id=group.id)
    keypair = conn.compute.create_keypair(name=prefix + 'key',
                                          public_key=(work / 'floor-key.pub').read_text())
    flavors = [conn.compute.find_flavor(args.master_flavor or args.flavor, ignore_missing=False),
               conn.compute.find_flavor(args.flavor, ignore_missing=False)]
    servers, fips = [], []
    try:
        began = time.monotonic()
        for i in range(args.nodes):
            servers.append(conn.compute.create_server(
                name='%s%d' % (prefix, i), image_id=image.id, flavor_id=flavors[min(i, 1)].id,
                key_name=keypair.name, networks=[{'uuid': net.id}],
                security_groups=[{'name': group.name}]))
        servers = [conn.compute.wait_for_server(s, wait=600, interval=2) for s in servers]
        for server in servers:
            port = next(conn.network.ports(device_id=server.id))
            fips.append(conn.network.create_ip(floating_network_id=public.id, port_id=port.id))
        answered = {}
        while len(answered) < len(fips) and time.monotonic() - began < 1200:
            for fip in fips:
                address = fip.floating_ip_address
                if address not in answered and subprocess.run(
                        SSH + ['-i', str(key), '%s@%s' % (user, address), 'true'],
                        capture_output=True).returncode == 0:
                    answered[address] = time.monotonic() - began
            time.sleep(1)
        if len(answered) < len(fips):
            raise SystemExit('floor: not every guest answered over SSH within 20 minutes')
        booted = max(answered.values())
        if args.coe != 'kubernetes' or not image.properties.get('kube_version'):
            return booted, None
        fixed = [next(iter(conn.compute.get_server(s.id).addresses.values()))[0]['addr']
                 for s in servers]
        steps = [('servers created until all answer over SSH', booted)]
        steps += kubeadm_floor(work, key, user, [f.floating_ip_address for f in fips], fixed[0])
        print('the floor\'s steps:\n' + ''.join('  %-58s %7.1f s\n' % step for step in steps),
              flush=True)
        return booted, time.monotonic() - began
    finally:
        for server in servers:
            conn.compute.delete_server(server)
        for server in servers:
            conn.compute.wait_for_delete(server, wait=300, interval=2)
        for fip in fips:
            conn.network.delete_ip(fip)
        conn.network.remove_interface_from_router(router, subnet_id=sub.id)
        conn.network.delete_router(router)
        conn.network.delete_security_group(group)
        conn.network.delete_network(net)
        conn.compute.delete_keypair(keypair)


def kubeadm_floor(work, key, user, addresses, master_fixed):
    """Kubernetes on guests of a release image by a plain script over SSH: the driver's
    configuration files, kubeadm init on the first, flannel, kubeadm join on the others,
    until every node is Ready. Returns [(step, seconds)]."""
    sys.path.insert(0, str(Path(__file__).parent))
    steps, began = [], [time.monotonic()]

    def step(what):
        now = time.monotonic()
        steps.append((what, now - began[0]))
        began[0] = now

    from k8s_local import plain_files
    files = work / 'plain'
    files.mkdir()
    conf = plain_files(files, master_fixed)
    ssh = SSH + ['-i', str(key)]

    def on(address, script, stdin=None):
        run = subprocess.run(ssh + ['%s@%s' % (user, address), 'sudo sh -ec %s' % shlex.quote(
            script)], input=stdin, capture_output=True, text=True, timeout=1800)
        if run.returncode != 0:
            raise SystemExit('kubeadm floor on %s: %s%s' % (address, run.stdout[-2000:],
                                                            run.stderr[-2000:]))
        return run.stdout

    places = {'containerd.toml': '/etc/containerd/config.toml',
              'resolv.conf': '/etc/kubernetes/resolv.conf',
              'kubelet.service': '/etc/systemd/system/kubelet.service',
              '10-kubeadm.conf': '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf',
              'kubeadm.yaml': '/etc/kubernetes/kubeadm.yaml',
              'flannel.yml': '/etc/kubernetes/flannel.yml'}
    given = dict((path, (files / name).read_text()) for name, path in places.items())
    # the control plane's probe patches kubeadm.yaml names, as the role writes them
    given.update(('%s/%s' % (k8s_config.PATCHES_DIR, name), json.dumps(patch))
                 for name, patch in k8s_config.control_plane_patches(conf).items())
    bundle = json.dumps(given)
    write = ('import json, os, sys\n'
             'for path, text in json.load(sys.stdin).items():\n'
             '    os.makedirs(os.path.dirname(path), exist_ok=True)\n'
             '    open(path, "w").write(text)\n')

    def prepare(address):
        on(address, 'python3 -c %s' % shlex.quote(write)
           + '; systemctl disable --now -q docker.socket docker.service 2>/dev/null || true'
           '; ip link delete docker0 2>/dev/null || true'
           '; mkdir -p /opt/cni/bin /etc/kubernetes/manifests; cp -n /usr/lib/cni/* /opt/cni/bin/'
           '; modprobe br_netfilter; swapoff -a'
           '; sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1'
           '; systemctl restart containerd; systemctl daemon-reload; systemctl enable -q kubelet',
           stdin=bundle)

    threads = [threading.Thread(target=prepare, args=(a,)) for a in addresses]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    step('files written, containerd restarted, kubelet enabled (all nodes)')
    admin = '--kubeconfig /etc/kubernetes/admin.conf'
    on(addresses[0], 'kubeadm init --config /etc/kubernetes/kubeadm.yaml >/dev/null')
    step('kubeadm init')
    on(addresses[0], 'kubectl %s apply -f /etc/kubernetes/flannel.yml >/dev/null' % admin)
    step('flannel applied')
    join = on(addresses[0], 'kubeadm token create --print-join-command').strip()
    step('kubeadm token create')
    join += (' --cri-socket unix:///run/containerd/containerd.sock'
             ' --ignore-preflight-errors=SystemVerification,NumCPU,Mem >/dev/null')
    joins = [threading.Thread(target=on, args=(a, join)) for a in addresses[1:]]
    for thread in joins:
        thread.start()
    for thread in joins:
        thread.join()
    step('kubeadm join (the others at once)')
    on(addresses[0], 'kubectl %s wait node --all --for=condition=Ready --timeout=1200s' % admin)
    step('every node Ready')
    return steps


def playbook(env, *args):
    """Run a playbook; returns its output, whose end is profile_tasks' table (where the
    time went, task by task)."""
    run = subprocess.run([str(BIN / 'ansible-playbook')] + list(args), cwd=str(TOP),
                         env=dict(env, ANSIBLE_CALLBACKS_ENABLED='ansible.posix.profile_tasks',
                                  PROFILE_TASKS_TASK_OUTPUT_LIMIT='all'),
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(run.stdout[-3000:])
    return run.stdout


TASK_TIME = re.compile(r'^(?:(?P<role>[\w.]+) : )?(?P<task>.*?) -+ (?P<seconds>[\d.]+)s$')


def task_times(output):
    """profile_tasks' table at the end of a playbook's output (every task: the time from
    its start to the next one's, so they add up to the playbook's): [(role, task, s)]."""
    lines = output.splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith('=====')]
    found = [TASK_TIME.match(line.strip()) for line in lines[marks[-1] + 1:]] if marks else []
    return [(m.group('role') or '(play)', m.group('task'), float(m.group('seconds')))
            for m in found if m]


def account(times, at_least=2.0):
    """Where the playbook's time went, all of it: each task of ``at_least`` seconds, the
    others summed by role, and the total."""
    lines, rest = [], {}
    for role, task, seconds in sorted(times, key=lambda t: -t[2]):
        if seconds >= at_least:
            lines.append('  %-72s %7.1f s' % (('%s : %s' % (role, task))[:72], seconds))
        else:
            count, total = rest.get(role, (0, 0.0))
            rest[role] = (count + 1, total + seconds)
    for role, (count, total) in sorted(rest.items(), key=lambda r: -r[1][1]):
        lines.append('  %-72s %7.1f s' % ('%s : %d other tasks' % (role, count), total))
    lines.append('  %-72s %7.1f s' % ('all tasks', sum(t[2] for t in times)))
    return '\n'.join(lines)


def module(env, module_name, **params):
    run = subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                          'openstack.magnum.' + module_name,
                          '-a', json.dumps(params)], cwd=str(TOP), capture_output=True,
                         text=True, env=dict(env, ANSIBLE_CALLBACK_RESULT_FORMAT='json'))
    if run.returncode != 0:
        raise SystemExit(run.stdout + run.stderr)
    return json.loads(run.stdout.split('=>', 1)[1])


def cluster(conn, args, work):
    """Seconds to a usable cluster of 1 + (nodes - 1), and to its delete."""
    env = dict(os.environ, MAGNUM_DB_URL='sqlite:///%s' % (work / 'm.sqlite'),
               MAGNUM_PROVIDER='openstack', MAGNUM_CLOUD=args.cloud,
               XDG_DATA_HOME=str(work / 'data'), ANSIBLE_CONFIG=str(TOP / 'ansible.cfg'),
               PATH='%s:%s' % (BIN, os.environ['PATH']))
    keypair = conn.compute.create_keypair(name='bench-%s-%d' % (args.coe, os.getpid()))
    labels = parse_labels(os.environ.get('MAGNUM_K8S_LABELS'))
    try:
        module(env, 'cluster_template', name='bench', coe=args.coe, image_id=args.image,
               external_network_id='public', keypair_id=keypair.name, flavor_id=args.flavor,
               master_flavor_id=args.master_flavor or args.flavor,
               docker_storage_driver='overlay2', floating_ip_enabled=True,
               labels=labels if args.coe == 'kubernetes' else {})
        began = time.monotonic()
        created = playbook(env, 'playbooks/cluster_create.yml', '-e', json.dumps({'cluster': {
            'name': 'bench', 'cluster_template_id': 'bench', 'node_count': args.nodes - 1,
            'master_count': 1, 'create_timeout': 60}}))
        made = module(env, 'cluster_info', name='bench')['cluster']
        issued = module(env, 'cluster_ca', cluster='bench', action='issue', common_name='admin',
                        organization='system:masters')
        certs = work / 'certs'
        certs.mkdir()
        for filename, field in (('ca.pem', 'pem'), ('cert.pem', 'cert'), ('key.pem', 'key')):
            (certs / filename).write_text(issued[field])
        states, listed = node_states(args.coe, made['api_address'], certs)
        usable = time.monotonic() - began
        if states != ['Ready'] * args.nodes:
            raise SystemExit('the cluster is not usable: %s %s' % (listed.stdout, listed.stderr))
        print('the create\'s tasks, all of them (from the playbook\'s start to its end):\n'
              + account(task_times(created)), flush=True)
        began = time.monotonic()
        playbook(env, 'playbooks/cluster_delete.yml', '-e', 'cluster=bench')
        return usable, time.monotonic() - began
    finally:
        conn.compute.delete_keypair(keypair)


def node_states(coe, api_address, certs):
    """The nodes' states as the cluster's API lists them ('Ready' for each ready one), and
    the command's run."""
    if coe == 'swarm':
        listed = subprocess.run(
            ['docker', 'node', 'ls', '--format', '{{.Status}}'], capture_output=True,
            text=True, env=dict(os.environ, DOCKER_HOST=api_address, DOCKER_TLS_VERIFY='1',
                                DOCKER_CERT_PATH=str(certs)))
        return listed.stdout.split(), listed
    # the offline directory's, or its release's (<dir>/<kube_tag>/bin) as the driver takes it
    offline = os.environ.get('MAGNUM_K8S_ARTIFACTS', '')
    tag = parse_labels(os.environ.get('MAGNUM_K8S_LABELS')).get('kube_tag', '')
    if tag and os.path.isdir(os.path.join(offline, tag)):
        offline = os.path.join(offline, tag)
    kubectl = os.path.join(offline, 'bin', 'kubectl')
    listed = subprocess.run(
        [kubectl, '--server', api_address, '--certificate-authority', str(certs / 'ca.pem'),
         '--client-certificate', str(certs / 'cert.pem'), '--client-key',
         str(certs / 'key.pem'), 'get', 'nodes', '-o', 'jsonpath={range .items[*]}'
         '{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}'],
        capture_output=True, text=True)
    return [{'True': 'Ready'}.get(word, word) for word in listed.stdout.split()], listed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--coe', choices=('swarm', 'kubernetes'), default='swarm')
    parser.add_argument('--nodes', type=int, default=3)
    parser.add_argument('--cloud', default=os.environ.get('MAGNUM_CLOUD', 'lab'))
    parser.add_argument('--flavor', default='g1.small')
    parser.add_argument('--master-flavor', default=None, help='the first node\'s (default: '
                        '--flavor); kubeadm wants 2 CPUs and 1700 MB on a master')
    parser.add_argument('--image', default='debian-12-magnum')
    args = parser.parse_args()
    conn = openstack.connect(cloud=args.cloud)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        floor_s, kubeadm_s = floor(conn, args, work)
        print('floor: %d guests booted to SSH        %7.1f s' % (args.nodes, floor_s), flush=True)
        if kubeadm_s:
            print('floor: + plain kubeadm, nodes Ready  %7.1f s' % kubeadm_s, flush=True)
        usable, deleted = cluster(conn, args, work)
        name = '%s 1+%d' % (args.coe, args.nodes - 1)
        print('%-20s create to nodes Ready %7.1f s' % (name, usable))
        print('%-20s delete                %7.1f s' % (name, deleted))
        print('ratio cluster / boot floor                %7.2f' % (usable / floor_s))
        if kubeadm_s:
            print('ratio cluster / kubeadm floor             %7.2f' % (usable / kubeadm_s))


if __name__ == '__main__':
    main()
