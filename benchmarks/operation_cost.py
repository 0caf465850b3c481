#!/usr/bin/env python3
"""Benchmark (not a test): the controller's CPU-seconds for one operation that does
nothing on nodes, next to the floor of any playbook, in one run.

Runs, --runs times each, one after another from ``ansible-playbook`` (the tests' fixture
driver in a copy of the checkout, ``MAGNUM_PROVIDER=none``, a SQLite store of its own):

  - the floor: a one-task play (``ansible.builtin.debug``) with the same configuration;
  - a no-op create, resize and delete of one cluster (playbooks/cluster_*.yml: every
    bookkeeping step of an operation, the fixture driver doing nothing on nodes);
  - the same three through a conductor's playbook server (api/playbook_server.py: the
    launcher ansible-runner is given, each run forked from a process that imported
    Ansible and the collection once), as a conductor runs them.

CPU-seconds are the user + system time of the ansible-playbook process tree (its
waited-for children); through the server, the launcher's and the server's (its own and
its runs', which it waits for). Prints min / median / max of each, and each median over
the floor's (the fresh one-task play).

    python3 benchmarks/operation_cost.py [--runs 5]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / 'tests'))
from fixture_project import make_fixture_project  # noqa: E402
sys.path.insert(0, str(TOP))
from api.playbook_server import PlaybookServer  # noqa: E402

BIN = Path(sys.executable).parent
TEMPLATE = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
            'external_network_id': 'public', 'keypair_id': 'kp'}


def cpu_of(argv, cwd, env):
    """CPU-seconds of ``argv``'s process tree; fails loudly when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit('%s failed:\n%s' % (' '.join(argv), run.stdout[-3000:]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def server_cpu(server):
    """CPU-seconds of the server process and of the runs it waited for."""
    with open('/proc/%d/stat' % server.process.pid) as handle:
        fields = handle.read().rsplit(')', 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf('SC_CLK_TCK')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=5, help='runs of each (default 5)')
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix='magnum-bench-'))
    project = make_fixture_project(work / 'project')
    env = dict(os.environ, MAGNUM_DB_URL='sqlite:///%s' % (work / 'b.sqlite'),
               MAGNUM_PROVIDER='none', ANSIBLE_CONFIG=str(project / 'ansible.cfg'),
               XDG_DATA_HOME=str(work / 'data'), HOME=str(work),
               PATH='%s:%s' % (BIN, os.environ['PATH']))
    playbook = [str(BIN / 'ansible-playbook')]
    floor_play = work / 'floor.yml'
    floor_play.write_text(json.dumps([{'hosts': 'localhost', 'gather_facts': False,
                                       'tasks': [{'ansible.builtin.debug': {'msg': 'x'}}]}]))
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps(TEMPLATE)], cwd=str(project), env=env, check=True,
                   capture_output=True)
    server = PlaybookServer()
    warm = [str(server.launcher)]
    try:
        cpu_of(warm + [str(floor_play)], project, env)   # the server imports at its first run
        seen = {}
        for run in range(args.runs):
            seen.setdefault('floor', []).append(cpu_of(playbook + [str(floor_play)], project, env))
            for how, binary in (('', playbook), ('warm ', warm)):
                name = 'c%d%s' % (run, how.strip())
                before = server_cpu(server)
                for operation, extravars in (
                        ('create', {'cluster': {'name': name, 'cluster_template_id': 'tpl',
                                                'node_count': 1}}),
                        ('resize', {'cluster': name, 'node_count': 2}),
                        ('delete', {'cluster': name})):
                    used = cpu_of(binary + ['playbooks/cluster_%s.yml' % operation,
                                            '-e', json.dumps(extravars)], project, env)
                    after = server_cpu(server)
                    seen.setdefault(how + operation, []).append(used + after - before)
                    before = after
    finally:
        server.stop()
    floor = statistics.median(seen['floor'])
    print('Controller CPU-seconds per run (%d runs each; fixture driver, provider none)'
          % args.runs)
    print('  %-22s %6s %6s %6s  %s' % ('', 'min', 'median', 'max', 'median / floor'))
    for what in ('floor', 'create', 'resize', 'delete', 'warm create', 'warm resize',
                 'warm delete'):
        values = seen[what]
        print('  %-22s %6.2f %6.2f %6.2f  %5.2fx' % (
            'one-task play' if what == 'floor' else 'no-op ' + what.replace(
                'warm ', '') + (' (server)' if what.startswith('warm') else ''), min(values),
            statistics.median(values), max(values), statistics.median(values) / floor))


if __name__ == '__main__':
    main()
