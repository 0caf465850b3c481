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
from keystone_counter import CountingProxy

pytestmark = NEEDS_LAB
OPENSTACK = str(Path(sys.executable).parent / 'openstack')
RUN = 'magnum-ks-' + uuidlib.uuid4().hex[:8]
LATEST = {'OpenStack-API-Version': 'container-infra latest'}


def container_infra_service(admin):
    """The one container-infra service the runs' endpoints (one region each) belong to:
    a client that takes the catalog's first service of a type (Horizon, magnum-ui) then
    finds its run's endpoint beside the others of parallel runs. Made once (a file lock
    keeps parallel runs from making two), kept."""
    with open(os.path.join(tempfile.gettempdir(), 'magnum-tests-keystone.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = [s for s in admin.identity.services() if s.name == 'magnum-tests']
        return found[0] if found else admin.identity.create_service(
            name='magnum-tests', type='container-infra')


@contextlib.contextmanager
def identities(tmp_path, project, provider='none', args=()):
    """A clouds.yaml with clouds alice and bob (members of two projects of their own),
    boss (admin of alice's project) and validator (the service user the API validates
    tokens with; admin of a service project of its own), all in a region of this run whose
    catalog has the API as container-infra; and the API serving it, with ``provider``
    (openstack: on the lab, its cloud the validator's). The API reaches Keystone through a
    CountingProxy (yielded last): its logins are counted. ``args``: more of the API's."""
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
    server = ApiServer('sqlite:///%s' % (tmp_path / 'api.sqlite'), project, tmp_path,
                       provider=provider,
                       env={'OS_CLIENT_CONFIG_FILE': clouds_yaml, 'MAGNUM_CLOUD': 'validator',
                            'XDG_DATA_HOME': str(tmp_path / 'data')},
                       args=['--auth', 'keystone', '--keystone-cloud', 'validator'] + list(args))
    try:
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
        clouds['validator']['region_name'] = base.get('region_name')
        keystone = urlsplit(base['auth']['auth_url'])
        counter = CountingProxy('%s://%s' % (keystone.scheme, keystone.netloc))
        clouds['validator']['auth']['auth_url'] = counter.url + keystone.path
        (tmp_path / 'clouds.yaml').write_text(yaml.safe_dump({'clouds': clouds}))
        make('region', id=RUN, description='magnum tests')
        service = container_infra_service(admin)
        make('endpoint', service_id=service.id, interface='public', region_id=RUN,
             url=server.url + '/v1')
        # Keystone revokes tokens issued in the second of a role change
        time.sleep(1)
        yield server.start(), projects, clouds_yaml, counter
    finally:
        server.stop()
        if counter is not None:
            counter.stop()
        for kind, resource in reversed(made):
            getattr(admin.identity, 'delete_' + kind)(resource)


@pytest.fixture
def keystone(tmp_path, project):
    """The API behind Keystone with the test driver and no infrastructure."""
    with identities(tmp_path, project) as found:
        yield found


@pytest.fixture
def keystone_cloud(tmp_path, project):
    """The API behind Keystone, building on the lab (the openstack provider) with the
    test driver as COE (fake-virt servers boot no guest)."""
    with identities(tmp_path, project, provider='openstack') as found:
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
