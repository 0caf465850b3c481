"""The health rounds without a playbook: Swarm's rule (the one its role's filter applies),
the Docker API's node list as `docker node ls` prints it, and the conductor's client
(api/health_check.py): kept connections, redirects, bounded waits, its certificates. The
reads against a Kubernetes API (its stand-in) and real Swarm managers compared with the
playbook's are tests/test_kubernetes.py's and tests/test_swarm.py's."""

import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import health, tls
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import (
    health as mesos_health)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import (
    health as swarm_health)
from api import health_check

MASTERS = ['sw-master-0', 'sw-master-1']


def test_swarm_healthy_when_every_node_ready_and_active_and_every_manager_answers():
    lines = ['sw-master-0 Ready Active Leader', 'sw-master-1 Ready Active Reachable',
             'sw-node-0 Ready Active ']
    views = {'sw-master-0': lines, 'sw-master-1': lines}
    assert swarm_health.judge(views, MASTERS) == {'status': 'HEALTHY', 'reason': {'api': 'ok'}}


def test_swarm_names_what_is_wrong_from_the_first_manager_that_answers():
    lines = ['sw-master-0 Down Active Unreachable', 'sw-master-1 Ready Active Leader',
             'sw-node-0 Ready Drain ', 'sw-node-1 Down Active ', 'sw-node-2 Ready Active ']
    assert swarm_health.judge({'sw-master-1': lines}, MASTERS) == {
        'status': 'UNHEALTHY', 'reason': {
            'sw-master-0.status': 'Down Active Unreachable', 'sw-node-0.status': 'Ready Drain',
            'sw-node-1.status': 'Down Active', 'sw-master-0.api': 'not answering',
            'api': 'ok'}}
    assert swarm_health.judge({}, MASTERS) == {
        'status': 'UNKNOWN', 'reason': {'api': 'The cluster is not accessible'}}


def test_swarm_filter_reads_the_roles_loop_results():
    results = [{'item': 'sw-master-0', 'unreachable': True},
               {'item': 'sw-master-1', 'rc': 0,
                'stdout_lines': ['sw-master-1 Ready Active Leader']}]
    assert swarm_health.judge_results(results, MASTERS) == {
        'status': 'UNHEALTHY', 'reason': {'sw-master-0.api': 'not answering', 'api': 'ok'}}
    failed = [{'item': 'sw-master-0', 'rc': 1, 'stdout_lines': []}]
    assert swarm_health.judge_results(failed, MASTERS[:1])['status'] == 'UNKNOWN'


def test_docker_api_node_list_printed_as_docker_node_ls():
    listed = [
        {'ID': 'a', 'Description': {'Hostname': 'sw-master-0'}, 'Status': {'State': 'ready'},
         'Spec': {'Availability': 'active'},
         'ManagerStatus': {'Leader': True, 'Reachability': 'reachable'}},
        {'ID': 'b', 'Description': {'Hostname': 'sw-master-1'}, 'Status': {'State': 'down'},
         'Spec': {'Availability': 'active'}, 'ManagerStatus': {'Reachability': 'unreachable'}},
        {'ID': 'c', 'Description': {'Hostname': 'sw-node-0'}, 'Status': {'State': 'ready'},
         'Spec': {'Availability': 'pause'}}]
    assert swarm_health.node_lines(listed) == [
        'sw-master-0 Ready Active Leader', 'sw-master-1 Down Active Unreachable',
        'sw-node-0 Ready Pause ']


def test_nodes_as_recorded_by_role():
    groups = [{'role': 'master', 'nodes': [{'name': 'm0', 'address': '10.0.0.2'}]},
              {'role': 'worker', 'nodes': [{'name': 'n0', 'address': '10.0.0.3'}, {'id': 'x'}]}]
    assert health.nodes(groups) == [{'name': 'm0', 'address': '10.0.0.2', 'role': 'master'},
                                    {'name': 'n0', 'address': '10.0.0.3', 'role': 'worker'}]
    assert [n['name'] for n in health.nodes(groups) if n['role'] == 'worker'] == ['n0']
    assert health.url('https', 'fd00::2', 2376, '/nodes') == 'https://[fd00::2]:2376/nodes'
    assert health.url('http', '10.0.0.2', 5050, '/ping') == 'http://10.0.0.2:5050/ping'


class Endpoints(object):
    """A plain HTTP server on loopback: ``answers`` path -> (status, body, headers);
    HTTP/1.1 keep-alive; ``connections`` counts those accepted."""

    def __init__(self):
        self.answers, self.connections = {}, 0
        endpoints = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def setup(self):
                super().setup()
                endpoints.connections += 1

            def do_GET(self):  # noqa: N802 - http.server's name
                status, body, headers = endpoints.answers.get(self.path, (404, b'no', {}))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args):
                pass

        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d' % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def endpoints():
    made = Endpoints()
    yield made
    made.stop()


def test_client_keeps_its_connection_and_follows_one_redirect(endpoints):
    endpoints.answers['/ping'] = (200, b'pong', {})
    endpoints.answers['/master/state'] = (307, b'', {'Location': '//127.0.0.1:%s/leader'
                                                     % endpoints.url.rsplit(':', 1)[1]})
    endpoints.answers['/leader'] = (200, b'{"leader": "x"}', {})
    client = health_check.Http(None, timeout=5)
    for _ in range(3):
        assert client.get(endpoints.url + '/ping') == (200, b'pong')
    assert client.get(endpoints.url + '/master/state') == (200, b'{"leader": "x"}')
    assert endpoints.connections == 1
    client.close()


def test_mesos_read_asks_masters_and_marathon(endpoints):
    """The Mesos reader with its ports pointed at one endpoint: a leader, its one agent
    registered and active, Marathon answering."""
    port = int(endpoints.url.rsplit(':', 1)[1])
    endpoints.answers['/master/state'] = (
        200, b'{"leader": "m", "slaves": [{"hostname": "127.0.0.2", "active": true}]}', {})
    endpoints.answers['/ping'] = (200, b'pong', {})
    nodes = [{'name': 'm0', 'role': 'master', 'address': '127.0.0.1'},
             {'name': 'a0', 'role': 'worker', 'address': '127.0.0.2'}]
    mesos_health.MASTER_PORT = mesos_health.MARATHON_PORT = port
    try:
        client = health_check.Http(None, timeout=5)
        assert mesos_health.read({}, {}, nodes, client) == {
            'status': 'HEALTHY', 'reason': {'api': 'ok'}}
        endpoints.answers['/ping'] = (503, b'', {})
        assert mesos_health.read({}, {}, nodes, client)['reason']['marathon'] == 'not answering'
    finally:
        mesos_health.MASTER_PORT, mesos_health.MARATHON_PORT = 5050, 8080


def test_client_says_why_and_waits_no_longer_than_its_timeout(endpoints):
    client = health_check.Http(None, timeout=1)
    with socket.socket() as closed:
        closed.bind(('127.0.0.1', 0))
        port = closed.getsockname()[1]
    with pytest.raises(health.Unreachable, match='Connection refused'):
        client.get('http://127.0.0.1:%d/readyz' % port)
    silent = socket.socket()  # accepts (the backlog) and never answers
    silent.bind(('127.0.0.1', 0))
    silent.listen(5)
    try:
        started = time.monotonic()
        with pytest.raises(health.Unreachable, match='timed out'):
            client.get('http://127.0.0.1:%d/readyz' % silent.getsockname()[1])
        assert time.monotonic() - started < 10
    finally:
        silent.close()
    endpoints.answers['/big'] = (200, b'x' * 10, {})
    health_check.MAX_BODY, kept = 5, health_check.MAX_BODY
    try:
        with pytest.raises(health.Unreachable, match='larger than 5 bytes'):
            client.get(endpoints.url + '/big')
    finally:
        health_check.MAX_BODY = kept


def test_client_certificate_of_the_cluster_ca_made_once_again_when_the_ca_changes(tmp_path):
    """The conductor's TLS for a cluster: it trusts the cluster's CA alone and presents a
    client certificate of it (EC, short-lived, the playbook's subject), kept between rounds
    and made again when the CA is rotated; no key is left on disk."""
    ca_cert, ca_key = tls.create_ca('c')

    class Store(object):
        def __init__(self):
            self.ca = {'cert_pem': ca_cert, 'key_pem': ca_key}

        def certificate(self, uuid, kind, missing_ok=False):
            return self.ca

    store = Store()
    checks = health_check.HealthChecks(store, work_dir=str(tmp_path))
    first = checks._http('u')
    assert checks._http('u') is first
    server_cert, server_key = tls.issue_keypair(ca_cert, ca_key, 'node', sans=['127.0.0.1'],
                                                client=False)
    (tmp_path / 'server.pem').write_text(server_cert + server_key)
    seen = []

    def serve(context_ca):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tmp_path / 'server.pem'))
        context.load_verify_locations(cadata=context_ca)
        context.verify_mode = ssl.CERT_REQUIRED
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(1)

        def accept():
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True) as tls_conn:
                    seen.append(dict(x[0] for x in tls_conn.getpeercert()['subject']))
                    tls_conn.recv(4096)
                    tls_conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
            except ssl.SSLError:  # the client refused this server
                conn.close()
            listener.close()
        threading.Thread(target=accept, daemon=True).start()
        return listener.getsockname()[1]

    assert first.get('https://127.0.0.1:%d/readyz' % serve(ca_cert)) == (200, b'ok')
    assert seen == [{'organizationName': 'system:masters', 'commonName': 'magnum-driver'}]
    assert list(tmp_path.iterdir()) == [tmp_path / 'server.pem']
    store.ca = dict(zip(('cert_pem', 'key_pem'), tls.create_ca('c')))
    second = checks._http('u')
    assert second is not first
    with pytest.raises(health.Unreachable):  # the old CA's server is not trusted any more
        second.get('https://127.0.0.1:%d/readyz' % serve(ca_cert))
    checks.forget(set())
    assert checks._clients == {}
