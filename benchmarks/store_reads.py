#!/usr/bin/env python3
"""Benchmark (not a test): the API's reads as the store grows.

Fills a store with N clusters (each with its two default node groups) spread over ten
projects, then times, through the API (Flask's test client, no network), a caller of one
project listing 1 000 of its clusters (`GET /v1/clusters?limit=1000`, and `/detail`) and
showing one cluster by name and by uuid. Prints p50 / p90 in milliseconds for
N = 100, 1 000 and 10 000 (or --sizes), and the ratio of show at the largest size to the
smallest (flat: about 1).

    python3 benchmarks/store_reads.py [--sizes 100,1000,10000] [--repeat 30] [--db URL]

SQLite in a temporary directory by default; --db postgresql://... for a server (each size
in a fresh database of that server is the caller's job: give an empty one).
"""

import argparse
import statistics
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))

from api.app import create_app  # noqa: E402
from api.core import lifecycle, model  # noqa: E402
from api.settings import Settings  # noqa: E402

LATEST = {'OpenStack-API-Version': 'container-infra latest', 'X-Roles': 'member'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp',
       'labels': {'kube_tag': 'v1.30.1', 'flannel_backend': 'vxlan'}}
PROJECTS = 10


def fill(store, count):
    """``count`` clusters over PROJECTS projects, in one transaction per 500."""
    templates = {}
    for p in range(PROJECTS):
        scope = lifecycle.Scope(project_id='p%d' % p, user_id='u')
        templates[p] = lifecycle.create_template(store, dict(TPL, name='tpl-p%d' % p), scope)
    cluster, groups = model.build_cluster({'name': 'x', 'cluster_template_id': 'tpl',
                                           'node_count': 2}, templates[0], project_id='p0')
    done = 0
    while done < count:
        with store.write() as conn:
            for i in range(done, min(count, done + 500)):
                project = i % PROJECTS
                record = dict(cluster, uuid=str(uuidlib.uuid4()), name='c%d' % i,
                              project_id='p%d' % project,
                              cluster_template_id=templates[project]['uuid'],
                              status='CREATE_COMPLETE', driver='k8s_kubeadm')
                store.create('cluster', record, conn=conn)
                for group in groups:
                    store.create('nodegroup', dict(group, uuid=str(uuidlib.uuid4()),
                                                   cluster_id=record['uuid'],
                                                   project_id=record['project_id']),
                                 conn=conn)
        done = min(count, done + 500)


def timed(client, path, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        resp = client.get(path, headers=dict(LATEST, **{'X-Project-Id': 'p3'}))
        times.append((time.perf_counter() - start) * 1000)
        assert resp.status_code == 200, resp.get_data(as_text=True)[:300]
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--sizes', default='100,1000,10000')
    parser.add_argument('--repeat', type=int, default=30)
    parser.add_argument('--db', default=None)
    args = parser.parse_args()
    results = {}
    for size in [int(s) for s in args.sizes.split(',')]:
        with tempfile.TemporaryDirectory() as tmp:
            url = args.db or 'sqlite:///%s/bench.sqlite' % tmp
            app = create_app(Settings(db_url=url, start_executor=False,
                                      runner_dir=Path(tmp) / 'jobs'))
            store = app.extensions['magnum_store']
            started = time.perf_counter()
            fill(store, size)
            filled = time.perf_counter() - started
            client = app.test_client()
            name = 'c%d' % (size - 7 if size > 10 else 3)  # one of p3's
            uuid = client.get('/v1/clusters/%s' % name,
                              headers=dict(LATEST, **{'X-Project-Id': 'p3'})).json['uuid']
            row = {
                'list 1000': timed(client, '/v1/clusters?limit=1000', args.repeat),
                'detail 1000': timed(client, '/v1/clusters/detail?limit=1000', args.repeat),
                'show by name': timed(client, '/v1/clusters/%s' % name, args.repeat),
                'show by uuid': timed(client, '/v1/clusters/%s' % uuid, args.repeat),
            }
            results[size] = row
            print('%6d clusters (filled in %.1f s; the caller\'s project holds %d):'
                  % (size, filled, size // PROJECTS))
            for what, (p50, p90) in row.items():
                print('    %-14s p50 %7.2f ms   p90 %7.2f ms' % (what, p50, p90))
    sizes = sorted(results)
    if len(sizes) > 1:
        for what in ('show by name', 'show by uuid'):
            print('%s: p50 at %d / at %d = %.2f' % (
                what, sizes[-1], sizes[0], results[sizes[-1]][what][0]
                / results[sizes[0]][what][0]))


if __name__ == '__main__':
    main()
