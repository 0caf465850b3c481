"""Shared fixtures: stores (SQLite and PostgreSQL), a project copy with a test driver,
and a real magnum-ansible-api server process. Tests call the core as the collection's entry
points do (the API, the modules' base, the filters), having imported the driver registry,
which hands the core its drivers."""

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import requests
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import DRIVERS
from fixture_project import make_fixture_project

REPO = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get('MAGNUM_TEST_PG_URL')  # e.g. postgresql://magnum:magnum@127.0.0.1/postgres
BIN = Path(sys.executable).parent
# The lab cloud (../shared/openstack-lab): its clouds.yaml (an admin of the cloud) and
# cloud name. Tests talking to it make users and projects of their own from the admin,
# and are skipped, saying why, without it.
LAB_CLOUD = os.environ.get('MAGNUM_TEST_CLOUD')
LAB_CLOUDS_YAML = os.environ.get('MAGNUM_TEST_CLOUDS_YAML')
LAB_SKIP = pytest.mark.skipif(
    not LAB_CLOUD or not LAB_CLOUDS_YAML,
    reason='needs the lab cloud: run ../shared/openstack-lab/up.sh and set MAGNUM_TEST_CLOUD=lab '
           'and MAGNUM_TEST_CLOUDS_YAML=<lab>/clouds/clouds.yaml (.ci/run does)')
NEEDS_LAB = [pytest.mark.lab, LAB_SKIP]


def lab_connect(clouds_yaml, cloud=None):
    """An openstacksdk connection to ``cloud`` (default: the lab's) of ``clouds_yaml``."""
    import openstack.config
    import openstack.connection
    region = openstack.config.OpenStackConfig(config_files=[clouds_yaml]).get_one(
        cloud=cloud or LAB_CLOUD)
    return openstack.connection.Connection(config=region)


def debian_image(conn, name):
    """A Glance image the provider takes for Debian (no guest boots on the lab)."""
    return conn.image.create_image(name=name, data=('disk ' + name).encode(), disk_format='raw',
                                   container_format='bare', os_distro='debian')


def _pg_database():
    """A fresh PostgreSQL database; returns (url, drop)."""
    import sqlalchemy as sa
    name = 'magnum_test_%s' % uuid.uuid4().hex[:10]
    admin = sa.create_engine(PG_URL, isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.execute(sa.text('CREATE DATABASE %s' % name))
    url = PG_URL.rsplit('/', 1)[0] + '/' + name

    def drop():
        # Only our own sessions are ended: an autovacuum worker on the database runs as the
        # superuser (not ours to terminate) and DROP DATABASE makes it leave by itself.
        with admin.connect() as conn:
            conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"
                " AND usename = current_user AND pid <> pg_backend_pid()"), {'n': name})
            conn.execute(sa.text('DROP DATABASE IF EXISTS %s' % name))
        admin.dispose()
    return url, drop


STORE_BACKENDS = ['sqlite', pytest.param('postgresql', marks=pytest.mark.postgres)]


# The files whose tests take longest (end-to-end on the lab cloud, on container nodes,
# behind Keystone), by their longest test in CI's JUnit report, longest first:
# tests/run.sh hands tests one at a time to whichever test process is free
# (pytest-xdist --dist load --maxschedchunk 1), so starting with the long ones keeps
# every process busy to the end. The rest keep their order.
SLOWEST_FIRST = ('test_swarm.py', 'test_quickstart.py', 'test_mesos.py', 'test_capi.py',
                 'test_federation.py', 'test_horizon.py', 'test_keystone_auth.py',
                 'test_openstack_provider.py', 'test_clients.py', 'test_service_deploy.py',
                 'test_kubernetes.py',
                 'test_infra_docker.py', 'test_notifications.py', 'test_fuzz.py',
                 'test_hardening.py', 'test_addons.py', 'test_tempest.py', 'test_recovery.py',
                 'test_api.py')


def pytest_report_header(config):
    return 'drivers handed to the core: %s' % ', '.join(d.name for d in DRIVERS)


# The tiers (docs/developer/tests.md), one marker each, by what a test needs: unit (Python
# alone), api (an API process and its store; jobs of the fixture driver, no nodes), job
# (playbooks and modules through ansible-runner or ansible-playbook, no nodes), real_node
# (container nodes on the Docker engine, or this host as a node), lab (the lab cloud),
# real_guests (the lab's real guests), built_image (images built here). A test file's tier;
# a test marked with another tier keeps its own.
TIERS = ('unit', 'api', 'job', 'real_node', 'lab', 'real_guests', 'built_image')
FILE_TIERS = {
    'api': ('test_api.py', 'test_api_malformed.py', 'test_awx_assets.py', 'test_clients.py',
            'test_conductors.py', 'test_fuzz.py', 'test_hardening.py', 'test_horizon.py',
            'test_magnum_reference.py', 'test_notifications.py', 'test_parity.py',
            'test_recovery.py', 'test_store.py', 'test_tempest.py'),
    'job': ('test_addons.py', 'test_capi.py', 'test_capi_chart.py', 'test_in_controller.py',
            'test_node_jobs.py', 'test_packaging.py', 'test_playbook_server.py',
            'test_role_inputs.py',
            'test_unreachable_nodes.py'),
    'real_node': ('test_federation.py', 'test_infra_docker.py', 'test_kubernetes.py',
                  'test_mesos.py', 'test_node_volumes.py', 'test_quickstart.py', 'test_ssh_wait.py',
                  'test_swarm.py'),
    'lab': ('test_keystone_auth.py', 'test_openstack_provider.py', 'test_service_deploy.py'),
    'real_guests': ('test_real_guests.py',),
    'built_image': ('test_release_image.py',),
}


def tier_of(item):
    """The tier of a collected test: its own marker (of several, the one that needs most),
    else its file's."""
    own = [m.name for m in item.iter_markers() if m.name in TIERS]
    if own:
        return max(own, key=TIERS.index)
    if item.path.parent.name == 'unit':
        return 'unit'
    for tier, files in FILE_TIERS.items():
        if item.path.name in files:
            return tier
    raise pytest.UsageError('%s has no tier: add it to FILE_TIERS in tests/conftest.py'
                            % item.path.name)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        item.add_marker(getattr(pytest.mark, tier_of(item)))
    rank = dict((name, index) for index, name in enumerate(SLOWEST_FIRST))
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOWEST_FIRST)))


@pytest.fixture(autouse=True, scope='session')
def own_data_home(tmp_path_factory):
    """What the API and the modules keep in the user's data directory (a PostgreSQL
    store's default key file, runner dirs) goes to the test run's own, not the machine's."""
    previous = os.environ.get('XDG_DATA_HOME')
    os.environ['XDG_DATA_HOME'] = str(tmp_path_factory.mktemp('data-home'))
    yield
    if previous is None:
        os.environ.pop('XDG_DATA_HOME', None)
    else:
        os.environ['XDG_DATA_HOME'] = previous


@contextlib.contextmanager
def store_url(backend, tmp_path):
    """A store URL on ``backend``: a SQLite file, or a fresh PostgreSQL database (dropped
    after) when MAGNUM_TEST_PG_URL is set - the test is skipped, saying so, when not."""
    if backend == 'sqlite':
        yield 'sqlite:///%s' % (tmp_path / 'magnum.sqlite')
        return
    if not PG_URL:
        pytest.skip('PostgreSQL store tests need MAGNUM_TEST_PG_URL (.ci/run sets it)')
    url, drop = _pg_database()
    try:
        yield url
    finally:
        drop()


@pytest.fixture(params=STORE_BACKENDS)
def db_url(request, tmp_path):
    """A store URL on each backend: SQLite file, and PostgreSQL when MAGNUM_TEST_PG_URL is set."""
    with store_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path):
    return 'sqlite:///%s' % (tmp_path / 'magnum.sqlite')


@pytest.fixture
def project(tmp_path):
    """A copy of the checkout whose collection also holds the test driver's role.

    The test driver (in place of the 'kubernetes' role) is a fixture driver: its tasks record
    facts derived from the cluster, fail on label test_fail, sleep on
    label test_sleep. Everything around it (API, jobs, playbooks, modules,
    store) is the real code.
    """
    return make_fixture_project(tmp_path / 'project')


@contextlib.contextmanager
def host_lock(name):
    """Hold the host-wide lock ``name``: for what test processes (pytest-xdist workers)
    share on this machine, as the Docker engine's image tags."""
    with open(os.path.join(tempfile.gettempdir(), 'magnum-tests-%s.lock' % name), 'a') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def ansible_env(db_url, provider='none', project=REPO, **extra):
    """The environment of an `ansible` or `ansible-playbook` run on the store at db_url:
    this virtualenv's tools first on PATH, the project's ansible.cfg, the node provider
    named; ``extra`` adds or overrides variables."""
    env = dict(os.environ, MAGNUM_DB_URL=db_url, MAGNUM_PROVIDER=provider,
               ANSIBLE_CONFIG=str(Path(project) / 'ansible.cfg'),
               PATH='%s:%s' % (BIN, os.environ['PATH']))
    env.update(extra)
    return env


class ApiServer:
    def __init__(self, db_url, project_dir, tmp_path, workers=2, provider='none', env=None,
                 args=()):
        self.provider = provider
        self.args = list(args)
        self.env = env or {}
        self.db_url = db_url
        self.project_dir = project_dir
        self.tmp_path = tmp_path
        self.workers = workers
        self.port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.proc = None
        self.log = tmp_path / ('api-%d.log' % self.port)

    def start(self):
        env = dict(os.environ, PYTHONUNBUFFERED='1', **self.env)
        self.proc = subprocess.Popen(
            [str(BIN / 'magnum-ansible-api'), '--port', str(self.port), '--db', self.db_url,
             '--workers', str(self.workers), '--project-dir', str(self.project_dir),
             '--runner-dir', str(self.tmp_path / 'jobs'), '--provider', self.provider]
            + self.args,
            stdout=open(self.log, 'ab'), stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('API exited: %s' % self.log.read_text())
            try:
                requests.get(self.url + '/', timeout=1)
                return self
            except requests.ConnectionError:
                time.sleep(0.2)
        raise RuntimeError('API did not start: %s' % self.log.read_text())

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def api_server(sqlite_url, project, tmp_path):
    server = ApiServer(sqlite_url, project, tmp_path).start()
    yield server
    server.stop()


def api_settled(url, path, timeout=600, interval=1):
    """Waits until the resource at ``path`` (``/v1/clusters/<name>``, ...) of the API at
    ``url`` runs no operation; returns its status, or 'GONE' once it answers 404. One
    request per look: a client process per look would spend a second or two of CPU."""
    def status():
        answer = requests.get(url + path, timeout=30)
        if answer.status_code == 404:
            return 'GONE'
        assert answer.status_code == 200, answer.text
        return answer.json()['status']
    return wait_for(lambda: (lambda s: s if 'IN_PROGRESS' not in s else None)(status()),
                    timeout=timeout, interval=interval)


def processes_holding(text):
    """{pid: command line} of this host's processes whose command line (its arguments
    joined by spaces) holds ``text``: api.processes' table, as the conductor reads it."""
    from api import processes
    found = {}
    for pid, (_ppid, cmdline) in processes.table().items():
        line = cmdline.replace('\0', ' ')
        if text in line:
            found[pid] = line
    return found


def wait_for(fn, timeout=300, interval=0.5):
    """Poll ``fn`` until it returns a truthy value; return it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError('condition not met within %ss' % timeout)


# The real helm binary (python3 scripts/install_helm.py puts PyPI's in the venv).
HELM = shutil.which('helm', path='%s:%s' % (Path(sys.executable).parent,
                                            os.environ.get('PATH', '')))


def helm(*args, cwd=None):
    return subprocess.run([HELM] + list(args), capture_output=True, text=True, check=True,
                          cwd=cwd, timeout=120).stdout


def chart_archive(where, name, version):
    """A real chart named ``name`` at ``version``, packaged by helm: helm's own starter
    (a Deployment whose image, tolerations and arguments come from the values, as the
    add-ons' charts take them); the add-ons' upstream charts cannot be fetched here."""
    work = Path(where) / ('src-%s' % name)
    work.mkdir(parents=True, exist_ok=True)
    helm('create', name, cwd=str(work))
    chart = work / name / 'Chart.yaml'
    meta = yaml.safe_load(chart.read_text())
    meta.update(version=version, appVersion='0.8.0')
    chart.write_text(yaml.safe_dump(meta))
    deployment = work / name / 'templates' / 'deployment.yaml'
    # The starter has no container arguments: add them as the add-ons' charts have them.
    deployment.write_text(deployment.read_text().replace(
        '          imagePullPolicy:', '          args: {{- toYaml .Values.args | nindent 12 }}\n'
        '          imagePullPolicy:', 1))
    out = Path(where) / 'charts'
    out.mkdir(exist_ok=True)
    helm('package', str(work / name), '-d', str(out))
    return out / ('%s-%s.tgz' % (name, version))
