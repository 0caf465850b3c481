"""awx/assets.json: the AWX definitions (awxkit's `awx import` format) of the "OpenStack
Magnum" credential type, the controller inventory, the project and a job template with a
survey per entry playbook.

No AWX can run here (it is not on PyPI and needs its own services): the real `awx import`
(awxkit's CLI) loads the file into a stand-in of AWX's API (tests/standins/awx_standin.py: AWX's
addresses, POST fields and refusals, a real git checkout of the project), and the file is
checked as AWX's API validates what it is given (survey specs: awx/api/views
JobTemplateSurveySpec._validate_spec_data; credential type inputs and injectors:
docs/credentials/custom_credential_types.md); then two job templates are run as AWX runs
them - ansible-playbook on the template's playbook with the credential's injected extra
vars and the survey's answers - against a store of the test's own."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.filter.core import cluster_create_input
from standins.awx_standin import AwxStandIn, credential_type_errors, survey_errors

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ASSETS = json.loads((REPO / 'awx' / 'assets.json').read_text())
DEFAULT_ORG = {'name': 'Default', 'type': 'organization'}   # every AWX has it


def job_templates():
    return dict((jt['name'], jt) for jt in ASSETS['job_templates'])


def answers(jt, given):
    """The extra vars AWX passes for a survey: each answer, else the question's default;
    a required question without either cannot be launched."""
    found = {}
    for item in jt['related']['survey_spec']['spec']:
        value = given.get(item['variable'], item.get('default', ''))
        if value == '' and item['required']:
            raise AssertionError('%s: %s is required' % (jt['name'], item['variable']))
        if value != '':
            found[item['variable']] = value
    return found


def injected(inputs):
    """The extra vars the "OpenStack Magnum" credential injects for ``inputs`` (AWX renders
    its injectors with Jinja, each field's default standing in for an empty input)."""
    ctype, = ASSETS['credential_types']
    values = dict((f['id'], inputs.get(f['id'], f.get('default', '')))
                  for f in ctype['inputs']['fields'])
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return dict((k, env.from_string(v).render(values))
                for k, v in ctype['injectors']['extra_vars'].items())


def test_resource_kinds_and_natural_keys_are_awxkits():
    from awxkit.api.pages.api import EXPORTABLE_RESOURCES
    assert set(ASSETS) <= set(EXPORTABLE_RESOURCES), set(ASSETS) - set(EXPORTABLE_RESOURCES)
    defined = [DEFAULT_ORG]
    for kind in ('credential_types', 'projects', 'inventory'):
        for asset in ASSETS[kind]:
            key = asset['natural_key']
            assert key['name'] == asset['name'] and key.get('organization') == asset.get(
                'organization', key.get('organization')), key
            defined.append(key)
    for jt in ASSETS['job_templates']:
        assert jt['natural_key'] == {'organization': DEFAULT_ORG, 'name': jt['name'],
                                     'type': 'job_template'}
        for ref in (jt['project'], jt['inventory']):
            assert ref in defined, (jt['name'], ref)
    for inventory in ASSETS['inventory']:
        for host in inventory['related']['hosts']:
            assert host['natural_key']['inventory'] == inventory['natural_key']


def test_the_credential_type_is_one_awx_takes_and_injects_what_the_playbooks_read():
    ctype, = ASSETS['credential_types']
    assert ctype['kind'] in ('cloud', 'net')       # the kinds a custom type may have
    fields = dict((f['id'], f) for f in ctype['inputs']['fields'])
    assert all(f['label'] and f.get('type', 'string') in ('string', 'boolean')
               for f in fields.values())
    assert set(ctype['inputs']['required']) <= set(fields)
    assert fields['db_url']['secret'] is True      # the store URL holds a password
    assert credential_type_errors(ctype['inputs'], ctype['injectors']) == []
    for field in fields.values():
        if 'choices' in field and 'default' in field:
            assert field['default'] in field['choices'], field
    assert injected({'db_url': 'sqlite:////x'}) == {
        'magnum_db_url': 'sqlite:////x', 'magnum_infra_provider': 'openstack',
        'magnum_cloud': 'devstack'}   # AWX's OpenStack credential names its cloud devstack


@pytest.mark.parametrize('name', sorted(job_templates()))
def test_each_job_template_runs_an_entry_playbook_with_a_valid_survey(name):
    jt = job_templates()[name]
    assert (REPO / jt['playbook']).is_file(), jt['playbook']
    collection_playbook = (REPO / 'collections/ansible_collections/openstack/magnum'
                           / jt['playbook'])
    assert collection_playbook.is_file()
    spec = jt['related']['survey_spec']
    assert survey_errors(spec) == [], survey_errors(spec)
    assert jt['survey_enabled'] and jt['ask_credential_on_launch']
    # Every question sets a variable the playbook (or the role it runs) reads - by name, or
    # as a create field the role takes from the play's variables (cluster_create_input).
    read = collection_playbook.read_text() + (
        REPO / 'collections/ansible_collections/openstack/magnum/roles/cluster_operation/tasks/'
        'main.yml').read_text()
    taken = cluster_create_input(dict((item['variable'], 'answer') for item in spec['spec']))
    assert 'openstack.magnum.cluster_create_input' in read or not taken
    for item in spec['spec']:
        assert item['variable'] in read or item['variable'] in taken, (name, item['variable'])
    hosts = ASSETS['inventory'][0]['related']['hosts']
    assert [h['name'] for h in hosts] == ['localhost']
    assert yaml.safe_load(hosts[0]['variables'])['ansible_connection'] == 'local'


def test_the_survey_check_refuses_what_awx_refuses():
    good = job_templates()['Magnum - Federation operation']['related']['survey_spec']
    assert survey_errors(good) == []
    bad = json.loads(json.dumps(good))
    bad['spec'][1]['default'] = 'destroy'
    bad['spec'].append(dict(bad['spec'][0]))
    bad['spec'].append({'type': 'integer', 'question_name': 'n', 'variable': 'n',
                        'required': False, 'default': '3'})
    assert survey_errors(bad) == [
        'question 1: default not among the choices', 'question 2: variable federation duplicated',
        "question 3: default '3' is not a integer"]
    assert survey_errors(dict(good, spec=[])) == ["'spec' doesn't contain any items."]


def test_create_and_delete_job_templates_run_as_awx_runs_them(tmp_path):
    """ansible-playbook on each template's playbook, with the credential's injected extra
    vars (the store, provider none) and the survey's answers: the create records the
    cluster in that store and ends CREATE_FAILED naming the provider that gave no nodes;
    the delete then removes it."""
    store = tmp_path / 'awx.sqlite'
    env = {'PATH': str(BIN) + ':/usr/bin:/bin', 'HOME': str(tmp_path),
           'XDG_DATA_HOME': str(tmp_path / 'data'), 'ANSIBLE_CONFIG': str(REPO / 'ansible.cfg')}
    credential = injected({'db_url': 'sqlite:///%s' % store, 'infra_provider': 'none'})
    subprocess.run([str(BIN / 'ansible'), 'localhost', '-m', 'openstack.magnum.cluster_template',
                    '-a', json.dumps({'name': 'swarm-tpl', 'coe': 'swarm', 'image_id': 'debian-12',
                                      'external_network_id': 'public', 'keypair_id': 'kp',
                                      'db_url': credential['magnum_db_url']})],
                   cwd=str(REPO), env=env, check=True, capture_output=True)

    def launch(name, survey):
        jt = job_templates()[name]
        extra = dict(answers(jt, survey), **credential)
        return subprocess.run([str(BIN / 'ansible-playbook'), jt['playbook'],
                               '-e', json.dumps(extra)], cwd=str(REPO), env=env,
                              capture_output=True, text=True)

    created = launch('Magnum - Create a cluster',
                     {'cluster': 'sw', 'cluster_template_id': 'swarm-tpl', 'node_count': 2})
    assert created.returncode != 0
    with sqlite3.connect(str(store)) as db:
        row = db.execute("SELECT status, status_reason, node_count, master_count FROM clusters "
                         "WHERE name = 'sw'").fetchone()
    assert row[0] == 'CREATE_FAILED' and 'provider none gave none' in row[1], row
    assert row[2:] == (2, 1)
    deleted = launch('Magnum - Delete a cluster', {'cluster': 'sw'})
    assert deleted.returncode == 0, deleted.stdout[-2000:]
    with sqlite3.connect(str(store)) as db:
        assert db.execute("SELECT count(*) FROM clusters").fetchone() == (0,)
    assert not (tmp_path / 'data' / 'openstack-magnum' / 'magnum.sqlite').exists()


def awx_import(url, token, data):
    """`awx import` as an operator runs it: awxkit's CLI, the definitions on its stdin."""
    return subprocess.run([str(BIN / 'awx'), '--conf.host', url, '--conf.token', token,
                           '-f', 'json', 'import'], input=json.dumps(data),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def awx(tmp_path):
    """A stand-in AWX, and the definitions with the project's scm_url set to a git
    repository of this checkout's commit (as README tells operators to set it)."""
    repo = tmp_path / 'project.git'
    subprocess.run(['git', 'init', '--quiet', '--bare', str(repo)], check=True)
    subprocess.run(['git', '-C', str(REPO), 'push', '--quiet', str(repo), 'HEAD:refs/heads/main'],
                   check=True)
    data = json.loads(json.dumps(ASSETS))
    data['projects'][0]['scm_url'] = 'file://%s' % repo
    standin = AwxStandIn(token='t0ken')
    url = standin.start()
    yield standin, url, data
    standin.stop()


def test_awx_import_makes_every_definition_and_a_second_import_changes_nothing(awx):
    standin, url, data = awx
    done = awx_import(url, 't0ken', data)
    assert done.returncode == 0 and 'rror' not in done.stderr, done.stderr[-3000:]
    project, = standin.objects['projects'].values()
    assert project['status'] == 'successful', project
    inventory, = standin.objects['inventory'].values()
    host, = standin.objects['hosts'].values()
    assert host['inventory'] == inventory['id']
    ctype, = standin.objects['credential_types'].values()
    jts = dict((jt['name'], jt) for jt in standin.objects['job_templates'].values())
    assert sorted(jts) == sorted(job_templates())
    # Every field of every definition reached AWX as written (awxkit posts only the fields
    # AWX's OPTIONS names: a misspelt one would be dropped without a word).
    pairs = [(ASSETS['credential_types'][0], ctype), (ASSETS['inventory'][0], inventory),
             (ASSETS['inventory'][0]['related']['hosts'][0], host)]
    pairs += [(jt, jts[jt['name']]) for jt in ASSETS['job_templates']]
    for asset, made in pairs:
        for field, value in asset.items():
            if field in ('natural_key', 'related', 'organization', 'project', 'inventory'):
                continue
            assert made.get(field) == value, (asset['name'], field, made.get(field))
    for jt in ASSETS['job_templates']:
        made = jts[jt['name']]
        assert (made['project'], made['inventory']) == (project['id'], inventory['id'])
        assert made['playbook'] in project['playbooks']
        assert standin.surveys[made['id']] == jt['related']['survey_spec']
    ids = dict((kind, sorted(objs)) for kind, objs in standin.objects.items())
    again = awx_import(url, 't0ken', data)
    assert again.returncode == 0 and 'rror' not in again.stderr, again.stderr[-3000:]
    assert dict((kind, sorted(objs)) for kind, objs in standin.objects.items()) == ids


def test_awx_import_names_what_awx_refuses(awx):
    """The stand-in refuses as AWX does, and `awx import` says so and fails: a job
    template whose playbook the project lacks (the others are made), a survey AWX would
    not take (awxkit stops there), a wrong token."""
    standin, url, data = awx
    first, second = data['job_templates'][:2]
    first['playbook'] = 'playbooks/no_such_playbook.yml'
    done = awx_import(url, 't0ken', data)
    assert done.returncode == 1
    assert '"%s": Bad Request (400) received - {\'playbook\': [\'Playbook not found for ' \
        'project.\']}' % first['name'] in done.stderr, done.stderr[-3000:]
    names = [jt['name'] for jt in standin.objects['job_templates'].values()]
    assert first['name'] not in names and second['name'] in names
    second['related']['survey_spec']['spec'][0]['type'] = 'checkbox'
    done = awx_import(url, 't0ken', data)
    assert done.returncode == 1 and '"question 0: type checkbox"' in done.stdout, done.stdout
    second_id, = [i for i, jt in standin.objects['job_templates'].items()
                  if jt['name'] == second['name']]
    assert standin.surveys[second_id] == ASSETS['job_templates'][1]['related']['survey_spec']
    made = sum(len(objs) for objs in standin.objects.values())
    refused = awx_import(url, 'wrong', data)       # every endpoint answers 401
    assert refused.returncode != 0, refused
    assert 'This endpoint raised an error: /api/v2/credential_types/' in refused.stderr
    assert sum(len(objs) for objs in standin.objects.values()) == made
