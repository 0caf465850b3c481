"""The per-job auth cache's parts (api/auth_cache.py); a job's modules sharing one
Keystone login is shown against the lab in tests/test_openstack_provider.py."""

import os
import stat
from pathlib import Path

import keyring
import pytest
import yaml

from api import auth_cache


def test_the_job_keyring_is_one_private_file(tmp_path, monkeypatch):
    monkeypatch.setenv(auth_cache.ENV_FILE, str(tmp_path / 'auth-cache.json'))
    ring = auth_cache.JobKeyring()
    assert ring.get_password('openstacksdk', 'id-1') is None
    ring.set_password('openstacksdk', 'id-1', '{"token": 1}')
    ring.set_password('openstacksdk', 'id-2', '{"token": 2}')
    assert ring.get_password('openstacksdk', 'id-1') == '{"token": 1}'
    mode = os.stat(tmp_path / 'auth-cache.json').st_mode
    assert not mode & (stat.S_IRWXG | stat.S_IRWXO)
    ring.delete_password('openstacksdk', 'id-1')
    assert ring.get_password('openstacksdk', 'id-1') is None
    assert ring.get_password('openstacksdk', 'id-2') == '{"token": 2}'
    with pytest.raises(keyring.errors.PasswordDeleteError):
        ring.delete_password('openstacksdk', 'id-1')
    (tmp_path / 'auth-cache.json').write_text('not json')     # a torn file: no cache
    assert ring.get_password('openstacksdk', 'id-2') is None
    monkeypatch.delenv(auth_cache.ENV_FILE)
    with pytest.raises(RuntimeError):                           # openstacksdk: no cache
        ring.get_password('openstacksdk', 'id-2')


def test_the_jobs_secure_yaml_turns_the_cache_on_and_carries_the_operators_on(
        tmp_path, monkeypatch):
    operator = tmp_path / 'operator-secure.yaml'
    operator.write_text(yaml.safe_dump({'clouds': {'lab': {'auth': {'password': 'pw'}}},
                                        'cache': {'expiration_time': 30}}))
    monkeypatch.setenv('OS_CLIENT_SECURE_FILE', str(operator))
    job = tmp_path / 'job'
    job.mkdir()
    env = auth_cache.job_env(job)
    assert env['PYTHON_KEYRING_BACKEND'] == 'api.auth_cache.JobKeyring'
    assert keyring.core.load_keyring(env['PYTHON_KEYRING_BACKEND']).priority == 1
    secure = yaml.safe_load(Path(env['OS_CLIENT_SECURE_FILE']).read_text())
    assert secure == {'clouds': {'lab': {'auth': {'password': 'pw'}}},
                      'cache': {'expiration_time': 30, 'auth': True}}
    assert not os.stat(env['OS_CLIENT_SECURE_FILE']).st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    # a job on a clouds.yaml of its own (a cluster's credential) carries nothing on
    env = auth_cache.job_env(job, inherit=False)
    secure = yaml.safe_load(Path(env['OS_CLIENT_SECURE_FILE']).read_text())
    assert secure == {'cache': {'auth': True}}
    (job / auth_cache.CACHE_NAME).write_text('{}')
    auth_cache.forget(job)
    assert list(job.iterdir()) == []
    auth_cache.forget(job)                                       # twice: nothing to do
