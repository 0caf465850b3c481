# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets at rest: the store seals CA private keys and cluster credentials.

The keys are Fernet keys, one per line, in the file named by
MAGNUM_SECRET_KEY_FILE, else the store's default key file (``default_key_file``: the
API makes it on its first start): the first seals, every one unseals, so a key is
rotated by putting a new one first and resealing the store (``magnum-ansible-api
--reseal-secrets``) before the old one is dropped; the file is read again whenever it
changes (write it whole, then move it into place). A sealed value is text
beginning with ``fernet:``. Without a key file, values are stored as they are;
values stored before a key file was set are still read, and sealed by a reseal.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

try:
    from cryptography.fernet import Fernet, InvalidToken, MultiFernet
    HAS_FERNET = True
except ImportError:  # pragma: no cover - reported by Secrets()
    HAS_FERNET = False

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError

ENV_KEY_FILE = 'MAGNUM_SECRET_KEY_FILE'
PREFIX = 'fernet:'


class SecretsUnavailable(MagnumError):
    """The keys are missing, unreadable or not those that sealed: the service's
    configuration, not the caller's input (500)."""


def new_key():
    """A fresh key, as a line of the key file."""
    return Fernet.generate_key().decode('ascii')


def default_key_file(db_url):
    """Where a store's keys are when none is configured: beside a SQLite file
    (``<store>.key``), else in the user's data directory (one file per host: give the
    other hosts of a PostgreSQL store the same file)."""
    if db_url.startswith('sqlite:///') and ':memory:' not in db_url:
        return os.path.abspath(db_url.split(':///', 1)[1]) + '.key'
    base = os.environ.get('XDG_DATA_HOME') or os.path.join(
        os.path.expanduser('~'), '.local', 'share')
    return os.path.join(base, 'openstack-magnum', 'secret.key')


def ensure_key_file(path):
    """Make ``path`` a key file of one new key, readable by its owner only, unless it
    exists. Returns whether it was made."""
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, 'w') as handle:
        handle.write('# Fernet keys of the store: the first seals, all unseal.\n%s\n'
                     % new_key())
    return True


def is_sealed(value):
    return isinstance(value, str) and value.startswith(PREFIX)


class Secrets(object):
    """Seal and unseal with the keys of a key file (none: values pass through)."""

    def __init__(self, key_file=None):
        self.key_file = key_file or None
        self._stamp, self._keys, self._multi = None, [], None
        self._refresh()

    def _refresh(self):
        """(Re)read the key file when it changed, so that a long-running API and its
        jobs (which read it afresh) seal with the same first key."""
        if not self.key_file:
            return
        try:
            stat = os.stat(self.key_file)
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        except OSError:
            stamp = None
        if stamp is None or stamp != self._stamp:
            self._keys = self._load(self.key_file)
            self._multi = MultiFernet(self._keys)
            self._stamp = stamp

    @property
    def _fernet(self):
        """The keys as one MultiFernet (first seals, all unseal), current with the file."""
        self._refresh()
        return self._multi

    @classmethod
    def from_env(cls, db_url=None):
        """The keys MAGNUM_SECRET_KEY_FILE names, else the store's default key file
        when there is one (default_key_file)."""
        configured = os.environ.get(ENV_KEY_FILE)
        if configured:
            return cls(configured)
        default = default_key_file(db_url) if db_url else None
        return cls(default if default and os.path.exists(default) else None)

    @property
    def enabled(self):
        return bool(self.key_file)

    @staticmethod
    def _load(path):
        if not HAS_FERNET:
            raise SecretsUnavailable("The cryptography library is required to seal secrets.")
        try:
            with open(path) as handle:
                lines = [line.strip() for line in handle]
        except (IOError, OSError) as exc:
            raise SecretsUnavailable("The secret key file %s cannot be read: %s" % (path, exc))
        keys = [line for line in lines if line and not line.startswith('#')]
        if not keys:
            raise SecretsUnavailable("The secret key file %s holds no key." % path)
        try:
            return [Fernet(key.encode('ascii')) for key in keys]
        except (ValueError, UnicodeError):
            raise SecretsUnavailable(
                "The secret key file %s holds a line that is not a Fernet key (32 url-safe "
                "base64-encoded bytes; make one with magnum-ansible-api --new-secret-key)."
                % path)

    def seal(self, value):
        """``value`` sealed with the first key (as it is without a key file)."""
        if value is None or not self.enabled or is_sealed(value):
            return value
        return PREFIX + self._fernet.encrypt(value.encode('utf-8')).decode('ascii')

    def unseal(self, value):
        if not is_sealed(value):
            return value
        if not self.enabled:
            raise SecretsUnavailable(
                "The store holds sealed secrets: set %s to the file of the keys that sealed "
                "them." % ENV_KEY_FILE)
        try:
            return self._fernet.decrypt(value[len(PREFIX):].encode('ascii')).decode('utf-8')
        except InvalidToken:
            raise self._unknown_key()

    def reseal(self, value):
        """``value`` sealed with the first key, whatever it was sealed with before
        (as it is when the first key sealed it)."""
        if is_sealed(value) and self.enabled:
            fernet = self._fernet
            token = value[len(PREFIX):].encode('ascii')
            try:
                self._keys[0].decrypt(token)
                return value                      # sealed by the first key already
            except InvalidToken:
                pass
            try:
                return PREFIX + fernet.rotate(token).decode('ascii')
            except InvalidToken:
                raise self._unknown_key()
        return self.seal(self.unseal(value))

    def _unknown_key(self):
        return SecretsUnavailable(
            "A secret in the store was sealed with a key that is not in %s." % self.key_file)
