#!/usr/bin/env python3
"""Benchmark (not a test): Keystone logins and time of a job's OpenStack module runs,
each module a process of its own, without and with the per-job auth cache the API gives
its jobs (api/auth_cache.py).

Prints, for a playbook of N OpenStack modules (info modules of the kinds a cluster
operation runs): logins to Keystone and seconds, without and with the cache, and the
ratios. Needs a cloud: MAGNUM_TEST_CLOUDS_YAML and MAGNUM_TEST_CLOUD (the lab's, as
.ci/run sets them) or --clouds-yaml / --cloud. Run from the checkout, with the project
installed (`pip install -e .`):

    python3 benchmarks/openstack_auth.py [--modules N] [--runs R]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))
sys.path.insert(0, str(TOP / 'tests'))
from api import auth_cache  # noqa: E402
from standins.keystone_counter import counted_clouds_yaml  # noqa: E402

MODULES = ('networks_info', 'image_info', 'compute_flavor_info', 'server_info',
           'subnets_info', 'security_group_info', 'routers_info', 'keypair_info')


def playbook(path, cloud, count):
    tasks = [{'name': 'module %d' % i, 'openstack.cloud.%s' % MODULES[i % len(MODULES)]:
              {'cloud': cloud}} for i in range(count)]
    path.write_text(yaml.safe_dump([{'name': 'OpenStack modules', 'hosts': 'localhost',
                                     'gather_facts': False, 'tasks': tasks}]))


def run(book, clouds_yaml, proxy, work, cached):
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(clouds_yaml),
               ANSIBLE_CONFIG=str(TOP / 'ansible.cfg'),
               PATH='%s:%s' % (Path(sys.executable).parent, os.environ['PATH']))
    env.pop('OS_CLOUD', None)
    if cached:
        env.update(auth_cache.job_env(work))
    before, start = proxy.logins, time.monotonic()
    done = subprocess.run([str(Path(sys.executable).parent / 'ansible-playbook'), str(book)],
                          cwd=str(TOP), env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    auth_cache.forget(work)
    if done.returncode != 0:
        sys.exit('the playbook failed:\n' + done.stdout[-3000:])
    return proxy.logins - before, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clouds-yaml', default=os.environ.get('MAGNUM_TEST_CLOUDS_YAML'))
    parser.add_argument('--cloud', default=os.environ.get('MAGNUM_TEST_CLOUD'))
    parser.add_argument('--modules', type=int, default=12)
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args()
    if not (args.clouds_yaml and args.cloud):
        sys.exit('needs a cloud: set MAGNUM_TEST_CLOUDS_YAML and MAGNUM_TEST_CLOUD '
                 '(or --clouds-yaml, --cloud)')
    if not auth_cache.HAS_KEYRING:
        sys.exit('needs the keyring package (a dependency of the project)')
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        proxy = counted_clouds_yaml(args.clouds_yaml, args.cloud, work / 'clouds.yaml')
        book = work / 'modules.yml'
        playbook(book, args.cloud, args.modules)
        results = {False: [], True: []}
        try:
            for _ in range(args.runs):          # alternate, so both see the same cloud
                for cached in (False, True):
                    results[cached].append(run(book, work / 'clouds.yaml', proxy, work,
                                               cached))
        finally:
            proxy.stop()
    plain_logins, cached_logins = (statistics.median(r[0] for r in results[c])
                                   for c in (False, True))
    plain_s, cached_s = (statistics.median(r[1] for r in results[c]) for c in (False, True))
    print('%d OpenStack modules per run, median of %d runs' % (args.modules, args.runs))
    print('  without the auth cache: %4d logins  %6.1f s' % (plain_logins, plain_s))
    print('  with the auth cache:    %4d logins  %6.1f s' % (cached_logins, cached_s))
    print('  logins ratio %.2f, time ratio %.2f (with / without)'
          % (cached_logins / max(plain_logins, 1), cached_s / plain_s))


if __name__ == '__main__':
    main()
