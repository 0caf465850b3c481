"""Every variable named after one of the collection's roles (``kubernetes_*``,
``swarm_*``, ...) that a role's tasks, templates, defaults or vars read is defined
somewhere a play would find it: a role's defaults or vars, an entry point's declared
inputs (meta/argument_specs.yml), a task's ``register``, ``set_fact``, ``vars`` or
``loop_var``, an ``include_vars`` name. Ansible says nothing of an undefined variable
until the task that reads it runs - on a real cluster, minutes in; a rename that reaches
one name too many (a concern moved to a role of its own) is caught here."""

import re
from pathlib import Path

import yaml

ROLES = (Path(__file__).resolve().parents[2]
         / 'collections/ansible_collections/openstack/magnum/roles')
ROLE_NAMES = {path.name for path in ROLES.iterdir() if path.is_dir()}
# A name of a role's prefix, not part of a module's, filter's or file's name (after a dot
# or a slash, before a dot), nor a YAML anchor or alias (after & or *).
NAME = re.compile(r'(?<![.\w/&*])(%s)\w*(?![.\w])' % '|'.join(
    re.escape(name + '_') for name in sorted(ROLE_NAMES, key=len, reverse=True)))


def _defined_in(node, defined):
    """The variables a task list (or any part of one) defines."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == 'register' and isinstance(value, str):
                defined.add(value)
            elif key in ('vars', 'set_fact', 'ansible.builtin.set_fact') \
                    and isinstance(value, dict):
                defined.update(value)
            elif key == 'loop_control' and isinstance(value, dict) and 'loop_var' in value:
                defined.add(value['loop_var'])
            elif key in ('include_vars', 'ansible.builtin.include_vars') \
                    and isinstance(value, dict) and 'name' in value:
                defined.add(value['name'])
            _defined_in(value, defined)
    elif isinstance(node, list):
        for item in node:
            _defined_in(item, defined)


def _code(text):
    """``text`` without its YAML comments."""
    return '\n'.join(line.split(' #')[0] for line in text.splitlines()
                     if not line.lstrip().startswith('#'))


def test_every_variable_a_role_reads_is_defined():
    defined, read = set(), {}
    for path in sorted(ROLES.rglob('*')):
        if not path.is_file():
            continue
        where = path.relative_to(ROLES).parts[1]
        if where not in ('tasks', 'handlers', 'templates', 'defaults', 'vars', 'meta'):
            continue
        text = path.read_text()
        if path.suffix in ('.yml', '.yaml'):
            data = yaml.safe_load(text)
            if where in ('defaults', 'vars') and isinstance(data, dict):
                defined.update(data)
            if path.name == 'argument_specs.yml':
                for entry in (data or {}).get('argument_specs', {}).values():
                    defined.update(entry.get('options') or {})
            if where == 'meta':
                continue
            _defined_in(data, defined)
            text = _code(text)
        for found in NAME.finditer(text):
            read.setdefault(found.group(0), []).append(str(path.relative_to(ROLES)))
    undefined = dict((name, places) for name, places in sorted(read.items())
                     if name not in defined and name not in ROLE_NAMES)
    assert undefined == {}
