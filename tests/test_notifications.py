"""Magnum's notifications through a real RabbitMQ: CADF events magnum.cluster.create,
.update, .delete (and magnum.federation.*) with outcome pending, success or failure,
received by an oslo.messaging listener, for operations started over REST and from
ansible-playbook alike (the store tells of every status change once committed).
Needs a RabbitMQ: MAGNUM_TEST_TRANSPORT_URL (.ci/run starts Debian's)."""

import json
import os
import subprocess
import threading
import uuid as uuidlib
import warnings

import pytest

from conftest import ApiServer, BIN, ansible_env, wait_for
from test_clients import OPENSTACK

TRANSPORT_URL = os.environ.get('MAGNUM_TEST_TRANSPORT_URL')
pytestmark = pytest.mark.skipif(
    not TRANSPORT_URL, reason='needs a RabbitMQ: set MAGNUM_TEST_TRANSPORT_URL '
                              '(rabbit://guest:guest@127.0.0.1:5672/; .ci/run starts one)')


class Received:
    """An oslo.messaging notification listener on ``topic``, keeping what it gets."""

    def __init__(self, topic):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            import oslo_messaging
            from oslo_config import cfg
        self.events = []
        self.lock = threading.Lock()
        conf = cfg.ConfigOpts()
        conf([], project='magnum-test')
        transport = oslo_messaging.get_notification_transport(conf, url=TRANSPORT_URL)
        received = self

        class Endpoint:
            def info(self, ctxt, publisher_id, event_type, payload, metadata):
                received.add('INFO', event_type, payload)

            def error(self, ctxt, publisher_id, event_type, payload, metadata):
                received.add('ERROR', event_type, payload)

        self.listener = oslo_messaging.get_notification_listener(
            transport, [oslo_messaging.Target(topic=topic)], [Endpoint()],
            executor='threading')
        self.listener.start()

    def add(self, priority, event_type, payload):
        with self.lock:
            self.events.append((priority, event_type, payload))

    def of(self, target_id):
        """(event type, outcome, priority) of the events about ``target_id``, in order."""
        with self.lock:
            return [(t, p['outcome'], prio) for prio, t, p in self.events
                    if p.get('target', {}).get('id') == target_id]

    def stop(self):
        self.listener.stop()
        self.listener.wait()


@pytest.fixture
def rabbit(tmp_path):
    topic = 'magnum-test-%s' % uuidlib.uuid4().hex[:8]
    conf = tmp_path / 'magnum.conf'
    conf.write_text('[oslo_messaging_notifications]\ndriver = messagingv2\n'
                    'transport_url = %s\ntopics = %s\n' % (TRANSPORT_URL, topic))
    received = Received(topic)
    try:
        yield str(conf), received
    finally:
        received.stop()


def coe(server, *args):
    run = subprocess.run([OPENSTACK, '--os-auth-type', 'none', '--os-endpoint',
                          server.url + '/v1', 'coe'] + list(args),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def settled(server, name):
    def status():
        run = subprocess.run([OPENSTACK, '--os-auth-type', 'none', '--os-endpoint',
                              server.url + '/v1', 'coe', 'cluster', 'show', name, '-f',
                              'value', '-c', 'status', '-c', 'uuid'],
                             capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            return 'GONE' if 'could not be found' in run.stderr else None
        return None if 'IN_PROGRESS' in run.stdout else run.stdout.split()
    return wait_for(status, timeout=300, interval=1)


def test_rest_operations_send_magnums_cadf_events(rabbit, sqlite_url, project, tmp_path):
    conf, received = rabbit
    server = ApiServer(sqlite_url, project, tmp_path,
                       env={'MAGNUM_NOTIFICATIONS_CONFIG': conf}).start()
    try:
        coe(server, 'cluster', 'template', 'create', 'tpl', '--coe', 'kubernetes', '--image',
            'debian-12', '--external-network', 'public', '--keypair', 'kp')
        coe(server, 'cluster', 'create', 'c1', '--cluster-template', 'tpl', '--node-count', '1')
        status, uuid = settled(server, 'c1')
        assert status == 'CREATE_COMPLETE'
        coe(server, 'cluster', 'resize', 'c1', '2')
        assert settled(server, 'c1')[0] == 'UPDATE_COMPLETE'
        # A federation's operations notify as magnum.federation.* (its create fails here:
        # no federation role yet).
        import requests
        fed = requests.post(server.url + '/v1/federations', json={
            'name': 'f', 'hostcluster_id': uuid, 'properties': {}},
            headers={'OpenStack-API-Version': 'container-infra latest'}, timeout=30)
        assert fed.status_code == 202, fed.text
        fed_uuid = fed.json()['uuid']
        wait_for(lambda: len(received.of(fed_uuid)) >= 2, timeout=120)
        assert received.of(fed_uuid) == [('magnum.federation.create', 'pending', 'INFO'),
                                         ('magnum.federation.create', 'failure', 'ERROR')]
        assert requests.delete(server.url + '/v1/federations/' + fed_uuid,
                               timeout=30).status_code == 204
        wait_for(lambda: requests.get(server.url + '/v1/federations/' + fed_uuid,
                                      timeout=30).status_code == 404, timeout=120)
        coe(server, 'cluster', 'delete', 'c1')
        assert settled(server, 'c1') == 'GONE'
        expected = [('magnum.cluster.create', 'pending', 'INFO'),
                    ('magnum.cluster.create', 'success', 'INFO'),
                    ('magnum.cluster.update', 'pending', 'INFO'),
                    ('magnum.cluster.update', 'success', 'INFO'),
                    ('magnum.cluster.delete', 'pending', 'INFO'),
                    ('magnum.cluster.delete', 'success', 'INFO')]
        wait_for(lambda: len(received.of(uuid)) >= len(expected), timeout=60)
        assert received.of(uuid) == expected

        # The payload is Magnum's CADF event: target, its cluster_data, the observer.
        (payload,) = [p for _, t, p in received.events
                      if t == 'magnum.cluster.create' and p['outcome'] == 'success'
                      and p['target']['id'] == uuid]
        assert payload['typeURI'] == 'http://schemas.dmtf.org/cloud/audit/1.0/event'
        assert payload['eventType'] == 'activity' and payload['action'] == 'create'
        assert payload['target']['typeURI'] == 'service/magnum/cluster'
        assert payload['target']['name'] == 'c1'
        (data,) = payload['target']['attachments']
        assert data['name'] == 'cluster_data'
        assert data['content']['status'] == 'CREATE_COMPLETE'
        assert data['content']['node_count'] == 1
        assert payload['observer']['typeURI'] == 'service/magnum/cluster'

        # A failed operation: at the error priority, outcome failure.
        coe(server, 'cluster', 'create', 'bad', '--cluster-template', 'tpl', '--labels',
            'test_fail=create')
        status, bad = settled(server, 'bad')
        assert status == 'CREATE_FAILED'
        wait_for(lambda: len(received.of(bad)) >= 2, timeout=60)
        assert received.of(bad) == [('magnum.cluster.create', 'pending', 'INFO'),
                                    ('magnum.cluster.create', 'failure', 'ERROR')]
    finally:
        server.stop()


def test_playbook_runs_send_the_same_events(rabbit, sqlite_url, project, tmp_path):
    conf, received = rabbit
    env = ansible_env(sqlite_url, project=project, MAGNUM_NOTIFICATIONS_CONFIG=conf,
                      ANSIBLE_CALLBACK_RESULT_FORMAT='json')

    def run(*args):
        done = subprocess.run([str(BIN / args[0])] + list(args[1:]), cwd=str(project),
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        return done.stdout

    run('ansible', 'localhost', '-m', 'openstack.magnum.cluster_template', '-a', json.dumps(
        {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
         'external_network_id': 'public', 'keypair_id': 'kp'}))
    run('ansible-playbook', 'playbooks/cluster_create.yml', '-e', json.dumps(
        {'cluster': {'name': 'pb', 'cluster_template_id': 'tpl', 'node_count': 1}}))
    shown = json.loads(run('ansible', 'localhost', '-m', 'openstack.magnum.cluster_info', '-a',
                           'name=pb').split('=>', 1)[1])
    uuid = shown['cluster']['uuid']
    run('ansible-playbook', 'playbooks/cluster_delete.yml', '-e', 'cluster=pb')
    expected = [('magnum.cluster.create', 'pending', 'INFO'),
                ('magnum.cluster.create', 'success', 'INFO'),
                ('magnum.cluster.delete', 'pending', 'INFO'),
                ('magnum.cluster.delete', 'success', 'INFO')]
    wait_for(lambda: len(received.of(uuid)) >= len(expected), timeout=60)
    assert received.of(uuid) == expected
