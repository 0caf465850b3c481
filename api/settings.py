"""API settings: command line and environment, one object on ``app.config``."""

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from api import credentials
from api.core import lifecycle, provider_checks, providers, secrets, store

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Settings:
    db_url: str = field(default_factory=store.default_url)
    workers: int = 2
    default_project: str = lifecycle.DEFAULT_PROJECT
    default_roles: tuple = ('admin', 'member')
    # noauth (identity from X-Project-Id / X-Roles, else the defaults) or keystone
    # (keystonemiddleware's auth_token validates X-Auth-Token; see api/auth.py).
    auth_strategy: str = 'noauth'
    # keystone: the clouds.yaml cloud whose credentials validate tokens (a service user).
    keystone_cloud: str = field(default_factory=lambda: os.environ.get('MAGNUM_KEYSTONE_CLOUD', ''))
    max_limit: int = 1000
    cluster_user_trust: bool = False
    # With cluster_user_trust under keystone auth and the openstack provider: the Keystone
    # domain of the clusters' trustee users (Magnum's [trust] trustee_domain_id or _name;
    # empty: clusters get no trust), and the clouds.yaml cloud of its admin (default the
    # keystone_cloud's service user).
    trustee_domain: str = field(default_factory=lambda: os.environ.get('MAGNUM_TRUSTEE_DOMAIN', ''))
    trustee_cloud: str = field(default_factory=lambda: os.environ.get('MAGNUM_TRUSTEE_CLOUD', ''))
    # A Magnum policy.yaml whose rules override the defaults (api/policy.py).
    policy_file: str = field(default_factory=lambda: os.environ.get('MAGNUM_POLICY_FILE', ''))
    playbooks_dir: Path = REPO_ROOT / 'playbooks'
    project_dir: Path = REPO_ROOT
    # The operator's inventories the jobs read after the project's own inventory/ (its
    # group_vars/all.yml sets the roles' variables: a cloud without KVM, the add-ons'
    # values); MAGNUM_INVENTORY, paths separated by ':'.
    inventories: tuple = field(default_factory=lambda: inventories_from_env())
    runner_dir: Path = field(default_factory=lambda: Path(
        os.environ.get('MAGNUM_RUNNER_DIR')
        or Path(os.environ.get('XDG_DATA_HOME') or Path.home() / '.local' / 'share')
        / 'openstack-magnum' / 'jobs'))
    heartbeat_interval: float = 10.0
    # Seconds between health refreshes of settled clusters (0: off).
    health_interval: float = 60.0
    # Health checks run at once (each one ansible-playbook run; apart from the job workers).
    health_workers: int = 2
    # Read the clusters' COEs without a playbook where their driver can (api/health_check.py),
    # in this many threads, each endpoint given this many seconds to answer.
    health_direct: bool = True
    health_threads: int = 64
    health_timeout: float = 5.0
    # The niceness of the playbook runs (operations and health rounds; 0-19): the API's
    # requests keep the CPU before them on a busy host.
    job_nice: int = 10
    # Fork each playbook run from a process that imported Ansible and the collection once
    # (api/playbook_server.py) instead of starting ansible-playbook afresh.
    playbook_server: bool = True
    # Seconds a worker of an auto_healing_enabled cluster stays broken (its Ready
    # condition not True in every health round) before it is replaced (module_utils/core/healing.py;
    # magnum-auto-healer's default unhealthy duration).
    auto_healing_grace: float = 300.0
    # Record jobs, and run them: with start_executor and no transport_url, in this process
    # (the embedded conductor); with a transport_url, magnum-ansible-conductor processes
    # run them, told over oslo.messaging (api/messaging.py).
    start_executor: bool = True
    # oslo.messaging's URL of the conductors' broker (rabbit://user:password@host:5672/):
    # MAGNUM_TRANSPORT_URL, else the content of the file MAGNUM_TRANSPORT_URL_FILE names
    # (its password kept out of the process's environment and command line), as the store's.
    transport_url: str = field(default_factory=lambda: store.url_from_env('MAGNUM_TRANSPORT_URL'))
    # Infrastructure provider of the clusters: docker (local nodes), openstack or none.
    provider: str = field(default_factory=lambda: os.environ.get('MAGNUM_PROVIDER', 'docker'))
    # The clouds.yaml cloud of the openstack provider.
    cloud: str = field(default_factory=lambda: os.environ.get('MAGNUM_CLOUD')
                       or os.environ.get('OS_CLOUD') or '')
    # Fernet keys that seal CA private keys and cluster credentials in the store
    # (module_utils/core/secrets.py); empty: stored as they are.
    secret_key_file: str = field(default_factory=lambda: os.environ.get(secrets.ENV_KEY_FILE, ''))

    def store_secrets(self, create=False):
        """The store's keys: the configured key file, else the store's default one
        (made, with ``create``, when missing: secrets are never kept in clear)."""
        if self.secret_key_file:
            return secrets.Secrets(os.path.abspath(self.secret_key_file))
        path = secrets.default_key_file(self.db_url)
        if create and secrets.ensure_key_file(path):
            logging.getLogger('api').warning(
                'made the secret key file %s: it seals CA keys and cluster credentials in '
                'the store; keep it (and back it up) with the store%s', path,
                '' if self.db_url.startswith('sqlite') else
                ', and give every other API host of this store the same file '
                '(--secret-key-file)')
        return secrets.Secrets(path if os.path.exists(path) else None)

    @property
    def infrastructure(self):
        """The provider's descriptor (providers/contract.py): what it is, never its name."""
        return providers.by_name(self.provider)

    def core(self, caller_cloud=None):
        """The settings the core's validation needs; with the openstack provider,
        templates and clusters are checked against its cloud (as the caller, given
        ``caller_cloud``: a connection, or openstack.connect() arguments)."""
        checks = provider_checks.ProviderChecks(self.provider, caller_cloud or self.cloud)
        return {'cluster_user_trust': self.cluster_user_trust, 'provider': self.provider,
                'checks': checks,
                'application_credential_only': credentials.application_credential_only(self)}


def inventories_from_env():
    """MAGNUM_INVENTORY's paths (separated by ':'), absolute."""
    return tuple(os.path.abspath(path)
                 for path in os.environ.get('MAGNUM_INVENTORY', '').split(os.pathsep) if path)
