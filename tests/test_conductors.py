"""An API and two magnum-ansible-conductor processes on real RabbitMQ and PostgreSQL:
operations spread over both, a word told twice (or to both) runs nothing twice, a word
lost loses no job, and a conductor killed mid-job leaves nothing stuck, its queued work
done by the other."""

import os
import subprocess

import pytest
import requests

from ansible_collections.openstack.magnum.plugins.module_utils.core import jobs, store as store_mod
from conftest import BIN, ApiServer, api_settled, free_port, store_url, wait_for

TRANSPORT_URL = os.environ.get('MAGNUM_TEST_TRANSPORT_URL')
LATEST = {'OpenStack-API-Version': 'container-infra latest'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp'}

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(
    not TRANSPORT_URL, reason='conductors need a RabbitMQ: MAGNUM_TEST_TRANSPORT_URL '
                              '(.ci/run sets it)')]


class Conductor:
    def __init__(self, name, db_url, project_dir, tmp_path):
        self.name, self.runner_dir = name, tmp_path / ('jobs-' + name)
        self.log = tmp_path / ('conductor-%s.log' % name)
        self.proc = subprocess.Popen(
            [str(BIN / 'magnum-ansible-conductor'), '--name', name, '--db', db_url,
             '--transport-url', TRANSPORT_URL, '--workers', '1', '--provider', 'none',
             '--project-dir', str(project_dir), '--runner-dir', str(self.runner_dir),
             '--health-interval', '0'],
            stdout=open(self.log, 'ab'), stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED='1'))

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def runs_of(job_uuid, conductors):
    """The playbook runs of a job, wherever they ran (ansible-runner's artifacts)."""
    return sum(len(list((c.runner_dir / job_uuid / 'artifacts').glob('*')))
               for c in conductors if (c.runner_dir / job_uuid / 'artifacts').is_dir())


def test_two_conductors_share_the_jobs_once_each_and_survive_one_killed(project, tmp_path):
    from api.messaging import ConductorClient
    with store_url('postgresql', tmp_path) as db_url:
        api = ApiServer(db_url, project, tmp_path,
                        args=['--transport-url', TRANSPORT_URL, '--health-interval', '0'])
        conductors = []
        client = None
        try:
            api.start()
            conductors = [Conductor(n, db_url, project, tmp_path) for n in ('c-a', 'c-b')]
            store = store_mod.Store(db_url)
            records = jobs.Jobs(store)
            wait_for(lambda: len(records.live_services()) == 2, timeout=120)

            def post(path, body):
                answer = requests.post(api.url + path, json=body, headers=LATEST, timeout=30)
                assert answer.status_code in (201, 202), answer.text
                return answer.json()

            def job_of(name):
                return records.for_cluster(store.get('cluster', name)['uuid'])[-1]

            post('/v1/clustertemplates', TPL)
            # 1. four creates at once, one worker each: both conductors take some
            for i in range(4):
                post('/v1/clusters', {'name': 'c%d' % i, 'cluster_template_id': 'tpl',
                                      'labels': {'test_sleep': '2'}})
            for i in range(4):
                assert api_settled(api.url, '/v1/clusters/c%d' % i) == 'CREATE_COMPLETE'
            ran = [job_of('c%d' % i) for i in range(4)]
            assert len(set(j['service_id'] for j in ran)) == 2, ran
            # 2. every word went to both conductors; told three times more, a done job
            # runs no more: each job ran once
            client = ConductorClient(TRANSPORT_URL)
            for _ in range(3):
                client.job_queued(ran[0]['uuid'])
            post('/v1/clusters', {'name': 'last', 'cluster_template_id': 'tpl'})
            client.job_queued(job_of('last')['uuid'])
            assert api_settled(api.url, '/v1/clusters/last') == 'CREATE_COMPLETE'
            for job in ran + [job_of('last')]:
                assert runs_of(job['uuid'], conductors) == 1, job
            assert records.get(ran[0]['uuid'])['finished_at'] == ran[0]['finished_at']
            # 3. an API whose word never reaches a conductor (its broker is away): the job
            # is a row, and a conductor's next look at the store takes it
            deaf = ApiServer(db_url, project, tmp_path, args=[
                '--transport-url', 'rabbit://guest:guest@127.0.0.1:%d/' % free_port(),
                '--health-interval', '0']).start()
            try:
                answer = requests.post(deaf.url + '/v1/clusters', headers=LATEST, timeout=30,
                                       json={'name': 'unheard', 'cluster_template_id': 'tpl'})
                assert answer.status_code == 202, answer.text
                assert api_settled(api.url, '/v1/clusters/unheard') == 'CREATE_COMPLETE'
            finally:
                deaf.stop()
            # 4. kill -9 the conductor running a long create while the other runs one and
            # a third waits for a worker
            post('/v1/clusters', {'name': 'slow', 'cluster_template_id': 'tpl',
                                  'labels': {'test_sleep': '600'}})
            wait_for(lambda: job_of('slow')['status'] == jobs.RUNNING, timeout=120)
            post('/v1/clusters', {'name': 'busy', 'cluster_template_id': 'tpl',
                                  'labels': {'test_sleep': '20'}})
            wait_for(lambda: job_of('busy')['status'] == jobs.RUNNING, timeout=120)
            post('/v1/clusters', {'name': 'queued', 'cluster_template_id': 'tpl'})
            assert job_of('queued')['status'] == jobs.QUEUED
            by_service = dict((s['id'], s) for s in records.services())
            victim = [c for c in conductors
                      if c.proc.pid == by_service[job_of('slow')['service_id']]['pid']][0]
            victim.kill9()
            assert api_settled(api.url, '/v1/clusters/slow') == 'CREATE_FAILED'
            reason = requests.get(api.url + '/v1/clusters/slow', headers=LATEST,
                                  timeout=30).json()['status_reason']
            assert 'orphaned' in reason and 'magnum-conductor' in reason and \
                'pid %d' % victim.proc.pid in reason, reason
            for name in ('busy', 'queued'):
                assert api_settled(api.url, '/v1/clusters/' + name) == 'CREATE_COMPLETE'
            survivor = [c for c in conductors if c is not victim][0]
            assert by_service[job_of('queued')['service_id']]['pid'] == survivor.proc.pid
            # the killed conductor's playbook run was stopped with it
            wait_for(lambda: subprocess.run(['pgrep', '-f', job_of('slow')['uuid']],
                                            capture_output=True).returncode == 1, timeout=120)
            assert not [c['name'] for c in store.find('cluster') if 'IN_PROGRESS' in c['status']]
            states = [s['state'] for s in requests.get(api.url + '/v1/mservices', headers=LATEST,
                                                       timeout=30).json()['mservices']]
            assert sorted(states) == ['down', 'up']
            # and the failed cluster is deleted through the conductor left
            assert requests.delete(api.url + '/v1/clusters/slow', headers=LATEST,
                                   timeout=30).status_code == 204
            assert api_settled(api.url, '/v1/clusters/slow') == 'GONE'
        finally:
            if client is not None:
                client.close()
            for conductor in conductors:
                conductor.stop()
            api.stop()
