"""The import graph (issues #46, #64): no cycle in the API nor in module_utils, and the core
imports no provider, driver or federation code - the drivers are handed to it."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULE_UTILS = REPO / 'collections/ansible_collections/openstack/magnum/plugins/module_utils'
PREFIX = 'ansible_collections.openstack.magnum.plugins.module_utils.'


def graph(root, package):
    """{module: the modules of ``package`` it imports} for every .py under ``root``."""
    names = {}
    for path in root.rglob('*.py'):
        parts = path.relative_to(root).with_suffix('').parts
        if parts[-1] == '__init__':
            parts = parts[:-1]
        names['.'.join((package,) + parts).rstrip('.')] = path
    edges = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                candidates = [node.module] + ['%s.%s' % (node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            found.update(c for c in candidates if c in names and c != name)
        edges[name] = found
    return edges


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_api_imports_itself_in_no_circle():
    edges = graph(REPO / 'api', 'api')
    assert 'api.app' in edges and edges['api.blueprints.clusters']
    assert cycles(edges) == []


def test_module_utils_have_no_cycle_and_the_core_imports_no_provider_driver_or_federation():
    edges = graph(MODULE_UTILS, PREFIX.rstrip('.'))
    assert cycles(edges) == []
    outward = sorted(
        (name[len(PREFIX):], dep[len(PREFIX):]) for name, deps in edges.items()
        if name.startswith(PREFIX + 'core.') for dep in deps
        if not dep.startswith(PREFIX + 'core.'))
    assert outward == []


def test_importing_the_core_loads_no_driver_provider_or_federation():
    """The transitive closure, as Python loads it: every module of core/ imported, and
    nothing of drivers/, providers/ or federation/ in sys.modules - until the registry is
    imported, which hands the core its drivers."""
    import subprocess
    import sys
    core = sorted(p.stem for p in (MODULE_UTILS / 'core').glob('*.py') if p.stem != '__init__')
    code = '\n'.join(['import importlib, sys'] + [
        'importlib.import_module(%r)' % (PREFIX + 'core.' + name) for name in core] + [
        "print(sorted(m for m in sys.modules if m.startswith(%r) and not m.startswith(%r)))"
        % (PREFIX, PREFIX + 'core'),
        "from %sdrivers.registry import DRIVERS" % PREFIX,
        "from %score import drivers" % PREFIX,
        "print(drivers.registry() is DRIVERS, [d.name for d in drivers.registry()])"])
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         cwd=str(REPO / 'collections'), check=True)
    loaded, handed = run.stdout.splitlines()
    assert len(core) > 20 and loaded == '[]'
    assert handed == "True ['k8s_kubeadm', 'k8s_capi_helm', 'swarm_mode', 'mesos_debian']"


def test_the_filter_files_import_no_sdk_or_store():
    """Ansible loads every filter file of the collection to resolve any one filter, in
    each task process that uses one: none may pull openstacksdk, SQLAlchemy or the
    Kubernetes client (openstacksdk alone was ~3 CPU-s of a no-op create, issue #63)."""
    import subprocess
    import sys
    filters = sorted((MODULE_UTILS.parent / 'filter').glob('*.py'))
    code = '\n'.join(['import importlib, sys'] + [
        'importlib.import_module(%r)' % (
            'ansible_collections.openstack.magnum.plugins.filter.' + path.stem)
        for path in filters] + [
        "print(' '.join(m for m in ('openstack', 'sqlalchemy', 'kubernetes') "
        "if m in sys.modules))"])
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         cwd=str(REPO / 'collections'), check=True)
    assert len(filters) >= 5 and run.stdout.strip() == ''


def test_nothing_outside_the_providers_asks_a_providers_name():
    """A provider is its descriptor (providers/contract.py): the API, the core, the drivers,
    roles and playbooks ask it what it is, never which one it is (issue #64)."""
    import re
    asks = re.compile(r"provider\w*(\s*\|\s*default\([^)]*\))?\s*(==|!=|(not )?in\s*[(\[])"
                      r"|(==|!=)\s*['\"](docker|openstack)['\"]")
    collection = MODULE_UTILS.parent.parent
    places = [REPO / 'api', collection / 'plugins', collection / 'roles', collection / 'playbooks']
    found = []
    for place in places:
        for path in sorted(place.rglob('*')):
            if path.suffix not in ('.py', '.yml', '.j2') or 'providers' in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if asks.search(line.split('#')[0]):
                    found.append('%s:%d: %s' % (path.relative_to(REPO), number, line.strip()))
    assert found == []
