"""The Nova servers a cluster's planned nodes get (module_utils/cloud_servers.specs, the
openstack_vm_servers filter); openstack_servers itself runs against the lab in
tests/test_openstack_provider.py."""

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud, cloud_servers)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

CLUSTER = {'name': 'K8s', 'uuid': '5d0e5a9e-27c4-4c1b-9f5e-4e5a8c3d2b1a',
           'labels': {'availability_zone': 'az1', 'boot_volume_size': '20'}}
GROUPS = [{'uuid': 'g-m', 'name': 'default-master', 'role': 'master', 'flavor_id': 'm1.m'},
          {'uuid': 'g-w', 'name': 'gpu', 'role': 'worker', 'image_id': 'gpu-image',
           'labels': {'availability_zone': 'az2'}}]
TEMPLATE = {'image_id': 'debian-12'}


def test_each_node_gets_its_groups_image_zone_and_its_roles_security_group():
    prefix = cloud.stack_name(CLUSTER)
    nodes = [{'name': prefix + '-master-0', 'group': 'g-m', 'role': 'master', 'index': 0,
              'address': '10.0.0.3', 'flavor': 'm1.m', 'group_name': 'default-master'},
             {'name': prefix + '-gpu-1', 'group': 'g-w', 'role': 'worker', 'index': 1,
              'address': '10.0.0.9', 'flavor': 'g1'}]
    master, worker = cloud_servers.specs(nodes, CLUSTER, GROUPS, TEMPLATE)
    assert master == {
        'name': prefix + '-master-0', 'flavor': 'm1.m', 'image': 'debian-12',
        'address': '10.0.0.3', 'role': 'master', 'index': 0, 'nodegroup': 'default-master',
        'nodegroup_uuid': 'g-m', 'security_group': prefix + '-secgroup-master',
        'server_group': prefix + '-default-master', 'availability_zone': 'az1',
        'boot_volume_size': 20}
    # The group's own image and zone; workers of any group share the worker security group.
    assert (worker['image'], worker['availability_zone'], worker['nodegroup'],
            worker['security_group'], worker['server_group']) == (
        'gpu-image', 'az2', 'gpu', prefix + '-secgroup-worker', prefix + '-gpu')


def test_without_labels_no_zone_and_no_boot_volume():
    node = {'name': 'n', 'group': 'g-m', 'role': 'master', 'index': 0, 'address': '10.0.0.3'}
    spec, = cloud_servers.specs([node], dict(CLUSTER, labels={}), GROUPS, TEMPLATE)
    assert (spec['availability_zone'], spec['boot_volume_size'], spec['flavor']) == (
        None, 0, 'm1.m')


def test_the_user_data_makes_the_providers_user_with_the_clusters_key():
    """Cloud images refuse root's logins and give the keypair to their default user: the
    provider gets a user of its own, with the cluster's key and sudo (issue #44)."""
    import yaml
    key = 'ssh-ed25519 AAAAC3Nza magnum-cluster'
    data = cloud_servers.user_data(key + '\n', 'magnum')
    assert data.startswith('#cloud-config\n')
    assert yaml.safe_load(data) == {'users': ['default', {
        'name': 'magnum', 'shell': '/bin/bash', 'sudo': 'ALL=(ALL) NOPASSWD:ALL',
        'lock_passwd': True, 'ssh_authorized_keys': [key]}]}
    assert yaml.safe_load(cloud_servers.user_data(key, 'root')) == {
        'disable_root': False, 'ssh_authorized_keys': [key]}
    for bad in ('', 'a b', 'x\n- name: root', None):
        with pytest.raises(Invalid):
            cloud_servers.user_data(key, bad)


NODES = [{'name': 'c-node-0', 'role': 'worker', 'index': 0, 'address': '10.0.0.11'},
         {'name': 'c-master-1', 'role': 'master', 'index': 1, 'address': '10.0.0.9'},
         {'name': 'c-master-0', 'role': 'master', 'index': 0, 'address': '10.0.0.10'}]
KEY = '/state/c/id_ed25519'


def test_without_floating_ips_only_the_first_master_gets_one_unless_there_is_a_bastion():
    assert cloud_servers.floating_ip_nodes(NODES, True) == ['c-node-0', 'c-master-1',
                                                            'c-master-0']
    assert cloud_servers.floating_ip_nodes(NODES, False) == ['c-master-0']
    assert cloud_servers.floating_ip_nodes(NODES, False, 'jump.example') == []
    assert cloud_servers.floating_ip_nodes(NODES[:1], False) == []


def test_nodes_without_a_floating_ip_are_reached_through_the_jump_host():
    routes = cloud_servers.ssh_routes(NODES, {'c-master-0': '10.113.0.50'}, KEY)
    assert routes['c-master-0'] == {'host': '10.113.0.50', 'args': cloud_servers.SSH_OPTIONS,
                                    'through': ''}
    for name, fixed in (('c-node-0', '10.0.0.11'), ('c-master-1', '10.0.0.9')):
        assert routes[name]['host'] == fixed and routes[name]['through'] == 'c-master-0'
        assert routes[name]['args'] == cloud_servers.SSH_OPTIONS + (
            ' -o ProxyCommand="ssh -i %s %s -W %%h:%%p magnum@10.113.0.50"'
            % (KEY, cloud_servers.SSH_OPTIONS))
    # every node with a floating IP is reached on it, with no jump
    direct = cloud_servers.ssh_routes(NODES, {'c-node-0': 'a', 'c-master-1': 'b',
                                              'c-master-0': 'c'}, KEY)
    assert [r['args'] for r in direct.values()] == [cloud_servers.SSH_OPTIONS] * 3


def test_an_operators_bastion_is_the_jump_host():
    routes = cloud_servers.ssh_routes(NODES, {}, KEY, bastion='ops@bastion.example:2222')
    assert routes['c-master-0']['host'] == '10.0.0.10' and routes['c-master-0']['through'] == ''
    assert routes['c-master-0']['args'].endswith(' -p 2222 -W %h:%p ops@bastion.example"')
    routes = cloud_servers.ssh_routes(NODES, {}, KEY, user='magnum', bastion='bastion.example')
    assert routes['c-node-0']['args'].endswith(' -W %h:%p bastion.example"')


def test_a_node_with_no_way_in_gets_no_route():
    # no floating IP, no bastion: the fixed address with no jump (the SSH wait names it)
    routes = cloud_servers.ssh_routes(NODES, {}, KEY)
    assert routes['c-node-0'] == {'host': '10.0.0.11', 'args': cloud_servers.SSH_OPTIONS,
                                  'through': ''}


def test_floating_addresses_are_read_from_novas_addresses():
    servers = [{'name': 'c-master-0', 'addresses': {'net': [
        {'addr': '10.0.0.10', 'OS-EXT-IPS:type': 'fixed'},
        {'addr': '10.113.0.50', 'OS-EXT-IPS:type': 'floating'}]}},
        {'name': 'c-node-0', 'addresses': {'net': [{'addr': '10.0.0.11',
                                                    'OS-EXT-IPS:type': 'fixed'}]}}]
    assert cloud_servers.floating_addresses(servers) == {'c-master-0': '10.113.0.50'}


def test_an_ssh_wait_tells_silent_servers_from_those_that_refuse_the_key():
    # wait_for_connection's items: one reached, one silent (a reboot may help), two whose
    # sshd refused the cluster's key (no cloud-init ran: a reboot would not help)
    refused = ('timed out waiting for ping module test: Data could not be sent to remote host '
               '"10.113.0.5". Make sure this host can be reached over ssh: Warning: Permanently '
               "added '10.113.0.5' (ED25519) to the list of known hosts.\r\nmagnum@10.113.0.5: "
               'Permission denied (publickey,password).')
    results = [{'item': 'c-master-0', 'changed': False},
               {'item': 'c-node-0', 'failed': True, 'msg': 'timed out waiting for ping '
                'module test: Failed to connect to the host via ssh: ssh: connect to host '
                '10.113.0.6 port 22: No route to host'},
               {'item': 'c-node-1', 'failed': True, 'msg': refused},
               {'item': 'c-node-2', 'failed': True, 'msg': refused}]
    outcome = cloud_servers.ssh_wait_outcome(results, 'magnum')
    assert outcome['silent'] == ['c-node-0']
    assert outcome['refused'].startswith(
        "Servers c-node-1, c-node-2 answer SSH but refuse the cluster's key for user 'magnum': "
        "the image did not run cloud-init")
    assert outcome['refused'].endswith(
        'Last error: timed out waiting for ping module test: Data could not be sent to remote '
        'host "10.113.0.5". Make sure this host can be reached over ssh: magnum@10.113.0.5: '
        'Permission denied (publickey,password).')
    one = cloud_servers.ssh_wait_outcome(results[2:3], 'magnum')['refused']
    assert one.startswith('Server c-node-1 answers SSH but refuses')
    assert cloud_servers.ssh_wait_outcome(results[:2]) == {
        'silent': ['c-node-0'], 'behind': [], 'refused': ''}


def test_servers_behind_a_silent_jump_host_are_not_rebooted_for_it():
    """A 1 + 3 create whose first master (the jump host of the others) is silent: only it
    is rebooted; the workers behind it are waited for again once it answers (#66: all four
    were hard-rebooted, twice). A worker silent behind a master that answers is rebooted."""
    routes = cloud_servers.ssh_routes(NODES, {'c-master-0': '10.113.0.50'}, KEY)
    silent = {'failed': True, 'msg': 'timed out waiting for ping module test: ssh: connect to '
                                     'host 10.113.0.50 port 22: Connection timed out'}
    results = [dict(silent, item=n['name']) for n in NODES]
    assert cloud_servers.ssh_wait_outcome(results, 'magnum', routes) == {
        'silent': ['c-master-0'], 'behind': ['c-node-0', 'c-master-1'], 'refused': ''}
    results = [{'item': 'c-master-0'}, dict(silent, item='c-node-0')]
    assert cloud_servers.ssh_wait_outcome(results, 'magnum', routes) == {
        'silent': ['c-node-0'], 'behind': [], 'refused': ''}


def test_a_creates_last_ssh_wait_names_the_server_the_bounds_and_how_to_raise_them():
    """#66: the reason of servers still silent after their reboot names the first with its
    error, the others, the bounds that ran out and the settings that give a slow cloud's
    guests longer; a key refused is still the cloud-init reason; nothing failed, nothing."""
    silent = {'failed': True, 'msg': "Warning: Permanently added '10.113.0.6' (ED25519) to "
                                     'the list of known hosts.\r\ntimed out waiting for ping '
                                     'module test: ssh: connect to host 10.113.0.6 port 22: '
                                     'No route to host'}
    results = [{'item': 'c-master-0'}, dict(silent, item='c-node-0'),
               dict(silent, item='c-node-1')]
    reason = cloud_servers.ssh_wait_failure(results, 600, 300)
    assert reason.startswith('c-node-0: timed out waiting for ping module test: ssh: connect '
                             'to host 10.113.0.6 port 22: No route to host (also silent: '
                             "c-node-1). Not answering over SSH within the wait's 600 s, "
                             'rebooted hard after 300 s of silence'), reason
    assert 'create_timeout' in reason and 'infra_openstack_ssh_reboot_after' in reason
    assert 'rebooted' not in cloud_servers.ssh_wait_failure(results[:2], 600, None)
    refused = dict(silent, item='c-node-0', msg='magnum@10.113.0.6: Permission denied '
                                                '(publickey,password).')
    assert cloud_servers.ssh_wait_failure([refused], 600, 300).startswith(
        "Server c-node-0 answers SSH but refuses the cluster's key")
    assert cloud_servers.ssh_wait_failure(results[:1], 600, 300) == ''
    assert cloud_servers.ssh_wait_failure([], 600, 300) == ''


def test_the_reboots_bound_scales_with_the_clouds_recorded_boots(tmp_path):
    """#66 item 5: a silent server is rebooted after twice the slowest boot of the cloud's
    last 10 creates when that is longer than the operator's bound, never past half the
    wait; the record keeps the last 10 (several jobs add to it at once: each under the
    lock, none lost), a broken record is no record, and the reason names the scaling."""
    import multiprocessing
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
        ssh_wait)
    record = str(tmp_path / 'cloud' / 'boots.json')
    assert ssh_wait.recorded_boots(record) == []
    assert ssh_wait.scaled_bound(300, [], 600) == 300
    for seconds in (90, 120, 250):
        ssh_wait.remember_boot(record, seconds)
    assert ssh_wait.recorded_boots(record) == [90, 120, 250]
    assert ssh_wait.scaled_bound(300, [90, 120], 600) == 300
    assert ssh_wait.scaled_bound(300, ssh_wait.recorded_boots(record), 600) == 500
    assert ssh_wait.scaled_bound(300, [400], 600) == 600
    assert ssh_wait.scaled_bound(300, [400], 0) == 800
    workers = [multiprocessing.Process(target=ssh_wait.remember_boot, args=(record, 10 + i))
               for i in range(12)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    kept = ssh_wait.recorded_boots(record)
    assert len(kept) == 10 and set(kept) <= set(range(10, 22)), kept
    (tmp_path / 'cloud' / 'boots.json').write_text('{"boots": [')
    assert ssh_wait.recorded_boots(record) == []
    reason = cloud_servers.ssh_wait_failure(
        [{'item': 'c-master-0', 'failed': True, 'msg': 'timed out waiting for SSH: x'}],
        1200, 500, 'magnum', [90, 250])
    assert ('rebooted hard after 500 s of silence (the bound scales with the cloud: twice '
            'the slowest boot of its last 2 creates, 250 s, if longer than '
            'infra_openstack_ssh_reboot_after)') in reason, reason


def test_a_server_whose_console_still_moved_is_named_as_booting_not_rebooted():
    """#66 item 5: a silent server whose console still changed was not rebooted (a slow
    guest); if it never answers, the reason says so, with its console's last line."""
    results = [{'item': 'c-master-0', 'failed': True, 'msg': 'timed out waiting for SSH: x'}]
    reason = cloud_servers.ssh_wait_failure(
        results, 1200, 300, 'magnum', [], ['c-master-0'],
        {'c-master-0': 'A start job is running for Raise network interfaces (3min 2s / 5min)'})
    assert ("not rebooted: its console still changed after 300 s (last line: 'A start job is "
            "running for Raise network interfaces (3min 2s / 5min)')") in reason, reason
    assert 'rebooted hard' not in reason
