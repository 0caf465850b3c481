#!/usr/bin/env python3
"""Benchmark (not a test): what Magnum's checks against the cloud cost a request.

Starts its own API (``--provider openstack`` on the lab cloud, noauth, SQLite) and
times N template creates (each checked: image and its os_distro, flavors, keypair,
external network) and N template updates (a flavor changed: checked again), then a
cluster create refused for room (quota checked). Prints p50 / p90 / mean in seconds.
With ``--keystone`` the API validates tokens with the lab's Keystone (``--auth
keystone``) and every request carries the lab admin's token, so the checks run as that
caller (one login per token, kept for the token's life).

Needs ../shared/openstack-lab up; its clouds.yaml is MAGNUM_TEST_CLOUDS_YAML or the lab's
default place. Run from the checkout:

    python3 benchmarks/cloud_checks.py [--requests N] [--keystone]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

from swarm_local import start_api

TOP = Path(__file__).resolve().parent.parent
HEADERS = {'OpenStack-API-Version': 'container-infra latest'}
LAB = Path(os.environ.get('XDG_STATE_HOME') or Path.home() / '.local/state') / 'openstack-lab'


def timed(method, url, expect, headers=HEADERS, **kwargs):
    start = time.monotonic()
    resp = requests.request(method, url, headers=headers, timeout=120, **kwargs)
    elapsed = time.monotonic() - start
    if resp.status_code != expect:
        raise SystemExit('%s %s: %s %s' % (method, url, resp.status_code, resp.text[:300]))
    return elapsed


def report(name, values):
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    print('  %-34s p50 %6.3f   p90 %6.3f   mean %6.3f' % (
        name, statistics.median(values), p90, statistics.mean(values)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--requests', type=int, default=10, help='requests of each kind')
    parser.add_argument('--image', default='tiny-debian', help='an image with os_distro')
    parser.add_argument('--keystone', action='store_true',
                        help="behind the lab's Keystone, requests with a token")
    args = parser.parse_args()
    clouds_yaml = os.environ.get('MAGNUM_TEST_CLOUDS_YAML') or str(LAB / 'clouds/clouds.yaml')
    cloud = os.environ.get('MAGNUM_TEST_CLOUD') or 'lab'
    sys.path.insert(0, str(TOP / 'tests'))
    from conftest import debian_image, lab_connect
    conn = lab_connect(clouds_yaml, cloud)
    if conn.image.find_image(args.image, ignore_missing=True) is None:
        debian_image(conn, args.image)
    if conn.compute.find_keypair('bench') is None:
        conn.compute.create_keypair(name='bench')
    workdir = Path(tempfile.mkdtemp(prefix='magnum-bench-'))
    headers, api_args = HEADERS, ()
    if args.keystone:
        headers = dict(HEADERS, **{'X-Auth-Token': conn.session.get_token()})
        api_args = ('--auth', 'keystone', '--keystone-cloud', cloud)
    proc, url = start_api(workdir, provider='openstack', args=api_args, env={
        'OS_CLIENT_CONFIG_FILE': clouds_yaml, 'MAGNUM_CLOUD': cloud})
    base = {'coe': 'kubernetes', 'image_id': args.image, 'keypair_id': 'bench',
            'external_network_id': 'public', 'flavor_id': 'm1.tiny',
            'master_flavor_id': 'm1.tiny'}
    figures = {'template create': [], 'template update': [], 'cluster create (no room)': []}
    try:
        for i in range(args.requests):
            figures['template create'].append(timed(
                'POST', url + '/clustertemplates', 201, headers,
                json=dict(base, name='b%d' % i)))
        for i in range(args.requests):
            figures['template update'].append(timed(
                'PATCH', url + '/clustertemplates/b%d' % i, 200, headers, json=[
                    {'op': 'replace', 'path': '/flavor_id', 'value': 'm1.small'}]))
        for i in range(args.requests):
            figures['cluster create (no room)'].append(timed(
                'POST', url + '/clusters', 400, headers, json={
                    'name': 'c%d' % i, 'cluster_template_id': 'b0', 'node_count': 1000}))
    finally:
        proc.terminate()
        proc.wait(10)
    print('Cloud checks at request time (%d requests each, lab cloud%s, seconds)' % (
        args.requests, ', behind Keystone' if args.keystone else ''))
    for name, values in figures.items():
        report(name, values)


if __name__ == '__main__':
    main()
