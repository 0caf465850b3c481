"""magnum-ansible-conductor: run the operations (playbooks through ansible-runner), the
health rounds and the healer of the clusters an API records - no HTTP.

Any number of them, on the machines that reach the clusters' networks, share the API's
store (PostgreSQL) and broker (--transport-url): each takes jobs as it has workers,
polls the health of its share of the clusters, and fails the running jobs of one that
died. See docs/operator/conductors.md.
"""

import argparse
import logging
import signal
import socket
import sys
import threading

from api.cli import add_job_options, job_settings
from api.settings import Settings


def parse_args(argv=None):
    defaults = Settings(start_executor=False)
    parser = argparse.ArgumentParser(prog='magnum-ansible-conductor', description=__doc__)
    add_job_options(parser, defaults)
    parser.add_argument('--name', default=socket.gethostname(),
                        help='this conductor on the topic (default: the host name)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    if not args.transport_url:
        print('magnum-ansible-conductor: --transport-url (or MAGNUM_TRANSPORT_URL, or '
              "MAGNUM_TRANSPORT_URL_FILE) is needed: it is how the API's jobs reach "
              'conductors', file=sys.stderr)
        return 1
    from api import messaging
    from api.core import errors
    from api.core import store as store_mod
    from api.executor import Executor
    settings = job_settings(args)
    try:
        store = store_mod.Store(settings.db_url, secrets=settings.store_secrets())
    except errors.MagnumError as exc:  # a store or key file that cannot be used
        print('magnum-ansible-conductor: %s' % exc, file=sys.stderr)
        return 1
    executor = Executor(settings, store)
    server, transport = messaging.serve(settings.transport_url, executor,
                                        '%s.%s' % (args.name, executor.service_id))
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopping.set())
    signal.signal(signal.SIGINT, lambda _signum, _frame: stopping.set())
    logging.getLogger('api').info('conductor %s (service %s) on topic %s (store %s)',
                                  args.name, executor.service_id, messaging.TOPIC,
                                  settings.db_url.split('@')[-1])
    try:
        stopping.wait()
    finally:
        server.stop()
        executor.shutdown(wait=False)
        server.wait()
        transport.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
