"""kubeadm join, run again while its preflight phase fails (the kubernetes role's
kubernetes_join_command: its reads of the cluster's configuration have a 10-second
client timeout of their own), and never after any other failure."""

import os
import subprocess
from pathlib import Path

import pytest
import yaml

DEFAULTS = (Path(__file__).resolve().parents[2] / 'collections/ansible_collections/openstack/'
            'magnum/roles/kubernetes/defaults/main.yml')
PREFLIGHT = ('error execution phase preflight: unable to fetch the kubeadm-config ConfigMap: '
             'Client.Timeout exceeded while awaiting headers')


def join(tmp_path, errors, retries=2):
    """Runs the role's join command with a kubeadm that fails with ``errors`` in turn,
    then succeeds; returns the run and how often kubeadm ran."""
    command = yaml.safe_load(DEFAULTS.read_text())['kubernetes_join_command'].replace(
        '{{ kubernetes_join_retries | int }}', str(retries)).replace(
        '{{ kubernetes_join_delay | int }}', '0')
    assert '{{' not in command
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    for number, error in enumerate(errors):
        (tmp_path / ('error.%d' % number)).write_text(error)
    kubeadm = bin_dir / 'kubeadm'
    kubeadm.write_text('#!/bin/sh\nn=$(cat %(d)s/count 2>/dev/null || echo 0)\n'
                       'echo $((n + 1)) > %(d)s/count\n'
                       '[ -e %(d)s/error.$n ] || { echo joined; exit 0; }\n'
                       'cat %(d)s/error.$n >&2; exit 1\n' % {'d': tmp_path})
    kubeadm.chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (bin_dir, os.environ['PATH']),
               TMPDIR=str(tmp_path))
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
