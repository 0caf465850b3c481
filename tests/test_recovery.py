"""No stuck states: a crash of the API (kill -9) during a job, a timeout, a restart."""

import os
import subprocess
import sys
import time
import uuid as uuidlib

import requests

from ansible_collections.openstack.magnum.plugins.module_utils.core import jobs, store as store_mod
from conftest import ApiServer, processes_holding, wait_for

LATEST = {'OpenStack-API-Version': 'container-infra latest'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp'}


def post(server, path, body):
    resp = requests.post(server.url + path, json=body, headers=LATEST, timeout=30)
    assert resp.status_code in (201, 202), resp.text
    return resp.json()


def get(server, path):
    return requests.get(server.url + path, headers=LATEST, timeout=30)


def test_kill_9_during_a_job_then_restart(db_url, project, tmp_path):
    server = ApiServer(db_url, project, tmp_path).start()
    try:
        post(server, '/v1/clustertemplates', TPL)
        seconds = str(300 + uuidlib.uuid4().int % 600)  # a sleep no other test runs
        post(server, '/v1/clusters', {'name': 'slow', 'cluster_template_id': 'tpl',
                                      'labels': {'test_sleep': seconds}})
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
        wait_for(lambda: not processes_holding(job['uuid']), timeout=120)
        wait_for(lambda: not processes_holding('sleep ' + seconds), timeout=60)
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


def test_secrets_a_crash_left_are_removed_when_a_process_starts(sqlite_url, project, tmp_path):
    """The store's URL (its password), a cluster's clouds.yaml and cached authentication
    that runs of a killed API left (its jobs' and its health rounds' private directories)
    are removed when an API starts; a run another live process holds, and one just
    written (another process's run about to start), keep theirs."""
    runner = tmp_path / 'jobs'
    old = time.time() - 3600

    def run_dir(*parts, files=('store-url',), mtime=old):
        directory = runner.joinpath(*parts)
        directory.mkdir(parents=True)
        for name in files:
            (directory / name).write_text('postgresql://magnum:secret@db/magnum')
            os.utime(directory / name, (mtime, mtime))
        return directory
    crashed_job = run_dir(str(uuidlib.uuid4()), files=('store-url', 'clouds.yaml',
                                                       'auth-cache.json', 'secure.yaml'))
    crashed_health = run_dir('health', str(uuidlib.uuid4()))
    held = run_dir(str(uuidlib.uuid4()))
    fresh = run_dir(str(uuidlib.uuid4()), mtime=time.time())
    holder = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)',
                               'ansible-playbook', '--private-data-dir', str(held)])
    try:
        server = ApiServer(sqlite_url, project, tmp_path).start()
        try:
            assert sorted(os.listdir(crashed_job)) == []
            assert os.listdir(crashed_health) == []
            assert os.listdir(held) == ['store-url'] and os.listdir(fresh) == ['store-url']
            assert 'removed the secrets left in %s' % crashed_job in server.log.read_text()
        finally:
            server.stop()
    finally:
        holder.kill()
        holder.wait()
