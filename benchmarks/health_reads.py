#!/usr/bin/env python3
"""Benchmark (not a test): one conductor's health round over thousands of clusters, read
without a playbook (api/health_check.py).

A SQLite store of its own holds --clusters settled clusters, each with its own CA, mixed:

  - Kubernetes (stand-in API servers: /readyz and /api/v1/nodes over TLS that requires a
    client certificate of the cluster's CA): healthy; one worker NotReady; /readyz 500;
  - Swarm (stand-in Docker APIs on each manager's address, port 2376, GET /nodes): healthy;
    one worker drained;
  - unreachable: a refused port, and an endpoint that accepts and never answers (it costs
    the read's --timeout).

The stand-ins run in a process of their own (asyncio, one listener per kind). A real
conductor (api/executor.py, provider none, health threads --threads) runs its health round
twice: the first makes each cluster's client certificate and opens its connections, the
second reuses them. Prints per round the wall time, the conductor's CPU-seconds and
CPU-milliseconds per cluster, and the health found per kind (each kind's expected status
checked): the goal is 5 000 clusters within 60 s, <= 20 ms of CPU each.

    python3 benchmarks/health_reads.py [--clusters 5000] [--threads 64] [--timeout 5]
"""

import argparse
import asyncio
import json
import multiprocessing
import resource
import shutil
import socket
import ssl
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))

from api.core import lifecycle, store as store_mod, tls  # noqa: E402
from api.executor import Executor  # noqa: E402
from api.settings import Settings  # noqa: E402

# kind -> (share of the clusters, COE, the health every cluster of that kind must get)
KINDS = {
    'k8s-healthy': (0.40, 'kubernetes', 'HEALTHY'),
    'k8s-node-not-ready': (0.10, 'kubernetes', 'UNHEALTHY'),
    'k8s-readyz-500': (0.05, 'kubernetes', 'UNHEALTHY'),
    'swarm-healthy': (0.30, 'swarm', 'HEALTHY'),
    'swarm-node-drained': (0.05, 'swarm', 'UNHEALTHY'),
    'refused': (0.05, 'kubernetes', 'UNKNOWN'),
    'silent': (0.05, 'kubernetes', 'UNKNOWN'),
}
SWARM_ADDRESS = {'swarm-healthy': '127.0.0.2', 'swarm-node-drained': '127.0.0.3'}
NODES = ('m0', 'n0', 'n1')


def k8s_node(name, ready):
    """A Node object of a realistic size (its images make most of a real one)."""
    conditions = [{'type': t, 'status': 'False'}
                  for t in ('MemoryPressure', 'DiskPressure', 'PIDPressure')]
    conditions.append({'type': 'Ready', 'status': ready, 'reason': 'KubeletReady'})
    images = [{'names': ['registry.example/image-%d@sha256:%s' % (i, '0' * 64)],
               'sizeBytes': 1000000 + i} for i in range(25)]
    return {'kind': 'Node', 'metadata': {'name': name, 'labels': {
        'kubernetes.io/hostname': name, 'node-role.kubernetes.io/worker': ''}},
        'status': {'conditions': conditions, 'images': images}}


def answers():
    def nodes(bad):
        return json.dumps({'kind': 'NodeList', 'items': [
            k8s_node(n, 'False' if n == bad else 'True') for n in NODES]}).encode()

    def swarm(drained):
        return json.dumps([{'ID': n, 'Description': {'Hostname': n},
                            'Status': {'State': 'ready'},
                            'Spec': {'Availability': 'drain' if n == drained else 'active'},
                            'ManagerStatus': {'Leader': True, 'Reachability': 'reachable'}
                            if n == 'm0' else None} for n in NODES]).encode()
    return {
        'k8s-healthy': {'/readyz': (200, b'ok'), '/api/v1/nodes': (200, nodes(None))},
        'k8s-node-not-ready': {'/readyz': (200, b'ok'), '/api/v1/nodes': (200, nodes('n1'))},
        'k8s-readyz-500': {'/readyz': (500, b'[-]etcd failed\nreadyz check failed'),
                           '/api/v1/nodes': (200, nodes(None))},
        'swarm-healthy': {'/nodes': (200, swarm(None))},
        'swarm-node-drained': {'/nodes': (200, swarm('n1'))},
    }


def serve(work, ports, ready):
    """The stand-ins (a process of their own): one TLS listener per kind."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(work / 'server.pem'))
    context.load_verify_locations(str(work / 'cas.pem'))
    context.verify_mode = ssl.CERT_REQUIRED
    kinds = answers()

    async def handle(kind, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                path = line.split()[1].decode()
                while (await reader.readline()) not in (b'\r\n', b'\n', b''):
                    pass
                status, body = kinds[kind].get(path, (404, b'{}'))
                writer.write(b'HTTP/1.1 %d -\r\nContent-Type: application/json\r\n'
                             b'Content-Length: %d\r\n\r\n' % (status, len(body)) + body)
                await writer.drain()
        except (OSError, ssl.SSLError, IndexError):
            pass
        finally:
            writer.close()

    async def main():
        for kind, (host, port) in ports.items():
            await asyncio.start_server(lambda r, w, k=kind: handle(k, r, w), host, port,
                                       ssl=context, backlog=4096)
        ready.put(True)
        await asyncio.Event().wait()
    asyncio.run(main())


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def make_clusters(store, count, ports, silent_port, refused_port):
    """``count`` settled clusters over the kinds; returns {uuid: kind}."""
    scope = lifecycle.Scope(lifecycle.DEFAULT_PROJECT)
    for coe in ('kubernetes', 'swarm'):
        lifecycle.create_template(store, {'name': coe, 'coe': coe, 'image_id': 'debian-12',
                                          'external_network_id': 'public', 'keypair_id': 'k'},
                                  scope)
    ca_cert, ca_key = tls.create_ca('bench')
    kinds, made = [], {}
    for kind, (share, _coe, _health) in KINDS.items():
        kinds += [kind] * int(round(share * count))
    kinds = (kinds + ['k8s-healthy'] * count)[:count]
    for i, kind in enumerate(kinds):
        coe = KINDS[kind][1]
        cluster = lifecycle.record_cluster(store, {'name': 'c%d' % i, 'cluster_template_id': coe},
                                           scope, settings={'check_quota': False})
        uuid = cluster['uuid']
        store.save_certificate(uuid, ca_cert, ca_key)
        if coe == 'swarm':
            api, address = 'tcp://%s:2376' % SWARM_ADDRESS[kind], SWARM_ADDRESS[kind]
        else:
            port = {'refused': refused_port, 'silent': silent_port}.get(kind) or ports[kind][1]
            api, address = 'https://127.0.0.1:%d' % port, '127.0.0.1'
        groups = dict((g['role'], g['uuid']) for g in store.find('nodegroup', cluster_id=uuid))
        lifecycle.set_facts(store, uuid, {'api_address': api, 'nodegroup_nodes': {
            groups['master']: [{'name': 'm0', 'address': address}],
            groups['worker']: [{'name': n, 'address': address} for n in NODES[1:]]}})
        store.update('cluster', uuid, {'status': 'CREATE_COMPLETE'})
        made[uuid] = kind
    return made, ca_cert, ca_key


def round_of(executor, store, made):
    for uuid in made:  # every round writes: the health of each cluster is new to it
        store.update('cluster', uuid, {'health_status': None, 'health_status_reason': {}})
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.monotonic()
    executor._health_due = 0
    executor._schedule_health()
    while executor._health_pending:
        time.sleep(0.05)
    wall = time.monotonic() - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    found = Counter()
    wrong = Counter()
    for cluster in store.find('cluster'):
        kind = made[cluster['uuid']]
        found[(kind, cluster['health_status'])] += 1
        if cluster['health_status'] != KINDS[kind][2]:
            wrong[kind] += 1
    return wall, cpu, found, wrong


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clusters', type=int, default=5000)
    parser.add_argument('--threads', type=int, default=Settings.health_threads)
    parser.add_argument('--timeout', type=float, default=Settings.health_timeout)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix='magnum-health-bench-'))
    server = None
    try:
        db_url = 'sqlite:///%s' % (work / 'h.sqlite')
        store = store_mod.Store(db_url)
        ports = dict((kind, ('127.0.0.1', free_port())) for kind in KINDS
                     if kind.startswith('k8s'))
        ports.update((kind, (address, 2376)) for kind, address in SWARM_ADDRESS.items())
        refused_port = free_port()
        silent = socket.socket()
        silent.bind(('127.0.0.1', 0))
        silent.listen(1)  # never accepted: connections wait, then time out
        started = time.monotonic()
        # The stand-ins' CA: the clusters' (one for all here; each cluster's client keeps
        # a context and certificate of its own all the same).
        made, ca_cert, ca_key = make_clusters(store, args.clusters, ports,
                                              silent.getsockname()[1], refused_port)
        server_cert, server_key = tls.issue_keypair(ca_cert, ca_key, 'standin',
                                                    sans=['127.0.0.1'], client=False)
        (work / 'server.pem').write_text(server_cert + server_key)
        (work / 'cas.pem').write_text(ca_cert)
        ready = multiprocessing.Queue()
        server = multiprocessing.Process(target=serve, args=(work, ports, ready), daemon=True)
        server.start()
        ready.get(timeout=60)
        print('%d clusters recorded in %.0f s: %s' % (
            len(made), time.monotonic() - started,
            ', '.join('%s %d' % (k, n) for k, n in Counter(made.values()).items())))
        settings = Settings(db_url=db_url, runner_dir=work / 'jobs', provider='none',
                            health_interval=3600, heartbeat_interval=3600,
                            health_threads=args.threads, health_timeout=args.timeout)
        executor = Executor(settings, store)
        try:
            for name in ('first (certificates made, connections opened)',
                         'second (both kept)'):
                wall, cpu, found, wrong = round_of(executor, store, made)
                print('round %s: %d clusters in %.1f s wall, %.1f CPU-s in the conductor '
                      '(%.1f ms per cluster), %d threads, timeout %.0f s'
                      % (name, len(made), wall, cpu, 1000 * cpu / len(made), args.threads,
                         args.timeout))
                print('  found: %s' % ', '.join(
                    '%s %s %d' % (k, h, n) for (k, h), n in sorted(found.items())))
                if wrong:
                    print('  NOT AS EXPECTED: %s' % dict(wrong))
        finally:
            executor.shutdown(wait=True)
    finally:
        if server is not None:
            server.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
