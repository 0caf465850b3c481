"""The execution environment AWX runs the collection in: ansible-builder (v3) makes its
build context from execution-environment.yml (building the image needs a base image
these machines cannot pull). Its collections are galaxy.yml's dependencies, its Python
packages the collection's requirements.txt, which holds what the modules import."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
COLLECTION = REPO / 'collections/ansible_collections/openstack/magnum'
BUILDER = shutil.which('ansible-builder', path=str(Path(sys.executable).parent))


@pytest.mark.skipif(not BUILDER, reason='no ansible-builder (pip install -e .[test])')
def test_ansible_builder_makes_the_execution_environments_build_context(tmp_path):
    context = tmp_path / 'context'
    run = subprocess.run([BUILDER, 'create', '-f', 'execution-environment.yml', '--context',
                          str(context)], cwd=str(REPO), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    build = context / '_build'
    dockerfile = (context / 'Dockerfile').read_text()
    assert 'ansible-galaxy collection install --offline --no-deps /tmp/openstack-magnum-' \
        in dockerfile
    assert (build / 'openstack_magnum' / 'galaxy.yml').is_file()
    assert (build / 'playbooks' / 'cluster_create.yml').is_file()
    assert 'oslo.messaging' in (build / 'requirements.txt').read_text()
    # The galaxy requirements are galaxy.yml's dependencies.
    galaxy = yaml.safe_load((COLLECTION / 'galaxy.yml').read_text())
    wanted = yaml.safe_load((build / 'requirements.yml').read_text())['collections']
    assert dict((c['name'], c['version']) for c in wanted) == galaxy['dependencies']
    # The collection's Python requirements name what ansible-builder will introspect.
    meta = yaml.safe_load((COLLECTION / 'meta/execution-environment.yml').read_text())
    assert (COLLECTION / meta['dependencies']['python']).is_file()
    assert (COLLECTION / meta['dependencies']['system']).is_file()


def test_the_entry_playbooks_run_from_the_collection_alone(tmp_path):
    """A project or execution environment with only the collection installed (built and
    installed as ansible-galaxy does) has the entry playbooks:
    `ansible-playbook openstack.magnum.<entry point>`; the repository's playbooks/ only
    import them."""
    bin_dir = Path(sys.executable).parent
    built = subprocess.run([str(bin_dir / 'ansible-galaxy'), 'collection', 'build',
                            str(COLLECTION), '--output-path', str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (archive,) = tmp_path.glob('openstack-magnum-*.tar.gz')
    installed = tmp_path / 'installed'
    done = subprocess.run([str(bin_dir / 'ansible-galaxy'), 'collection', 'install',
                           '--offline', '--no-deps', '--force', '-p', str(installed),
                           str(archive)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    entry_points = sorted(p.stem for p in (REPO / 'playbooks').glob('*.yml'))
    assert entry_points == sorted(p.stem for p in (COLLECTION / 'playbooks').glob('*.yml'))
    site = [p for p in sys.path if p.endswith('site-packages')]
    for name in entry_points:
        check = subprocess.run(
            [str(bin_dir / 'ansible-playbook'), '--syntax-check', 'openstack.magnum.' + name],
            cwd=str(tmp_path), capture_output=True, text=True, timeout=120,
            env={'PATH': '%s:/usr/bin:/bin' % bin_dir, 'HOME': str(tmp_path),
                 'ANSIBLE_COLLECTIONS_PATH': ':'.join([str(installed)] + site)})
        assert check.returncode == 0, (name, check.stdout + check.stderr)
        assert str(installed) in check.stdout
        wrapper = yaml.safe_load((REPO / 'playbooks' / (name + '.yml')).read_text())
        # `import_playbook:` as is: AWX lists a project's playbooks by a line starting
        # with hosts, include or import_playbook (a FQCN keyword would hide them).
        assert wrapper[0]['import_playbook'] == 'openstack.magnum.' + name


CHANGELOG_TOOL = shutil.which('antsibull-changelog', path=str(Path(sys.executable).parent))


@pytest.mark.skipif(not CHANGELOG_TOOL, reason='no antsibull-changelog (pip install -e .[test])')
def test_the_changelog_is_kept_as_ansible_collections_keep_it(tmp_path):
    """changelogs/: fragments and changelog.yaml valid for antsibull-changelog, and
    CHANGELOG.rst exactly what it generates from them (nobody edits it by hand)."""
    copy = tmp_path / 'ansible_collections' / 'openstack' / 'magnum'
    copy.mkdir(parents=True)
    for name in ('galaxy.yml', 'CHANGELOG.rst'):
        shutil.copy(COLLECTION / name, copy / name)
    shutil.copytree(COLLECTION / 'changelogs', copy / 'changelogs')

    def tool(*args):
        run = subprocess.run([CHANGELOG_TOOL] + list(args), cwd=str(copy), capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        return run.stdout + run.stderr
    assert tool('lint') == ''
    assert tool('lint-changelog-yaml', 'changelogs/changelog.yaml') == ''
    tool('generate')
    assert (copy / 'CHANGELOG.rst').read_text() == (COLLECTION / 'CHANGELOG.rst').read_text()
    released = yaml.safe_load((COLLECTION / 'changelogs' / 'changelog.yaml').read_text())
    galaxy = yaml.safe_load((COLLECTION / 'galaxy.yml').read_text())
    assert galaxy['version'] in released['releases']


DOCS_TOOL = shutil.which('antsibull-docs', path=str(Path(sys.executable).parent))
RENDER_DOCS = ('antsibull-docs collection --use-current --fail-on-error --squash-hierarchy '
               '--output-format simplified-rst --dest-dir docs/collection openstack.magnum')


@pytest.mark.skipif(not DOCS_TOOL, reason='no antsibull-docs (pip install -e .[test])')
def test_the_collections_docs_are_what_antsibull_docs_renders(tmp_path):
    """docs/collection/: every module's and filter's documentation as antsibull-docs (the
    Ansible ecosystem's renderer, as docs.ansible.com's) renders it from the plugins -
    which it parses strictly (--fail-on-error) - and no stale page beside them (its
    first line, the tool's version, aside)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / 'collections'),
               PATH='%s:%s' % (Path(sys.executable).parent, os.environ['PATH']))
    run = subprocess.run([DOCS_TOOL] + RENDER_DOCS.split()[1:-3] + [
        '--dest-dir', str(tmp_path), 'openstack.magnum'], env=env, capture_output=True,
        text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr

    def pages(directory):
        return dict((p.name, p.read_text().split('\n', 1)[1]) for p in directory.glob('*.rst'))
    rendered, kept = pages(tmp_path), pages(REPO / 'docs' / 'collection')
    stale = sorted(set(kept) - set(rendered)) + sorted(
        name for name in rendered if kept.get(name) != rendered[name])
    assert stale == [], 'render again, from the checkout: ANSIBLE_COLLECTIONS_PATH=collections ' \
        + RENDER_DOCS
