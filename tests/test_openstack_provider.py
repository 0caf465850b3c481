"""The `openstack` infrastructure provider against the lab cloud (../shared/openstack-lab:
real Keystone, Glance, Nova with the fake virt driver, Neutron, Cinder, Octavia).

Fake-virt servers boot no guest, so the COE phase cannot run on them: these tests drive
the provider alone, through `playbooks/cluster_infra.yml` (cluster_operation without the
COE roles), and check every resource through the cloud's own APIs. The contract between
provider and COE roles (the inventory) is proven with the docker provider in
tests/test_swarm.py. Runs when MAGNUM_TEST_CLOUD names a cloud of MAGNUM_TEST_CLOUDS_YAML
(.ci/run brings the lab up and sets both); skipped, saying so, otherwise."""

import contextlib
import datetime
import json
import os
import re
import signal
import subprocess
import uuid as uuidlib

import pytest
import yaml

from api import auth_cache
from conftest import (BIN, HELM, LAB_CLOUD, LAB_CLOUDS_YAML, NEEDS_LAB, REPO, ansible_env,
                      debian_image, helm, wait_for)
from conftest import lab_connect as connect

CLOUD = LAB_CLOUD
# The lab's clouds.yaml (an admin of the cloud). The tests themselves run as a user and
# project of their own (the `lab` fixture), given only to what talks to the lab (not to
# this process's environment: other tests drive the API with noauth clients).
ADMIN_CLOUDS_YAML = LAB_CLOUDS_YAML
pytestmark = NEEDS_LAB
# One name for everything this run makes that is not a cluster's own: the run's project
# and user, image, network, bare-metal nodes, flavor and resource class. Another run on
# the same cloud (or what an interrupted one left) neither counts against this one's
# quotas nor shows up in its leftover scans.
RUN = 'magnum-test-' + uuidlib.uuid4().hex[:8]
IMAGE = 'debian-12-' + RUN  # the module's catalog tells os_distro by name
BARE_IMAGE = IMAGE + '-bare'  # lists the packages it holds: Python alone
INTERNAL_NET = RUN + '-internal'
KEYPAIR = 'magnum-test'


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    """The clouds.yaml of a project and user made for this run (admin role on the project,
    as the bare-metal and flavor set-up needs), deleted afterwards."""
    admin = connect(ADMIN_CLOUDS_YAML)
    password = uuidlib.uuid4().hex
    project = admin.identity.create_project(name=RUN, domain_id='default',
                                            description='magnum tests; safe to delete')
    user = admin.identity.create_user(name=RUN, password=password, domain_id='default',
                                      default_project_id=project.id)
    admin.identity.assign_project_role_to_user(project, user, admin.identity.find_role('admin'))
    with open(ADMIN_CLOUDS_YAML) as f:
        cloud = yaml.safe_load(f)['clouds'][CLOUD]
    cloud['auth'].update(username=RUN, password=password, project_name=RUN,
                         user_domain_name='Default', project_domain_name='Default')
    clouds_yaml = tmp_path_factory.mktemp('lab') / 'clouds.yaml'
    clouds_yaml.write_text(yaml.safe_dump({'clouds': {CLOUD: cloud}}))
    try:
        yield str(clouds_yaml)
    finally:
        # What `conn` made (the tests' leftover scans answer for the clusters').
        own = connect(str(clouds_yaml))
        for name in (IMAGE, BARE_IMAGE):
            for image in own.image.images(name=name):
                own.image.delete_image(image)
        for network in own.network.networks(name=INTERNAL_NET):
            own.network.delete_network(network)
        own.compute.delete_keypair(KEYPAIR, ignore_missing=True)
        admin.identity.delete_user(user)
        admin.identity.delete_project(project)


@pytest.fixture(scope='module')
def conn(lab):
    connection = connect(lab)
    debian_image(connection, IMAGE)
    connection.compute.create_keypair(name=KEYPAIR)
    connection.network.create_network(name=INTERNAL_NET)
    return connection


class Infra:
    """Records in a store of the test's own, and the provider run with ansible-playbook."""

    def __init__(self, tmp_path, lab):
        self.env = ansible_env('sqlite:///%s' % (tmp_path / 'm.sqlite'), 'openstack',
                               MAGNUM_CLOUD=CLOUD, OS_CLIENT_CONFIG_FILE=lab,
                               XDG_DATA_HOME=str(tmp_path / 'data'),
                               ANSIBLE_CALLBACK_RESULT_FORMAT='json')
        # One Keystone login for all the runs' modules, as the API gives its jobs
        # (api/auth_cache.py): a login per module run is most of the lab's work.
        self.env.update(auth_cache.job_env(tmp_path, inherit=False))

    def module(self, module_name, check_mode=False, **args):
        run = subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                              'openstack.magnum.' + module_name]
                             + (['-a', json.dumps(args)] if args else [])
                             + (['--check'] if check_mode else []), cwd=str(REPO),
                             env=self.env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        return json.loads(run.stdout.split('=>', 1)[1])

    def playbook(self, extravars, check=True, name='cluster_infra'):
        run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/%s.yml' % name,
                              '-e', json.dumps(extravars)], cwd=str(REPO), env=self.env,
                             capture_output=True, text=True, timeout=1200)
        assert not check or run.returncode == 0, run.stdout[-4000:]
        return run

    def start(self, extravars):
        return subprocess.Popen([str(BIN / 'ansible-playbook'), 'playbooks/cluster_infra.yml',
                                 '-e', json.dumps(extravars)], cwd=str(REPO), env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)

    def cluster(self, name):
        return self.module('cluster_info', name=name)['cluster']

    def resources(self, name):
        return self.module('openstack_resources', cluster=name, cloud=CLOUD)


def template(infra, name, masters=1, **fields):
    tpl = dict(name=name, coe='kubernetes', image_id=IMAGE, external_network_id='public',
               keypair_id=KEYPAIR, flavor_id='m1.tiny', master_flavor_id='m1.tiny',
               docker_volume_size=1, docker_storage_driver='overlay2', floating_ip_enabled=True,
               master_lb_enabled=masters > 1)
    tpl.update(fields)
    infra.module('cluster_template', **tpl)


def record(infra, name, masters, workers, **fields):
    template(infra, name + '-tpl', masters, **fields)
    infra.module('cluster', name=name, cluster_template_id=name + '-tpl', node_count=workers,
                 master_count=masters)
    return infra.cluster(name)


def own_fips(conn):
    """The floating IPs of this run's project (an admin would list every project's)."""
    return conn.network.ips(project_id=conn.current_project_id)


def servers_of(conn, prefix):
    return sorted((s for s in conn.compute.servers(details=True) if s.name.startswith(prefix)),
                  key=lambda s: s.name)


def test_vm_cluster_with_lb_grows_shrinks_by_name_and_deletes_to_nothing(conn, lab, tmp_path):
    """3 masters behind Octavia + 2 workers, floating IPs, volumes: exactly the right
    resources (the router and floating IPs on the cloud's only external network: the
    template names none); grow by one; shrink by one named node; a user's port blocks
    delete (named); delete leaves nothing."""
    infra = Infra(tmp_path, lab)
    fips_before = set(ip.id for ip in own_fips(conn))
    # The lab's Octavia VIP is not a real Neutron port (its README): no floating IP on it.
    # a template naming no external network (optional, as in Magnum): the cloud's only one
    # dns_nameserver as Magnum takes it, a comma-separated list: one server each on the subnet
    cluster = record(infra, 'vmc', 3, 2, external_network_id=None,
                     dns_nameserver='198.51.100.53, 198.51.100.54', labels={
                         'master_lb_floating_ip_enabled': 'false',
                         'master_lb_allowed_cidrs': '192.0.2.0/24',
                         'flannel_network_cidr': '10.200.0.0/16'})
    uuid = cluster['uuid']
    try:
        infra.playbook({'cluster': 'vmc'})
        cluster = infra.cluster('vmc')
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        found = infra.resources('vmc')['resources']
        prefix = found['networks'][0]['name'][:-len('-network')] + '-'
        assert conn.network.find_subnet(prefix + 'subnet').dns_nameservers == [
            '198.51.100.53', '198.51.100.54']

        servers = servers_of(conn, prefix)
        names = [s.name for s in servers]
        assert [n.rsplit('-', 2)[1:] for n in names] == [
            ['master', '0'], ['master', '1'], ['master', '2'], ['node', '0'], ['node', '1']]
        assert all(s.status == 'ACTIVE' and s.key_name == KEYPAIR for s in servers)
        assert all(s.metadata['magnum_cluster'] == uuid for s in servers)
        groups = dict((g.name, g) for g in conn.compute.server_groups()
                      if g.name.startswith(prefix))
        assert sorted(groups) == [prefix + 'default-master', prefix + 'default-worker']
        assert all(g.policy in ('soft-anti-affinity', None) or
                   'soft-anti-affinity' in (g.policies or []) for g in groups.values())
        assert len(groups[prefix + 'default-master'].member_ids) == 3
        volumes = sorted(v.name for v in conn.block_storage.volumes() if v.name.startswith(prefix))
        assert volumes == sorted(n + '-docker' for n in names)
        assert all([conn.block_storage.find_volume(a['id']).name for a in s.attached_volumes]
                   == [s.name + '-docker'] for s in servers), [s.attached_volumes for s in servers]
        ports = dict((p.name, p) for p in conn.network.ports() if (p.name or '').startswith(prefix))
        fips = [ip for ip in own_fips(conn) if ip.port_id in set(p.id for p in ports.values())]
        assert len(fips) == 5
        public = conn.network.find_network('public')
        assert all(ip.floating_network_id == public.id for ip in fips)
        router = conn.network.find_router(prefix + 'router')
        assert router.external_gateway_info['network_id'] == public.id
        for role in ('master', 'worker'):
            rules = [(r['protocol'], r['port_range_min'], r['remote_ip_prefix']) for r in
                     conn.network.find_security_group(prefix + 'secgroup-' + role)
                     .security_group_rules if r['direction'] == 'ingress']
            assert ('tcp', 22, '0.0.0.0/0') in rules, rules
            assert (('tcp', 6443, '0.0.0.0/0') in rules) == (role == 'master'), rules
            # Everything from the nodes and from their pods (forwarded with the pods'
            # addresses: flannel host-gw, calico unencapsulated) ...
            assert (None, None, '10.0.0.0/24') in rules and \
                (None, None, '10.200.0.0/16') in rules, rules
        # ... whose addresses the nodes' ports accept.
        assert all([a['ip_address'] for a in ports[n + '-port'].allowed_address_pairs]
                   == ['10.200.0.0/16'] for n in names), [
            (n, ports[n + '-port'].allowed_address_pairs) for n in names]
        lb = conn.load_balancer.find_load_balancer(prefix + 'api-lb')
        assert lb is not None
        pool = conn.load_balancer.find_pool(prefix + 'api-lb-6443-pool')
        members = list(conn.load_balancer.members(pool.id))
        assert sorted(m.address for m in members) == sorted(
            s.metadata['magnum_address'] for s in servers if '-master-' in s.name)
        # Clients and Ansible reach the nodes on their floating IPs.
        assert sorted(cluster['master_addresses'] + cluster['node_addresses']) == sorted(
            ip.floating_ip_address for ip in fips)
        assert conn.load_balancer.find_health_monitor(prefix + 'api-lb-6443-monitor')
        listener = conn.load_balancer.find_listener(prefix + 'api-lb-6443')
        # The label's CIDRs and, as Magnum adds it, the cluster's subnet: the nodes reach
        # their API through the load balancer.
        assert sorted(listener.allowed_cidrs) == ['10.0.0.0/24', '192.0.2.0/24']
        assert lb.vip_address == '10.0.0.5'  # the plan's load-balancer address
        assert len(cluster['node_addresses']) == 2
        # The modules that made them (one run each): a second run changes nothing; check
        # mode only tells (a master left out would leave the pools).
        net = infra.module('openstack_network', cluster='vmc', cloud=CLOUD, prefix=prefix[:-1],
                           external_network='public')
        assert not net['changed'] and net['subnet']['cidr'] == '10.0.0.0/24', net['done']
        masters = [{'name': s.name, 'address': s.metadata['magnum_address']}
                   for s in servers if '-master-' in s.name]
        lb_args = dict(cluster='vmc', cloud=CLOUD, name=prefix + 'api-lb', ports=[6443],
                       subnet=net['subnet']['id'], address='10.0.0.5', masters=masters,
                       allowed_cidrs=['192.0.2.0/24', '10.0.0.0/24'])
        again = infra.module('openstack_load_balancer', **lb_args)
        assert not again['changed'] and again['load_balancer']['id'] == lb.id, again['done']
        told = infra.module('openstack_load_balancer', check_mode=True,
                            **dict(lb_args, masters=masters[:2]))
        assert told['done'] == ['remove member %s from %sapi-lb-6443-pool' % (
            masters[2]['address'], prefix)], told['done']
        assert len(list(conn.load_balancer.members(pool.id))) == 3
        listed = infra.module('openstack_servers', cluster='vmc', cloud=CLOUD)
        assert not listed['changed'] and sorted(s['name'] for s in listed['servers']) == names
        before = dict((s.name, s.id) for s in servers)

        # Grow by one: only the new server (and its port, volume, FIP) appears.
        infra.playbook({'cluster': 'vmc', 'operation': 'resize', 'node_count': 3})
        grown = dict((s.name, s.id) for s in servers_of(conn, prefix))
        assert len(grown) == 6 and all(grown[n] == i for n, i in before.items())
        new = [n for n in grown if n not in before]
        assert new == [prefix + 'node-2']
        assert conn.block_storage.find_volume(new[0] + '-docker')

        # Shrink by one named node: exactly that server and its resources go.
        leaving = prefix + 'node-0'
        infra.playbook({'cluster': 'vmc', 'operation': 'resize', 'node_count': 2,
                        'nodes_to_remove': [leaving]})
        left = [s.name for s in servers_of(conn, prefix)]
        assert leaving not in left and len(left) == 5 and prefix + 'node-2' in left
        assert conn.block_storage.find_volume(leaving + '-docker') is None
        assert conn.network.find_port(leaving + '-port') is None

        # A port a user added by hand on the cluster's network: delete refuses, naming it,
        # and leaves the cluster DELETE_FAILED (retryable); without it, delete goes through.
        network = found['networks'][0]
        port = conn.network.create_port(network_id=network['id'], name='users-own-port')
        try:
            run = infra.playbook({'cluster': 'vmc', 'operation': 'delete'}, check=False)
            assert run.returncode != 0 and 'users-own-port' in run.stdout
            cluster = infra.cluster('vmc')
            assert cluster['status'] == 'DELETE_FAILED', cluster['status']
            assert 'users-own-port' in cluster['status_reason']
            assert len(servers_of(conn, prefix)) == 5, 'delete removed things before refusing'
        finally:
            conn.network.delete_port(port)
        infra.playbook({'cluster': 'vmc', 'operation': 'delete'})
        assert_nothing_left(conn, prefix, fips_before)
    finally:
        cleanup(infra, 'vmc')


def test_security_groups_and_volumes_converge_in_one_run_each(conn, lab, tmp_path):
    """openstack_security_groups and openstack_volumes (one module run each, instead of one per
    rule or volume): what is missing is made, a second run changes nothing, check mode
    only tells, a rule added by hand stays, and volumes are deleted by name."""
    infra = Infra(tmp_path, lab)
    cluster = record(infra, 'cvg', 1, 1)
    ports = {'master': [{'protocol': 'tcp', 'min': 6443, 'max': 6443}],
             'worker': [{'protocol': 'udp', 'min': 8472, 'max': 8472}]}
    server = None
    try:
        args = dict(cluster='cvg', cloud=CLOUD, ports=ports, internal_cidrs=['10.9.0.0/24'])
        first = infra.module('openstack_security_groups', **args)
        assert first['changed'] and len(first['made']) == 2 + 2 * 3, first['made']
        master = conn.network.get_security_group(first['security_groups']['master'])
        stack = master.name[:-len('-secgroup-master')]
        assert stack.startswith('cvg-') and len(stack) == len('cvg-') + 12, stack
        assert master.description == 'Cluster %s: master nodes' % cluster['uuid']
        rules = sorted(str((r['protocol'], r['port_range_min'], r['remote_ip_prefix']))
                       for r in master.security_group_rules if r['direction'] == 'ingress')
        expected = [('tcp', 22, '0.0.0.0/0'), ('tcp', 6443, '0.0.0.0/0'),
                    (None, None, '10.9.0.0/24')]
        assert rules == sorted(str(r) for r in expected), rules
        conn.network.create_security_group_rule(
            security_group_id=master.id, direction='ingress', protocol='tcp',
            port_range_min=8080, port_range_max=8080, remote_ip_prefix='192.0.2.0/24')
        again = infra.module('openstack_security_groups', **args)
        assert not again['changed'] and again['made'] == []
        assert again['security_groups'] == first['security_groups']
        wider = dict(args, internal_cidrs=['10.9.0.0/24', '10.200.0.0/16'])
        told = infra.module('openstack_security_groups', check_mode=True, **wider)
        assert told['changed'] and len(told['made']) == 2, told['made']
        assert len(conn.network.get_security_group(master.id).security_group_rules) == \
            len(master.security_group_rules) + 1  # nothing made in check mode

        server = conn.compute.create_server(
            name=stack + '-master-0', image_id=conn.image.find_image(IMAGE).id,
            flavor_id=conn.compute.find_flavor('m1.tiny').id, networks='none')
        conn.compute.wait_for_server(server)
        volumes = [{'name': stack + '-master-0-docker', 'server': server.name, 'size': 1},
                   {'name': stack + '-master-0-etcd', 'server': server.name, 'size': 1}]
        made = infra.module('openstack_volumes', cluster='cvg', cloud=CLOUD, volumes=volumes)
        assert made['changed'] and len(made['done']) == 4, made['done']
        # Their ids, which the nodes find their devices by (openstack_node_volumes).
        assert made['volumes'] == dict((v['name'], conn.block_storage.find_volume(v['name']).id)
                                       for v in volumes)
        attached = sorted(conn.block_storage.find_volume(a['id']).name
                          for a in conn.compute.get_server(server.id).attached_volumes)
        assert attached == sorted(v['name'] for v in volumes)
        again = infra.module('openstack_volumes', cluster='cvg', cloud=CLOUD, volumes=volumes)
        assert not again['changed'], again['done']
        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server)
        server = None
        gone = infra.module('openstack_volumes', cluster='cvg', cloud=CLOUD, state='absent',
                            names=[v['name'] for v in volumes] + [stack + '-node-9-docker'])
        assert sorted(gone['done']) == sorted('delete ' + v['name'] for v in volumes)
        assert not [v for v in conn.block_storage.volumes() if v.name.startswith(stack)]
    finally:
        if server is not None:
            conn.compute.delete_server(server)
        cleanup(infra, 'cvg')


def test_upgrade_to_a_new_image_rebuilds_servers_one_at_a_time(conn, lab, tmp_path):
    """An upgrade to a template with another image rebuilds every server on it, the
    master first, one at a time (Nova's own action records), keeping the servers, their
    addresses and volumes; the node groups and the cluster then name the new image and
    template; a second run rebuilds nothing."""
    infra = Infra(tmp_path, lab)
    fips_before = set(ip.id for ip in own_fips(conn))
    new_image = debian_image(conn, IMAGE + '-r2')
    record(infra, 'upc', 1, 1, floating_ip_enabled=False)
    template(infra, 'upc-tpl2', image_id=new_image.name, floating_ip_enabled=False)
    try:
        infra.playbook({'cluster': 'upc'})
        prefix = infra.resources('upc')['resources']['networks'][0]['name'][:-len('network')]
        before = dict((s.name, (s.id, s.addresses, s.image.id)) for s in servers_of(conn, prefix))
        assert len(before) == 2 and new_image.id not in [b[2] for b in before.values()]
        # floating_ip_enabled false: the first master alone has one, the controller's jump
        # host to the others (tests/unit/test_cloud_servers.py; on real guests,
        # tests/test_real_guests.py)
        ports = dict((p.id, p.name) for p in conn.network.ports()
                     if (p.name or '').startswith(prefix))
        assert sorted(ports[ip.port_id] for ip in own_fips(conn) if ip.port_id in ports) == [
            prefix + 'master-0-port']

        infra.playbook({'cluster': 'upc', 'operation': 'upgrade',
                        'cluster_template': 'upc-tpl2'})
        after = servers_of(conn, prefix)
        assert dict((s.name, (s.id, s.addresses)) for s in after) == dict(
            (name, b[:2]) for name, b in before.items())
        assert all(s.image.id == new_image.id and s.status == 'ACTIVE' for s in after)
        assert all(len(s.attached_volumes) == 1 for s in after)
        rebuilds = sorted((a.start_time, s.name, conn.compute.get_server_action(a, s))
                          for s in after for a in conn.compute.server_actions(s)
                          if a.action == 'rebuild')
        assert [name for _start, name, _a in rebuilds] == [
            prefix + n for n in ('master-0', 'node-0')]
        for (_s, _n, earlier), (start, _name, _later) in zip(rebuilds, rebuilds[1:]):
            assert max(e.finish_time for e in earlier.events) <= start
        cluster = infra.cluster('upc')
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        groups = infra.module('nodegroup_info', cluster='upc')['nodegroups']
        assert set(g['image_id'] for g in groups) == {new_image.name}
        tpl2 = infra.module('cluster_template_info', name='upc-tpl2')['cluster_templates'][0]
        assert cluster['cluster_template_id'] == tpl2['uuid']

        # Again: every server is on its image, nothing is rebuilt.
        infra.playbook({'cluster': 'upc', 'operation': 'upgrade',
                        'cluster_template': 'upc-tpl2'})
        assert len([a for s in after for a in conn.compute.server_actions(s)
                    if a.action == 'rebuild']) == 2

        infra.playbook({'cluster': 'upc', 'operation': 'delete'})
        assert_nothing_left(conn, prefix, fips_before)
    finally:
        cleanup(infra, 'upc')
        conn.image.delete_image(new_image)


BM_CLASS = RUN
BM_FLAVOR = 'bm.' + RUN
# The Placement resource class Ironic reports BM_CLASS under.
BM_RESOURCE = 'CUSTOM_' + re.sub('[^A-Z0-9]', '_', BM_CLASS.upper())


@pytest.fixture
def bm_pool(conn):
    """Three fake-hardware Ironic nodes made available, and a Nova bare-metal flavor
    asking for their resource class (what an operator sets up)."""
    bm = conn.baremetal
    for stale in bm.nodes(details=True):  # left by a run interrupted hours ago
        if (stale.name or '').startswith('magnum-test-') and stale.created_at < (
                datetime.datetime.now(datetime.timezone.utc)
                - datetime.timedelta(hours=3)).isoformat():
            bm.set_node_maintenance(stale)
            bm.delete_node(stale)
    nodes = []
    for i in range(3):
        node = bm.create_node(name='%s-bm-%d' % (RUN, i), driver='fake-hardware',
                              resource_class=BM_CLASS,
                              properties={'cpus': 2, 'memory_mb': 2048, 'local_gb': 10,
                                          'cpu_arch': 'x86_64'})
        bm.create_port(node_id=node.id, address='52:54:00:%s' % ':'.join(
            '%02x' % b for b in os.urandom(3)))
        node = bm.set_node_provision_state(node, 'manage', wait=True, timeout=120)
        nodes.append(bm.set_node_provision_state(node, 'provide', wait=True, timeout=120))
    flavor = conn.compute.find_flavor(BM_FLAVOR) or conn.compute.create_flavor(
        name=BM_FLAVOR, ram=2048, vcpus=2, disk=10)
    conn.compute.create_flavor_extra_specs(flavor, {
        'resources:' + BM_RESOURCE: '1', 'resources:VCPU': '0',
        'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'})
    yield nodes
    for node in nodes:
        node = bm.get_node(node.id)
        if node.provision_state == 'active':
            bm.set_node_provision_state(node, 'deleted', wait=True, timeout=120)
        bm.set_node_maintenance(node)
        bm.delete_node(node)
    conn.compute.delete_flavor(flavor)


def bm_nodes(conn, uuid):
    """The Ironic nodes claimed for the cluster, by server name."""
    return dict((n.extra['magnum_node'], n) for n in conn.baremetal.nodes(details=True)
                if (n.extra or {}).get('magnum_cluster') == uuid)


def test_bm_cluster_deploys_ironic_nodes_grows_shrinks_and_releases_them(conn, lab, bm_pool,
                                                                         tmp_path):
    """server_type=bm, 1 master + 1 worker on Ironic nodes of the flavor's resource
    class: deployed with the image on the cluster's ports, floating IPs, no Nova server,
    volume or server group; grow by one; shrink by one named node (released, available
    again); a cluster needing more nodes than are free is refused before anything is
    made; an upgrade to another image rebuilds the nodes in place; delete releases every
    node and leaves nothing."""
    infra = Infra(tmp_path, lab)
    fips_before = set(ip.id for ip in own_fips(conn))
    image = conn.image.find_image(IMAGE)
    new_image = debian_image(conn, IMAGE + '-bm2')
    bare_metal = dict(server_type='bm', flavor_id=BM_FLAVOR, master_flavor_id=BM_FLAVOR,
                      docker_volume_size=None)
    cluster = record(infra, 'bmc', 1, 1, **bare_metal)
    uuid = cluster['uuid']
    try:
        infra.playbook({'cluster': 'bmc'})
        cluster = infra.cluster('bmc')
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        found = infra.resources('bmc')['resources']
        prefix = found['networks'][0]['name'][:-len('-network')] + '-'
        nodes = bm_nodes(conn, uuid)
        assert sorted(nodes) == [prefix + 'master-0', prefix + 'node-0']
        ports = dict((p.name, p) for p in conn.network.ports() if (p.name or '').startswith(prefix))
        for name, node in nodes.items():
            assert node.provision_state == 'active' and node.resource_class == BM_CLASS
            assert node.instance_info['image_source'] == image.id
            port = ports[name + '-port']
            assert node.extra['magnum_port'] == port.id
            assert node.extra['magnum_address'] == port.fixed_ips[0]['ip_address']
        assert sorted(n['name'] for n in found['baremetal_nodes']) == sorted(nodes)
        assert servers_of(conn, prefix) == []
        assert not [g for g in conn.compute.server_groups() if g.name.startswith(prefix)]
        assert not [v for v in conn.block_storage.volumes() if (v.name or '').startswith(prefix)]
        fips = [ip for ip in own_fips(conn) if ip.port_id in set(p.id for p in ports.values())]
        assert sorted(cluster['master_addresses'] + cluster['node_addresses']) == sorted(
            ip.floating_ip_address for ip in fips) and len(fips) == 2

        # Grow by one: the third node is deployed; the others are untouched.
        before = dict((name, node.id) for name, node in nodes.items())
        infra.playbook({'cluster': 'bmc', 'operation': 'resize', 'node_count': 2})
        grown = bm_nodes(conn, uuid)
        assert sorted(grown) == sorted(list(before) + [prefix + 'node-1'])
        assert all(grown[n].id == i for n, i in before.items())

        # No free node left: growing further is refused before anything is made.
        run = infra.playbook({'cluster': 'bmc', 'operation': 'resize', 'node_count': 3},
                             check=False)
        assert run.returncode != 0
        assert 'Not enough bare metal nodes for flavor %s' % BM_FLAVOR in run.stdout
        assert conn.network.find_port(prefix + 'node-2-port') is None

        # Shrink by one named node: that node is released (available, unmarked).
        leaving = prefix + 'node-0'
        released = grown[leaving].id
        infra.playbook({'cluster': 'bmc', 'operation': 'resize', 'node_count': 1,
                        'nodes_to_remove': [leaving]})
        assert sorted(bm_nodes(conn, uuid)) == [prefix + 'master-0', prefix + 'node-1']
        node = conn.baremetal.get_node(released)
        assert node.provision_state == 'available' and not node.instance_id
        assert 'magnum_cluster' not in (node.extra or {})
        assert conn.network.find_port(leaving + '-port') is None

        # Upgrade to a template with another image: each node is rebuilt on it (Ironic's
        # rebuild: the same node, port and address).
        before = bm_nodes(conn, uuid)
        template(infra, 'bmc-tpl2', image_id=new_image.name, **bare_metal)
        infra.playbook({'cluster': 'bmc', 'operation': 'upgrade', 'cluster_template': 'bmc-tpl2'})
        after = bm_nodes(conn, uuid)
        assert dict((n, (node.id, node.extra['magnum_address'])) for n, node in after.items()) == \
            dict((n, (node.id, node.extra['magnum_address'])) for n, node in before.items())
        assert all(node.provision_state == 'active' and
                   node.instance_info['image_source'] == new_image.id for node in after.values())
        assert infra.cluster('bmc')['status'] == 'UPDATE_COMPLETE'

        infra.playbook({'cluster': 'bmc', 'operation': 'delete'})
        assert bm_nodes(conn, uuid) == {}
        assert all(conn.baremetal.get_node(n.id).provision_state == 'available'
                   and not conn.baremetal.get_node(n.id).instance_id for n in bm_pool)
        assert_nothing_left(conn, prefix, fips_before)
    finally:
        cleanup(infra, 'bmc')
        conn.image.delete_image(new_image)


@pytest.mark.parametrize('server_type', ['vm', 'bm'])
def test_create_killed_midway_then_deleted_leaves_nothing(conn, lab, tmp_path, request,
                                                          server_type):
    """The create is killed once the first server (VM) or claimed Ironic node (bm) exists;
    delete then removes everything, and bare-metal nodes are available again."""
    infra = Infra(tmp_path, lab)
    fips_before = set(ip.id for ip in own_fips(conn))
    if server_type == 'bm':
        pool = request.getfixturevalue('bm_pool')
        uuid = record(infra, 'half', 1, 1, server_type='bm', flavor_id=BM_FLAVOR,
                      master_flavor_id=BM_FLAVOR, docker_volume_size=None)['uuid']

        def names():
            return list(bm_nodes(conn, uuid))
    else:
        record(infra, 'half', 1, 3)

        def names():
            return [s.name for s in conn.compute.servers()]
    try:
        proc = infra.start({'cluster': 'half'})
        # Kill it once the first server exists (the network and groups are made).
        prefix = [None]

        def some_server():
            for name in names():
                if name.startswith('half-') and '-master-' in name:
                    prefix[0] = name.split('master-')[0]
                    return True
            return proc.poll() is not None
        wait_for(some_server, timeout=600, interval=0.5)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert prefix[0], 'the create ended before a server appeared'
        assert infra.resources('half')['count'] > 0
        # The record is still CREATE_IN_PROGRESS (nobody reaped it: no API here); a
        # delete is always allowed.
        infra.playbook({'cluster': 'half', 'operation': 'delete'})
        assert_nothing_left(conn, prefix[0], fips_before)
        if server_type == 'bm':
            assert all(conn.baremetal.get_node(n.id).provision_state == 'available'
                       for n in pool)
    finally:
        cleanup(infra, 'half')


# The playbooks' cloud checks are the API's (CloudChecks, every field in
# test_rest_template_validation_against_the_cloud): here, one bad input (a keypair that
# does not exist) fails the playbook's run before anything is made.
@pytest.mark.parametrize('field, value, message', [
    ('keypair_id', 'no-such-key', 'Unable to find keypair no-such-key'),
])
def test_bad_cloud_inputs_fail_before_anything_is_made(conn, lab, tmp_path, field, value, message):
    infra = Infra(tmp_path, lab)
    record(infra, 'bad', 1, 1, **{field: value})
    try:
        run = infra.playbook({'cluster': 'bad'}, check=False)
        assert run.returncode != 0
        cluster = infra.cluster('bad')
        assert cluster['status'] == 'CREATE_FAILED' and message in cluster['status_reason'], \
            cluster['status_reason']
        assert infra.resources('bad')['count'] == 0
    finally:
        cleanup(infra, 'bad')


def test_servers_that_never_answer_over_ssh_fail_the_create_naming_them(conn, lab, tmp_path):
    """The lab's servers go ACTIVE and never boot: a create with its COE (not
    infrastructure only) waits for SSH, bounded, then fails naming the server and the
    connection's error (not Ansible's "All items completed"); the failure deletes."""
    infra = Infra(tmp_path, lab)
    fips_before = set(ip.id for ip in own_fips(conn))
    # Swarm: no driver preflight (Kubernetes' would refuse first: no artifacts here).
    cluster = record(infra, 'nossh', 1, 1, coe='swarm')
    try:
        run = infra.playbook({'cluster': 'nossh', 'infra_openstack_ssh_timeout': 10},
                             check=False, name='cluster_create')
        assert run.returncode != 0
        cluster = infra.cluster('nossh')
        reason = cluster['status_reason']
        assert cluster['status'] == 'CREATE_FAILED', reason
        found = infra.resources('nossh')['resources']
        prefix = found['networks'][0]['name'][:-len('-network')] + '-'
        names = [s.name for s in servers_of(conn, prefix)]
        assert len(names) == 2 and any(
            reason.startswith(n + ': timed out waiting for') for n in names), (names, reason)
        assert 'All items completed' not in reason
        # the bounds that ran out, and how a slow cloud's guests get longer
        assert "within the wait's 10 s, rebooted hard after 5 s of silence" in reason, reason
        assert 'infra_openstack_ssh_timeout' in reason, reason
        infra.playbook({'cluster': 'nossh'}, name='cluster_delete')
        assert_nothing_left(conn, prefix, fips_before)
    finally:
        cleanup(infra, 'nossh')


def test_delete_finds_a_server_that_appears_after_its_first_scan(conn, monkeypatch):
    """A create killed with a server POST in flight: Nova records the server after the
    delete's first scan. The delete scans again and removes it too (CI saw one left)."""
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    cluster = {'name': 'late', 'uuid': str(uuidlib.uuid4())}
    prefix = cloud.stack_name(cluster) + '-'
    network = conn.network.create_network(name=prefix + 'net')
    conn.network.create_subnet(name=prefix + 'subnet', network_id=network.id,
                               cidr='10.77.0.0/24', ip_version=4)
    scan, scans = cloud.scan, []

    def scan_then_a_server_appears(c, record):
        found = scan(c, record)
        if not scans:
            c.compute.create_server(name=prefix + 'node-9', flavor_id=c.compute.find_flavor(
                'm1.tiny').id, image_id=c.image.find_image(IMAGE).id,
                networks=[{'uuid': network.id}])
        scans.append(sorted(s['name'] for s in found['servers']))
        return found
    monkeypatch.setattr(cloud, 'scan', scan_then_a_server_appears)
    try:
        deleted = cloud.delete_all(conn, cluster, timeout=300)
        assert scans[0] == [] and prefix + 'node-9' in scans[1], scans
        assert [s['name'] for s in deleted['servers']] == [prefix + 'node-9']
        assert_nothing_left(conn, prefix, set(ip.id for ip in own_fips(conn)))
    finally:
        monkeypatch.undo()
        cloud.delete_all(conn, cluster, timeout=300)


def test_delete_removes_what_kubernetes_made_for_the_cluster_first(conn):
    """A LoadBalancer Service's Octavia load balancer and floating IP, and a
    PersistentVolume's Cinder volume, named as the cloud controller manager and Cinder CSI
    name them after the cluster: the cluster's delete removes them (and their VIP ports do
    not make it refuse "resources the cluster did not create"); another cluster's stay."""
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    cluster = {'name': 'svc', 'uuid': str(uuidlib.uuid4())}
    other = str(uuidlib.uuid4())
    prefix = cloud.stack_name(cluster) + '-'
    network = conn.network.create_network(name=prefix + 'net')
    subnet = conn.network.create_subnet(name=prefix + 'subnet', network_id=network.id,
                                        cidr='10.78.0.0/24', ip_version=4)
    public = conn.network.find_network('public')
    made = []
    try:
        lb = conn.load_balancer.create_load_balancer(
            name=cloud.K8S_LB_PREFIX % cluster['uuid'] + 'default_web',
            vip_subnet_id=subnet.id)
        theirs = conn.load_balancer.create_load_balancer(
            name=cloud.K8S_LB_PREFIX % other + 'default_web', vip_subnet_id=subnet.id)
        made.append(('lb', theirs.id))
        # The octavia-ingress-controller's: an Ingress's load balancer and security group.
        ingress = conn.load_balancer.create_load_balancer(
            name=cloud.K8S_INGRESS_PREFIX % cluster['uuid'] + 'default_web',
            vip_subnet_id=subnet.id)
        ingress_group = conn.network.create_security_group(
            name=cloud.K8S_INGRESS_PREFIX % cluster['uuid'] + 'default_web')
        fip = conn.network.create_ip(floating_network_id=public.id, description=(
            cloud.K8S_FIP_DESCRIPTION[0] + 'default/web' +
            cloud.K8S_FIP_DESCRIPTION[1] % cluster['uuid']))
        volume = conn.block_storage.create_volume(
            size=1, name='pvc-' + uuidlib.uuid4().hex,
            metadata={cloud.K8S_VOLUME_OWNER: cluster['uuid']})
        kept = conn.block_storage.create_volume(
            size=1, name='pvc-' + uuidlib.uuid4().hex, metadata={cloud.K8S_VOLUME_OWNER: other})
        made.append(('volume', kept.id))
        for balancer in (lb, theirs, ingress):
            conn.load_balancer.wait_for_load_balancer(balancer.id, wait=300)
        # Only this cluster's are the cluster's.
        found = cloud.scan(conn, cluster)
        assert sorted(b['id'] for b in found['load_balancers']) == sorted([lb.id, ingress.id])
        assert ingress_group.id in [g['id'] for g in found['security_groups']]
        assert [v['id'] for v in found['volumes']] == [volume.id]
        assert fip.id in [ip['id'] for ip in found['floating_ips']]
        cloud.delete_all(conn, cluster, timeout=300)
        assert conn.load_balancer.find_load_balancer(lb.id, ignore_missing=True) is None
        assert conn.load_balancer.find_load_balancer(ingress.id, ignore_missing=True) is None
        assert conn.network.find_security_group(ingress_group.id, ignore_missing=True) is None
        assert conn.load_balancer.find_load_balancer(theirs.id, ignore_missing=True)
        assert conn.network.find_ip(fip.id, ignore_missing=True) is None
        assert conn.block_storage.find_volume(volume.id, ignore_missing=True) is None
        assert conn.block_storage.find_volume(kept.id, ignore_missing=True) is not None
        assert cloud.scan(conn, cluster) == dict((kind, []) for kind in cloud.ORDER)
    finally:
        for kind, ident in made:
            if kind == 'lb':
                conn.load_balancer.delete_load_balancer(ident, cascade=True,
                                                        ignore_missing=True)
            else:
                conn.block_storage.delete_volume(ident, ignore_missing=True)
        try:
            cloud.delete_all(conn, cluster, timeout=300)
        except Exception:
            pass


# A chart's Secret as Cinder CSI's chart makes it from secret.data (the stand-in for the
# upstream chart, which cannot be fetched here).
SECRET_CHART = """apiVersion: v1
kind: Secret
metadata:
  name: {{ .Values.secret.name }}
stringData:
  {{- toYaml .Values.secret.data | nindent 2 }}
"""


def test_the_cloud_config_comes_from_the_clusters_cloud_and_logs_in(conn, lab, tmp_path):
    """cloud_provider_enabled / volume_driver=cinder: openstack_cloud_config writes the
    cloud-config from the job's cloud. Its [Global] logs in to the lab's Keystone; its
    [LoadBalancer] names the template's external network, the nodes' subnet and the
    Octavia labels; as Helm values it renders, through the real helm, into the Secret
    the pods read; its secrets are never in the module's answer."""
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
        cloud_config)
    import openstack
    infra = Infra(tmp_path, lab)
    infra.env['MAGNUM_CLUSTER_USER_TRUST'] = 'true'
    network = conn.network.find_network(INTERNAL_NET)
    subnet = conn.network.create_subnet(name=RUN + '-cc', network_id=network.id,
                                        cidr='10.79.0.0/24', ip_version=4)
    try:
        record(infra, 'cc', 1, 0, volume_driver='cinder', fixed_network=INTERNAL_NET,
               fixed_subnet=subnet.name, labels={'cloud_provider_enabled': 'true',
                                                 'octavia_lb_algorithm': 'SOURCE_IP_PORT'})
        dest = tmp_path / 'cloud.conf'
        made = infra.module('openstack_cloud_config', cluster='cc', cloud=CLOUD, dest=str(dest))
        assert oct(dest.stat().st_mode & 0o777) == '0o600'
        text = dest.read_text()
        conf = cloud_config.parse(text)
        own = conf['Global']
        assert own['username'] == RUN and own['tenant-name'] == RUN
        assert own['password'] not in json.dumps(made)
        assert made['sections']['Global'] == list(own)
        logged_in = openstack.connect(
            auth_url=own['auth-url'], username=own['username'], password=own['password'],
            project_name=own['tenant-name'], user_domain_name=own['user-domain-name'],
            project_domain_name=own['tenant-domain-name'], region_name=own.get('region'),
            load_yaml_config=False, load_envvars=False)
        assert logged_in.current_project_id == conn.current_project_id
        assert conf['LoadBalancer'] == {
            'floating-network-id': conn.network.find_network('public').id,
            'subnet-id': subnet.id, 'lb-method': 'SOURCE_IP_PORT', 'create-monitor': 'true'}
        # The octavia-ingress-controller's form of the same.
        ingress = tmp_path / 'ingress.json'
        infra.module('openstack_cloud_config', cluster='cc', cloud=CLOUD, dest=str(ingress),
                     config_format='octavia_ingress')
        read = yaml.safe_load(ingress.read_text())
        assert read['openstack']['username'] == RUN and read['octavia']['subnet-id'] == subnet.id
        assert read['cluster-name'] == infra.cluster('cc')['uuid']
        # A second run writes nothing new; a subnet that is not there fails naming it.
        assert infra.module('openstack_cloud_config', cluster='cc', cloud=CLOUD,
                            dest=str(dest))['changed'] is False
        bad = subprocess.run([str(BIN / 'ansible'), 'localhost', '-m',
                              'openstack.magnum.openstack_cloud_config', '-a', json.dumps(
                                  dict(cluster='cc', cloud=CLOUD, subnet='no-such-subnet',
                                       dest=str(tmp_path / 'x')))],
                             cwd=str(REPO), env=infra.env, capture_output=True, text=True)
        assert bad.returncode != 0
        assert "The cluster's subnet no-such-subnet does not exist." in bad.stdout
        if HELM:
            values = tmp_path / 'cinder-csi.values.json'
            infra.module('openstack_cloud_config', cluster='cc', cloud=CLOUD, dest=str(values),
                         values={'secret': {'name': 'cinder-csi-cloud-config'}},
                         values_key=['secret', 'data', 'cloud.conf'])
            chart = tmp_path / 'chart'
            (chart / 'templates').mkdir(parents=True)
            (chart / 'Chart.yaml').write_text('apiVersion: v2\nname: csi\nversion: 1.0.0\n')
            (chart / 'templates' / 'secret.yaml').write_text(SECRET_CHART)
            (secret,) = list(yaml.safe_load_all(helm('template', 'x', str(chart), '-f',
                                                     str(values))))
            assert secret['metadata']['name'] == 'cinder-csi-cloud-config'
            assert secret['stringData']['cloud.conf'] == text
    finally:
        conn.network.delete_subnet(subnet, ignore_missing=True)


def assert_nothing_left(conn, prefix, fips_before):
    left = []
    left += [s.name for s in conn.compute.servers() if s.name.startswith(prefix)]
    left += [v.name for v in conn.block_storage.volumes() if (v.name or '').startswith(prefix)]
    left += [p.name for p in conn.network.ports() if (p.name or '').startswith(prefix)]
    left += [n.name for n in conn.network.networks() if n.name.startswith(prefix)]
    left += [s.name for s in conn.network.subnets() if s.name.startswith(prefix)]
    left += [r.name for r in conn.network.routers() if r.name.startswith(prefix)]
    left += [g.name for g in conn.network.security_groups() if g.name.startswith(prefix)]
    left += [g.name for g in conn.compute.server_groups() if g.name.startswith(prefix)]
    left += [lb.name for lb in conn.load_balancer.load_balancers() if lb.name.startswith(prefix)]
    left += [ip.floating_ip_address for ip in own_fips(conn) if ip.id not in fips_before]
    left += [n.name for n in conn.baremetal.nodes(details=True)
             if ((n.extra or {}).get('magnum_node') or '').startswith(prefix)]
    assert left == [], left


def cleanup(infra, name):
    try:
        infra.module('openstack_resources', cluster=name, cloud=CLOUD, state='absent')
    except AssertionError:
        pass


@contextlib.contextmanager
def counted_api(lab, project_dir, tmp_path, store):
    """An API on the lab (provider openstack, store ``store`` in ``tmp_path``) whose
    Keystone logins are counted: yields its /v1/ URL and the counter, stops both."""
    from conftest import ApiServer
    from standins.keystone_counter import counted_clouds_yaml
    proxied = tmp_path / 'clouds.yaml'
    proxy = counted_clouds_yaml(lab, CLOUD, proxied)
    server = ApiServer('sqlite:///%s' % (tmp_path / store), project_dir, tmp_path,
                       provider='openstack', args=['--health-interval', '0'],
                       env={'MAGNUM_CLOUD': CLOUD, 'OS_CLIENT_CONFIG_FILE': str(proxied)})
    try:
        yield server.start().url + '/v1/', proxy
    finally:
        server.stop()
        proxy.stop()


@pytest.fixture
def cloud_api(conn, lab, tmp_path):
    from conftest import ApiServer
    server = ApiServer('sqlite:///%s' % (tmp_path / 'api.sqlite'), REPO, tmp_path,
                       provider='openstack',
                       env={'MAGNUM_CLOUD': CLOUD, 'OS_CLIENT_CONFIG_FILE': lab})
    yield server.start()
    server.stop()


def test_request_cloud_checks_log_in_once_and_keep_their_connection(conn, lab, tmp_path):
    """Templates checked against the cloud at request time: the API keeps its connection
    (one login, services discovered once), so every request after the first only looks
    its resources up; a bad one is still refused with Magnum's message."""
    import requests

    headers = {'OpenStack-API-Version': 'container-infra latest'}
    with counted_api(lab, REPO, tmp_path, 'api.sqlite') as (url, proxy):
        good = {'coe': 'kubernetes', 'image_id': IMAGE, 'external_network_id': 'public',
                'keypair_id': KEYPAIR, 'flavor_id': 'm1.tiny', 'master_flavor_id': 'm1.tiny'}
        for i in range(3):
            resp = requests.post(url + 'clustertemplates', json=dict(good, name='t%d' % i),
                                 headers=headers, timeout=60)
            assert resp.status_code == 201, resp.text
        resp = requests.patch(url + 'clustertemplates/t0', headers=headers, timeout=60, json=[
            {'op': 'replace', 'path': '/flavor_id', 'value': 'm1.nope'}])
        assert resp.status_code == 400 and 'Unable to find flavor m1.nope' in resp.text
        assert proxy.logins == 1, proxy.logins


@pytest.mark.parametrize('field, value, status, message', [
    ('image_id', 'no-such-image', 400, 'Image no-such-image could not be found.'),
    ('image_id', 'tiny', 400, "Image tiny doesn't contain os_distro field."),
    ('flavor_id', 'm1.nope', 400, 'Unable to find flavor m1.nope.'),
    ('master_flavor_id', 'm1.nope', 400, 'Unable to find flavor m1.nope.'),
    ('external_network_id', 'no-such-net', 400, 'Unable to find external network no-such-net'),
    # {internal}: this process's own network (its name differs between test processes)
    ('external_network_id', '{internal}', 400,
     'The network {internal} is not an external network (router:external).'),
    ('fixed_network', 'no-such-net', 400, 'Unable to find fixed network no-such-net'),
])
def test_rest_template_validation_against_the_cloud(cloud_api, field, value, status, message):
    import requests
    value, message = [text.format(internal=INTERNAL_NET) for text in (value, message)]
    headers = {'OpenStack-API-Version': 'container-infra latest'}
    good = {'name': 'ok', 'coe': 'kubernetes', 'image_id': IMAGE, 'external_network_id': 'public',
            'keypair_id': KEYPAIR, 'flavor_id': 'm1.tiny', 'master_flavor_id': 'm1.tiny'}
    resp = requests.post(cloud_api.url + '/v1/clustertemplates', json=dict(good, **{field: value}),
                         headers=headers, timeout=60)
    assert resp.status_code == status, resp.text
    assert resp.json()['errors'][0]['detail'] == message
    created = requests.post(cloud_api.url + '/v1/clustertemplates', json=good, headers=headers,
                            timeout=60)
    assert created.status_code == 201, created.text
    assert created.json()['cluster_distro'] == 'debian'
    # A cluster's own flavor is checked too.
    resp = requests.post(cloud_api.url + '/v1/clusters', json={
        'name': 'c', 'cluster_template_id': 'ok', 'flavor_id': 'm1.nope'}, headers=headers,
        timeout=60)
    assert resp.status_code == 400 and 'Unable to find flavor m1.nope.' in resp.text


def test_with_no_external_network_named_the_clouds_only_one_serves_or_the_choice_is_asked(
        conn):
    """A template may name no external network (optional in Magnum 23): its clusters'
    routers and floating IPs take the cloud's only router:external network; on a cloud with
    several, the cluster is refused before anything is made, naming them."""
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
    checks = cloud.CloudChecks(conn)
    public = conn.network.find_network('public')
    assert checks.external_network(None) is None      # a template's check: optional
    assert checks.external_network(None, pick=True) == public.id
    assert checks.external_network('public') == public.id
    second = conn.network.create_network(name='magnum-test-second-external',
                                         is_router_external=True)
    try:
        with pytest.raises(Invalid) as refused:
            checks.external_network(None, pick=True)
        assert str(refused.value) == (
            "The cluster template names no external network and the cloud has 2 "
            "(magnum-test-second-external, public): set the template's external_network_id "
            "(--external-network).")
    finally:
        conn.network.delete_network(second)


def test_the_nodes_machine_is_read_from_their_images_architecture_before_any_exists(conn):
    """The provider tells the COE roles' preflight the nodes' machine from the image's
    Glance architecture property (Nova's names; Debian's and Go's aliases taken), before
    any server is made; an image that names none leaves it to the nodes."""
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    checks = cloud.CloudChecks(conn)
    made = [conn.image.create_image(name='magnum-test-arch-%s' % (given or 'none'),
                                    data=b'disk', disk_format='raw', container_format='bare',
                                    **({'architecture': given} if given else {}))
            for given in ('aarch64', 'amd64', None)]
    try:
        assert [checks.image_machine(image.id) for image in made] == ['aarch64', 'x86_64', None]
    finally:
        for image in made:
            conn.image.delete_image(image)


def test_an_image_that_lacks_the_drivers_packages_is_refused_before_anything_is_made(
        conn, cloud_api):
    """An image that lists the packages it holds (Glance's magnum_packages, as the node
    image playbooks/cloud_image.yml builds has it) and lacks some the driver's nodes need:
    the template is refused, naming them and the fixes; with a proxy the nodes install
    them through, it is taken."""
    import requests
    conn.image.create_image(name=BARE_IMAGE, data=b'disk', disk_format='raw',
                            container_format='bare', os_distro='debian',
                            magnum_packages='python3 ethtool')
    headers = {'OpenStack-API-Version': 'container-infra latest'}
    body = {'name': 'bare', 'coe': 'swarm', 'image_id': BARE_IMAGE,
            'external_network_id': 'public', 'flavor_id': 'm1.tiny', 'master_flavor_id': 'm1.tiny'}
    resp = requests.post(cloud_api.url + '/v1/clustertemplates', json=body, headers=headers,
                         timeout=60)
    assert resp.status_code == 400, resp.text
    assert resp.json()['errors'][0]['detail'] == (
        'Image %s lacks packages the swarm_mode driver needs on its nodes: docker.io (its '
        'Glance property magnum_packages lists what it holds). Upload a node image that holds '
        'them (ansible-playbook playbooks/cloud_image.yml builds one), or give the template an '
        'http_proxy or https_proxy through which the nodes can install them.' % BARE_IMAGE)
    resp = requests.post(cloud_api.url + '/v1/clustertemplates', headers=headers, timeout=60,
                         json=dict(body, http_proxy='http://proxy.example:3128'))
    assert resp.status_code == 201, resp.text


def test_a_cloud_that_takes_release_images_only_refuses_another_kube_tag(conn, monkeypatch):
    """MAGNUM_K8S_IMAGE_RELEASE=require: a Kubernetes template's image must be the release
    image of its kube_tag (Glance property kube_version, as playbooks/cloud_image.yml with
    cloud_image_kube_tag uploads it); push (the default) takes any image."""
    from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
    from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import cloud
    checks = cloud.CloudChecks(conn)
    made = [conn.image.create_image(name='magnum-test-release-%s' % (version or 'none'),
                                    data=b'disk', disk_format='raw', container_format='bare',
                                    os_distro='debian',
                                    **({'kube_version': version} if version else {}))
            for version in ('v1.36.2', None)]
    release, plain = made

    def template(image, kube_tag):
        return {'coe': 'kubernetes', 'server_type': 'vm', 'cluster_distro': 'debian',
                'image_id': image.id, 'labels': {'kube_tag': kube_tag}}
    try:
        for image in made:   # the default
            checks.node_image(template(image, 'v1.36.3'))
        monkeypatch.setenv('MAGNUM_K8S_IMAGE_RELEASE', 'require')
        checks.node_image(template(release, 'v1.36.2'))
        with pytest.raises(Invalid, match=r'^Image %s holds Kubernetes v1.36.2 \(its Glance '
                           r'property kube_version\), not the template\'s kube_tag v1.36.3'
                           % release.id):
            checks.node_image(template(release, 'v1.36.3'))
        with pytest.raises(Invalid, match=r'^Image %s holds no Kubernetes release .*'
                           r'cloud_image_kube_tag=v1.36.2\) and name it' % plain.id):
            checks.node_image(template(plain, 'v1.36.2'))
    finally:
        for image in made:
            conn.image.delete_image(image)


def test_rest_keypair_is_checked_when_a_cluster_is_made(cloud_api):
    """As Magnum: a template's keypair is not checked (a template without a valid
    keypair is valid), a cluster's is - its own, else the template's: 404."""
    import requests
    headers = {'OpenStack-API-Version': 'container-infra latest'}
    url = cloud_api.url + '/v1/'
    resp = requests.post(url + 'clustertemplates', headers=headers, timeout=60, json={
        'name': 'nokey', 'coe': 'kubernetes', 'image_id': IMAGE, 'keypair_id': 'no-such-key',
        'external_network_id': 'public', 'flavor_id': 'm1.tiny', 'master_flavor_id': 'm1.tiny'})
    assert resp.status_code == 201, resp.text
    for body, missing in (({}, 'no-such-key'), ({'keypair': 'other-key'}, 'other-key')):
        resp = requests.post(url + 'clusters', headers=headers, timeout=60,
                             json=dict(body, name='c', cluster_template_id='nokey'))
        assert resp.status_code == 404, resp.text
        assert resp.json()['errors'][0]['detail'] == 'Unable to find keypair %s.' % missing
    assert requests.get(url + 'clusters', headers=headers, timeout=60).json()['clusters'] == []


def test_rest_cluster_create_checks_room_on_the_cloud(cloud_api, bm_pool):
    """More servers than the compute quota allows, or more bare-metal servers than there
    are free Ironic nodes of the flavor's class: 400 before anything is recorded."""
    import requests
    headers = {'OpenStack-API-Version': 'container-infra latest'}
    url = cloud_api.url + '/v1/'
    base = {'coe': 'kubernetes', 'image_id': IMAGE, 'external_network_id': 'public',
            'keypair_id': KEYPAIR}
    for name, extra in (('vm', {'flavor_id': 'm1.tiny', 'master_flavor_id': 'm1.tiny'}),
                        ('bm', {'flavor_id': BM_FLAVOR, 'master_flavor_id': BM_FLAVOR,
                                'server_type': 'bm'})):
        resp = requests.post(url + 'clustertemplates', json=dict(base, name=name, **extra),
                             headers=headers, timeout=60)
        assert resp.status_code == 201, resp.text
    resp = requests.post(url + 'clusters', json={'name': 'big', 'cluster_template_id': 'vm',
                                                 'node_count': 50}, headers=headers, timeout=60)
    assert resp.status_code == 400, resp.text
    assert resp.json()['errors'][0]['detail'].startswith(
        'Quota exceeded for instances: Requested 51, but already used'), resp.text
    resp = requests.post(url + 'clusters', json={'name': 'bigbm', 'cluster_template_id': 'bm',
                                                 'node_count': 3}, headers=headers, timeout=60)
    assert resp.status_code == 400, resp.text
    assert resp.json()['errors'][0]['detail'] == (
        'Not enough bare metal nodes for flavor %s (resource class %s): 4 needed, '
        '3 available.' % (BM_FLAVOR, BM_RESOURCE))
    listed = requests.get(url + 'clusters', headers=headers, timeout=60).json()['clusters']
    assert listed == []


def test_a_jobs_module_runs_share_one_keystone_login(conn, lab, project, tmp_path):
    """openstacksdk's auth cache, one per job (api/auth_cache.py): a cluster create and
    its delete through the API each run many OpenStack modules, each a process of its
    own, yet log in to Keystone once; the cached login does not outlive the run."""
    import requests

    headers = {'OpenStack-API-Version': 'container-infra latest'}
    try:
        # the store Infra's cleanup reads: m.sqlite
        with counted_api(lab, project, tmp_path, 'm.sqlite') as (api, proxy):
            def settled():
                shown = requests.get(api + 'clusters/c', headers=headers, timeout=60)
                if shown.status_code == 404:
                    return 'GONE'
                status = shown.json()['status']
                return status if 'IN_PROGRESS' not in status else None

            assert requests.post(api + 'clustertemplates', headers=headers, timeout=60, json={
                'name': 't', 'coe': 'kubernetes', 'image_id': IMAGE, 'keypair_id': KEYPAIR,
                'external_network_id': 'public', 'flavor_id': 'm1.tiny',
                'master_flavor_id': 'm1.tiny'}).status_code == 201
            for method, path, body, done in (
                    ('post', 'clusters', {'name': 'c', 'cluster_template_id': 't',
                                          'node_count': 1}, 'CREATE_COMPLETE'),
                    ('delete', 'clusters/c', None, 'GONE')):
                answer = getattr(requests, method)(api + path, json=body, headers=headers,
                                                   timeout=60)
                assert answer.status_code in (202, 204), answer.text
                before = proxy.logins   # the API's own cloud checks ran within the request
                assert wait_for(settled, timeout=900, interval=2) == done
                assert proxy.logins - before == 1, (path, proxy.logins - before)
            # removed when the run ends (which is a moment after the delete purged the cluster)
            assert wait_for(lambda: not list((tmp_path / 'jobs').glob('**/auth-cache.json'))
                            and not list((tmp_path / 'jobs').glob('**/secure.yaml')), timeout=60)
    finally:
        cleanup(Infra(tmp_path, lab), 'c')
