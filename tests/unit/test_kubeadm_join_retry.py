"""kubeadm join, run again while its preflight phase fails (the kubernetes role's
kubernetes_join_command: its reads of the cluster's configuration have a 10-second
client timeout of their own); a worker's join that timed out once the kubelet started,
undone with kubeadm reset and run again; never after any other failure."""

import os
import subprocess
from pathlib import Path

import pytest
import yaml

DEFAULTS = (Path(__file__).resolve().parents[2] / 'collections/ansible_collections/openstack/'
            'magnum/roles/kubernetes/defaults/main.yml')
PREFLIGHT = ('error execution phase preflight: unable to fetch the kubeadm-config ConfigMap: '
             'Client.Timeout exceeded while awaiting headers')


KUBELET_START = ('error: error execution phase kubelet-start: cannot get Node "k-node-0": Get '
                 '"https://10.113.0.150:6443/api/v1/nodes/k-node-0?timeout=10s": context '
                 'deadline exceeded')
TLS_BOOTSTRAP = ('error: error execution phase kubelet-wait-bootstrap: failed while waiting '
                 'for TLS bootstrap: context deadline exceeded')


def join(tmp_path, errors, retries=2, worker=False):
    """Runs the role's join command (a worker's, with ``worker``) with a kubeadm that fails
    with ``errors`` in turn, then succeeds; returns the run and how often kubeadm joined
    (its resets are counted in tmp_path/resets)."""
    command = yaml.safe_load(DEFAULTS.read_text())['kubernetes_join_command'].replace(
        '{{ kubernetes_join_retries | int }}', str(retries)).replace(
        '{{ kubernetes_join_delay | int }}', '0')
    assert '{{' not in command
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    for number, error in enumerate(errors):
        (tmp_path / ('error.%d' % number)).write_text(error)
    kubeadm = bin_dir / 'kubeadm'
    kubeadm.write_text('#!/bin/sh\n[ "$1" = reset ] && { echo "$*" >> %(d)s/resets; exit 0; }\n'
                       'n=$(cat %(d)s/count 2>/dev/null || echo 0)\n'
                       'echo $((n + 1)) > %(d)s/count\n'
                       '[ -e %(d)s/error.$n ] || { echo joined; exit 0; }\n'
                       'cat %(d)s/error.$n >&2; exit 1\n' % {'d': tmp_path})
    kubeadm.chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (bin_dir, os.environ['PATH']),
               TMPDIR=str(tmp_path), MAGNUM_JOIN_RESET='1' if worker else '')
    run = subprocess.run(['bash', '-c', command], env=env, capture_output=True, text=True,
                         timeout=60)
    return run, int((tmp_path / 'count').read_text())


def test_a_join_whose_preflight_timed_out_is_run_again_until_it_joins(tmp_path):
    run, count = join(tmp_path, [PREFLIGHT, PREFLIGHT])
    assert (run.returncode, count, run.stdout) == (0, 3, 'joined\n')


@pytest.mark.parametrize('errors, count', [
    (['error execution phase kubelet-start: timed out waiting for the condition'], 1),
    ([PREFLIGHT] * 3, 3)], ids=['another phase: at once', 'retries spent'])
def test_a_join_that_fails_otherwise_or_too_often_fails_with_kubeadms_error(
        tmp_path, errors, count):
    run, ran = join(tmp_path, errors)
    assert (run.returncode, ran) == (1, count)
    assert run.stderr == errors[-1]


def resets(tmp_path):
    done = tmp_path / 'resets'
    return done.read_text().splitlines() if done.exists() else []


@pytest.mark.parametrize('error', [KUBELET_START, TLS_BOOTSTRAP])
def test_a_workers_join_that_timed_out_later_is_reset_and_run_again(tmp_path, error):
    run, count = join(tmp_path, [error, PREFLIGHT], worker=True)
    assert (run.returncode, count, run.stdout) == (0, 3, 'joined\n')
    assert resets(tmp_path) == ['reset -f']


def test_a_masters_join_that_timed_out_later_is_never_reset(tmp_path):
    run, count = join(tmp_path, [KUBELET_START])
    assert (run.returncode, count, run.stderr) == (1, 1, KUBELET_START)
    assert resets(tmp_path) == []


def test_a_workers_join_failing_later_otherwise_is_not_run_again(tmp_path):
    error = 'error execution phase kubelet-start: a Node with name "k-node-0" already exists'
    run, count = join(tmp_path, [error], worker=True)
    assert (run.returncode, count, run.stderr, resets(tmp_path)) == (1, 1, error, [])
