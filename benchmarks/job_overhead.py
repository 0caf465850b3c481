#!/usr/bin/env python3
"""Benchmark (not a test): what one cluster job costs when it does nothing.

Starts its own API (``--provider none``, SQLite, ``--workers 2``), makes a template
whose driver is not installed here (coe mesos: the job refuses at the driver check, after
the whole status bookkeeping), creates N clusters at once and waits until every one has
its final status. Prints, per job:

  - CPU-seconds (user + system of the API's job processes: ansible-runner,
    ansible-playbook and the modules it runs), read from the API's waited-for children;
  - wall seconds (the N jobs' total time divided by N, two at a time);
  - the module runs (tasks ok or failed on localhost) per job, from the job's events.

    python3 benchmarks/job_overhead.py [--jobs N]
"""

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import requests

from swarm_local import children_cpu, start_api

HEADERS = {'OpenStack-API-Version': 'container-infra latest'}
TEMPLATE = {'name': 'noop', 'coe': 'mesos', 'image_id': 'ubuntu-mesos',
            'external_network_id': 'public', 'keypair_id': 'default'}


def final(url, name):
    body = requests.get(url + '/clusters/' + name, headers=HEADERS, timeout=60).json()
    return body if 'IN_PROGRESS' not in body['status'] else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--jobs', type=int, default=20, help='clusters to create (default 20)')
    parser.add_argument('--workers', type=int, default=2, help="the API's job workers")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-'))
    proc, url = start_api(workdir, provider='none', workers=args.workers)
    try:
        resp = requests.post(url + '/clustertemplates', json=TEMPLATE, headers=HEADERS, timeout=60)
        resp.raise_for_status()
        cpu0, start = children_cpu(proc.pid), time.monotonic()
        names = ['noop-%d' % i for i in range(args.jobs)]
        for name in names:
            requests.post(url + '/clusters', headers=HEADERS, timeout=60, json={
                'name': name, 'cluster_template_id': 'noop', 'node_count': 1}).raise_for_status()
        pending, ended = set(names), {}
        while pending:
            for name in sorted(pending):
                body = final(url, name)
                if body:
                    ended[name] = body
                    pending.discard(name)
            time.sleep(0.5)
        wall = time.monotonic() - start
        # The children's CPU is counted once they are waited for: after the last job.
        time.sleep(1)
        cpu = children_cpu(proc.pid) - cpu0
        reasons = {b['status_reason'] for b in ended.values()}
        with sqlite3.connect(workdir / 'b.sqlite') as db:
            tasks = [row[0] for row in db.execute('SELECT tasks_done FROM jobs')]
    finally:
        proc.terminate()
        proc.wait(10)
    print('No-op cluster jobs (%d creates, --provider none, %d workers)'
          % (args.jobs, args.workers))
    print('  CPU-seconds per job   %6.2f' % (cpu / args.jobs))
    print('  wall seconds per job  %6.2f   (all %d ended in %.1f s)'
          % (wall / args.jobs, args.jobs, wall))
    if tasks:
        print('  task results per job  %6.1f' % (sum(tasks) / len(tasks)))
    print('  final status reason:  %s' % '; '.join(sorted(reasons))[:300])


if __name__ == '__main__':
    main()
