#!/usr/bin/env python3
"""Benchmark (not a test): one health round over several Swarm clusters on local nodes.

The API refreshes the health of every settled cluster each --health-interval, one
ansible-playbook run (playbooks/cluster_health.yml) per cluster, --health-workers of
them at once. This prints, in seconds, the time of one round over the same clusters
with 1, 2 and 4 runs at once, and the ratios to one at a time (a round that takes
longer than the interval makes every cluster's health late).

Needs a running Docker engine and debootstrap (as ./quickstart.sh sets up) and the
project installed (`pip install -e .`). Run from the checkout:

    python3 benchmarks/health_round.py [--clusters N] [--runs N] [--keep]

It starts its own API on a temporary SQLite store and removes its clusters at the end.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from swarm_local import TOP, Api, create, delete_all, report, TEMPLATE  # noqa: E402

AT_ONCE = (1, 2, 4)


def check(db_url, name):
    """One cluster's health check, as the API runs it."""
    bindir = os.path.dirname(sys.executable)
    run = subprocess.run(
        [os.path.join(bindir, 'ansible-playbook'), 'playbooks/cluster_health.yml',
         '-e', 'cluster=%s' % name], cwd=str(TOP), capture_output=True, text=True,
        env=dict(os.environ, MAGNUM_DB_URL=db_url, MAGNUM_PROVIDER='docker',
                 ANSIBLE_CONFIG=str(TOP / 'ansible.cfg'),
                 PATH=os.pathsep.join([bindir, os.environ.get('PATH', '')])))
    if run.returncode != 0:
        raise SystemExit('health check of %s failed:\n%s' % (name, run.stdout[-2000:]))


def health_round(db_url, names, at_once):
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        list(pool.map(lambda name: check(db_url, name), names))
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clusters', type=int, default=4, help='clusters in the round')
    parser.add_argument('--runs', type=int, default=1, help='repeat each measure N times')
    parser.add_argument('--keep', action='store_true', help='keep the clusters at the end')
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-'))
    api = Api(workdir)
    db_url = 'sqlite:///%s' % (workdir / 'b.sqlite')
    names = ['bench-health-%d' % i for i in range(args.clusters)]
    try:
        api.call('POST', '/clustertemplates', json=TEMPLATE)
        for name in names:
            create(api, name, 1)
        health_round(db_url, names[:1], 1)          # warm: caches, first connections
        figures = dict(('%d at once' % n, []) for n in AT_ONCE)
        for _ in range(args.runs):
            for n in AT_ONCE:
                figures['%d at once' % n].append(health_round(db_url, names, n))
        report('Health round over %d Swarm clusters (1 manager + 1 worker each), %d cores'
               % (len(names), os.cpu_count()), figures,
               [('%d at once / 1 at once' % n, '%d at once' % n, '1 at once')
                for n in AT_ONCE[1:]])
    finally:
        if not args.keep:
            delete_all(api, names)
        api.stop()


if __name__ == '__main__':
    main()
