"""A Mesos cluster's generated configuration (module_utils/drivers/mesos/mesos_config.py):
ZooKeeper's ensemble, mesos-master's quorum, the agents' flags from the guide's labels, Marathon."""

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import (
    driver as mesos_driver, mesos_config as mesos)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

CLUSTER = {'name': 'm1'}
THREE = ['10.0.0.3', '10.0.0.4', '10.0.0.5']


def test_three_masters_form_an_ensemble_with_a_quorum_of_two():
    found = mesos.settings(CLUSTER, {}, THREE)
    zk = 'zk://10.0.0.3:2181,10.0.0.4:2181,10.0.0.5:2181/mesos'
    assert found['zk'] == zk
    assert found['master'] == {'zk': zk, 'quorum': '2', 'port': '5050',
                               'work_dir': '/var/lib/mesos/master', 'cluster': 'm1'}
    assert found['zookeeper']['myid'] == {'10.0.0.3': '1', '10.0.0.4': '2', '10.0.0.5': '3'}
    cfg = found['zookeeper']['zoo_cfg'].splitlines()
    assert 'clientPort=2181' in cfg and 'dataDir=/var/lib/zookeeper' in cfg
    assert [line for line in cfg if line.startswith('server.')] == [
        'server.1=10.0.0.3:2888:3888', 'server.2=10.0.0.4:2888:3888',
        'server.3=10.0.0.5:2888:3888']
    assert found['marathon'] == {
        'master': zk, 'http_port': '8080',
        'zk': 'zk://10.0.0.3:2181,10.0.0.4:2181,10.0.0.5:2181/marathon'}
    # Marathon is the cluster's API: on the first master, or the load balancer.
    assert found['api_address'] == 'http://10.0.0.3:8080'
    assert mesos.settings(CLUSTER, {}, THREE, api_host='10.0.0.9')['api_address'] == \
        'http://10.0.0.9:8080'


@pytest.mark.parametrize('count, quorum', [(1, '1'), (3, '2'), (5, '3')])
def test_quorum_is_a_majority_of_the_masters(count, quorum):
    masters = ['10.0.0.%d' % (i + 3) for i in range(count)]
    found = mesos.settings(CLUSTER, {}, masters)
    assert found['master']['quorum'] == quorum
    # a single master runs ZooKeeper standalone (no server list)
    assert ('server.1=' in found['zookeeper']['zoo_cfg']) == (count > 1)


@pytest.mark.parametrize('count', [0, 2, 4, 7])
def test_other_master_counts_are_refused_naming_the_rule(count):
    with pytest.raises(Invalid, match='1, 3 or 5 masters .* not %d' % count):
        mesos.settings(CLUSTER, {}, ['10.0.0.%d' % i for i in range(count)])


def test_agents_run_docker_by_default():
    agent = mesos.settings(CLUSTER, {}, THREE[:1])['agent']
    assert agent == {'master': 'zk://10.0.0.3:2181/mesos', 'port': '5051',
                     'containerizers': 'docker', 'work_dir': '/var/lib/mesos/agent',
                     'executor_registration_timeout': '5mins'}


def test_the_guides_labels_become_the_agents_flags():
    agent = mesos.settings(CLUSTER, {
        'mesos_slave_isolation': 'filesystem/linux,docker/runtime',
        'mesos_slave_image_providers': 'docker',
        'mesos_slave_work_dir': '/tmp/mesos',
        'mesos_slave_executor_env_variables': '/home/ubuntu/test.json'}, THREE)['agent']
    assert agent['containerizers'] == 'docker,mesos'
    assert agent['isolation'] == 'filesystem/linux,docker/runtime'
    assert agent['image_providers'] == 'docker'
    assert agent['work_dir'] == '/tmp/mesos'
    assert agent['executor_environment_variables'] == 'file:///home/ubuntu/test.json'
    # isolators alone also need Mesos' containerizer
    assert mesos.settings(CLUSTER, {'mesos_slave_isolation': 'cgroups/cpu'}, THREE)[
        'agent']['containerizers'] == 'docker,mesos'


@pytest.mark.parametrize('labels, message', [
    ({'mesos_slave_image_providers': 'docker'}, 'needs filesystem/linux in mesos_slave_iso'),
    ({'mesos_slave_image_providers': 'appc', 'mesos_slave_isolation': 'cgroups/cpu'},
     'needs filesystem/linux'),
    ({'mesos_slave_work_dir': 'tmp/mesos'}, 'mesos_slave_work_dir must be an absolute path'),
    ({'mesos_slave_work_dir': '/var/../etc'}, 'mesos_slave_work_dir must be an absolute'),
    ({'mesos_slave_executor_env_variables': 'env.json'},
     'mesos_slave_executor_env_variables must be an absolute path'),
])
def test_labels_mesos_cannot_take_are_refused_naming_them(labels, message):
    with pytest.raises(Invalid, match=message):
        mesos.settings(CLUSTER, labels, THREE)


def test_the_driver_refuses_isolators_the_agents_lack():
    """At template and cluster create (the driver's check), before any node exists."""
    with pytest.raises(Invalid, match=r"unknown isolator\(s\) bogus/x; allowed: filesystem/"
                                      r".* \(driver mesos_debian\)"):
        mesos_driver.DRIVER.check({}, {'mesos_slave_isolation': 'cgroups/cpu,bogus/x'})
    mesos_driver.DRIVER.check({}, {'mesos_slave_isolation': 'cgroups/cpu,filesystem/linux'})
    mesos_driver.DRIVER.check({}, {})


def test_flag_files_are_one_per_flag_as_the_packages_read_them():
    found = mesos.settings(CLUSTER, {'mesos_slave_work_dir': '/srv/mesos'}, THREE)
    master = mesos.flag_files(found, 'master')
    assert master['/etc/mesos/zk'] == found['zk'] + '\n'
    assert master['/etc/mesos-master/quorum'] == '2\n'
    assert master['/etc/mesos-master/cluster'] == 'm1\n'
    assert master['/etc/marathon/conf/http_port'] == '8080\n'
    # the ZooKeeper URL only in /etc/mesos/zk (the start scripts pass it: no duplicate flag)
    assert '/etc/mesos-master/zk' not in master
    agent = mesos.flag_files(found, 'agent')
    assert agent['/etc/mesos-slave/work_dir'] == '/srv/mesos\n'
    assert agent['/etc/mesos-slave/containerizers'] == 'docker\n'
    assert '/etc/mesos-slave/master' not in agent and not any(
        path.startswith('/etc/marathon') for path in agent)


def test_without_a_source_the_error_says_where_mesos_can_come_from():
    with pytest.raises(Invalid, match='Apache retired Mesos.*set MAGNUM_MESOS_ARTIFACTS'):
        mesos.artifact_source()


def test_an_offline_directory_of_debs(tmp_path):
    (tmp_path / 'mesos_1.11.0-2.0.1_amd64.deb').write_text('')
    with pytest.raises(Invalid, match=r'is incomplete: missing marathon_\*\.deb\.'):
        mesos.artifact_source(str(tmp_path))
    (tmp_path / 'marathon_1.11.24_all.deb').write_text('')
    assert mesos.artifact_source(str(tmp_path)) == {'mode': 'debs', 'debs': [
        str(tmp_path / 'mesos_1.11.0-2.0.1_amd64.deb'),
        str(tmp_path / 'marathon_1.11.24_all.deb')]}


def test_an_offline_directory_of_binaries_and_marathons_tarball(tmp_path):
    with pytest.raises(Invalid, match='missing bin/mesos-agent, bin/mesos-master, '
                                      'marathon-<version>.tgz'):
        mesos.artifact_source(str(tmp_path))
    (tmp_path / 'bin').mkdir()
    for name in ('mesos-master', 'mesos-agent'):
        (tmp_path / 'bin' / name).write_text('')
    with pytest.raises(Invalid, match='missing marathon-<version>.tgz'):
        mesos.artifact_source(str(tmp_path))
    (tmp_path / 'marathon-1.11.24.tgz').write_text('')
    found = mesos.artifact_source(str(tmp_path))
    assert found['mode'] == 'binaries' and found['marathon'] == str(
        tmp_path / 'marathon-1.11.24.tgz')
    assert found['bin']['mesos-agent'] == str(tmp_path / 'bin' / 'mesos-agent')
    with pytest.raises(Invalid, match='is not a directory'):
        mesos.artifact_source(str(tmp_path / 'nowhere'))


def test_an_apt_repository_is_a_sources_list_line():
    line = 'deb [signed-by=/etc/apt/keyrings/mesos.gpg] https://repo.example/mesos bookworm main'
    assert mesos.artifact_source(apt_repository=line) == {
        'mode': 'apt', 'repository': line, 'packages': ['mesos', 'marathon']}
    for bad in ('https://repo.example/mesos', 'deb file:///x bookworm main',
                'deb https://repo.example/mesos bookworm main\ndeb http://evil x y'):
        with pytest.raises(Invalid, match='must be a sources.list line'):
            mesos.artifact_source(apt_repository=bad)


def test_a_nodes_own_address_names_it_to_the_masters():
    found = mesos.settings(CLUSTER, {}, THREE)
    agent = mesos.flag_files(found, 'agent', '10.0.0.7')
    assert agent['/etc/mesos-slave/ip'] == agent['/etc/mesos-slave/hostname'] == '10.0.0.7\n'
    master = mesos.flag_files(found, 'master', '10.0.0.3')
    assert master['/etc/mesos-master/hostname'] == '10.0.0.3\n'
    assert '/etc/mesos-slave/ip' not in mesos.flag_files(found, 'agent')
    # ZooKeeper answers the status words the role's quorum check asks
    assert '4lw.commands.whitelist=srvr,ruok' in found['zookeeper']['zoo_cfg'].splitlines()


STATE = {'leader': 'master@10.0.0.3:5050',
         'slaves': [{'hostname': '10.0.0.7', 'active': True},
                    {'hostname': '10.0.0.8', 'active': True}]}


def test_health_is_a_leader_every_agent_active_and_marathon():
    assert mesos.health(STATE, ['10.0.0.7', '10.0.0.8'], True) == {
        'status': 'HEALTHY', 'reason': {'api': 'ok'}}
    inactive = dict(STATE, slaves=[dict(STATE['slaves'][0], active=False)])
    assert mesos.health(inactive, ['10.0.0.7', '10.0.0.8'], False) == {
        'status': 'UNHEALTHY', 'reason': {
            '10.0.0.7.status': 'inactive', '10.0.0.8.status': 'not registered with the masters',
            'marathon': 'not answering', 'api': 'ok'}}
    assert mesos.health(dict(STATE, leader=None), ['10.0.0.7'], True)['reason'] == {
        'masters': 'no leading master elected', 'api': 'ok'}
    assert mesos.health(None, ['10.0.0.7'], True) == {
        'status': 'UNKNOWN', 'reason': {'api': 'The cluster is not accessible'}}


def test_maintenance_takes_the_leaving_agents_by_address():
    calls = mesos.maintenance(['10.0.0.8'], 1700000000000000000)
    ids = [{'hostname': '10.0.0.8', 'ip': '10.0.0.8'}]
    assert calls == {'schedule': {'windows': [{'machine_ids': ids, 'unavailability': {
        'start': {'nanoseconds': 1700000000000000000}}}]}, 'down': ids}
    assert mesos.maintenance([], 1) == {'schedule': {'windows': []}, 'down': []}


def test_every_nodes_files_in_one_list_with_the_services_that_read_them():
    found = mesos.settings(CLUSTER, {}, ['10.0.0.3'])
    entries = mesos.node_files(found, {'m-0': 'master', 'n-0': 'worker'},
                               {'m-0': '10.0.0.3', 'n-0': '10.0.0.7'})
    by = dict(((e['node'], e['path']), e) for e in entries)
    assert by[('m-0', '/etc/mesos-master/quorum')]['services'] == ['mesos-master']
    assert by[('m-0', '/etc/marathon/conf/http_port')]['services'] == ['marathon']
    assert by[('m-0', '/etc/mesos/zk')]['services'] == ['mesos-master', 'marathon']
    assert by[('n-0', '/etc/mesos/zk')]['services'] == ['mesos-slave']
    assert by[('n-0', '/etc/mesos-slave/hostname')]['content'] == '10.0.0.7\n'
    assert not [e for e in entries if e['node'] == 'n-0' and 'marathon' in e['path']]


def test_running_tasks_counts_only_live_tasks_of_the_named_agents():
    state = {'slaves': [{'id': 's1', 'hostname': '10.0.0.7'}, {'id': 's2', 'hostname': '10.0.0.8'}],
             'frameworks': [{'tasks': [{'slave_id': 's1', 'state': 'TASK_RUNNING'},
                                       {'slave_id': 's1', 'state': 'TASK_KILLED'},
                                       {'slave_id': 's2', 'state': 'TASK_RUNNING'}]},
                            {'tasks': [{'slave_id': 's1', 'state': 'TASK_STAGING'}]}]}
    assert mesos.running_tasks(state, ['10.0.0.7']) == 2
    assert mesos.running_tasks(state, ['10.0.0.9']) == 0
    assert mesos.running_tasks(None, ['10.0.0.7']) == 0


SUM = 'a' * 64


def test_a_mirror_lists_what_an_offline_directory_holds_with_checksums():
    sums = '%s  mesos_1.11.0-1_amd64.deb\n%s *marathon_1.11.24_all.deb\n%s  README\n' % (
        SUM, 'b' * 64, 'c' * 64)
    assert mesos.mirror_files(sums, 'https://mirror.example/mesos/') == [
        {'name': 'mesos_1.11.0-1_amd64.deb', 'sha256': SUM,
         'url': 'https://mirror.example/mesos/mesos_1.11.0-1_amd64.deb'},
        {'name': 'marathon_1.11.24_all.deb', 'sha256': 'b' * 64,
         'url': 'https://mirror.example/mesos/marathon_1.11.24_all.deb'}]
    binaries = '\n'.join('%s  %s' % (SUM, n) for n in (
        'bin/mesos-master', 'bin/mesos-agent', 'marathon-1.11.24.tgz'))
    assert [f['name'] for f in mesos.mirror_files(binaries, 'http://m')] == [
        'bin/mesos-master', 'bin/mesos-agent', 'marathon-1.11.24.tgz']


@pytest.mark.parametrize('sums, message', [
    ('%s  mesos_1.deb\n' % SUM, r'MAGNUM_MESOS_MIRROR=http://m/SHA256SUMS is incomplete: '
                                r'missing marathon_\*.deb'),
    ('%s  bin/mesos-master\n' % SUM, r'missing bin/mesos-agent, marathon-<version>.tgz'),
    ('not a checksum  mesos_1.deb\n', r"SHA256SUMS line 1 is not '<sha256>  <file>'"),
    ('%s  ../mesos_1.deb\n' % SUM, r"SHA256SUMS line 1 is not"),
    ('%s  /etc/mesos_1.deb\n' % SUM, r"SHA256SUMS line 1 is not"),
])
def test_a_mirrors_listing_that_lacks_a_file_or_is_malformed_is_named(sums, message):
    with pytest.raises(Invalid, match=message):
        mesos.mirror_files(sums, 'http://m')
