"""What an operator's tools read of the collection: its action group lists every module
(module_defaults: group/openstack.magnum.magnum), its README every module and filter."""

import re
from pathlib import Path

import yaml

COLLECTION = (Path(__file__).resolve().parents[2]
              / 'collections/ansible_collections/openstack/magnum')


def test_every_module_is_in_the_action_group_and_every_plugin_in_the_readme():
    modules = sorted(p.stem for p in (COLLECTION / 'plugins/modules').glob('*.py'))
    filters = sorted(p.stem for p in (COLLECTION / 'plugins/filter').glob('*.yml'))
    # every filter the plugin gives has its documentation file (ansible-doc -t filter)
    plugin = (COLLECTION / 'plugins/filter/magnum.py').read_text()
    given = re.findall(r"'(\w+)': ", plugin[plugin.index('def filters'):])
    assert len(given) > 30 and sorted(given) == filters
    runtime = yaml.safe_load((COLLECTION / 'meta/runtime.yml').read_text())
    assert sorted(runtime['action_groups']['magnum']) == modules
    readme = (COLLECTION / 'README.md').read_text()
    assert [m for m in modules if '| `%s` |' % m not in readme] == []
    assert [f for f in filters if '| `%s` |' % f not in readme] == []
