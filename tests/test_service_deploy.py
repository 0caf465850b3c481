"""The service deployed by one playbook (issue #66): `ansible-playbook playbooks/service.yml`
puts the API on a host of an inventory - this one, over a local connection, as an
operator's first host; with a broker (MAGNUM_TEST_TRANSPORT_URL, which CI sets) a
conductor beside it, which then runs the jobs - registers it in the lab's real Keystone
(service container-infra, endpoints, the service user and its role) and runs it under
supervisord as a system user of its own (no systemd here); then an ordinary user's
unchanged `openstack coe`, finding the API in the catalog, builds a cluster there; a
second run changes nothing.

The role's virtualenv install is left out here (magnum_service_venv_managed false: this
virtualenv, which holds the project; a fresh install costs ~90 CPU-seconds), and the
processes then run as root (this virtualenv's interpreter may live where no other user
reaches, as pyenv's under /root). MAGNUM_TEST_SERVICE_VENV=1 has the role make and fill a
virtualenv of its own, from Debian's python3, and run the service as a system user of its
own. The deployed checkout is the tests' fixture project (its driver reaches no node), the
provider none."""

import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path

import pytest
import requests
import yaml

from conftest import (LAB_CLOUD, LAB_CLOUDS_YAML, NEEDS_LAB, REPO, free_port, lab_connect,
                      wait_for)
from fixture_project import make_fixture_project
from test_keystone_auth import catalog_service, coe

pytestmark = NEEDS_LAB + [pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which('apt-get'),
    reason='deploys onto this host: needs root on Debian (apt installs supervisor)')]
BIN = Path(sys.executable).parent


def playbook(inventory, env):
    run = subprocess.run(
        [str(BIN / 'ansible-playbook'), '-i', str(inventory), str(REPO / 'playbooks/service.yml')],
        capture_output=True, text=True, timeout=1500, env=env, cwd=str(REPO))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    recap = run.stdout[run.stdout.rindex('PLAY RECAP'):]
    return recap


def test_the_service_deployed_by_its_playbook_serves_openstack_coe_through_keystone(tmp_path):
    run = 'magnum-svc-' + uuidlib.uuid4().hex[:8]
    name = 'mgsvc' + run[-8:]
    root = Path(tempfile.mkdtemp(prefix='magnum-service-'))
    root.chmod(0o755)   # the service's user walks into it
    admin = lab_connect(LAB_CLOUDS_YAML)
    with open(LAB_CLOUDS_YAML) as f:
        base = yaml.safe_load(f)['clouds'][LAB_CLOUD]
    port = free_port()
    made = []
    fresh_venv = os.environ.get('MAGNUM_TEST_SERVICE_VENV') == '1'
    try:
        region = admin.identity.create_region(id=run, description='magnum tests: the service')
        made.append(('region', region))
        catalog_service(admin)   # shared with the other runs; the role finds it by name
        member = admin.identity.create_project(name=run + '-a', domain_id='default')
        made.append(('project', member))
        password = uuidlib.uuid4().hex
        alice = admin.identity.create_user(name=run + '-alice', password=password,
                                           domain_id='default')
        made.append(('user', alice))
        admin.identity.assign_project_role_to_user(member, alice,
                                                   admin.identity.find_role('member'))
        clouds_yaml = tmp_path / 'clouds.yaml'
        clouds_yaml.write_text(yaml.safe_dump({'clouds': {'alice': dict(
            base, region_name=run, auth=dict(
                base['auth'], username=alice.name, password=password,
                project_name=member.name, user_domain_name='Default',
                project_domain_name='Default'))}}))

        source = make_fixture_project(tmp_path / 'checkout')
        if fresh_venv:   # what pip installs, beside the fixture project's playbooks
            for part in ('pyproject.toml', 'README.md'):
                shutil.copy(REPO / part, source / part)
            for part in ('api', 'osc_coe_federation'):
                shutil.copytree(REPO / part, source / part,
                                ignore=shutil.ignore_patterns('__pycache__'))
        settings = {
            'magnum_service_name': name,
            'magnum_service_source': str(source),
            'magnum_service_prefix': str(root / 'opt'),
            'magnum_service_config_dir': str(root / 'etc'),
            'magnum_service_state_dir': str(root / 'state'),
            'magnum_service_log_dir': str(root / 'log'),
            'magnum_service_system_user': name if fresh_venv else 'root',
            'magnum_service_supervisor': 'supervisord',
            'magnum_service_port': port,
            'magnum_service_bind_host': '127.0.0.1',
            'magnum_service_provider': 'none',
            'magnum_service_health_interval': 0,
            'magnum_service_keystone_admin_cloud': LAB_CLOUD,
            'magnum_service_keystone_auth_url': base['auth']['auth_url'],
            'magnum_service_region': run,
            'magnum_service_keystone_region': base.get('region_name'),
            'magnum_service_public_url': 'http://127.0.0.1:%d/v1' % port,
            'magnum_service_keystone_user': run + '-magnum',
            'magnum_service_keystone_password': uuidlib.uuid4().hex,
            'magnum_service_keystone_project': run + '-service',
            # the roles' variables for every job: an inventory the processes are given
            'magnum_service_job_vars': {'kubernetes_autoscaler_flags': {
                'scale-down-unneeded-time': '5m'}},
        }
        if not fresh_venv:
            settings.update(magnum_service_venv=sys.prefix, magnum_service_venv_managed=False)
        # With a broker, the host also runs a conductor and the API runs no job itself: the
        # cluster below is built by the conductor, told over RabbitMQ.
        broker = os.environ.get('MAGNUM_TEST_TRANSPORT_URL')
        host = {'localhost': {'ansible_connection': 'local',
                              'ansible_python_interpreter': '/usr/bin/python3'}}
        groups = {'magnum_api': {'hosts': host}}
        if broker:
            groups['magnum_conductor'] = {'hosts': host}
            settings['magnum_service_transport_url'] = broker
        inventory = tmp_path / 'inventory.yml'
        inventory.write_text(yaml.safe_dump({'all': {'children': groups, 'vars': settings}}))
        env = dict(os.environ, OS_CLIENT_CONFIG_FILE=LAB_CLOUDS_YAML,
                   ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), TMPDIR=str(tmp_path))

        made.append(('deployment', name))
        playbook(inventory, env)
        api = 'http://127.0.0.1:%d' % port
        assert wait_for(lambda: _answers(api + '/v1'), timeout=120)
        # it runs as the system user it was given, under supervisord, its secrets private
        programs = [name + '-api'] + ([name + '-conductor'] if broker else [])
        status = subprocess.run(['supervisorctl', 'status'] + programs,
                                capture_output=True, text=True)
        assert status.stdout.count('RUNNING') == len(programs), status.stdout
        owner = _listener_user(port)
        assert owner == (name if fresh_venv else 'root'), owner
        assert (root / 'etc' / 'secret_keys').stat().st_mode & 0o777 == 0o640
        if broker:   # the broker's password: in a file, not on the conductor's command line
            assert (root / 'etc' / 'transport_url').read_text() == broker + '\n'
            assert broker not in (Path('/etc/supervisor/conf.d') / (
                name + '-conductor.conf')).read_text()
        assert run + '-magnum' in (root / 'etc' / 'clouds.yaml').read_text()
        job_vars = root / 'etc' / 'inventory.yml'
        assert yaml.safe_load(job_vars.read_text())['all']['vars'] == settings[
            'magnum_service_job_vars']
        api_program = Path('/etc/supervisor/conf.d') / (name + '-api.conf')
        assert ('--inventory %s' % shlex.quote(str(job_vars))) in api_program.read_text()

        # an ordinary user, through the catalog and Keystone: a template and a cluster
        coe(str(clouds_yaml), 'alice', 'cluster', 'template', 'create', 'tpl', '--coe',
            'kubernetes', '--image', 'debian-12', '--external-network', 'public',
            '--keypair', 'kp', '--network-driver', 'flannel')
        coe(str(clouds_yaml), 'alice', 'cluster', 'create', 'c1', '--cluster-template', 'tpl',
            '--master-count', '1', '--node-count', '1')
        assert wait_for(lambda: (lambda s: s if 'IN_PROGRESS' not in s else None)(
            coe(str(clouds_yaml), 'alice', 'cluster', 'show', 'c1', '-f', 'json')['status']),
            timeout=600) == 'CREATE_COMPLETE'
        shown = coe(str(clouds_yaml), 'alice', 'cluster', 'show', 'c1', '-f', 'json')
        assert shown['project_id'] == member.id

        # the second run changes nothing, and the API was not restarted
        pid = _listener_pid(port)
        recap = playbook(inventory, env)
        assert ' changed=0 ' in recap, recap
        assert _listener_pid(port) == pid
        coe(str(clouds_yaml), 'alice', 'cluster', 'delete', 'c1')
        assert wait_for(lambda: coe(str(clouds_yaml), 'alice', 'cluster', 'show', 'c1',
                                    ok=False).returncode != 0, timeout=300)
    finally:
        for kind, resource in reversed(made):
            if kind == 'deployment':
                _undeploy(resource, admin, run)
            else:
                getattr(admin.identity, 'delete_' + kind)(resource)
        shutil.rmtree(root, ignore_errors=True)


def _answers(url):
    try:
        return requests.get(url, timeout=5).status_code == 200
    except requests.RequestException:
        return False


def _listener_pid(port):
    """The pid of the process listening on ``port`` of the loopback (/proc/net/tcp)."""
    inode = None
    with open('/proc/net/tcp') as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[1] == '0100007F:%04X' % port and fields[3] == '0A':
                inode = fields[9]
    assert inode, 'nothing listens on %d' % port
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            fds = os.listdir('/proc/%s/fd' % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink('/proc/%s/fd/%s' % (pid, fd)) == 'socket:[%s]' % inode:
                    return int(pid)
            except OSError:
                continue
    raise AssertionError('no process holds the socket on %d' % port)


def _listener_user(port):
    return pwd.getpwuid(os.stat('/proc/%d' % _listener_pid(port)).st_uid).pw_name


def _undeploy(name, admin, run):
    """What the deployment left on this host and in Keystone: its programs, its user, the
    run's endpoints, service user and project (the catalog's service is shared)."""
    for program in (name + '-api', name + '-conductor'):
        subprocess.run(['supervisorctl', 'stop', program], capture_output=True)
        subprocess.run(['supervisorctl', 'remove', program], capture_output=True)
        conf = Path('/etc/supervisor/conf.d/%s.conf' % program)
        if conf.exists():
            conf.unlink()
    time.sleep(1)
    subprocess.run(['userdel', name], capture_output=True)
    for endpoint in admin.identity.endpoints(region_id=run):
        admin.identity.delete_endpoint(endpoint)
    user = admin.identity.find_user(run + '-magnum')
    if user:
        admin.identity.delete_user(user)
    project = admin.identity.find_project(run + '-service')
    if project:
        admin.identity.delete_project(project)
