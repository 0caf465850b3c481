#!/usr/bin/env python3
"""Benchmark (not a test): the same 1 + 1 Kubernetes cluster through the kubeadm driver and
through Cluster API, on the same real-guest lab, in one run (issue #65, item 5).

On the lab's real-guest mode (`LAB_VIRT=libvirt LAB_NET=ovs ../shared/openstack-lab/up.sh`),
with the local builds the gated tests use (MAGNUM_K8S_ARTIFACTS, MAGNUM_CAPI_ARTIFACTS,
MAGNUM_CAPI_CHART: docs/user/kubernetes.md and docs/user/cluster-api.md), it makes what
tests/test_real_guests.py's CAPI test makes - the release image of the offline directory's
kube_tag, a management cluster of the project (the kubeadm driver on local nodes, CAPI and
CAPO installed by playbooks/capi_management.yml), the API behind the lab's Keystone with
the cloud's endpoints where guests and the management cluster's pods reach them - then,
one after the other, alice's `openstack coe cluster create` of 1 master + 1 worker from
two templates equal but for the driver (the same image, flavors, network driver and
labels; add-ons off, as the chart without azimuth's addon provider has none; the same
operator settings for a cloud without KVM), and prints for each, in seconds from the
create's request:

  - CREATE_COMPLETE (the API's status, polled every 10 s: the figures are 10 s coarse);
  - every node Ready (the cluster's own API through `openstack coe cluster config`);
  - the controller's CPU, create to every node Ready: the API's processes and their jobs
    (ansible-runner, ansible-playbook, the modules; utime + stime of the process tree and
    of the children it reaped) and, for Cluster API, the management cluster's nodes (their
    containers' process trees, counted the same way: CAPI's and CAPO's controllers, the
    API server and etcd they use, the kubelet); the management cluster's idle rate beside
    it (its CPU while the kubeadm driver's cluster was made, which does not use it);
  - its delete (to GONE);

and the ratios CAPI / kubeadm driver. Each cluster is deleted before the next is made.

    MAGNUM_TEST_CLOUDS_YAML=... MAGNUM_K8S_ARTIFACTS=... MAGNUM_K8S_LABELS=... \\
        MAGNUM_CAPI_ARTIFACTS=... MAGNUM_CAPI_CHART=... \\
        python3 benchmarks/capi_side_by_side.py
    python3 benchmarks/capi_side_by_side.py --report '<the JSON of a run's results line>'

Needs the project installed with its test tools (`pip install -e '.[test]'`): it runs the
tests' own helpers (tests/), so it makes and removes exactly what they do.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / 'tests'))

TICK = os.sysconf('SC_CLK_TCK')


def tree_cpu(pid):
    """CPU seconds of process ``pid`` and its descendants, with the children each reaped."""
    parents = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                stat = Path('/proc', entry, 'stat').read_text()
            except OSError:
                continue
            fields = stat.rsplit(')', 1)[1].split()
            parents[int(entry)] = (int(fields[1]), sum(int(f) for f in fields[11:15]))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += parents.get(current, (0, 0))[1]
        todo += [child for child, (ppid, _) in parents.items() if ppid == current]
    return total / TICK


def container_cpu(ids):
    """CPU seconds of the containers ``ids``: each one's process tree from its first
    process (the node's systemd), as tree_cpu counts it - what ran in it and ended
    included, whatever the host's cgroup layout."""
    total = 0.0
    for cid in ids:
        pid = subprocess.run(['docker', 'inspect', '-f', '{{.State.Pid}}', cid],
                             capture_output=True, text=True, check=True).stdout.strip()
        total += tree_cpu(int(pid))
    return total


def release_image(cloud, work, tag):
    """The release image of ``tag`` (playbooks/cloud_image.yml; its build cache reused)."""
    import test_real_guests as rg
    (work / 'release-image').mkdir()
    env = rg.playbook_env(work / 'release-image')
    built = rg.run(env, 'ansible-playbook', 'playbooks/cloud_image.yml', '-e', json.dumps(
        {'cloud_image_cloud': rg.LAB_CLOUD, 'cloud_image_kube_tag': tag}))
    if built.returncode != 0:
        raise SystemExit(built.stdout[-3000:])
    return cloud.image.find_image('debian-12-magnum-k8s-' + tag, ignore_missing=False)


def one_cluster(alice_coe, template, api_pid, containers, work):
    """Create 1 + 1 from ``template``, measure (see the module's doc), delete."""
    import test_kubernetes as k8s
    import test_real_guests as rg
    from conftest import wait_for
    name = 'bench-' + template
    cpu_began = tree_cpu(api_pid), container_cpu(containers)
    began = time.monotonic()
    alice_coe('cluster', 'create', name, '--cluster-template', template, '--master-count', '1',
              '--node-count', '1', '--timeout', '60')
    cluster = wait_for(lambda: rg.cli_settled(alice_coe, name), timeout=3900, interval=10)
    complete = time.monotonic() - began
    if cluster['status'] != 'CREATE_COMPLETE':
        raise SystemExit('%s: %s %s' % (template, cluster['status'],
                                        cluster.get('status_reason')))
    where = work / ('config-' + template)
    where.mkdir()
    alice_coe('cluster', 'config', name, '--dir', str(where))

    def all_ready():
        got = k8s.kubectl(where / 'config', 'get', 'nodes', '-o', 'json', check=False)
        nodes = json.loads(got.stdout)['items'] if got.returncode == 0 else []
        return len(nodes) == 2 and all(
            any(c['type'] == 'Ready' and c['status'] == 'True' for c in n['status']['conditions'])
            for n in nodes)
    wait_for(all_ready, timeout=1800, interval=10)
    ready = time.monotonic() - began
    cpu = tree_cpu(api_pid) - cpu_began[0], container_cpu(containers) - cpu_began[1]
    began = time.monotonic()
    alice_coe('cluster', 'delete', name)
    gone = wait_for(lambda: rg.cli_settled(alice_coe, name), timeout=1800, interval=10)
    if gone['status'] != 'GONE':
        raise SystemExit('%s: %s %s' % (template, gone['status'],
                                        gone.get('status_reason')))
    return {'complete': complete, 'ready': ready, 'api_cpu': cpu[0], 'mgmt_cpu': cpu[1],
            'delete': time.monotonic() - began}


def main():
    import test_capi
    import test_kubernetes as k8s
    import test_real_guests as rg
    from conftest import LAB_CLOUDS_YAML, lab_connect
    from test_keystone_auth import coe, identities, lab_region_connection
    os.environ.setdefault('SHELL', '/bin/sh')   # python-magnumclient's `cluster config`
    cloud = lab_connect(LAB_CLOUDS_YAML)
    tag = k8s.LABELS.get('kube_tag') or 'v1.36.2'
    # add-ons off: Cluster API's chart without the addon provider has none
    labels = dict(k8s.LABELS, kube_tag=tag, cloud_provider_enabled='false',
                  metrics_server_enabled='false', auto_scaling_enabled='false',
                  fixed_subnet_cidr='10.0.79.0/24')
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        image = release_image(cloud, work, tag)
        # a cloud without KVM's settings, for both drivers (the gated tests' own)
        site = work / 'site'
        (site / 'group_vars').mkdir(parents=True)
        (site / 'group_vars' / 'all.yml').write_text(json.dumps(dict(
            rg.K8S_SLOW_SETTINGS, kubernetes_single_master_leader_election=False,
            capi_helm_values=rg.capi_slow_values(
                rg.K8S_SLOW_SETTINGS['kubernetes_control_plane_probes']))))
        (work / 'mgmt').mkdir()
        with test_capi.management_cluster_of_the_project(work / 'mgmt') as (
                made, kubeconfig, _registry, install):
            install()
            containers = subprocess.run(['docker', 'ps', '-q'], capture_output=True, text=True,
                                        check=True).stdout.split()
            env = {'MAGNUM_CAPI_KUBECONFIG': str(kubeconfig), 'MAGNUM_CAPI_CHART':
                   os.environ['MAGNUM_CAPI_CHART'], 'MAGNUM_INVENTORY': str(site),
                   'MAGNUM_K8S_IMAGE_RELEASE': 'require'}
            keypair = 'kp-bench-%d' % os.getpid()
            with identities(work, TOP, provider='openstack', trustees=True,
                            guest_host=rg.GUEST_GATEWAY, env=env) as (server, _, clouds_yaml, _):
                def alice_coe(*args, ok=True):
                    return coe(clouds_yaml, 'alice', *args, ok=ok)

                alice = lab_region_connection(clouds_yaml, 'alice')
                alice.compute.create_keypair(name=keypair)
                try:
                    results = {}
                    for template, more in (('kubeadm', {}),
                                           ('capi', {'capi_helm_chart_version': '0.0.0-capi'})):
                        rg.k8s_template(alice_coe, template, image.name, keypair,
                                        dict(labels, **more))
                        results[template] = one_cluster(alice_coe, template, server.proc.pid,
                                                        containers, work)
                        print(template, json.dumps(results[template]), flush=True)
                finally:
                    alice.compute.delete_keypair(keypair, ignore_missing=True)
            made.delete_to_nothing()
    results['title'] = '1 + 1 on %s (%s), %s master, %s worker' % (
        image.name, tag, rg.K8S_MASTER_FLAVOR, rg.GUEST_FLAVOR)
    print('results', json.dumps(results), flush=True)
    report(results)


def report(results):
    """The table of a run's results (main's, or a `results` line given to --report)."""
    kubeadm, capi = results['kubeadm'], results['capi']
    print('\n' + results['title'])
    print('%-46s %9s %9s %7s' % ('', 'kubeadm', 'CAPI', 'ratio'))

    def row(what, ours, theirs):
        ratio = theirs / ours if ours else float('nan')
        print('%-46s %9.1f %9.1f %7.2f' % (what, ours, theirs, ratio))
    row('create to CREATE_COMPLETE (s)', kubeadm['complete'], capi['complete'])
    row('create to every node Ready (s)', kubeadm['ready'], capi['ready'])
    row('delete to GONE (s)', kubeadm['delete'], capi['delete'])
    row('CPU, create to Ready: the API and its jobs (s)', kubeadm['api_cpu'], capi['api_cpu'])
    # the kubeadm driver needs no management cluster: its CPU there is not the driver's
    print('%-46s %9s %9.1f' % ('CPU, create to Ready: management cluster (s)', '-',
                               capi['mgmt_cpu']))
    row('CPU on the controller, all (s)', kubeadm['api_cpu'],
        capi['api_cpu'] + capi['mgmt_cpu'])
    # the management cluster's standing cost: its rate while the kubeadm driver's was made
    rate = kubeadm['mgmt_cpu'] / kubeadm['ready']
    print('the management cluster idle: %.3f CPU-s per s (while the kubeadm driver\'s '
          'cluster was made): %.1f s of its %.1f over CAPI\'s create, %.1f s beyond idle'
          % (rate, rate * capi['ready'], capi['mgmt_cpu'], capi['mgmt_cpu'] - rate * capi['ready']))


if __name__ == '__main__':
    if sys.argv[1:2] == ['--report']:
        report(json.loads(sys.argv[2]))
    else:
        main()
