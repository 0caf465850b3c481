"""A Swarm node's engine setup in one run (module swarm_node_setup): its daemon.json and
drop-in, its certificates (an engine that trusts the CA keeps its own; a new CA replaces
them), its package installed only where dpkg lacks it, through the template's proxies.
The steps' commands are the node's (recorded here); the files are written for real."""

import json
import stat

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import swarm_node


class Node:
    """The commands a node was asked to run, answered from ``answers`` (argv[0] ->
    (rc, out, err))."""

    def __init__(self, **answers):
        self.asked, self.answers = [], answers

    def __call__(self, argv, environ_update=None):
        self.asked.append((argv, environ_update))
        return self.answers.get(argv[0], (0, '', ''))


def test_daemon_json_listens_on_tcp_on_managers_only_with_tls_when_given():
    manager = json.loads(swarm_node.daemon_config(True, 2376, '/etc/docker/tls', 'overlay2',
                                                  'registry.example:5000'))
    assert manager['hosts'] == ['unix:///var/run/docker.sock', 'tcp://0.0.0.0:2376']
    assert manager['tlsverify'] and manager['tlscacert'] == '/etc/docker/tls/ca.pem'
    assert manager['insecure-registries'] == ['registry.example:5000']
    worker = json.loads(swarm_node.daemon_config(False, 2375, None, 'overlay2'))
    assert worker == {'hosts': ['unix:///var/run/docker.sock'], 'storage-driver': 'overlay2'}


def test_the_drop_in_carries_the_proxies_quoted_and_refuses_a_bad_name():
    text = swarm_node.engine_dropin({'HTTP_PROXY': 'http://p:3128/a b', 'NO_PROXY': ''})
    assert text.startswith('[Service]\nExecStart=\nExecStart=/usr/sbin/dockerd ')
    assert 'Environment="HTTP_PROXY=http://p:3128/a b"\n' in text and 'NO_PROXY' not in text
    with pytest.raises(Invalid):
        swarm_node.engine_dropin({'HTTP_PROXY\nExecStartPre=/bin/true\n#': 'x'})


def test_an_engine_that_trusts_the_ca_keeps_its_certificate_a_new_ca_replaces_it(tmp_path):
    tls_dir = str(tmp_path / 'tls')
    first = {'ca': 'CA-1\n', 'cert': 'CERT-1\n', 'key': 'KEY-1\n'}
    setup = swarm_node.EngineSetup(Node())
    assert setup.certificates(tls_dir, first)
    assert (tmp_path / 'tls' / 'cert.pem').read_text() == 'CERT-1\n'
    assert stat.S_IMODE((tmp_path / 'tls' / 'key.pem').stat().st_mode) == 0o600

    # A second run is issued another certificate by the same CA: the node keeps its own.
    again = swarm_node.EngineSetup(Node())
    assert not again.certificates(tls_dir, dict(first, cert='CERT-2\n', key='KEY-2\n'))
    assert again.changes == [] and (tmp_path / 'tls' / 'key.pem').read_text() == 'KEY-1\n'

    # A rotation's new CA: all three replaced.
    rotated = swarm_node.EngineSetup(Node())
    assert rotated.certificates(tls_dir, {'ca': 'CA-2\n', 'cert': 'CERT-3\n', 'key': 'KEY-3\n'})
    assert (tmp_path / 'tls' / 'ca.pem').read_text() == 'CA-2\n'
    assert (tmp_path / 'tls' / 'cert.pem').read_text() == 'CERT-3\n'

    # Check mode writes nothing.
    check = swarm_node.EngineSetup(Node(), check_mode=True)
    assert check.certificates(tls_dir, first) and check.changes
    assert (tmp_path / 'tls' / 'ca.pem').read_text() == 'CA-2\n'


def test_packages_are_installed_only_where_dpkg_lacks_one_through_the_proxies():
    held = Node(**{'dpkg-query': (0, 'ii \n', '')})
    assert not node_steps.NodeSteps(held).packages(['docker.io'], {'http_proxy': 'http://p'})
    assert [argv[0] for argv, _env in held.asked] == ['dpkg-query']

    lacking = Node(**{'dpkg-query': (1, 'un \n', 'no packages found')})
    steps = node_steps.NodeSteps(lacking)
    assert steps.packages(['docker.io'], {'http_proxy': 'http://p'})
    assert [argv[:2] for argv, _env in lacking.asked[1:]] == [
        ['apt-get', 'update'], ['apt-get', 'install']]
    assert all(env == {'http_proxy': 'http://p', 'DEBIAN_FRONTEND': 'noninteractive'}
               for _argv, env in lacking.asked[1:])
    assert steps.changes == ['installed docker.io']


def test_a_failing_install_names_the_step_and_its_error():
    node = Node(**{'dpkg-query': (1, '', ''), 'apt-get': (100, '', 'E: Unable to locate')})
    with pytest.raises(node_steps.StepFailed) as failed:
        node_steps.NodeSteps(node).packages(['docker.io'])
    assert str(failed.value).startswith('Refreshing the package lists: apt-get update -q '
                                        'exited 100: E: Unable to locate')


def test_the_engine_is_waited_for_until_it_answers_then_given_up_on_naming_its_error():
    clock = [0]
    node = Node(docker=(1, '', 'Cannot connect to the Docker daemon'))
    steps = node_steps.NodeSteps(node, sleep=lambda s: clock.__setitem__(0, clock[0] + s),
                                 now=lambda: clock[0])
    with pytest.raises(node_steps.StepFailed) as failed:
        steps.wait(['docker', 'info'], 'Waiting for the engine', 5)
    assert 'did not succeed within 5s: Cannot connect to the Docker daemon' in str(failed.value)
    assert len(node.asked) == 6
    node.answers['docker'] = (0, '24.0.5 inactive\n', '')
    assert steps.wait(['docker', 'info'], 'Waiting for the engine', 5) == '24.0.5 inactive\n'


class Swarm(Node):
    """A node whose docker CLI answers by subcommand: the remote engines' (``-H``) from
    ``remote`` (address -> {subcommand: answers, each used once, the last kept})."""

    def __init__(self, remote=None, join=(0, '', ''), state='active'):
        super().__init__()
        self.remote, self.join, self.state = remote or {}, join, state

    def __call__(self, argv, environ_update=None):
        self.asked.append((argv, environ_update))
        if '-H' in argv:
            address = argv[argv.index('-H') + 1].split('//')[1].rsplit(':', 1)[0]
            sub = argv[argv.index('-H') + 2]
            answers = self.remote.get(address, {}).get(sub, [(1, '', 'connection refused')])
            return answers.pop(0) if len(answers) > 1 else answers[0]
        if argv[1:3] == ['swarm', 'join']:
            return self.join
        if argv[1] == 'info':
            return (0, self.state + '\n', '')
        return (0, '', '')


def swarm_params(**spec):
    return {'manager': False, 'port': 2376, 'tls': {'ca': 'C', 'cert': 'X', 'key': 'K'},
            'tls_dir': '/etc/docker/tls', 'swarm': dict({'advertise_address': '10.0.0.9',
                                                         'timeout': 30}, **spec)}


def clocked(node):
    clock = [0]
    return swarm_node.EngineSetup(node, sleep=lambda s: clock.__setitem__(0, clock[0] + s),
                                  now=lambda: clock[0])


def test_the_first_manager_initialises_the_swarm_unless_a_peer_has_one():
    node = Swarm(remote={'10.0.0.6': {'info': [(0, 'inactive\n', '')]}})
    setup = clocked(node)
    params = swarm_params(peers=['10.0.0.6', '10.0.0.7'], default_addr_pool='10.20.0.0/16',
                          default_addr_pool_mask_length=24)
    params['manager'] = True
    assert setup.swarm(params, 'inactive') == 'active'
    init = [argv for argv, _env in node.asked if argv[1:3] == ['swarm', 'init']]
    assert init == [['docker', 'swarm', 'init', '--advertise-addr', '10.0.0.9',
                     '--default-addr-pool', '10.20.0.0/16',
                     '--default-addr-pool-mask-length', '24']]
    assert setup.changes == ['initialised the swarm']
    # Each peer asked once, bounded, with the node's own certificate.
    peer_ask = node.asked[0][0]
    assert peer_ask[:3] == ['timeout', '10', 'docker'] and '--tlscert' in peer_ask

    # A peer already in a swarm (the first master was replaced): that swarm is joined.
    node = Swarm(remote={'10.0.0.7': {'info': [(0, 'active\n', '')],
                                      'swarm': [(0, 'SWMTKN-1-mgr\n', '')]}})
    setup = clocked(node)
    assert setup.swarm(params, 'inactive') == 'active'
    join = [argv for argv, _env in node.asked if argv[1:3] == ['swarm', 'join']][0]
    assert join[-3:] == ['--token', 'SWMTKN-1-mgr', '10.0.0.7:2377']
    assert not any(argv[1:3] == ['swarm', 'init'] for argv, _env in node.asked)
    assert setup.changes == ['joined the swarm of 10.0.0.7 as a manager']


def test_a_node_asks_the_manager_for_its_token_until_it_gives_one_then_joins():
    node = Swarm(remote={'10.0.0.5': {'swarm': [
        (1, '', 'Cannot connect to the Docker daemon'),
        (1, '', 'This node is not a swarm manager.'),
        (0, 'SWMTKN-1-worker\n', '')]}})
    setup = clocked(node)
    assert setup.swarm(swarm_params(join='10.0.0.5'), 'inactive') == 'active'
    asks = [argv for argv, _env in node.asked if '-H' in argv]
    assert len(asks) == 3 and asks[0][-4:] == ['swarm', 'join-token', '-q', 'worker']
    assert setup.changes == ['joined the swarm of 10.0.0.5 as a worker']

    # In the swarm already, or in check mode: nothing asked.
    node = Swarm()
    assert clocked(node).swarm(swarm_params(join='10.0.0.5'), 'active') == 'active'
    assert node.asked == []


def test_a_failed_join_names_the_manager_and_its_error_never_the_token():
    node = Swarm(remote={'10.0.0.5': {'swarm': [(0, 'SWMTKN-1-secret\n', '')]}},
                 join=(1, '', 'Error response from daemon: rpc error: invalid join token '
                       'SWMTKN-1-secret'))
    with pytest.raises(node_steps.StepFailed) as failed:
        clocked(node).swarm(swarm_params(join='10.0.0.5'), 'inactive')
    assert str(failed.value).startswith('Joining the swarm of 10.0.0.5 as a worker: docker '
                                        'swarm join exited 1: Error response')
    assert 'SWMTKN-1-secret' not in str(failed.value)

    # A manager that never gives a token: the wait ends naming it and its last error.
    node = Swarm(remote={'10.0.0.5': {'swarm': [(1, '', 'This node is not a swarm manager.')]}})
    with pytest.raises(node_steps.StepFailed) as failed:
        clocked(node).swarm(swarm_params(join='10.0.0.5'), 'inactive')
    assert 'Asking the manager 10.0.0.5 for the worker join token' in str(failed.value)
    assert str(failed.value).endswith('did not succeed within 30s: This node is not a swarm '
                                      'manager.')
