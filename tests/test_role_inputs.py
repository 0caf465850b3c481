"""The roles' declared inputs (meta/argument_specs.yml) are checked by Ansible when
cluster_operation includes a step: a step given a wrong or missing magnum_* input fails
at once, naming it, before any of its tasks runs."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def include(tmp_path, role, entry, variables):
    playbook = tmp_path / 'step.yml'
    playbook.write_text(json.dumps([{
        'hosts': 'localhost', 'gather_facts': False, 'tasks': [{
            'name': 'The step', 'vars': variables,
            'ansible.builtin.include_role': {'name': 'openstack.magnum.' + role,
                                             'tasks_from': entry}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'),
               ANSIBLE_NOCOLOR='1', HOME=str(tmp_path))
    return subprocess.run([str(BIN / 'ansible-playbook'), str(playbook)], cwd=str(REPO),
                          env=env, capture_output=True, text=True, timeout=300)


def test_a_step_without_its_cluster_or_with_a_wrong_input_fails_naming_it(tmp_path):
    missing = include(tmp_path, 'swarm', 'create', {'magnum_operation': 'create'})
    assert missing.returncode != 0
    assert 'missing required arguments: magnum_cluster, magnum_template' in missing.stdout, \
        missing.stdout[-2000:]
    wrong = include(tmp_path, 'kubernetes', 'resize', {
        'magnum_cluster': {'uuid': 'u'}, 'magnum_template': {'coe': 'kubernetes'},
        'magnum_node_count': 'three'})
    assert wrong.returncode != 0
    assert "argument 'magnum_node_count' is of type str and we were unable to convert to int" \
        in wrong.stdout, \
        wrong.stdout[-2000:]
    # the check, not a task of the role's, stopped it
    assert 'Validating arguments against arg spec' in wrong.stdout, wrong.stdout[-2000:]
