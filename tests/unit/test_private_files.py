"""api.private_files.write_private: 0600, whole, nothing left behind."""

import os
import stat

import pytest

from api.private_files import write_private


def test_written_for_the_owner_only(tmp_path):
    path = write_private(tmp_path / 'clouds.yaml', 'secret: 1\n')
    assert open(path).read() == 'secret: 1\n'
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_rewriting_replaces_a_file_another_user_could_read(tmp_path):
    target = tmp_path / 'secure.yaml'
    target.write_text('old\n')
    os.chmod(target, 0o644)
    write_private(target, 'new\n')
    assert target.read_text() == 'new\n'
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ['secure.yaml']


def test_a_failed_write_keeps_the_old_file_and_leaves_no_staged_one(tmp_path):
    target = tmp_path / 'auth-cache.json'
    target.write_text('{"kept": 1}')
    with pytest.raises(TypeError):
        write_private(target, None)
    assert target.read_text() == '{"kept": 1}'
    assert sorted(os.listdir(tmp_path)) == ['auth-cache.json']
