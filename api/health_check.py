"""The conductor's health rounds without a playbook.

Every health interval each conductor refreshes the health of its share of the settled
clusters (api/health_ring.py). A cluster whose driver reads its COE over the COE's own API
(``health_reader``: Kubernetes' API server, each Swarm manager's Docker API, the Mesos
masters and Marathon; module_utils/core/health.py) is read here, in a thread of a pool, with
the same rules the driver's role applies in playbooks/cluster_health.yml: the conductor
keeps, per cluster, a TLS context that trusts the cluster's CA and holds an admin
certificate of it (made once, on an EC key: again only when the CA changes or the
certificate nears its end) and the connections it opened, for the next round. An endpoint
that does not answer costs ``timeout`` seconds at most, never a thread for good. What it
reads is recorded as the cluster_health module records it (the two health fields, written
only when they change). Other clusters (a Cluster API cluster, whose state is its
management cluster's; a cloud's nodes without floating IPs, reached through a bastion) get
the playbook as before: ``HealthChecks.check`` says which.
"""

import http.client
import logging
import os
import ssl
import tempfile
import threading
import time
from urllib.parse import urlsplit

from api.core import drivers, errors, health as health_mod, lifecycle, tls

LOG = logging.getLogger('api.health')

# The admin certificate the rounds present: the playbook's
# (roles/kubernetes_control_plane admin_credential.yml).
CLIENT_NAME, CLIENT_ORGANIZATION = 'magnum-driver', 'system:masters'
# Hours a round's certificate is valid for, and how long before its end a new one is made.
CERT_HOURS, RENEW_HOURS = 48, 24
# The largest answer read (a node list of thousands of nodes is a few MB).
MAX_BODY = 32 * 1024 * 1024
REDIRECTS = (301, 302, 303, 307, 308)


class Http(object):
    """GETs of one cluster's endpoints with its TLS context: one connection kept open per
    endpoint (a connection the endpoint closed meanwhile is opened again once); every
    failure to get an answer is health_mod.Unreachable, saying why."""

    def __init__(self, context, timeout):
        self.context = context
        self.timeout = timeout
        self._connections = {}

    def _connection(self, scheme, host, port):
        if scheme == 'https':
            return http.client.HTTPSConnection(host, port, timeout=self.timeout,
                                               context=self.context)
        return http.client.HTTPConnection(host, port, timeout=self.timeout)

    def get(self, url, redirects=1):
        parts = urlsplit(url)
        if parts.scheme not in ('http', 'https') or not parts.hostname:
            raise health_mod.Unreachable('%s is not an HTTP address' % url)
        key = (parts.scheme, parts.hostname, parts.port)
        path = (parts.path or '/') + ('?' + parts.query if parts.query else '')
        for _attempt in (1, 2):
            connection = self._connections.pop(key, None)
            fresh = connection is None
            if fresh:
                connection = self._connection(*key)
            try:
                connection.request('GET', path, headers={'Accept': 'application/json'})
                answer = connection.getresponse()
                body = answer.read(MAX_BODY + 1)
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                if fresh:
                    raise health_mod.Unreachable('%s: %s' % (url, exc or type(exc).__name__))
                continue  # the endpoint closed a kept connection: once more, fresh
            if len(body) > MAX_BODY or answer.will_close:
                connection.close()
            else:
                self._connections[key] = connection
            if len(body) > MAX_BODY:
                raise health_mod.Unreachable('%s: answer larger than %d bytes' % (url, MAX_BODY))
            location = answer.getheader('Location')
            if answer.status in REDIRECTS and location and redirects > 0:
                if location.startswith('//'):
                    location = parts.scheme + ':' + location
                elif location.startswith('/'):
                    location = '%s://%s%s' % (parts.scheme, parts.netloc, location)
                return self.get(location, redirects - 1)
            return answer.status, body
        raise health_mod.Unreachable('%s: the connection was closed' % url)

    def close(self):
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()


def client_context(ca_pem, cert_pem=None, key_pem=None, work_dir=None):
    """An SSL context that trusts ``ca_pem`` alone and presents ``cert_pem``/``key_pem``.
    The key passes through a private file that is gone before this returns (OpenSSL loads a
    key from a file only). Every certificate the context accepts is one of the cluster's
    own CA, so the name of the node answering is not checked (a manager answers on any of
    its addresses)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=ca_pem)
    context.check_hostname = False
    if cert_pem and key_pem:
        fd, path = tempfile.mkstemp(prefix='magnum-health-', dir=work_dir)
        try:
            with os.fdopen(fd, 'w') as handle:
                handle.write(cert_pem + key_pem)
            context.load_cert_chain(path)
        finally:
            os.unlink(path)
    return context


class HealthChecks(object):
    """The health rounds' reads without a playbook, for one conductor (``store``: its
    store; ``reaches_nodes(cluster, template)``: whether this host reaches the cluster's
    nodes at their recorded addresses, the provider's word)."""

    def __init__(self, store, reaches_nodes=None, timeout=5.0, work_dir=None):
        self.store = store
        self.reaches_nodes = reaches_nodes or (lambda cluster, template: True)
        self.timeout = timeout
        self.work_dir = work_dir
        self._clients = {}  # cluster uuid -> (CA pem, renew after, Http)
        self._lock = threading.Lock()

    def _http(self, cluster_uuid):
        """The cluster's client: made again when its CA changed or its certificate is due."""
        ca = self.store.certificate(cluster_uuid, 'ca', missing_ok=True)
        ca_pem = ca['cert_pem'] if ca else None
        with self._lock:
            kept = self._clients.get(cluster_uuid)
        if kept and kept[0] == ca_pem and time.time() < kept[1]:
            return kept[2]
        if kept:
            kept[2].close()
        if ca:
            cert, key = tls.issue_client(ca['cert_pem'], ca['key_pem'], CLIENT_NAME,
                                         CLIENT_ORGANIZATION, hours=CERT_HOURS)
            context = client_context(ca_pem, cert, key, self.work_dir)
        else:
            context = None  # no CA: its endpoints are plain HTTP (Mesos, tls_disabled)
        client = Http(context, self.timeout)
        with self._lock:
            self._clients[cluster_uuid] = (ca_pem, time.time() + (CERT_HOURS - RENEW_HOURS)
                                           * 3600, client)
        return client

    def forget(self, keep):
        """Close and drop the clients of clusters not in ``keep`` (gone, or another
        conductor's share now)."""
        with self._lock:
            gone = [uuid for uuid in self._clients if uuid not in keep]
            dropped = [self._clients.pop(uuid) for uuid in gone]
        for _ca, _renew, client in dropped:
            client.close()

    def check(self, cluster, groups=None, templates=None):
        """Read and record ``cluster``'s health; returns the health read, or None when only
        the playbook can tell (its driver has no reader, its nodes are not reached from
        here, or the reader says so). ``groups``: its node groups, ``templates``: uuid ->
        template, when the caller read them for a whole round."""
        template = (templates or {}).get(cluster['cluster_template_id'])
        if template is None:
            template, driver = lifecycle.cluster_driver(self.store, cluster)
            reader = drivers.by_name(driver['name']).health_reader
        else:
            reader = drivers.find(template['coe'], template['server_type'],
                                  template['cluster_distro'], template.get('labels')).health_reader
        if reader is None or not self.reaches_nodes(cluster, template):
            return None
        if groups is None:
            groups = self.store.find('nodegroup', cluster_id=cluster['uuid'])
        found = reader(cluster, template, health_mod.nodes(groups), self._http(cluster['uuid']))
        if found is None:
            return None
        self.record(cluster, found)
        return found

    def record(self, cluster, found):
        """Write the two health fields when they changed (the cluster_health module's rule);
        a cluster deleted or busy meanwhile keeps what it has."""
        wanted = {'health_status': found['status'], 'health_status_reason': found['reason']}
        if all(cluster.get(k) == v for k, v in wanted.items()):
            return
        try:
            # only while the cluster is as settled as when the round read it (an operation
            # started meanwhile tells its own health)
            self.store.update('cluster', cluster['uuid'], wanted,
                              expect_status=cluster['status'])
        except (errors.NotFound, errors.OperationNotAllowed) as exc:
            LOG.info('health of %s not recorded: %s', cluster['uuid'], exc)

    def close(self):
        self.forget(())
