"""The conductors' topic on oslo.messaging: what the API tells them, and how a conductor
listens (Magnum's own split: API casts, conductors consume, over the operator's
RabbitMQ).

Two casts, both to every conductor (fanout) and both only words: ``job_queued`` (a job
row was recorded: a conductor with a free worker claims one from the store) and
``end_health_round`` (a cluster is being deleted: whoever polls it stops). The rows are
the truth: a cast that cannot be sent (the broker is down) is logged, and the job is
taken at a conductor's next look at the store (each heartbeat).
"""

import logging
import warnings
from concurrent.futures import ThreadPoolExecutor

TOPIC = 'magnum-ansible-conductor'
VERSION = '1.0'
LOG = logging.getLogger(__name__)


def _oslo():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        import oslo_messaging
        from oslo_config import cfg
    return oslo_messaging, cfg


def transport(url):
    """An RPC transport to ``url`` (rabbit://user:password@host:5672/)."""
    oslo_messaging, cfg = _oslo()
    conf = cfg.ConfigOpts()
    conf([], project='magnum', default_config_files=[])
    return oslo_messaging.get_rpc_transport(conf, url=url)


class ConductorClient:
    """The API's voice to the conductors. Casts are sent from a thread of their own, so
    no request ever waits on the broker."""

    def __init__(self, url, retry=2):
        oslo_messaging, _cfg = _oslo()
        self._transport = transport(url)
        client = oslo_messaging.get_rpc_client(
            self._transport, oslo_messaging.Target(topic=TOPIC, version=VERSION))
        self._client = client.prepare(fanout=True, retry=retry)
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix='magnum-cast')

    def job_queued(self, job_uuid):
        self._sender.submit(self._cast, 'job_queued', job_uuid=job_uuid)

    def end_health_round(self, cluster_uuid):
        self._sender.submit(self._cast, 'end_health_round', cluster_uuid=cluster_uuid)

    def _cast(self, method, **kwargs):
        try:
            self._client.cast({}, method, **kwargs)
        except Exception:  # the rows stay: a conductor's next look takes the job
            LOG.exception('could not tell the conductors %s %s', method, kwargs)

    def close(self, wait=True):
        self._sender.shutdown(wait=wait)
        self._transport.cleanup()


class ConductorEndpoint:
    """What a conductor answers on the topic: its executor's own methods."""

    def __init__(self, executor):
        oslo_messaging, _cfg = _oslo()
        self.target = oslo_messaging.Target(version=VERSION)
        self._executor = executor

    def job_queued(self, _ctxt, job_uuid):
        self._executor.job_queued(job_uuid)

    def end_health_round(self, _ctxt, cluster_uuid):
        self._executor.end_health_round(cluster_uuid)


def serve(url, executor, server_name):
    """Start listening on the topic for ``executor``; returns the server (``stop()`` then
    ``wait()`` it) and its transport (``cleanup()`` it)."""
    oslo_messaging, _cfg = _oslo()
    rpc_transport = transport(url)
    server = oslo_messaging.get_rpc_server(
        rpc_transport, oslo_messaging.Target(topic=TOPIC, server=server_name),
        [ConductorEndpoint(executor)], executor='threading')
    server.start()
    return server, rpc_transport
