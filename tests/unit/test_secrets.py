"""Sealing secrets at rest: Fernet keys from a key file, the first seals, all unseal."""

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import secrets

PEM = '-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n'


def key_file(tmp_path, *keys, name='keys'):
    path = tmp_path / name
    path.write_text('# magnum secret keys\n' + ''.join(k + '\n' for k in keys))
    return str(path)


def test_a_sealed_value_reads_back_and_shows_nothing_of_itself(tmp_path):
    sealer = secrets.Secrets(key_file(tmp_path, secrets.new_key()))
    sealed = sealer.seal(PEM)
    assert secrets.is_sealed(sealed) and 'PRIVATE KEY' not in sealed
    assert sealer.unseal(sealed) == PEM
    assert sealer.seal(sealed) == sealed, 'sealing twice must not wrap the value again'
    assert sealer.seal(None) is None


def test_without_a_key_file_values_pass_through_but_sealed_ones_are_refused(tmp_path):
    plain = secrets.Secrets()
    assert not plain.enabled and plain.seal(PEM) == PEM and plain.unseal(PEM) == PEM
    sealed = secrets.Secrets(key_file(tmp_path, secrets.new_key())).seal(PEM)
    with pytest.raises(secrets.SecretsUnavailable, match=secrets.ENV_KEY_FILE):
        plain.unseal(sealed)


def test_a_key_is_rotated_by_putting_a_new_one_first(tmp_path):
    old, new = secrets.new_key(), secrets.new_key()
    by_old = secrets.Secrets(key_file(tmp_path, old, name='old')).seal(PEM)
    both = secrets.Secrets(key_file(tmp_path, new, old, name='both'))
    assert both.unseal(by_old) == PEM
    resealed = both.reseal(by_old)
    assert resealed != by_old and both.reseal(resealed) == resealed
    assert secrets.Secrets(key_file(tmp_path, new, name='new')).unseal(resealed) == PEM
    with pytest.raises(secrets.SecretsUnavailable, match='not in'):
        secrets.Secrets(key_file(tmp_path, new, name='new2')).unseal(by_old)
    with pytest.raises(secrets.SecretsUnavailable, match='not in'):
        secrets.Secrets(key_file(tmp_path, new, name='new3')).reseal(by_old)
    # a plain value (stored before there was a key) is sealed by a reseal
    assert both.unseal(both.reseal(PEM)) == PEM and secrets.is_sealed(both.reseal(PEM))


@pytest.mark.parametrize('content, message', [
    (None, 'cannot be read'),
    ('# only a comment\n\n', 'holds no key'),
    ('not-a-key\n', 'not a Fernet key'),
])
def test_a_key_file_that_cannot_be_used_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / 'keys'
    if content is not None:
        path.write_text(content)
    with pytest.raises(secrets.SecretsUnavailable, match=message):
        secrets.Secrets(str(path))


def test_a_changed_key_file_is_read_again_without_a_restart(tmp_path):
    """A long-running API and its jobs (which read the file afresh) must agree on the
    key that seals: the file is read again when it changes."""
    old, new = secrets.new_key(), secrets.new_key()
    path = key_file(tmp_path, old)
    running = secrets.Secrets(path)
    by_old = running.seal(PEM)
    staged = key_file(tmp_path, new, old, name='staged')
    import os
    os.replace(staged, path)                      # the operator puts a new key first
    by_new = running.seal(PEM)
    assert secrets.Secrets(key_file(tmp_path, new, name='new')).unseal(by_new) == PEM
    assert running.unseal(by_old) == PEM and running.reseal(by_new) == by_new
