"""The collection's modules run inside the controller on a local connection
(plugins/action/in_controller.py): the same results, errors, check mode and no_log
masking as the same module run as a process of its own (which a task environment
forces), and the module process really is skipped."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

TEMPLATE = {'name': 't1', 'coe': 'swarm', 'image_id': 'debian-12',
            'external_network_id': 'public', 'keypair_id': 'kp',
            'labels': {'a': 'b'}}

# (task, check mode): what each case runs; compared field by field below.
CASES = [
    ({'openstack.magnum.cluster_template': TEMPLATE}, False),
    ({'openstack.magnum.cluster_template': dict(TEMPLATE, name='t2')}, True),
    ({'openstack.magnum.cluster_template_info': {'name': 't1'}}, False),
    ({'openstack.magnum.cluster_template_info': {'name': 't2'}}, False),  # not made: check
    ({'openstack.magnum.cluster_template_info': {'name': 'no-such'}}, False),
    ({'openstack.magnum.cluster_template': {'name': 't3', 'coe': 'nope'}}, False),
    ({'openstack.magnum.cluster_template_info': {'name': 't1', 'bogus': 1}}, False),
    ({'openstack.magnum.cluster_ca': {'cluster': 'c1', 'action': 'sign'}}, False),  # required_if
    ({'openstack.magnum.cluster_template': {'name': 't1', 'state': 'absent'}}, False),
]
VOLATILE = ('created_at', 'updated_at', 'uuid', 'id', 'invocation', 'row_version')


def run_cases(tmp_path, forked):
    """Each case's registered result, on a new store; ``forked`` sets a task environment
    (the module then runs as its own process)."""
    remote = tmp_path / ('remote-forked' if forked else 'remote')
    tasks = []
    for index, (task, check) in enumerate(CASES):
        task = dict(task, register='r%d' % index, ignore_errors=True, check_mode=check)
        if forked:
            task['environment'] = {'MAGNUM_FORKED': '1'}
        tasks.append(task)
    tasks.append({'ansible.builtin.copy': {
        'content': '{{ [%s] | to_json }}' % ', '.join('r%d' % i for i in range(len(CASES))),
        'dest': str(tmp_path / 'results.json'), 'mode': '0600'}})
    play = tmp_path / 'play.yml'
    play.write_text(yaml.safe_dump([{'hosts': 'localhost', 'gather_facts': False,
                                     'tasks': tasks}]))
    env = {'MAGNUM_DB_URL': 'sqlite:///%s' % (tmp_path / ('forked' if forked else 'here')),
           'PATH': str(BIN) + ':/usr/bin:/bin', 'HOME': str(tmp_path),
           'XDG_DATA_HOME': str(tmp_path / 'data'),
           'ANSIBLE_CONFIG': str(REPO / 'ansible.cfg'),
           # a module process leaves its directory: only the forked run may have any
           'ANSIBLE_KEEP_REMOTE_FILES': '1', 'ANSIBLE_LOCAL_TEMP': str(tmp_path / 'local'),
           'ANSIBLE_REMOTE_TEMP': str(remote)}
    run = subprocess.run([str(BIN / 'ansible-playbook'), str(play)], cwd=str(REPO), env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    modules_ran = list(remote.glob('**/AnsiballZ_cluster_*'))
    return json.loads((tmp_path / 'results.json').read_text()), modules_ran


def comparable(result):
    if isinstance(result, dict):
        return dict((k, comparable(v)) for k, v in result.items()
                    if k not in VOLATILE and not k.startswith('_ansible'))
    if isinstance(result, list):
        return [comparable(v) for v in result]
    return result


def test_modules_run_in_the_controller_with_the_results_of_a_module_process(tmp_path):
    here, here_modules = run_cases(tmp_path, forked=False)
    forked, forked_modules = run_cases(tmp_path, forked=True)
    assert here_modules == []                   # no module process ran
    assert forked_modules                       # with an environment, they did
    for case, mine, theirs in zip(CASES, here, forked):
        assert comparable(mine) == comparable(theirs), case
    made, check, shown, unmade, missing, invalid, unknown, required, removed = here
    assert made['changed'] and made['cluster_template']['labels'] == {'a': 'b'}
    assert check['changed'] and unmade['failed'], unmade   # check mode made nothing
    assert shown['cluster_templates'][0]['name'] == 't1'
    assert missing['failed'] and missing['status_code'] == 404, missing
    assert invalid['failed'] and 'coe' in invalid['msg'], invalid
    assert unknown['failed'] and unknown['msg'].startswith(
        'Unsupported parameters for (openstack.magnum.cluster_template_info) module: bogus'
    ), unknown
    assert required['failed'] and required['msg'] == 'action is sign but all of the following ' \
        'are missing: csr', required
    assert removed['changed'], removed


def test_store_provider_and_cloud_come_from_extra_vars(tmp_path):
    """What AWX passes as extra vars (an "OpenStack Magnum" credential's injectors,
    awx/assets.json) choose the store (magnum_db_url), the infrastructure provider
    (magnum_infra_provider) and the cloud (magnum_cloud) of an entry playbook's run, with no
    MAGNUM_* environment: the records land in the extra var's store (the default store is
    never made), and each run fails as its provider and cloud would."""
    def run(extra):
        env = {'PATH': str(BIN) + ':/usr/bin:/bin', 'HOME': str(tmp_path),
               'XDG_DATA_HOME': str(tmp_path / 'data'), 'OS_CLIENT_CONFIG_FILE': str(clouds),
               'ANSIBLE_CONFIG': str(REPO / 'ansible.cfg')}
        return subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/cluster_create.yml',
                               '-e', json.dumps(extra)], cwd=str(REPO), env=env,
                              capture_output=True, text=True)

    def record(name):
        with sqlite3.connect(str(store)) as db:
            return db.execute('SELECT status, status_reason FROM clusters WHERE name = ?',
                              (name,)).fetchone()

    clouds = tmp_path / 'clouds.yaml'
    clouds.write_text(yaml.safe_dump({'clouds': {'elsewhere': {
        'auth': {'auth_url': 'http://127.0.0.1:9/v3', 'username': 'u', 'password': 'p',
                 'project_name': 'p', 'user_domain_name': 'Default',
                 'project_domain_name': 'Default'}}}}))
    store = tmp_path / 'awx.sqlite'
    url = 'sqlite:///%s' % store
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps(dict(TEMPLATE, db_url=url))], cwd=str(REPO),
                   env={'PATH': str(BIN) + ':/usr/bin:/bin', 'HOME': str(tmp_path),
                        'ANSIBLE_CONFIG': str(REPO / 'ansible.cfg')}, check=True,
                   capture_output=True)
    # provider none: the Swarm driver gets no nodes and says so.
    first = run({'cluster': {'name': 'c1', 'cluster_template_id': 't1', 'node_count': 1},
                 'magnum_db_url': url, 'magnum_infra_provider': 'none'})
    assert first.returncode != 0
    status, reason = record('c1')
    assert status == 'CREATE_FAILED' and 'provider none gave none' in reason, reason
    # provider openstack on the cloud named by magnum_cloud (whose Keystone is not there).
    # ... its cluster described by variables of their own, as an AWX survey gives them.
    second = run({'cluster': 'c2', 'cluster_template_id': 't1', 'node_count': 2,
                  'master_count': 1, 'magnum_db_url': url, 'magnum_infra_provider': 'openstack',
                  'magnum_cloud': 'elsewhere'})
    assert second.returncode != 0
    status, reason = record('c2')
    assert status == 'CREATE_FAILED' and '127.0.0.1:9' in reason, reason
    with sqlite3.connect(str(store)) as db:
        assert db.execute("SELECT node_count FROM clusters WHERE name = 'c2'").fetchone() == (2,)
    assert not (tmp_path / 'data' / 'openstack-magnum' / 'magnum.sqlite').exists()
