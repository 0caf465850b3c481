#!/usr/bin/env python3
"""Benchmark (not a test): how fast the API answers while its jobs fill the machine.

For each --job-nice given (default 0, then 10), starts an API of its own (``--provider
none``, SQLite, ``--workers`` job workers, no health rounds), keeps ``--workers`` no-op
creates running (job_overhead.py's: each a whole ansible-playbook run that ends at the
driver's first step) for ``--seconds``, and meanwhile asks ``GET /v1/clusters`` one
request after another. Prints, per niceness: the requests' p50, p99 and slowest reply, the
jobs that ended, and the host's load average at the end.

    python3 benchmarks/api_latency.py [--workers 10] [--seconds 60] [--nice 0,10]
"""

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import requests

from job_overhead import HEADERS, TEMPLATE
from swarm_local import start_api


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def phase(nice, workers, seconds):
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-'))
    proc, url = start_api(workdir, provider='none', workers=workers,
                          args=['--job-nice', str(nice)])
    replies, stop = [], threading.Event()

    def ask():
        while not stop.is_set():
            start = time.monotonic()
            requests.get(url + '/clusters', headers=HEADERS, timeout=600).raise_for_status()
            replies.append(time.monotonic() - start)
            time.sleep(0.05)
    try:
        requests.post(url + '/clustertemplates', json=TEMPLATE, headers=HEADERS,
                      timeout=60).raise_for_status()
        # past Magnum's default quota of 20 clusters a project
        requests.post(url + '/quotas', json={'project_id': 'default', 'resource': 'Cluster',
                                             'hard_limit': 100000},
                      headers=HEADERS, timeout=60).raise_for_status()
        asker = threading.Thread(target=ask)
        made, ended, deadline = 0, 0, time.monotonic() + seconds
        asker.start()
        while time.monotonic() < deadline:
            listed = requests.get(url + '/clusters', headers=HEADERS, timeout=600).json()
            running = sum('IN_PROGRESS' in c['status'] for c in listed['clusters'])
            ended = len(listed['clusters']) - running
            for _ in range(workers - running):
                requests.post(url + '/clusters', headers=HEADERS, timeout=600, json={
                    'name': 'noop-%d' % made, 'cluster_template_id': 'noop',
                    'node_count': 1}).raise_for_status()
                made += 1
            time.sleep(1)
        stop.set()
        asker.join()
        load = os.getloadavg()[0]
    finally:
        proc.terminate()
        proc.wait(30)
    return replies, ended, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workers', type=int, default=10, help='jobs kept running (default 10)')
    parser.add_argument('--seconds', type=float, default=60.0, help='each phase (default 60)')
    parser.add_argument('--nice', default='0,10', help='the --job-nice of each phase')
    args = parser.parse_args()
    print('GET /v1/clusters beside %d running jobs, %d s a phase, %d CPUs'
          % (args.workers, args.seconds, os.cpu_count()))
    print('  job nice  requests   p50 s   p99 s   max s   jobs ended   load')
    for nice in [int(n) for n in args.nice.split(',')]:
        replies, ended, load = phase(nice, args.workers, args.seconds)
        print('  %8d  %8d  %6.3f  %6.3f  %6.3f  %11d  %5.1f' % (
            nice, len(replies), percentile(replies, 0.5), percentile(replies, 0.99),
            max(replies), ended, load))


if __name__ == '__main__':
    main()
