#!/usr/bin/env python3
"""Benchmark (not a test): operations spread over magnum-ansible-conductor processes.

Two API processes (--transport-url: they run no job) and 1, 2, then 3 conductors, each a
machine of its own as far as this host can make one: its own network namespace (it
reaches RabbitMQ and PostgreSQL through its own veth pair) and its own cgroup (at most
--cpus CPUs for it and every playbook it runs, its CPU use counted there), on one
PostgreSQL database and one RabbitMQ. Each phase sends N cluster creates (50 client
threads, the two APIs in turn) on the no-op driver (the tests' fixture driver in place
of the kubernetes role, --provider none: every create a whole job - ansible-runner,
ansible-playbook, the status bookkeeping - that touches no node), measures for a window
of W seconds (or until all N ended) and prints:

  - accepted p50/p99 (ms): the API's 202, the job recorded and told to the conductors;
  - completed per minute over the window, and the ratio of 3 conductors to 1;
  - CPU-seconds per operation (the conductors' cgroups: each conductor and every
    playbook run it started);
  - how the jobs spread over the conductors.

Jobs no conductor started by the end of the window are dropped (marked canceled in one
UPDATE of their QUEUED rows: a conductor ends such a job without running it), so that a
host with few CPUs measures 1 000 concurrent operations in minutes rather than hours.

Then, with 3 conductors, N creates again, and kill -9 of one of them - with every
process of its cgroup: its machine gone - a third of the way into the window:
operations lost (accepted, then no record) and stuck (*_IN_PROGRESS with no job left to
end them) - goal 0 both - how long after the kill its running jobs failed (orphaned,
retryable) and the others started their next; and the share of 5 000 clusters' health
rounds each live conductor takes (the ring every conductor computes), before and after
the kill.

Needs root (ip netns; cgroup v1 cpu and cpuacct under /sys/fs/cgroup), PostgreSQL and
RabbitMQ on this host; run from the checkout:

    python3 benchmarks/conductors.py [--operations N] [--conductors 1,2,3] [--workers W]
        [--cpus C] [--window W] [--cold-playbooks] [--pg-url URL] [--transport-url URL]

(defaults: 1000, 1,2,3, 2, 0.5, 600; $MAGNUM_TEST_PG_URL, $MAGNUM_TEST_TRANSPORT_URL). Everything
it made (databases, namespaces, cgroups, processes, its work directory) is removed at the end.
"""

import argparse
import asyncio
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
import sqlalchemy as sa

TOP = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TOP), str(TOP / 'collections'), str(TOP / 'tests')]
from api.health_ring import Ring  # noqa: E402
from ansible_collections.openstack.magnum.plugins.module_utils.core import (  # noqa: E402
    jobs as jobs_mod, store as store_mod)
from fixture_project import make_fixture_project  # noqa: E402
from swarm_local import start_api  # noqa: E402

HEADERS = {'OpenStack-API-Version': 'container-infra latest'}
TEMPLATE = {'name': 'noop', 'coe': 'kubernetes', 'image_id': 'debian-12',
            'external_network_id': 'public', 'keypair_id': 'default'}
TICKS = os.sysconf('SC_CLK_TCK')
BIN = Path(sys.executable).parent
PER_PROJECT = 20  # Magnum's default cluster quota


def database(pg_url):
    name = 'magnum_bench_%s' % uuid.uuid4().hex[:8]
    admin = sa.create_engine(pg_url, isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.execute(sa.text('CREATE DATABASE %s' % name))

    def drop():
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE datname = :n AND pid <> pg_backend_pid()"), {'n': name})
            conn.execute(sa.text('DROP DATABASE IF EXISTS %s' % name))
    return pg_url.rsplit('/', 1)[0] + '/' + name, drop


def moved(url, host, port):
    """``url`` with its host and port replaced (the same server, seen from a namespace)."""
    parts = urlsplit(url)
    auth = parts.netloc.rsplit('@', 1)[0] + '@' if '@' in parts.netloc else ''
    return urlunsplit(parts._replace(netloc='%s%s:%d' % (auth, host, port)))


class Relay:
    """TCP relays from each namespace's host-side address to the broker and the store
    (they listen on the loopback address only, as a stock install does)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def add(self, host, port, target_port):
        async def pipe(reader, writer):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    writer.write(data)
                    await writer.drain()
            except OSError:
                pass
            finally:
                writer.close()

        async def handle(reader, writer):
            try:
                up_reader, up_writer = await asyncio.open_connection('127.0.0.1', target_port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        asyncio.run_coroutine_threadsafe(
            asyncio.start_server(handle, host, port), self.loop).result(10)


class Conductor:
    """magnum-ansible-conductor in network namespace ``mbench-<n>``."""

    def __init__(self, n, workdir, project, db_url, transport_url, workers, relay, cpus,
                 extra=()):
        self.name, self.ns = 'c%d' % n, 'mbench-%d' % n
        self.groups = machine_cgroups(self.ns, cpus)
        host, inside = '10.250.%d.1' % n, '10.250.%d.2' % n
        for cmd in (['ip', 'netns', 'add', self.ns],
                    ['ip', 'link', 'add', 'mbh%d' % n, 'type', 'veth', 'peer', 'name', 'mbn%d' % n],
                    ['ip', 'link', 'set', 'mbn%d' % n, 'netns', self.ns],
                    ['ip', 'addr', 'add', host + '/30', 'dev', 'mbh%d' % n],
                    ['ip', 'link', 'set', 'mbh%d' % n, 'up'],
                    ['ip', 'netns', 'exec', self.ns, 'ip', 'addr', 'add', inside + '/30',
                     'dev', 'mbn%d' % n],
                    ['ip', 'netns', 'exec', self.ns, 'ip', 'link', 'set', 'mbn%d' % n, 'up'],
                    ['ip', 'netns', 'exec', self.ns, 'ip', 'link', 'set', 'lo', 'up']):
            subprocess.run(cmd, check=True, capture_output=True)
        for port in (urlsplit(db_url).port or 5432, urlsplit(transport_url).port or 5672):
            relay.add(host, port, port)
        self.proc = subprocess.Popen(
            ['ip', 'netns', 'exec', self.ns, str(BIN / 'magnum-ansible-conductor'),
             '--name', self.name, '--workers', str(workers), '--provider', 'none',
             '--db', moved(db_url, host, urlsplit(db_url).port or 5432),
             '--transport-url', moved(transport_url, host, urlsplit(transport_url).port or 5672),
             '--project-dir', str(project), '--runner-dir', str(workdir / ('jobs-' + self.name)),
             '--health-interval', '0'] + list(extra),
            stdout=open(workdir / ('%s.log' % self.name), 'ab'), stderr=subprocess.STDOUT,
            env=dict(os.environ, XDG_DATA_HOME=str(workdir / 'data')),
            preexec_fn=lambda: [(group / 'cgroup.procs').write_text(str(os.getpid()))
                                for group in self.groups])

    def cpu(self):
        """CPU-seconds of the conductor and every process it started (its cgroup's; without
        one, those it waited for)."""
        if self.groups:
            return int((self.groups[1] / 'cpuacct.usage').read_text()) / 1e9
        fields = Path('/proc/%d/stat' % self.proc.pid).read_text().rsplit(')', 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / TICKS

    def lose_machine(self):
        """kill -9 of the conductor and, in its own cgroup, of every process it started
        (its machine gone); returns what was killed."""
        self.stop(kill=True)
        if not self.groups:
            return 'the conductor process'
        for _ in range(50):
            pids = (self.groups[0] / 'cgroup.procs').read_text().split()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        return 'the conductor and every process it had started (its machine gone)'

    def stop(self, kill=False):
        if self.proc.poll() is None:
            (self.proc.kill if kill else self.proc.terminate)()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def remove(self):
        self.lose_machine()
        subprocess.run(['ip', 'netns', 'delete', self.ns], capture_output=True)
        for group in self.groups:
            group.rmdir()


def machine_cgroups(name, cpus):
    """A cgroup (v1 cpu and cpuacct) for a conductor as a machine of its own: ``cpus``
    CPUs at most (CFS quota), its usage counted; none for ``cpus`` 0."""
    if not cpus:
        return []
    groups = [Path('/sys/fs/cgroup/cpu') / name, Path('/sys/fs/cgroup/cpuacct') / name]
    for group in groups:
        group.mkdir(exist_ok=True)
    (groups[0] / 'cpu.cfs_period_us').write_text('100000')
    (groups[0] / 'cpu.cfs_quota_us').write_text(str(int(cpus * 100000)))
    return groups


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def send_creates(urls, prefix, count):
    """``count`` creates at once; returns the names accepted and their latencies (s)."""
    def create(i):
        body = {'name': '%s-%d' % (prefix, i), 'cluster_template_id': TEMPLATE['name']}
        headers = dict(HEADERS, **{'X-Project-Id': '%s-p%d' % (prefix, i // PER_PROJECT),
                                   'X-Roles': 'admin,member'})
        start = time.monotonic()
        answer = requests.post(urls[i % len(urls)] + '/clusters', json=body, headers=headers,
                               timeout=120)
        return body['name'], answer.status_code, time.monotonic() - start
    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(create, range(count)))
    refused = [r for r in results if r[1] != 202]
    if refused:
        print('  refused: %d (first: %s)' % (len(refused), refused[0]))
    return [r[0] for r in results if r[1] == 202], [r[2] for r in results if r[1] == 202]


def statuses(store, prefix):
    table = store.t['clusters']
    with store.read() as conn:
        return dict(conn.execute(sa.select(table.c.name, table.c.status).where(
            table.c.name.like(prefix + '-%'))).all())


def wait_settled(store, prefix, names, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = statuses(store, prefix)
        if all(name in found and 'IN_PROGRESS' not in found[name] for name in names):
            return found
        time.sleep(1)
    return statuses(store, prefix)


def spread(store, prefix):
    """Jobs each conductor ran (not the dropped ones) of the clusters ``prefix-*``."""
    jobs, clusters = store.t['jobs'], store.t['clusters']
    services = store.t['services']
    with store.read() as conn:
        rows = conn.execute(sa.select(services.c.id, services.c.pid, sa.func.count())
                            .select_from(jobs.join(clusters, jobs.c.cluster_id == clusters.c.uuid)
                                         .join(services, jobs.c.service_id == services.c.id))
                            .where(clusters.c.name.like(prefix + '-%'),
                                   jobs.c.status != jobs_mod.CANCELED)
                            .group_by(services.c.id, services.c.pid)).all()
    return sorted(row[2] for row in rows)


def drop_queue(store, prefix):
    """Cancel the jobs of ``prefix-*`` no conductor has started (one UPDATE of QUEUED rows:
    a conductor that claims one later ends it CANCELED without running it); returns how
    many, once nothing of the prefix runs any more."""
    jobs, clusters = store.t['jobs'], store.t['clusters']
    mine = sa.select(clusters.c.uuid).where(clusters.c.name.like(prefix + '-%'))
    with store.write() as conn:
        dropped = conn.execute(jobs.update().where(
            jobs.c.status == jobs_mod.QUEUED, jobs.c.cluster_id.in_(mine)).values(
                cancel_requested=True)).rowcount
    while True:
        with store.read() as conn:
            active = conn.execute(sa.select(sa.func.count()).select_from(jobs).where(
                jobs.c.status.in_(jobs_mod.ACTIVE), jobs.c.cluster_id.in_(mine))).scalar()
        if not active:
            return dropped
        time.sleep(1)


def ended(found, names):
    return [n for n in names if found.get(n, '').endswith(('_COMPLETE', '_FAILED'))]


def phase(store, urls, conductors, prefix, count, window):
    cpu0 = sum(c.cpu() for c in conductors)
    start = time.monotonic()
    names, accepted = send_creates(urls, prefix, count)
    found = wait_settled(store, prefix, names, window - (time.monotonic() - start))
    wall = time.monotonic() - start
    cpu = sum(c.cpu() for c in conductors) - cpu0
    done = ended(found, names)
    dropped = drop_queue(store, prefix)
    print('%d conductor(s): %d accepted (50 clients at a time), p50 %.0f ms, p99 %.0f ms; '
          '%d ended in %.0f s: %.1f per minute; %.2f CPU-s per operation; jobs per conductor %s%s'
          % (len(conductors), len(names), percentile(accepted, 0.5) * 1000,
             percentile(accepted, 0.99) * 1000, len(done), wall, len(done) / wall * 60,
             cpu / max(1, len(done)), spread(store, prefix),
             '; %d not started by the end of the window, dropped' % dropped
             if dropped else ''), flush=True)
    return len(done) / wall * 60


def health_shares(store, clusters=5000):
    live = jobs_mod.Jobs(store).live_services()
    uuids = [str(uuid.uuid4()) for _ in range(clusters)]
    rings = dict((m, Ring(live, m)) for m in live)
    shares = dict((m, sum(1 for u in uuids if rings[m].is_mine(u))) for m in live)
    return shares, uuids


def kill_phase(store, urls, conductors, count, window):
    records = jobs_mod.Jobs(store)
    before, uuids = health_shares(store)
    print('health rounds of 5000 clusters over %d conductors: %s (max/min %.2f)'
          % (len(before), sorted(before.values()), max(before.values()) / min(before.values())),
          flush=True)
    result = {}
    start = time.monotonic()

    def killer():
        # a third of the way into the window, kill the conductor running most
        time.sleep(max(0, window / 3 - (time.monotonic() - start)))
        by_pid = dict((s['id'], s['pid']) for s in records.services())
        running = [j for j in store_jobs(store) if j['status'] == jobs_mod.RUNNING]
        victim = max(conductors, key=lambda c: sum(
            1 for j in running if by_pid.get(j['service_id']) == c.proc.pid))
        result['ids'] = [sid for sid, pid in by_pid.items() if pid == victim.proc.pid]
        result['at'] = time.time()
        result['killed'] = victim.lose_machine()

    thread = threading.Thread(target=killer)
    thread.start()
    names, _accepted = send_creates(urls, 'kill', count)
    found = wait_settled(store, 'kill', names, window - (time.monotonic() - start))
    thread.join()
    dropped = drop_queue(store, 'kill')
    found, by_name = statuses(store, 'kill'), uuids_by_name(store, 'kill')
    mine = set(by_name.values())
    jobs = [j for j in store_jobs(store) if j['cluster_id'] in mine]
    canceled = set(j['cluster_id'] for j in jobs if j['status'] == jobs_mod.CANCELED)
    lost = [n for n in names if n not in found]
    stuck = [n for n, u in by_name.items()
             if 'IN_PROGRESS' in found[n] and u not in canceled]
    orphaned = [j for j in jobs if j['service_id'] in result['ids']
                and j['status'] == jobs_mod.FAILED and 'orphaned' in (j['status_reason'] or '')]
    after = [stamp(j['finished_at']) - result['at'] for j in orphaned]
    next_start = [stamp(j['started_at']) - result['at'] for j in jobs
                  if j['service_id'] not in result['ids'] and j['status'] != jobs_mod.CANCELED
                  and j['started_at'] and stamp(j['started_at']) > result['at']]
    print('kill -9 of %s, 1 of 3 conductors, %.0f s into the load (%d creates): lost %d, '
          'stuck %d; its %d running job(s) failed as orphaned (retryable) %s after the kill; '
          'the other two started their next job %s after it and %d in all since; '
          '%d completed, %d failed, %d not started by the end of the window (dropped)'
          % (result['killed'], window / 3, count, len(lost), len(stuck), len(orphaned),
             '%.1f s' % max(after) if after else '-',
             '%.1f s' % min(next_start) if next_start else '-', len(next_start),
             sum(1 for s in found.values() if s.endswith('_COMPLETE')),
             sum(1 for s in found.values() if s.endswith('_FAILED')), dropped), flush=True)
    left, _ = health_shares(store)
    ring_left, ring_before = Ring(left), Ring(before)
    moved_share = sum(1 for u in uuids if ring_left.owner(u) != ring_before.owner(u))
    print('after the kill: %d live conductors take %s of the 5000 (max/min %.2f); %d '
          'clusters moved (the killed one had %d)'
          % (len(left), sorted(left.values()), max(left.values()) / min(left.values()),
             moved_share, before.get(result['ids'][0], 0) if result['ids'] else 0))


def uuids_by_name(store, prefix):
    table = store.t['clusters']
    with store.read() as conn:
        return dict(conn.execute(sa.select(table.c.name, table.c.uuid).where(
            table.c.name.like(prefix + '-%'))).all())


def stamp(text):
    return datetime.datetime.fromisoformat(text).timestamp()


def store_jobs(store):
    with store.read() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.select(store.t['jobs']))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--operations', type=int, default=1000)
    parser.add_argument('--conductors', default='1,2,3')
    parser.add_argument('--workers', type=int, default=2, help='workers per conductor')
    parser.add_argument('--cpus', type=float, default=0.5,
                        help='CPUs each conductor may use, as a machine of its own (0: no limit)')
    parser.add_argument('--window', type=int, default=600,
                        help='seconds each phase measures (jobs not started by then are dropped)')
    parser.add_argument('--cold-playbooks', action='store_true',
                        help='conductors start every run as a fresh ansible-playbook (their '
                             '--cold-playbooks) instead of forking it from their playbook server')
    parser.add_argument('--pg-url', default=os.environ.get('MAGNUM_TEST_PG_URL'))
    parser.add_argument('--transport-url', default=os.environ.get('MAGNUM_TEST_TRANSPORT_URL'))
    args = parser.parse_args()
    if not (args.pg_url and args.transport_url) or os.geteuid() != 0:
        raise SystemExit('needs root, --pg-url and --transport-url (or MAGNUM_TEST_PG_URL '
                         'and MAGNUM_TEST_TRANSPORT_URL)')
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-conductors-'))
    db_url, drop = database(args.pg_url)
    relay, apis, conductors = Relay(), [], []
    try:
        project = make_fixture_project(workdir / 'project')
        extra = ['--db', db_url, '--transport-url', args.transport_url,
                 '--project-dir', str(project)]
        for i in range(2):
            (workdir / ('api%d' % i)).mkdir()
            apis.append(start_api(workdir / ('api%d' % i), provider='none', args=extra))
        urls = [url for _proc, url in apis]
        requests.post(urls[0] + '/clustertemplates', json=dict(TEMPLATE, public=True),
                      headers=dict(HEADERS, **{'X-Roles': 'admin'}),
                      timeout=60).raise_for_status()
        store = store_mod.Store(db_url)
        rates, n = {}, 0
        for index, k in enumerate(int(x) for x in args.conductors.split(',')):
            while len(conductors) < k:
                n += 1
                conductors.append(Conductor(
                    n, workdir, project, db_url, args.transport_url, args.workers, relay,
                    args.cpus, ['--cold-playbooks'] if args.cold_playbooks else []))
            deadline = time.monotonic() + 120
            while len(jobs_mod.Jobs(store).live_services()) < k and time.monotonic() < deadline:
                time.sleep(0.5)
            rates[k] = phase(store, urls, conductors, 'p%dk%d' % (index, k), args.operations,
                             args.window)
        if 1 in rates and 3 in rates:
            print('scaling 1 -> 3 conductors: %.2fx completed per minute (%d workers each, '
                  '%s, on a host of %d CPUs)'
                  % (rates[3] / rates[1], args.workers,
                     '%.2g CPU each' % args.cpus if args.cpus else 'no CPU limit', os.cpu_count()))
        if len(conductors) == 3:
            kill_phase(store, urls, conductors, args.operations, args.window)
    finally:
        for conductor in conductors:
            conductor.remove()
        for proc, _url in apis:
            proc.terminate()
            proc.wait(30)
        relay.loop.call_soon_threadsafe(relay.loop.stop)
        drop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == '__main__':
    main()
