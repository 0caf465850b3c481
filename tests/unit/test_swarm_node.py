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
