"""A copy of the checkout whose kubernetes role is the tests' fixture driver (the tests'
``project`` fixture and benchmarks/conductors.py's no-op driver)."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / 'fixtures'


def make_fixture_project(dest):
    """Fill ``dest`` (made here) with the checkout's playbooks, inventory, ansible.cfg and
    collections, the fixture driver in place of the real kubernetes role; returns it."""
    dest.mkdir()
    for name in ('playbooks', 'inventory', 'ansible.cfg'):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    shutil.copytree(REPO / 'collections', dest / 'collections',
                    ignore=shutil.ignore_patterns('output', '__pycache__'))
    role = dest / 'collections/ansible_collections/openstack/magnum/roles/kubernetes'
    shutil.rmtree(role, ignore_errors=True)
    shutil.copytree(FIXTURES / 'test_driver_role', role)
    # The fixture driver reaches no node: the OpenStack provider need not wait for the
    # lab's servers (which never boot) to answer over SSH.
    (dest / 'inventory' / 'group_vars').mkdir()
    (dest / 'inventory' / 'group_vars' / 'all.yml').write_text(
        '---\ninfra_openstack_wait_for_ssh: false\n')
    return dest
