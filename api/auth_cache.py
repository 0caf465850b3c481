"""One Keystone authentication per job, shared by the job's module runs.

Every openstack.cloud module run is a process of its own that would authenticate
afresh (a password or application-credential check in Keystone each time: the bulk of
Keystone's work during a cluster operation). openstacksdk can keep its authentication
in a keyring (clouds.yaml ``cache: {auth: true}``) and take it from there in the next
process, re-authenticating by itself when the token is about to expire. For each job
of the openstack provider the API turns that on: a secure.yaml of the job's own (the
operator's secure.yaml, if any, plus ``cache.auth``) and a keyring that is a 0600 file
in the job's private directory, removed with the job's other secrets when the run ends.
"""

import json
import os

import yaml

from api.private_files import write_private

try:
    from keyring.backend import KeyringBackend
    from keyring.errors import PasswordDeleteError
    HAS_KEYRING = True
except ImportError:  # without keyring, every module run authenticates
    KeyringBackend, HAS_KEYRING = object, False

ENV_FILE = 'MAGNUM_AUTH_CACHE'
BACKEND = 'api.auth_cache.JobKeyring'
CACHE_NAME = 'auth-cache.json'
SECURE_NAME = 'secure.yaml'


class JobKeyring(KeyringBackend):
    """A keyring that is one JSON file, named by $MAGNUM_AUTH_CACHE."""

    priority = 1

    @staticmethod
    def _path():
        path = os.environ.get(ENV_FILE)
        if not path:
            raise RuntimeError('%s is not set' % ENV_FILE)   # openstacksdk: no cache
        return path

    def _load(self):
        try:
            with open(self._path()) as handle:
                return json.load(handle)
        except (IOError, OSError, ValueError):
            return {}

    def get_password(self, service, username):
        return self._load().get(service, {}).get(username)

    def set_password(self, service, username, password):
        data = self._load()
        data.setdefault(service, {})[username] = password
        self._save(data)

    def delete_password(self, service, username):
        data = self._load()
        if username not in data.get(service, {}):
            raise PasswordDeleteError(username)
        del data[service][username]
        self._save(data)

    def _save(self, data):
        write_private(self._path(), json.dumps(data))


def _operator_secure_file():
    """The secure.yaml openstacksdk would read (the first that exists), or None."""
    from openstack.config import loader
    candidates = ([os.environ['OS_CLIENT_SECURE_FILE']]
                  if os.environ.get('OS_CLIENT_SECURE_FILE') else []) + list(loader.SECURE_FILES)
    return next((path for path in candidates if os.path.isfile(path)), None)


def job_env(directory, inherit=True):
    """The environment that gives a job's module runs one authentication between them
    ({} without keyring). ``inherit``: the job uses the operator's clouds.yaml, so its
    secure.yaml carries the operator's on."""
    if not HAS_KEYRING:
        return {}
    secure = {}
    operator = _operator_secure_file() if inherit else None
    if operator:
        with open(operator) as handle:
            secure = yaml.safe_load(handle) or {}
    secure.setdefault('cache', {})['auth'] = True
    path = write_private(os.path.join(str(directory), SECURE_NAME), yaml.safe_dump(secure))
    return {'OS_CLIENT_SECURE_FILE': path, 'PYTHON_KEYRING_BACKEND': BACKEND,
            ENV_FILE: os.path.join(str(directory), CACHE_NAME)}


def forget(directory):
    """Remove a job's cached authentication and its secure.yaml."""
    for name in (CACHE_NAME, SECURE_NAME):
        try:
            os.remove(os.path.join(str(directory), name))
        except FileNotFoundError:
            pass
