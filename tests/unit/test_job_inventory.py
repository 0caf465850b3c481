"""The operator's inventory (--inventory, MAGNUM_INVENTORY): the jobs read it after the
project's own, and its group_vars/all.yml sets the roles' variables for every host."""

import json
import os
import subprocess
import sys

from api import cli
from api.executor import job_inventory


def test_the_jobs_read_the_operators_inventory_after_the_projects_own(tmp_path, monkeypatch):
    own = tmp_path / 'site'
    (own / 'group_vars').mkdir(parents=True)
    (own / 'group_vars' / 'all.yml').write_text(
        'kubernetes_addon_values: {metrics-server: {livenessProbe: {timeoutSeconds: 30}}}\n')
    monkeypatch.delenv('MAGNUM_INVENTORY', raising=False)
    settings = cli.job_settings(cli.parse_args(['--inventory', str(own)]))
    inventories = job_inventory(settings)
    assert inventories[1:] == [str(own)]
    args = [a for path in inventories for a in ('-i', path)]
    shown = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ansible-inventory')] + args
        + ['--host', 'localhost'], capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout)['kubernetes_addon_values'] == {
        'metrics-server': {'livenessProbe': {'timeoutSeconds': 30}}}
    # Without one, the project's own alone; MAGNUM_INVENTORY gives them too.
    assert job_inventory(cli.job_settings(cli.parse_args([]))) == inventories[0]
    monkeypatch.setenv('MAGNUM_INVENTORY', '%s:%s' % (own, 'rel'))
    assert job_inventory(cli.job_settings(cli.parse_args([])))[1:] == [
        str(own), os.path.abspath('rel')]
