"""magnum-ansible-api: serve the Magnum v1 API and run jobs (or, given a transport, have
magnum-ansible-conductor processes run them: api/conductor.py)."""

import argparse
import logging
import os
import signal
import sys

from api.core import providers
from api.settings import Settings, inventories_from_env


def add_job_options(parser, defaults):
    """The options of whatever opens the store and runs jobs: the API (with its embedded
    conductor) and magnum-ansible-conductor alike."""
    parser.add_argument('--db', default=defaults.db_url,
                        help='store URL: sqlite:///path or postgresql://... '
                             '(default: $MAGNUM_DB_URL or a SQLite file under the '
                             'user data directory)')
    parser.add_argument('--transport-url', default=defaults.transport_url,
                        help="oslo.messaging URL of the conductors' broker "
                             "(rabbit://user:password@host:5672/; default "
                             "$MAGNUM_TRANSPORT_URL, or the file $MAGNUM_TRANSPORT_URL_FILE "
                             "names). The API given one runs no job itself: "
                             "magnum-ansible-conductor processes do")
    parser.add_argument('--workers', type=int, default=2,
                        help='concurrent playbook runs (default 2)')
    parser.add_argument('--runner-dir', default=str(defaults.runner_dir),
                        help='where each job gets its private ansible-runner directory')
    parser.add_argument('--project-dir', default=str(defaults.project_dir),
                        help='checkout holding ansible.cfg, inventory/ and playbooks/ '
                             '(default: this one)')
    parser.add_argument('--inventory', action='append', default=None, metavar='PATH',
                        help="an inventory (file or directory) the jobs read after the "
                             "project's own, for the roles' variables in its "
                             "group_vars/all.yml; repeatable (default $MAGNUM_INVENTORY, "
                             "paths separated by ':')")
    parser.add_argument('--provider', default=defaults.provider,
                        choices=list(providers.NAMES),
                        help='infrastructure provider of the clusters: docker (local '
                             'container nodes, the default), openstack (the cloud named by '
                             'MAGNUM_CLOUD or OS_CLOUD in clouds.yaml) or none (drivers that '
                             'bring their own)')
    parser.add_argument('--health-interval', type=float, default=60.0,
                        help='seconds between health refreshes of settled clusters (0: off)')
    parser.add_argument('--health-workers', type=int, default=defaults.health_workers,
                        help='health playbook runs at once (default %(default)s), apart from '
                             'the --workers that run operations')
    parser.add_argument('--health-threads', type=int, default=defaults.health_threads,
                        help='threads that read the clusters\' COEs over their own APIs for '
                             'the health rounds, without a playbook (default %(default)s)')
    parser.add_argument('--health-timeout', type=float, default=defaults.health_timeout,
                        help='seconds a COE endpoint has to answer a health read '
                             '(default %(default)s)')
    parser.add_argument('--health-playbook', action='store_true',
                        help='refresh every cluster\'s health with playbooks/cluster_health.yml '
                             '(by default, clusters whose driver reads its COE\'s API are read '
                             'without one)')
    parser.add_argument('--job-nice', type=int, default=defaults.job_nice,
                        choices=range(0, 20), metavar='0-19',
                        help='niceness of the playbook runs, operations and health rounds '
                             '(default %(default)s): requests answered first on a busy host')
    parser.add_argument('--cold-playbooks', action='store_true',
                        help='start every playbook run as a fresh ansible-playbook (by default '
                             'each is forked from a process that imported Ansible and the '
                             'collection once: api/playbook_server.py)')
    parser.add_argument('--auto-healing-grace', type=float, default=defaults.auto_healing_grace,
                        help='seconds a worker of a cluster with auto_healing_enabled stays '
                             'not Ready, health round after health round, before it is '
                             'replaced (default %(default)s)')
    parser.add_argument('--secret-key-file', default=defaults.secret_key_file,
                        help='Fernet keys, one per line, that seal CA private keys and '
                             'cluster credentials in the store: the first seals, all unseal '
                             '(default $MAGNUM_SECRET_KEY_FILE; none: stored as they are)')
    parser.add_argument('--debug', action='store_true')


def job_settings(args, **more):
    """Settings from the options add_job_options added (and ``more``)."""
    from pathlib import Path
    return Settings(
        db_url=args.db, transport_url=args.transport_url, workers=args.workers,
        runner_dir=Path(args.runner_dir), project_dir=Path(args.project_dir),
        inventories=(tuple(os.path.abspath(path) for path in args.inventory)
                     if args.inventory else inventories_from_env()),
        playbooks_dir=Path(args.project_dir) / 'playbooks', provider=args.provider,
        health_interval=args.health_interval, health_workers=args.health_workers,
        health_threads=args.health_threads, health_timeout=args.health_timeout,
        health_direct=not args.health_playbook,
        job_nice=args.job_nice, playbook_server=not args.cold_playbooks,
        auto_healing_grace=args.auto_healing_grace,
        secret_key_file=args.secret_key_file,
        heartbeat_interval=min(10.0, args.health_interval or 10.0), **more)


def parse_args(argv=None):
    defaults = Settings(start_executor=False)
    parser = argparse.ArgumentParser(prog='magnum-ansible-api', description=__doc__)
    parser.add_argument('--host', default='127.0.0.1', help='address to listen on')
    parser.add_argument('--port', type=int, default=9511, help='port (default 9511)')
    add_job_options(parser, defaults)
    parser.add_argument('--threads', type=int, default=8, help='HTTP worker threads')
    parser.add_argument('--default-project', default=defaults.default_project,
                        help='project of requests without X-Project-Id (noauth)')
    parser.add_argument('--default-roles', default=','.join(defaults.default_roles),
                        help='roles of requests without X-Roles (noauth)')
    parser.add_argument('--auth', default='noauth', choices=['noauth', 'keystone'],
                        help='noauth (identity from X-Project-Id / X-Roles headers) or '
                             'keystone (X-Auth-Token validated by keystonemiddleware)')
    parser.add_argument('--keystone-cloud', default=defaults.keystone_cloud,
                        help='with --auth keystone: the clouds.yaml cloud of the service '
                             'user that validates tokens (default $MAGNUM_KEYSTONE_CLOUD)')
    parser.add_argument('--policy-file', default=defaults.policy_file,
                        help="a Magnum policy.yaml (or JSON) overriding the default rules "
                             "(Magnum's names and defaults; default $MAGNUM_POLICY_FILE)")
    parser.add_argument('--cluster-user-trust', action='store_true',
                        help="allow cloud_provider_enabled (Magnum's cluster_user_trust)")
    parser.add_argument('--trustee-domain', default=defaults.trustee_domain,
                        help="with --cluster-user-trust, --auth keystone and the openstack "
                             "provider: the Keystone domain (name or id) of the clusters' "
                             "trustee users; each cluster's controllers then sign in with a "
                             "trust of its creator, as Magnum's (default "
                             "$MAGNUM_TRUSTEE_DOMAIN; empty: no trust, the controllers get "
                             "the cluster's application credential)")
    parser.add_argument('--trustee-cloud', default=defaults.trustee_cloud,
                        help="the clouds.yaml cloud of an admin of the trustee domain "
                             "(default $MAGNUM_TRUSTEE_CLOUD, else --keystone-cloud)")
    parser.add_argument('--new-secret-key', action='store_true',
                        help='print a new key for the key file and exit')
    parser.add_argument('--reseal-secrets', action='store_true',
                        help="seal every secret in the store with the key file's first key "
                             '(after setting a key file or putting a new key first) and exit')
    return parser.parse_args(argv)


def secrets_command(args):
    """--new-secret-key / --reseal-secrets: one-off commands; None when neither."""
    from api.core import errors, secrets, store
    if args.new_secret_key:
        print(secrets.new_key())
        return 0
    if not args.reseal_secrets:
        return None
    if not args.secret_key_file:
        print('magnum-ansible-api: --reseal-secrets needs --secret-key-file', file=sys.stderr)
        return 1
    try:
        settings = Settings(start_executor=False, secret_key_file=args.secret_key_file)
        rewritten = store.Store(args.db, secrets=settings.store_secrets()).reseal_secrets()
    except errors.MagnumError as exc:
        print('magnum-ansible-api: %s' % exc, file=sys.stderr)
        return 1
    print('resealed: %s' % ', '.join('%d %s' % (n, t) for t, n in sorted(rewritten.items())))
    return 0


def main(argv=None):
    args = parse_args(argv)
    done = secrets_command(args)
    if done is not None:
        return done
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    from waitress import serve

    from api.app import create_app
    from api.core import errors
    settings = job_settings(
        args, default_project=args.default_project,
        default_roles=tuple(r.strip() for r in args.default_roles.split(',') if r.strip()),
        auth_strategy=args.auth, keystone_cloud=args.keystone_cloud,
        cluster_user_trust=args.cluster_user_trust, policy_file=args.policy_file,
        trustee_domain=args.trustee_domain, trustee_cloud=args.trustee_cloud)
    try:
        app = create_app(settings)
    except errors.MagnumError as exc:  # a store or key file that cannot be used
        print('magnum-ansible-api: %s' % exc, file=sys.stderr)
        return 1
    executor = app.extensions['magnum_executor']

    def stop(_signum, _frame):
        executor.shutdown(wait=False)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    logging.getLogger('api').info('serving on http://%s:%d/ (store %s)', args.host, args.port,
                                  settings.db_url.split('@')[-1])
    try:
        serve(app, host=args.host, port=args.port, threads=args.threads, ident='magnum-ansible-api')
    finally:
        executor.shutdown(wait=False)
    return 0


if __name__ == '__main__':
    sys.exit(main())
