"""Magnum's own API test suite - magnum-tempest-plugin's API tests, run by tempest (both
from PyPI) - against this API behind the lab's real Keystone, with the OpenStack provider:
tempest makes its users and projects (dynamic credentials), their keypairs in Nova, and
drives templates, clusters and services as Magnum's gate does; the API checks images,
flavors, networks and keypairs against the lab as each caller.

Tempest lives in a virtualenv of its own (OpenStack's pins): MAGNUM_TEMPEST_VENV, else
the reference Magnum's (MAGNUM_REFERENCE_VENV, where .ci/run installs tempest and the
plugin beside magnum). The plugin's 'slow' tests build real Kubernetes clusters and wait
for their nodes (the lab's servers boot no guest): they are not run here; its rbac copies
skip themselves unless tempest enforces scopes."""

import contextlib
import os
import re
import subprocess
import time
import uuid as uuidlib
from pathlib import Path

import pytest
import yaml

from conftest import LAB_CLOUD, LAB_CLOUDS_YAML, NEEDS_LAB, ApiServer, lab_connect

VENV = os.environ.get('MAGNUM_TEMPEST_VENV') or os.environ.get('MAGNUM_REFERENCE_VENV')
TEMPEST = Path(VENV or '/nonexistent') / 'bin' / 'tempest'

pytestmark = NEEDS_LAB + [pytest.mark.skipif(
    not TEMPEST.exists(),
    reason='needs tempest and magnum-tempest-plugin in a virtualenv: set MAGNUM_TEMPEST_VENV '
           '(or MAGNUM_REFERENCE_VENV, where .ci/run installs them)')]

# What runs: every API test of the plugin but the slow ones (real clusters).
SELECTED = r'^magnum_tempest_plugin\.tests\.api\.v1\.test_'
EXCLUDED = r'\bslow\b'
EXPECTED = 28       # the plugin's non-rbac, non-slow API tests (2.12.0)


MEMBERS, ADMINS = 4, 2     # accounts tempest takes from (two tests at a time)


@contextlib.contextmanager
def accounts(admin, run):
    """Tempest's pre-provisioned accounts (its accounts.yaml entries): MEMBERS members of
    projects of their own and ADMINS admins, made in the lab's Keystone and deleted after.
    Not tempest's dynamic credentials: the plugin files its test classes' credentials
    among each test's (BaseTempestTest.get_credentials_with_keypair), so the class's
    project would be deleted after its first test and later tests would call with tokens
    of a deleted project."""
    made, entries = [], []
    member, admin_role = admin.identity.find_role('member'), admin.identity.find_role('admin')
    try:
        for i, role in enumerate(['member'] * MEMBERS + ['admin'] * ADMINS):
            project = admin.identity.create_project(name='%s-p%d' % (run, i),
                                                    domain_id='default')
            made.append(('project', project))
            password = uuidlib.uuid4().hex
            user = admin.identity.create_user(name='%s-u%d' % (run, i), password=password,
                                              domain_id='default')
            made.append(('user', user))
            for granted in ([member] if role == 'member' else [member, admin_role]):
                admin.identity.assign_project_role_to_user(project, user, granted)
            entries.append({'username': user.name, 'password': password,
                            'project_name': project.name, 'user_domain_name': 'Default',
                            'project_domain_name': 'Default',
                            'roles': ['member'] if role == 'member' else ['member', 'admin']})
        time.sleep(1)   # Keystone revokes tokens issued in the second of a role change
        yield entries
    finally:
        for kind, resource in reversed(made):
            getattr(admin.identity, 'delete_' + kind)(resource, ignore_missing=True)


def tempest_conf(workspace, api_url, image, keypair, entries):
    with open(LAB_CLOUDS_YAML) as f:
        lab = yaml.safe_load(f)['clouds'][LAB_CLOUD]
    auth = lab['auth']
    accounts_file = workspace / 'etc' / 'accounts.yaml'
    accounts_file.write_text(yaml.safe_dump(entries))
    conf = {
        'DEFAULT': {'log_dir': str(workspace), 'log_file': 'tempest.log',
                    'lock_path': str(workspace / 'locks')},
        'auth': {'use_dynamic_credentials': 'false', 'test_accounts_file': str(accounts_file),
                 'default_credentials_domain_name': 'Default',
                 'admin_username': auth['username'], 'admin_password': auth['password'],
                 'admin_project_name': auth['project_name'],
                 'admin_domain_name': auth.get('user_domain_name', 'Default')},
        'identity': {'uri_v3': auth['auth_url'], 'auth_version': 'v3', 'admin_role': 'admin',
                     'region': lab.get('region_name', 'RegionOne')},
        'identity-feature-enabled': {'api_v2': 'false'},
        # a loaded CI machine's lab answers slowly: slower, not red
        'service-clients': {'http_timeout': '300'},
        'service_available': {'magnum': 'true'},
        'magnum': {'magnum_url': api_url + '/v1', 'image_id': image, 'nic_id': 'public',
                   'keypair_name': keypair, 'flavor_id': 'm1.tiny',
                   'master_flavor_id': 'm1.tiny', 'dns_nameserver': '8.8.8.8',
                   'copy_logs': 'false', 'coe': 'kubernetes'},
    }
    (workspace / 'etc' / 'tempest.conf').write_text(''.join('[%s]\n%s\n' % (
        section, ''.join('%s = %s\n' % item for item in values.items()))
        for section, values in conf.items()))


def test_magnum_tempest_plugin_api_tests_all_pass(project, tmp_path):
    admin = lab_connect(LAB_CLOUDS_YAML)
    run = 'magnum-tempest-' + uuidlib.uuid4().hex[:8]
    # The API validates tokens with the lab's admin and checks resources as each caller.
    server = ApiServer('sqlite:///%s' % (tmp_path / 'api.sqlite'), project, tmp_path,
                       provider='openstack',
                       env={'OS_CLIENT_CONFIG_FILE': LAB_CLOUDS_YAML, 'MAGNUM_CLOUD': LAB_CLOUD,
                            'XDG_DATA_HOME': str(tmp_path / 'data')},
                       args=['--auth', 'keystone', '--keystone-cloud', LAB_CLOUD])
    # A Debian image every project sees (the driver's distro), as Magnum's gate uploads one.
    image = admin.image.create_image(name=run, data=b'disk', disk_format='raw',
                                     container_format='bare', os_distro='debian',
                                     visibility='public')
    workspace = tmp_path / 'tempest'
    try:
        with accounts(admin, run) as entries:
            server.start()
            # tempest keeps its workspaces' registry in ~/.tempest: this run's own HOME
            env = dict(os.environ, HOME=str(tmp_path),
                       PATH='%s:%s' % (TEMPEST.parent, os.environ['PATH']))
            subprocess.run([str(TEMPEST), 'init', str(workspace)], check=True,
                           capture_output=True, timeout=120, env=env)
            tempest_conf(workspace, server.url, run, run, entries)
            proc = subprocess.run(
                [str(TEMPEST), 'run', '--regex', SELECTED, '--exclude-regex', EXCLUDED,
                 '--concurrency', '2'],
                cwd=workspace, capture_output=True, text=True, timeout=1800, env=env)
        out = proc.stdout + proc.stderr
        passed = re.search(r'^ - Passed: (\d+)$', out, re.M)
        failed = re.search(r'^ - Failed: (\d+)$', out, re.M)
        assert proc.returncode == 0 and failed and failed.group(1) == '0', out[-20000:]
        assert passed and int(passed.group(1)) == EXPECTED, out[-5000:]
    finally:
        server.stop()
        admin.image.delete_image(image, ignore_missing=True)
