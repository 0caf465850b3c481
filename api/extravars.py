"""A job's extravars as Ansible must take them: data, never templates.

Ansible templates the extravars it is given (``{{ ... }}`` in any string runs), and
every value of a job's extravars comes from a request or the store. They are written
to the run's ``env/extravars`` file, where ansible-runner passes them with
``-e @file``, each string tagged ``!unsafe``: Ansible keeps such a value as it is,
wherever a playbook or role uses it.
"""

import os

import yaml


class _Unsafe(str):
    """A string Ansible must never template."""


class _Dumper(yaml.SafeDumper):
    pass


def _unsafe(dumper, value):
    return dumper.represent_scalar('!unsafe', str(value), style='"')


_Dumper.add_representer(_Unsafe, _unsafe)


def mark_unsafe(value):
    """``value`` with every string (keys of mappings aside) tagged unsafe."""
    if isinstance(value, str):
        return _Unsafe(value)
    if isinstance(value, dict):
        return dict((str(k), mark_unsafe(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [mark_unsafe(v) for v in value]
    return value


def dumps(extravars):
    """The YAML text of ``extravars`` with every string tagged ``!unsafe``."""
    return yaml.dump(mark_unsafe(dict(extravars)), Dumper=_Dumper, allow_unicode=True,
                     default_flow_style=False, width=float('inf'))


def write(private_dir, extravars):
    """Write ``env/extravars`` of a run's private data dir (only its owner reads it)."""
    env = os.path.join(str(private_dir), 'env')
    os.makedirs(env, mode=0o700, exist_ok=True)
    path = os.path.join(env, 'extravars')
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w', encoding='utf-8') as handle:
        handle.write(dumps(extravars))
    return path
