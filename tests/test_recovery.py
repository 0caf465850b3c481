"""No stuck states: a crash of the API (kill -9) during a job, a timeout, a restart."""

import os

import pytest
import requests

from ansible_collections.openstack.magnum.plugins.module_utils.core import jobs, store as store_mod
from conftest import ApiServer, wait_for

LATEST = {'OpenStack-API-Version': 'container-infra latest'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp'}


def _processes_of(job_uuid):
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as handle:
                if job_uuid.encode() in handle.read():
                    found.append(pid)
        except OSError:
            continue
    return found


def post(server, path, body):
    resp = requests.post(server.url + path, json=body, headers=LATEST, timeout=30)
    assert resp.status_code in (201, 202), resp.text
    return resp.json()


def get(server, path):
    return requests.get(server.url + path, headers=LATEST, timeout=30)


@pytest.mark.slow
def test_kill_9_during_a_job_then_restart(db_url, project, tmp_path):
    server = ApiServer(db_url, project, tmp_path).start()
    try:
        post(server, '/v1/clustertemplates', TPL)
        post(server, '/v1/clusters', {'name': 'slow', 'cluster_template_id': 'tpl',
                                      'labels': {'test_sleep': '120'}})
        wait_for(lambda: (get(server, '/v1/clusters/slow/jobs').json()['jobs'][0][
            'current_task'] or '').startswith('Take time when the cluster asks for it'))
        server.kill9()
        # the store still says in progress: nobody has noticed the crash yet
        assert store_mod.Store(db_url).get('cluster', 'slow')['status'] == 'CREATE_IN_PROGRESS'
        server.start()
        cluster = get(server, '/v1/clusters/slow').json()
        assert cluster['status'] == 'CREATE_FAILED', cluster
        assert 'orphaned' in cluster['status_reason']
        job = get(server, '/v1/clusters/slow/jobs').json()['jobs'][0]
        assert job['status'] == 'FAILED' and 'orphaned' in job['status_reason']
        # the crashed service's playbook run was stopped, not left to finish behind it
        wait_for(lambda: not _processes_of(job['uuid']), timeout=120)
        store = store_mod.Store(db_url)
        assert not [c for c in store.find('cluster') if 'IN_PROGRESS' in c['status']]
        assert not [j for c in store.find('cluster')
                    for j in jobs.Jobs(store).for_cluster(c['uuid'], active_only=True)]
        services = get(server, '/v1/mservices').json()['mservices']
        assert [s['state'] for s in services] == ['down', 'up']
        # a failed create can be retried by deleting it, through the restarted service
        assert requests.delete(server.url + '/v1/clusters/slow', headers=LATEST,
                               timeout=30).status_code == 204
        wait_for(lambda: get(server, '/v1/clusters/slow').status_code == 404)
    finally:
        server.stop()


@pytest.mark.slow
def test_create_timeout_ends_create_failed(api_server):
    post(api_server, '/v1/clustertemplates', TPL)
    post(api_server, '/v1/clusters', {'name': 'late', 'cluster_template_id': 'tpl',
                                      'create_timeout': 1, 'labels': {'test_sleep': '300'}})
    cluster = wait_for(lambda: (lambda c: c if c['status'] != 'CREATE_IN_PROGRESS' else None)(
        get(api_server, '/v1/clusters/late').json()), timeout=240)
    assert cluster['status'] == 'CREATE_FAILED'
    assert cluster['status_reason'] == \
        'Timed out after 1 minutes (create_timeout) during create.'
    requests.delete(api_server.url + '/v1/clusters/late', headers=LATEST, timeout=30)
    wait_for(lambda: get(api_server, '/v1/clusters/late').status_code == 404, timeout=60)
