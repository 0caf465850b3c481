"""The API behind the lab's real Keystone (`--auth keystone`): keystonemiddleware
validates tokens, the project and roles come from the token, and the unchanged
`openstack coe` client of an ordinary user (password auth, endpoint from the catalog)
works against it. The run makes its own projects, users, region and catalog entry from
the lab's admin and deletes them after. The server runs the test driver (provider
none), so clusters complete; identity is the real thing."""

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
import yaml

from conftest import (LAB_CLOUD, LAB_CLOUDS_YAML, NEEDS_LAB, ApiServer, debian_image,
                      lab_connect, wait_for)
from standins.keystone_counter import CountingProxy

pytestmark = NEEDS_LAB
OPENSTACK = str(Path(sys.executable).parent / 'openstack')
RUN = 'magnum-ks-' + uuidlib.uuid4().hex[:8]
LATEST = {'OpenStack-API-Version': 'container-infra latest'}


def catalog_service(admin, service_type='container-infra', name='magnum'):
    """The one service of ``service_type`` the runs' endpoints (one region each) belong
    to, named as Magnum's deployments name it (the cluster autoscaler's magnum provider
    looks ``magnum`` and ``heat`` up by name): a client that takes the catalog's first
    service of a type (Horizon, magnum-ui) then finds its run's endpoint beside the others
    of parallel runs. Made once (a file lock keeps parallel runs from making two), kept."""
    with open(os.path.join(tempfile.gettempdir(), 'magnum-tests-keystone.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = [s for s in admin.identity.services() if s.type == service_type]
        return found[0] if found else admin.identity.create_service(
            name=name, type=service_type)


@contextlib.contextmanager
def identities(tmp_path, project, provider='none', args=(), trustees=False, guest_host=None,
               env=None):
    """A clouds.yaml with clouds alice and bob (members of two projects of their own),
    boss (admin of alice's project) and validator (the service user the API validates
    tokens with; admin of a service project of its own), all in a region of this run whose
    catalog has the API as container-infra; and the API serving it, with ``provider``
    (openstack: on the lab, its cloud the validator's). The API reaches Keystone through a
    CountingProxy (yielded last): its logins are counted. ``args``: more of the API's;
    ``trustees``: clusters get Magnum's trusts, their trustee users in a domain of the
    run's (--cluster-user-trust --trustee-domain); ``env``: more of the API's environment.
    ``guest_host``: the cloud as a real one's guests reach it - every endpoint of the run's
    region (Keystone, Nova, Neutron, Glance, the API as container-infra and its Heat view
    as orchestration) at that address of the host, relayed to the services on the
    loopback (tests/standins/tcp_relay.py), and every cloud (the validator's too, in the run's
    region, without the counter) signing in there."""
    admin = lab_connect(LAB_CLOUDS_YAML)
    with open(LAB_CLOUDS_YAML) as f:
        base = yaml.safe_load(f)['clouds'][LAB_CLOUD]
    made, clouds, projects, counter = [], {}, {}, None

    def make(kind, **attrs):
        """Create an identity resource; the fixture deletes it, last made first."""
        resource = getattr(admin.identity, 'create_' + kind)(**attrs)
        made.append((kind, resource))
        return resource

    clouds_yaml = str(tmp_path / 'clouds.yaml')
    if trustees:
        args = list(args) + ['--cluster-user-trust', '--trustee-domain', RUN + '-trustees']
    server = ApiServer('sqlite:///%s' % (tmp_path / 'api.sqlite'), project, tmp_path,
                       provider=provider,
                       env=dict(env or {}, OS_CLIENT_CONFIG_FILE=clouds_yaml,
                                MAGNUM_CLOUD='validator', XDG_DATA_HOME=str(tmp_path / 'data')),
                       args=['--auth', 'keystone', '--keystone-cloud', 'validator'] + list(args))
    relay = None
    try:
        if guest_host:
            relay, base = guest_endpoints(admin, base, guest_host, server.port, make)
        if trustees:
            make('domain', name=RUN + '-trustees', description='magnum tests: trustees')
        for name in ('a', 'b', 'service'):
            projects[name] = make('project', name='%s-%s' % (RUN, name), domain_id='default',
                                  description='magnum tests')
        users = {'alice': ('a', 'member'), 'bob': ('b', 'member'), 'boss': ('a', 'admin'),
                 'validator': ('service', 'admin')}
        for user_name, (project_key, role) in users.items():
            password = uuidlib.uuid4().hex
            user = make('user', name='%s-%s' % (RUN, user_name), password=password,
                        domain_id='default')
            admin.identity.assign_project_role_to_user(projects[project_key], user,
                                                       admin.identity.find_role(role))
            auth = dict(base['auth'], username=user.name, password=password,
                        project_name=projects[project_key].name, user_domain_name='Default',
                        project_domain_name='Default')
            clouds[user_name] = dict(base, auth=auth, region_name=RUN)
        if not guest_host:
            clouds['validator']['region_name'] = base.get('region_name')
            keystone = urlsplit(base['auth']['auth_url'])
            counter = CountingProxy('%s://%s' % (keystone.scheme, keystone.netloc))
            clouds['validator']['auth']['auth_url'] = counter.url + keystone.path
        (tmp_path / 'clouds.yaml').write_text(yaml.safe_dump({'clouds': clouds}))
        if not guest_host:
            make('region', id=RUN, description='magnum tests')
        service = catalog_service(admin)
        make('endpoint', service_id=service.id, interface='public', region_id=RUN,
             url='http://%s:%d/v1' % (guest_host or '127.0.0.1', server.port))
        # Keystone revokes tokens issued in the second of a role change
        time.sleep(1)
        yield server.start(), projects, clouds_yaml, counter
    finally:
        server.stop()
        if counter is not None:
            counter.stop()
        if relay is not None:
            relay.terminate()
            relay.wait(10)
        for kind, resource in reversed(made):
            if kind == 'domain':    # Keystone deletes disabled domains only
                admin.identity.update_domain(resource, is_enabled=False)
            getattr(admin.identity, 'delete_' + kind)(resource)


def guest_endpoints(admin, base, host, api_port, make):
    """The run's region with endpoints at ``host`` (see identities) and the relay process
    serving them; returns it and ``base`` (the lab's cloud) signing in there."""
    services = dict((s.id, s.type) for s in admin.identity.services())
    wanted = ('identity', 'compute', 'network', 'image')
    # every interface (keystonemiddleware validates tokens on the internal one)
    endpoints = [e for e in admin.identity.endpoints(region_id=base.get('region_name'))
                 if services.get(e.service_id) in wanted]
    ports = sorted(set(urlsplit(e.url).port for e in endpoints) | {api_port})
    relay_script = Path(__file__).parent / 'standins/tcp_relay.py'
    relay = subprocess.Popen([sys.executable, str(relay_script)] + [
        '%s:%d=127.0.0.1:%d' % (host, port, port) for port in ports],
        stdout=subprocess.PIPE, text=True)
    assert relay.stdout.readline().startswith('relaying'), 'the relay did not start'
    make('region', id=RUN, description='magnum tests: endpoints the guests reach')
    for endpoint in endpoints:
        parts = urlsplit(endpoint.url)
        make('endpoint', service_id=endpoint.service_id, interface=endpoint.interface,
             region_id=RUN, url=parts._replace(netloc='%s:%d' % (host, parts.port)).geturl())
    heat = catalog_service(admin, 'orchestration', 'heat')
    make('endpoint', service_id=heat.id, interface='public', region_id=RUN,
         url='http://%s:%d/heat/v1/%%(project_id)s' % (host, api_port))
    keystone = urlsplit(base['auth']['auth_url'])
    auth_url = keystone._replace(netloc='%s:%d' % (host, keystone.port)).geturl()
    return relay, dict(base, auth=dict(base['auth'], auth_url=auth_url))


@pytest.fixture
def keystone(tmp_path, project):
    """The API behind Keystone with the test driver and no infrastructure."""
    with identities(tmp_path, project) as found:
        yield found


@pytest.fixture
def keystone_cloud(tmp_path, project):
    """The API behind Keystone, building on the lab (the openstack provider) with the
    test driver as COE (fake-virt servers boot no guest); clusters get trusts."""
    with identities(tmp_path, project, provider='openstack', trustees=True) as found:
        yield found


def coe(clouds_yaml, cloud, *args, ok=True):
    """The unchanged CLI of a user: password auth, Magnum's endpoint from the catalog."""
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=clouds_yaml)
    for key in [k for k in env if k.startswith('OS_') and k != 'OS_CLIENT_CONFIG_FILE']:
        del env[key]
    proc = subprocess.run([OPENSTACK, '--os-cloud', cloud, 'coe'] + list(args),
                          capture_output=True, text=True, timeout=120, env=env)
    if ok:
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return json.loads(proc.stdout) if '-f' in args else proc.stdout
    return proc


def test_api_behind_keystone_takes_identity_from_tokens(keystone):
    server, projects, clouds_yaml, _ = keystone
    # no token, a forged identity, or a bad token: Keystone's 401 in Magnum's error body
    for headers in ({}, {'X-Project-Id': projects['a'].id, 'X-Roles': 'admin'},
                    {'X-Auth-Token': 'not-a-token'}):
        resp = requests.get(server.url + '/v1/clusters', headers=dict(LATEST, **headers),
                            timeout=30)
        assert resp.status_code == 401, resp.text
        assert resp.json()['errors'][0]['detail'] == \
            'The request you have made requires authentication.'
        assert resp.headers['WWW-Authenticate'].startswith('Keystone uri=')
    # the version documents stay public
    assert requests.get(server.url + '/v1', timeout=30).json()['id'] == 'v1'

    # an ordinary member, through the catalog: template and cluster land in their project
    coe(clouds_yaml, 'alice', 'cluster', 'template', 'create', 'tpl', '--coe', 'kubernetes',
        '--image', 'debian-12', '--external-network', 'public', '--keypair', 'kp',
        '--labels', 'kube_tag=v1.30.1')
    coe(clouds_yaml, 'alice', 'cluster', 'create', 'c1', '--cluster-template', 'tpl',
        '--node-count', '1')
    assert wait_for(lambda: 'IN_PROGRESS' not in coe(
        clouds_yaml, 'alice', 'cluster', 'show', 'c1', '-f', 'json')['status'])
    shown = coe(clouds_yaml, 'alice', 'cluster', 'show', 'c1', '-f', 'json')
    assert shown['status'] == 'CREATE_COMPLETE'
    assert shown['project_id'] == projects['a'].id

    # another project's member sees none of it, and may not touch it
    assert coe(clouds_yaml, 'bob', 'cluster', 'list', '-f', 'json') == []
    hidden = coe(clouds_yaml, 'bob', 'cluster', 'show', 'c1', ok=False)
    assert hidden.returncode != 0 and 'could not be found' in hidden.stderr
    refused = coe(clouds_yaml, 'bob', 'cluster', 'delete', 'c1', ok=False)
    assert 'could not be found' in refused.stdout + refused.stderr
    assert coe(clouds_yaml, 'alice', 'cluster', 'list', '-f', 'json')[0]['name'] == 'c1'
    assert '-----BEGIN CERTIFICATE-----' in coe(clouds_yaml, 'alice', 'ca', 'show', 'c1')
    assert coe(clouds_yaml, 'bob', 'ca', 'show', 'c1', ok=False).returncode != 0

    # admin-only endpoints follow the token's roles, not what a caller claims
    member = coe(clouds_yaml, 'alice', 'service', 'list', ok=False)
    assert member.returncode != 0 and '403' in member.stdout + member.stderr
    services = coe(clouds_yaml, 'boss', 'service', 'list', '-f', 'json')
    assert services and services[0]['binary'] == 'magnum-conductor'

    coe(clouds_yaml, 'alice', 'cluster', 'delete', 'c1')
    assert wait_for(lambda: coe(clouds_yaml, 'alice', 'cluster', 'list', '-f', 'json') == [])


def lab_region_connection(clouds_yaml, cloud):
    """A user's own connection to the lab's services (their clouds' region is the run's,
    which has the API's endpoint only)."""
    import openstack
    with open(LAB_CLOUDS_YAML) as f:
        region = yaml.safe_load(f)['clouds'][LAB_CLOUD].get('region_name')
    with open(clouds_yaml) as f:
        config = yaml.safe_load(f)['clouds'][cloud]
    return openstack.connect(load_yaml_config=False, load_envvars=False,
                             **dict(config, region_name=region))


def test_clusters_build_in_the_callers_project_with_a_credential_of_their_own(
        keystone_cloud, tmp_path):
    server, projects, clouds_yaml, keystone_logins = keystone_cloud
    admin = lab_connect(LAB_CLOUDS_YAML)
    alice = lab_region_connection(clouds_yaml, 'alice')
    keypair = 'kp-' + RUN
    image = debian_image(alice, 'debian-12-' + RUN)
    alice.compute.create_keypair(name=keypair)

    def servers(project_key):
        return sorted(s.name for s in admin.compute.servers(all_projects=True,
                                                            project_id=projects[project_key].id))

    def credentials(user_id):
        return sorted((c.id, c.name) for c in admin.identity.application_credentials(user_id))

    def trusts(user_id):
        """alice's trusts, with their trustee users (those left in the run's domain)."""
        domain = admin.identity.find_domain(RUN + '-trustees')
        return (sorted((t.id, t.trustee_user_id) for t in admin.identity.trusts(
                    trustor_user_id=user_id)),
                sorted(u.id for u in admin.identity.users(domain_id=domain.id)))

    def settled(name):
        status = coe(clouds_yaml, 'alice', 'cluster', 'show', name, '-f', 'json')['status']
        return status if 'IN_PROGRESS' not in status else None

    try:
        # Cloud checks act as alice: her keypair is hers alone (the service user's check
        # would not find it).
        coe(clouds_yaml, 'alice', 'cluster', 'template', 'create', 'tpl', '--coe',
            'kubernetes', '--image', image.name, '--external-network', 'public', '--keypair',
            keypair, '--flavor', 'm1.tiny', '--master-flavor', 'm1.tiny')
        as_caller = keystone_logins.methods['token']
        coe(clouds_yaml, 'alice', 'cluster', 'create', 'c1', '--cluster-template', 'tpl',
            '--node-count', '1')
        # One login as alice (her token) for the create's cloud checks and her credential
        assert keystone_logins.methods['token'] - as_caller == 1, keystone_logins.methods
        assert wait_for(lambda: settled('c1'), timeout=600) == 'CREATE_COMPLETE'
        cluster = coe(clouds_yaml, 'alice', 'cluster', 'show', 'c1', '-f', 'json')
        alice_id = admin.identity.find_user(RUN + '-alice').id

        # Built in alice's project with her application credential, not the service's.
        assert len(servers('a')) == 2 and servers('service') == []
        [(first_id, first_name)] = credentials(alice_id)
        assert first_name.startswith('magnum-%s-' % cluster['uuid'])
        # And Magnum's trust, to a trustee user of its own, for the cluster's controllers:
        # the job's clouds.yaml acts in alice's project with it.
        ([(first_trust, trustee)], [trustee_again]) = trusts(alice_id)
        assert trustee == trustee_again
        trust = admin.identity.get_trust(first_trust)
        assert trust.is_impersonation and trust.project_id == projects['a'].id
        assert 'member' in [r['name'] for r in trust.roles], trust.roles
        assert admin.identity.get_user(trustee).name.startswith('%s_%s_' % (
            cluster['uuid'], projects['a'].id))
        assert sorted(s.name for s in trust_connection(server, cluster['uuid'],
                                                       tmp_path).compute.servers()) \
            == servers('a')
        # the create's run does not keep the credential's clouds.yaml (removed when the run
        # ends, a moment after its last task recorded the cluster's status; the periodic
        # health checks hold theirs while they run, and on a loaded machine they may run
        # back to back)
        jobs = tmp_path / 'jobs'
        assert wait_for(lambda: not [p for p in jobs.glob('**/clouds.yaml')
                                     if p.relative_to(jobs).parts[0] != 'health'], timeout=60)

        # Rotation: a new credential, the old one revoked; the next job builds with it.
        out = coe(clouds_yaml, 'alice', 'credential', 'rotate', 'c1')
        assert 'accepted' in out, out
        [(second_id, _)] = credentials(alice_id)
        assert second_id != first_id
        ([(second_trust, second_trustee)], trustees) = trusts(alice_id)
        assert second_trust != first_trust and trustees == [second_trustee] != [trustee]
        coe(clouds_yaml, 'alice', 'cluster', 'resize', 'c1', '2')
        assert wait_for(lambda: settled('c1'), timeout=600) == 'UPDATE_COMPLETE'
        assert len(servers('a')) == 3 and servers('service') == []

        # Another project's member cannot rotate it; nothing changes.
        refused = coe(clouds_yaml, 'bob', 'credential', 'rotate', 'c1')
        assert 'failed' in refused and 'could not be found' in refused, refused
        assert credentials(alice_id) == [(second_id, _)]

        # Delete removes the servers and then revokes the credential.
        coe(clouds_yaml, 'alice', 'cluster', 'delete', 'c1')
        assert wait_for(lambda: coe(clouds_yaml, 'alice', 'cluster', 'list', '-f', 'json')
                        == [], timeout=600)
        assert servers('a') == []
        assert wait_for(lambda: credentials(alice_id) == [], timeout=60)
        assert wait_for(lambda: trusts(alice_id) == ([], []), timeout=60)
        project_a = projects['a'].id
        assert list(admin.network.networks(project_id=project_a)) == []
        assert list(admin.network.routers(project_id=project_a)) == []

        check_a_token_of_a_deleted_project_is_a_401(admin, server)
    finally:
        if coe(clouds_yaml, 'alice', 'cluster', 'list', '-f', 'json'):
            coe(clouds_yaml, 'alice', 'cluster', 'delete', 'c1', ok=False)
            wait_for(lambda: not coe(clouds_yaml, 'alice', 'cluster', 'list', '-f', 'json'),
                     timeout=600)
        alice.compute.delete_keypair(keypair, ignore_missing=True)
        alice.image.delete_image(image)


def trust_connection(server, cluster_uuid, tmp_path):
    """A connection as a job of the cluster gives its controllers one: the trust cloud of
    the clouds.yaml the API writes for the cluster's jobs (the trustee user's password,
    scoped to the trust; the credentials from the API's store)."""
    import openstack
    from api import credentials
    from api.core import store as store_mod
    from api.settings import Settings
    settings = Settings(auth_strategy='keystone', provider='openstack', cloud='validator',
                        start_executor=False, db_url=server.db_url)
    store = store_mod.Store(server.db_url, secrets=settings.store_secrets())
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(tmp_path / 'clouds.yaml'))
    with mock_env(env):
        where = tmp_path / 'trust-job'
        where.mkdir()
        written = credentials.job_env(settings, store, cluster_uuid, where)
    assert written[credentials.ENV_CLUSTER_CONFIG_CLOUD] == credentials.TRUST_CLOUD
    with open(written['OS_CLIENT_CONFIG_FILE']) as f:
        cloud = yaml.safe_load(f)['clouds'][credentials.TRUST_CLOUD]
    assert sorted(cloud['auth']) == ['auth_url', 'password', 'trust_id', 'user_id']
    return openstack.connect(load_yaml_config=False, load_envvars=False, **cloud)


@contextlib.contextmanager
def mock_env(env):
    """os.environ as ``env`` for a moment (openstacksdk reads its clouds.yaml from it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def check_a_token_of_a_deleted_project_is_a_401(admin, server):
    """A token the API's token cache still takes but Keystone no longer does (its project
    deleted since): the cloud checks, which act as the caller, answer 401, not 500."""
    import openstack
    with open(LAB_CLOUDS_YAML) as f:
        base = yaml.safe_load(f)['clouds'][LAB_CLOUD]
    project = admin.identity.create_project(name=RUN + '-gone', domain_id='default')
    password = uuidlib.uuid4().hex
    user = admin.identity.create_user(name=RUN + '-gone', password=password,
                                      domain_id='default')
    try:
        admin.identity.assign_project_role_to_user(project, user,
                                                   admin.identity.find_role('member'))
        time.sleep(1)   # Keystone revokes tokens issued in the second of a role change
        token = openstack.connect(
            auth_url=base['auth']['auth_url'], username=user.name, password=password,
            project_id=project.id, user_domain_name='Default',
            region_name=base.get('region_name'), load_yaml_config=False,
            load_envvars=False).session.get_token()
        headers = dict(LATEST, **{'X-Auth-Token': token})
        url = server.url + '/v1/clustertemplates'
        assert requests.get(url, headers=headers, timeout=60).status_code == 200
        admin.identity.delete_project(project)
        resp = requests.post(url, headers=headers, timeout=60, json={
            'name': 'gone', 'coe': 'kubernetes', 'image_id': 'debian-12',
            'external_network_id': 'public'})
        assert resp.status_code == 401, resp.text
        assert resp.json()['errors'][0]['detail'] == \
            'The request you have made requires authentication.'
    finally:
        admin.identity.delete_user(user, ignore_missing=True)
        admin.identity.delete_project(project, ignore_missing=True)
