"""What an operator's tools read of the collection: its action group lists every module
(module_defaults: group/openstack.magnum.magnum), its README every module and filter."""

import importlib
from pathlib import Path

import yaml

COLLECTION = (Path(__file__).resolve().parents[2]
              / 'collections/ansible_collections/openstack/magnum')


def test_every_module_is_in_the_action_group_and_every_plugin_in_the_readme():
    modules = sorted(p.stem for p in (COLLECTION / 'plugins/modules').glob('*.py'))
    filters = sorted(p.stem for p in (COLLECTION / 'plugins/filter').glob('*.yml'))
    # every filter the filter files give has its documentation file (ansible-doc -t filter),
    # and no two files give one name
    given = []
    for path in sorted((COLLECTION / 'plugins/filter').glob('*.py')):
        module = importlib.import_module(
            'ansible_collections.openstack.magnum.plugins.filter.' + path.stem)
        given += module.FilterModule().filters()
    assert len(given) > 30 and sorted(given) == filters
    runtime = yaml.safe_load((COLLECTION / 'meta/runtime.yml').read_text())
    assert sorted(runtime['action_groups']['magnum']) == modules
    readme = (COLLECTION / 'README.md').read_text()
    assert [m for m in modules if '| `%s` |' % m not in readme] == []
    assert [f for f in filters if '| `%s` |' % f not in readme] == []


def test_every_filter_and_module_the_roles_and_playbooks_name_exists():
    """A rename leaves no role task or expression naming what is gone (old names are
    meta/runtime.yml's redirects, for users, never the collection's own)."""
    import re
    given, modules = set(), set(p.stem for p in (COLLECTION / 'plugins/modules').glob('*.py'))
    for path in (COLLECTION / 'plugins/filter').glob('*.py'):
        given |= set(importlib.import_module(
            'ansible_collections.openstack.magnum.plugins.filter.' + path.stem)
            .FilterModule().filters())
    sources = list((COLLECTION / 'roles').rglob('*.yml')) + list(
        (COLLECTION.parents[3] / 'playbooks').rglob('*.yml'))
    used_filters, used_modules = set(), set()
    for path in sources:
        text = path.read_text()
        used_filters |= set(re.findall(r'\|\s*openstack\.magnum\.(\w+)', text))
        used_modules |= set(re.findall(r'^\s*-?\s*openstack\.magnum\.(\w+):', text, re.M))
    assert len(used_filters) > 30 and sorted(used_filters - given) == []
    roles = set(p.name for p in (COLLECTION / 'roles').iterdir())
    assert len(used_modules) > 15 and sorted(used_modules - modules - roles) == []
