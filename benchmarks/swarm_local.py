#!/usr/bin/env python3
"""Benchmark (not a test): Swarm clusters on local container nodes, through the API.

Prints, in seconds:
  - the create time of a 1 manager + 2 worker cluster, and the CPU-seconds its job took
    (user + system of the API's job processes: ansible-runner, ansible-playbook, modules);
  - the time to add 1 worker to a 2-worker cluster and to a 6-worker cluster,
    and their ratio (how much a resize's cost grows with the cluster's size).

Needs a running Docker engine and debootstrap (as ./quickstart.sh sets up) and the
project installed (`pip install -e .`). Run from the checkout:

    python3 benchmarks/swarm_local.py [--runs N] [--keep]

It starts its own API on a temporary SQLite store and removes its clusters at the end.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

TOP = Path(__file__).resolve().parent.parent
HEADERS = {'OpenStack-API-Version': 'container-infra latest'}
TICKS = os.sysconf('SC_CLK_TCK')


def children_cpu(pid):
    """User + system CPU-seconds of the process's waited-for descendants."""
    fields = Path('/proc/%d/stat' % pid).read_text().rsplit(')', 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / TICKS


TEMPLATE = {'name': 'bench', 'coe': 'swarm', 'image_id': 'debian-12',
            'external_network_id': 'public', 'keypair_id': 'default', 'flavor_id': 'm1.tiny',
            'master_flavor_id': 'm1.tiny', 'docker_storage_driver': 'overlay2'}


def start_api(workdir, provider='docker', workers=2, env=None, args=()):
    """An API of its own on a SQLite store in ``workdir`` (no health rounds), with
    ``provider``, ``workers``, more command-line ``args`` and ``env`` added to this
    environment; returns its process
    and its /v1 URL once it answers (the other benchmarks start theirs here too)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    env = dict(os.environ, XDG_DATA_HOME=str(workdir / 'data'), **(env or {}))
    binary = Path(sys.executable).parent / 'magnum-ansible-api'
    proc = subprocess.Popen(
        [str(binary), '--port', str(port), '--db', 'sqlite:///%s' % (workdir / 'b.sqlite'),
         '--project-dir', str(TOP), '--runner-dir', str(workdir / 'jobs'),
         '--provider', provider, '--health-interval', '0', '--workers', str(workers)]
        + list(args),
        stdout=open(workdir / 'api.log', 'ab'), stderr=subprocess.STDOUT, env=env)
    url = 'http://127.0.0.1:%d/v1' % port
    for _ in range(150):
        try:
            requests.get(url, timeout=1)
            return proc, url
        except requests.ConnectionError:
            time.sleep(0.2)
    raise SystemExit('the API did not start; see %s' % (workdir / 'api.log'))


class Api:
    def __init__(self, workdir):
        self.proc, self.url = start_api(workdir)

    def call(self, method, path, **kwargs):
        resp = requests.request(method, self.url + path, headers=HEADERS, timeout=60, **kwargs)
        if resp.status_code >= 400:
            raise SystemExit('%s %s: %s %s' % (method, path, resp.status_code, resp.text))
        return resp.json() if resp.content else None

    def wait(self, name):
        while True:
            resp = requests.get(self.url + '/clusters/' + name, headers=HEADERS, timeout=60)
            if resp.status_code == 404:
                return 'GONE'
            body = resp.json()
            if 'IN_PROGRESS' not in body['status']:
                if body['status'].endswith('FAILED'):
                    raise SystemExit('%s: %s' % (body['status'], body['status_reason']))
                return body['status']
            time.sleep(1)

    def timed(self, method, path, name, **kwargs):
        start = time.monotonic()
        self.call(method, path, **kwargs)
        self.wait(name)
        return time.monotonic() - start

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def create(api, name, workers):
    return api.timed('POST', '/clusters', name, json={
        'name': name, 'cluster_template_id': 'bench', 'node_count': workers, 'master_count': 1})


def add_one(api, name, workers):
    return api.timed('PATCH', '/clusters/' + name, name, json=[
        {'op': 'replace', 'path': '/node_count', 'value': workers + 1}])


def report(title, figures, ratios):
    """Print each figure (the best of its runs, then every run) and each ratio
    (label, numerator figure, denominator figure) of the bests."""
    best = dict((k, min(v)) for k, v in figures.items())
    runs = len(next(iter(figures.values())))
    print('%s (%d run(s), best of each, seconds)' % (title, runs))
    width = max(len(key) for key in figures) + 4
    for key, value in best.items():
        print('  %-*s %7.1f   %s' % (width, key, value, ' '.join('%.1f' % v for v in figures[key])))
    for label, numerator, denominator in ratios:
        print('  ratio %s: %.2f' % (label, best[numerator] / best[denominator]))


def delete_all(api, names):
    """Delete the clusters and wait until they are gone."""
    for name in names:
        requests.delete(api.url + '/clusters/' + name, headers=HEADERS, timeout=60)
    for name in names:
        api.wait(name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=1, help='repeat each measure N times')
    parser.add_argument('--keep', action='store_true', help='keep the clusters at the end')
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-'))
    api = Api(workdir)
    names = []
    try:
        api.call('POST', '/clustertemplates', json=TEMPLATE)
        # The node image is built (or found) once, before anything is timed.
        warm = 'bench-warmup'
        names.append(warm)
        create(api, warm, 1)
        figures = {'create 1+2': [], 'create 1+2 CPU-seconds': [], 'add 1 to 2 workers': [],
                   'add 1 to 6 workers': []}
        for run in range(args.runs):
            small, big = 'bench-small-%d' % run, 'bench-big-%d' % run
            names += [small, big]
            cpu = children_cpu(api.proc.pid)
            figures['create 1+2'].append(create(api, small, 2))
            time.sleep(2)   # the job's processes are waited for once it has ended
            figures['create 1+2 CPU-seconds'].append(children_cpu(api.proc.pid) - cpu)
            figures['add 1 to 2 workers'].append(add_one(api, small, 2))
            create(api, big, 6)
            figures['add 1 to 6 workers'].append(add_one(api, big, 6))
        report('Swarm on local container nodes', figures, [
            ('add-1 (6 workers / 2 workers)', 'add 1 to 6 workers', 'add 1 to 2 workers')])
    finally:
        if not args.keep:
            delete_all(api, names)
        api.stop()


if __name__ == '__main__':
    main()
