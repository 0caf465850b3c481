"""A stand-in for AWX's REST API (/api/v2), for the import check of awx/assets.json: the
real `awx import` (awxkit's CLI) talks to it as to an AWX. No AWX can run here (it is not
on PyPI and needs services of its own).

It speaks what awxkit's import uses, at AWX's addresses: the version root, OPTIONS with
the POST fields of each kind (AWX's serializers' names, types and choices: awxkit posts
only those), list filters (natural-key lookups), create, replace (a second import), the
related hosts of an inventory and survey specs of job templates. And it refuses what AWX
refuses, with AWX's messages: a token other than its own (401), a missing required field,
a choice not among the choices, a name taken in its organization, a credential type whose
inputs or injectors AWX would not take, a survey spec AWX would not take (AWX's
JobTemplateSurveySpec._validate_spec_data), a job template whose playbook the project
does not have. A project's update is real: `git clone` of its scm_url and branch, then
its playbooks listed as AWX lists them (awx/main/utils/ansible.py). It runs no job."""

import codecs
import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jinja2
import jinja2.sandbox

# AWX's JobTemplateSurveySpec.ALLOWED_TYPES: each question type and its default's type.
SURVEY_TYPES = {'text': str, 'textarea': str, 'password': str, 'multiplechoice': str,
                'multiselect': str, 'integer': int, 'float': (float, int)}
PLAYBOOK_LINE = re.compile(r'^\s*?-?\s*?(?:hosts|include|import_playbook):\s*?.*?$')


def _f(kind, required=False, **extra):
    return dict(extra, type=kind, required=required)


def _choices(*values, required=False):
    return _f('choice', required, choices=[[v, v] for v in values])


ASK = dict(('ask_%s_on_launch' % a, _f('boolean')) for a in (
    'scm_branch', 'diff_mode', 'variables', 'limit', 'tags', 'skip_tags', 'job_type',
    'verbosity', 'inventory', 'credential', 'execution_environment', 'labels', 'forks',
    'job_slice_count', 'timeout', 'instance_groups'))
NAMED = {'name': _f('string', True), 'description': _f('string')}
# export name -> (path under /api/v2/, type, POST fields)
KINDS = {
    'organizations': ('organizations', 'organization', dict(
        NAMED, max_hosts=_f('integer'), default_environment=_f('id'))),
    'users': ('users', 'user', {'username': _f('string', True)}),
    'teams': ('teams', 'team', dict(NAMED, organization=_f('id', True))),
    'credential_types': ('credential_types', 'credential_type', dict(
        NAMED, kind=_choices('net', 'cloud', required=True), inputs=_f('json'),
        injectors=_f('json'))),
    'credentials': ('credentials', 'credential', dict(NAMED, credential_type=_f('id', True))),
    'notification_templates': ('notification_templates', 'notification_template', NAMED),
    'projects': ('projects', 'project', dict(
        NAMED, organization=_f('id'),
        scm_type=_choices('', 'git', 'svn', 'insights', 'archive'),
        scm_url=_f('string'), scm_branch=_f('string'), scm_refspec=_f('string'),
        scm_clean=_f('boolean'), scm_track_submodules=_f('boolean'),
        scm_delete_on_update=_f('boolean'), credential=_f('id'), timeout=_f('integer'),
        scm_update_on_launch=_f('boolean'), scm_update_cache_timeout=_f('integer'),
        allow_override=_f('boolean'), local_path=_f('string'),
        default_environment=_f('id'), signature_validation_credential=_f('id'))),
    'inventory': ('inventories', 'inventory', dict(
        NAMED, organization=_f('id', True), kind=_choices('', 'smart', 'constructed'),
        host_filter=_f('string'), variables=_f('json'),
        prevent_instance_group_fallback=_f('boolean'))),
    'hosts': ('hosts', 'host', dict(
        NAMED, inventory=_f('id', True), enabled=_f('boolean'), instance_id=_f('string'),
        variables=_f('json'))),
    'inventory_sources': ('inventory_sources', 'inventory_source', NAMED),
    'job_templates': ('job_templates', 'job_template', dict(
        NAMED, **ASK, job_type=_choices('run', 'check'), inventory=_f('id'),
        project=_f('id'), playbook=_f('string'), scm_branch=_f('string'),
        forks=_f('integer'), limit=_f('string'), verbosity=_choices(0, 1, 2, 3, 4, 5),
        extra_vars=_f('json'), job_tags=_f('string'), force_handlers=_f('boolean'),
        skip_tags=_f('string'), start_at_task=_f('string'), timeout=_f('integer'),
        use_fact_cache=_f('boolean'), execution_environment=_f('id'),
        host_config_key=_f('string'), survey_enabled=_f('boolean'),
        become_enabled=_f('boolean'), diff_mode=_f('boolean'),
        allow_simultaneous=_f('boolean'), job_slice_count=_f('integer'),
        webhook_service=_choices('', 'github', 'gitlab', 'bitbucket_dc'),
        webhook_credential=_f('id'), prevent_instance_group_fallback=_f('boolean'))),
    'workflow_job_templates': ('workflow_job_templates', 'workflow_job_template', NAMED),
    'execution_environments': ('execution_environments', 'execution_environment', dict(
        NAMED, image=_f('string', True))),
    'applications': ('applications', 'application', NAMED),
    'schedules': ('schedules', 'schedule', NAMED),
    'system_job_templates': ('system_job_templates', 'system_job_template', NAMED),
    'unified_job_templates': ('unified_job_templates', 'unified_job_template', NAMED),
    'labels': ('labels', 'label', dict(NAMED, organization=_f('id', True))),
    'instance_groups': ('instance_groups', 'instance_group', NAMED),
    'roles': ('roles', 'role', NAMED),
}
# The version root's keys: every kind awxkit imports, and those it orders them by.
ROOT_KINDS = [k for k in KINDS if k != 'hosts']
BY_PATH = dict((path, kind) for kind, (path, _, _) in KINDS.items())
# Kinds whose name is unique in their organization (AWX's unique_together).
PER_ORGANIZATION = {'projects', 'inventory', 'job_templates', 'teams'}


def survey_errors(spec):
    """What AWX's survey_spec endpoint refuses in ``spec`` (its rules, in its order)."""
    errors = []
    for field, kind in (('name', str), ('description', str), ('spec', list)):
        if not isinstance(spec.get(field), kind):
            errors.append('%s missing or not a %s' % (field, kind.__name__))
    if errors or not spec['spec']:
        return errors or ["'spec' doesn't contain any items."]
    seen = set()
    for index, item in enumerate(spec['spec']):
        for field, kind in (('type', str), ('question_name', str), ('variable', str),
                            ('required', bool)):
            if not isinstance(item.get(field), kind):
                errors.append('question %d: %s missing or not a %s' % (index, field, kind))
        if item.get('variable') in seen:
            errors.append('question %d: variable %s duplicated' % (index, item['variable']))
        seen.add(item.get('variable'))
        qtype = item.get('type')
        if qtype not in SURVEY_TYPES:
            errors.append('question %d: type %s' % (index, qtype))
            continue
        default = item.get('default', '')
        if default != '' and not isinstance(default, SURVEY_TYPES[qtype]):
            errors.append('question %d: default %r is not a %s' % (index, default, qtype))
        for key in ('min', 'max'):
            if item.get(key) is not None and not isinstance(item[key], int):
                errors.append('question %d: %s is not an integer' % (index, key))
        if qtype in ('multiplechoice', 'multiselect'):
            choices = item.get('choices')
            if not choices:
                errors.append('question %d: no choices' % index)
            elif default != '' and any(d not in choices for d in str(default).splitlines()):
                errors.append('question %d: default not among the choices' % index)
    return errors


def credential_type_errors(inputs, injectors):
    """What AWX refuses in a custom credential type's inputs and injectors: fields with an
    id and a label, of type string or boolean; required ones among them; injector
    templates (extra_vars, env, file) that use only the inputs' ids."""
    errors, fields = [], (inputs or {}).get('fields', [])
    ids = [f.get('id') for f in fields]
    for field in fields:
        if not isinstance(field.get('id'), str) or not re.match(r'^[A-Za-z_]\w*$', field['id']):
            errors.append('inputs: invalid id %r' % field.get('id'))
        if not field.get('label'):
            errors.append('inputs: %s has no label' % field.get('id'))
        if field.get('type', 'string') not in ('string', 'boolean'):
            errors.append('inputs: %s: type %s' % (field.get('id'), field.get('type')))
        if 'default' in field and 'choices' in field and field['default'] not in field['choices']:
            errors.append('inputs: %s: default not among the choices' % field['id'])
    for name in (inputs or {}).get('required', []):
        if name not in ids:
            errors.append('inputs: required %s is not a field' % name)
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
    values = dict((i, 'x') for i in ids)
    for section, templates in (injectors or {}).items():
        if section not in ('extra_vars', 'env', 'file'):
            errors.append('injectors: %s is not a section' % section)
            continue
        for key, text in templates.items():
            try:
                env.from_string(text).render(values)
            except jinja2.TemplateError as err:
                errors.append('injectors: %s.%s: %s' % (section, key, err))
    return errors


def playbooks(project_dir):
    """The playbooks AWX lists in a project's checkout."""
    found = []
    for dirpath, _, filenames in os.walk(project_dir):
        for filename in filenames:
            if os.path.splitext(filename)[-1] not in ('.yml', '.yaml'):
                continue
            relative = os.path.relpath(os.path.join(dirpath, filename), project_dir)
            parts = relative.split(os.sep)
            if {'roles', 'tasks', 'group_vars', 'host_vars'} & set(parts) or any(
                    p.startswith('.') for p in parts):
                continue
            with codecs.open(os.path.join(dirpath, filename), 'r', encoding='utf-8',
                             errors='ignore') as text:
                if any(PLAYBOOK_LINE.match(line) for line in text):
                    found.append(relative)
    return sorted(found, key=str.lower)


class Refused(Exception):
    def __init__(self, status, body):
        super().__init__(status, body)
        self.status, self.body = status, body


class AwxStandIn:
    """Objects by kind and id; ``start()`` serves them on 127.0.0.1."""

    def __init__(self, token):
        self.token = token
        self.objects = dict((kind, {}) for kind in KINDS)
        self.surveys = {}
        self.requests = []
        self.checkouts = tempfile.mkdtemp(prefix='awx-projects-')
        self._ids = 0
        self._lock = threading.Lock()
        self._make('organizations', {'name': 'Default', 'description': ''})

    # -- records -----------------------------------------------------------------------
    def url(self, kind, oid):
        return '/api/v2/%s/%d/' % (KINDS[kind][0], oid)

    def _make(self, kind, data):
        self._ids += 1
        obj = dict(data, id=self._ids, type=KINDS[kind][1],
                   created=datetime.now(timezone.utc).isoformat().replace('+00:00', 'Z'))
        self.objects[kind][obj['id']] = obj
        return obj

    def view(self, kind, obj):
        shown = dict(obj, url=self.url(kind, obj['id']), related={})
        for field, spec in KINDS[kind][2].items():
            if spec['type'] == 'id' and obj.get(field):
                target = {'project': 'projects', 'inventory': 'inventory',
                          'credential_type': 'credential_types'}.get(field, 'organizations')
                shown['related'][field] = self.url(target, obj[field])
        if kind == 'inventory':
            shown['related']['hosts'] = self.url(kind, obj['id']) + 'hosts/'
        if kind == 'job_templates':
            base = self.url(kind, obj['id'])
            shown['related'].update(survey_spec=base + 'survey_spec/', labels=base + 'labels/',
                                    credentials=base + 'credentials/')
            project = self.objects['projects'].get(obj.get('project'))
            if project and project.get('organization'):
                shown['related']['organization'] = self.url('organizations',
                                                            project['organization'])
        if kind == 'projects':
            shown['related']['playbooks'] = self.url(kind, obj['id']) + 'playbooks/'
        return shown

    def _validate(self, kind, data, current=None):
        fields = KINDS[kind][2]
        errors = {}
        for name, spec in fields.items():
            value = data.get(name)
            if spec['required'] and value in (None, ''):
                errors[name] = ['This field is required.']
            elif spec['type'] == 'choice' and name in data and value not in [
                    c[0] for c in spec['choices']]:
                errors[name] = ['"%s" is not a valid choice.' % value]
            elif spec['type'] == 'id' and value is not None:
                if not any(value in objs for objs in self.objects.values()):
                    errors[name] = ['Invalid pk "%s" - object does not exist.' % value]
        if errors:
            raise Refused(400, errors)
        for other in self.objects[kind].values():
            if other is current or other.get('name') != data.get('name'):
                continue
            if kind not in PER_ORGANIZATION or other.get('organization') == data.get(
                    'organization'):
                label = KINDS[kind][1].replace('_', ' ').capitalize()
                raise Refused(400, {'__all__': ['%s with this Name and Organization already '
                                                'exists.' % label]})
        if kind == 'credential_types':
            problems = credential_type_errors(data.get('inputs'), data.get('injectors'))
            if problems:
                raise Refused(400, {'inputs': problems})
        if kind == 'job_templates':
            project = self.objects['projects'].get(data.get('project'))
            if project is None:
                raise Refused(400, {'project': ['This field is required.']})
            if data.get('playbook') not in project.get('playbooks', []):
                raise Refused(400, {'playbook': ['Playbook not found for project.']})
            if not data.get('inventory') and not data.get('ask_inventory_on_launch'):
                raise Refused(400, {'inventory': ['Job Templates must have an inventory or '
                                                  'allow prompting for it.']})

    def _project_update(self, project):
        """AWX's project update: the branch checked out, its playbooks listed."""
        target = os.path.join(self.checkouts, '_%d' % project['id'])
        shutil.rmtree(target, ignore_errors=True)
        command = ['git', 'clone', '--quiet', '--depth', '1']
        if project.get('scm_branch'):
            command += ['--branch', project['scm_branch']]
        done = subprocess.run(command + ['--', project.get('scm_url', ''), target],
                              capture_output=True, text=True, timeout=120)
        if done.returncode:
            project.update(status='failed', last_update_failed=True, playbooks=[],
                           job_explanation=done.stderr.strip()[-500:])
        else:
            project.update(status='successful', last_update_failed=False,
                           playbooks=playbooks(target), local_path='_%d' % project['id'])

    def create(self, kind, data, parent=None):
        fields = KINDS[kind][2]
        data = dict((k, v) for k, v in data.items() if k in fields)
        if parent is not None:
            data['inventory'] = parent
        with self._lock:
            self._validate(kind, data)
            if kind == 'job_templates':
                project = self.objects['projects'][data['project']]
                data['organization'] = project.get('organization')
            obj = self._make(kind, data)
            if kind == 'projects':
                obj['status'] = 'pending'
                self._project_update(obj)
            return obj

    def replace(self, kind, obj, data):
        fields = KINDS[kind][2]
        new = dict((k, v) for k, v in data.items() if k in fields)
        if kind == 'hosts':
            new['inventory'] = obj['inventory']
        with self._lock:
            self._validate(kind, new, current=obj)
            keep = dict((k, obj[k]) for k in ('id', 'type', 'created', 'organization')
                        if k in obj and k not in new)
            obj.clear()
            obj.update(new, **keep)
            if kind == 'projects':
                self._project_update(obj)
            return obj

    def set_survey(self, jt_id, spec):
        problems = survey_errors(spec)
        if problems:
            raise Refused(400, {'error': problems[0]})
        self.surveys[jt_id] = copy.deepcopy(spec)

    # -- serving -----------------------------------------------------------------------
    def start(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status, body=None, allow=None):
                text = b'' if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(text)))
                if allow:
                    self.send_header('Allow', allow)
                self.end_headers()
                self.wfile.write(text)

            def _handle(self, method):
                try:
                    self._answer(*standin.handle(method, self.path, self.headers,
                                                 self._body()))
                except Refused as refused:
                    self._answer(refused.status, refused.body)

            def _body(self):
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    raise Refused(400, {'detail': 'JSON parse error'})

            def do_GET(self):
                self._handle('GET')

            def do_POST(self):
                self._handle('POST')

            def do_PUT(self):
                self._handle('PUT')

            def do_OPTIONS(self):
                self._handle('OPTIONS')

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return 'http://127.0.0.1:%d' % self.server.server_address[1]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.checkouts, ignore_errors=True)

    def handle(self, method, path, headers, body):
        self.requests.append((method, path))
        split = urlsplit(path)
        query = dict((k, v[-1]) for k, v in parse_qs(split.query).items())
        parts = [p for p in split.path.split('/') if p]
        if parts == ['api']:        # AWX answers both roots without credentials
            return 200, {'current_version': '/api/v2/',
                         'available_versions': {'v2': '/api/v2/'}}
        if parts == ['api', 'v2']:
            return 200, dict((k, '/api/v2/%s/' % KINDS[k][0]) for k in ROOT_KINDS)
        if headers.get('Authorization') != 'Bearer %s' % self.token:
            raise Refused(401, {'detail': 'Authentication credentials were not provided.'})
        if parts[:2] != ['api', 'v2']:
            raise Refused(404, {'detail': 'Not found.'})
        parts = parts[2:]
        kind = BY_PATH.get(parts[0])
        if kind is None:
            raise Refused(404, {'detail': 'Not found.'})
        if len(parts) == 1:
            return self._collection(method, kind, query, body)
        obj = self.objects[kind].get(int(parts[1])) if parts[1].isdigit() else None
        if obj is None:
            raise Refused(404, {'detail': 'Not found.'})
        if len(parts) == 2:
            if method == 'PUT':
                self.replace(kind, obj, body or {})
            if method == 'OPTIONS':
                return 200, {'actions': {'PUT': KINDS[kind][2]}}, 'GET, PUT, OPTIONS'
            return 200, self.view(kind, obj)
        return self._related(method, kind, obj, parts[2], query, body)

    def _page(self, kind, items, query):
        shown = [self.view(kind, o) for o in items
                 if all(str(o.get(k)) == v for k, v in query.items()
                        if k in KINDS[kind][2] or k == 'id')]
        return 200, {'count': len(shown), 'next': None, 'previous': None, 'results': shown}

    def _collection(self, method, kind, query, body, parent=None):
        if method == 'OPTIONS':
            fields = dict(KINDS[kind][2])
            if parent is not None:
                fields.pop('inventory')
            return 200, {'name': kind, 'actions': {'POST': fields}}, 'GET, POST, HEAD, OPTIONS'
        if method == 'POST':
            if not isinstance(body, dict):
                raise Refused(400, {'detail': 'Expected a dictionary of items.'})
            return 201, self.view(kind, self.create(kind, body, parent))
        if method != 'GET':
            raise Refused(405, {'detail': 'Method "%s" not allowed.' % method})
        items = self.objects[kind].values()
        if parent is not None:
            items = [o for o in items if o['inventory'] == parent]
        return self._page(kind, items, query)

    def _related(self, method, kind, obj, name, query, body):
        if kind == 'inventory' and name == 'hosts':
            return self._collection(method, 'hosts', query, body, parent=obj['id'])
        if kind == 'job_templates' and name == 'survey_spec':
            if method == 'POST':
                self.set_survey(obj['id'], body or {})
                return 200, None
            return 200, self.surveys.get(obj['id'], {})
        if kind == 'job_templates' and name in ('labels', 'credentials'):
            return 200, {'count': 0, 'next': None, 'previous': None, 'results': []}
        if kind == 'projects' and name == 'playbooks':
            return 200, obj.get('playbooks', [])
        raise Refused(404, {'detail': 'Not found.'})
