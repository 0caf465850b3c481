"""The jobs an API process records: a job is a row first, then word to the conductors.

Every mutating operation is one job (module_utils/core/jobs.py). The API records it in
the transaction of the operation's status change and, once that commits, tells the
conductors: the embedded one in this process (api/executor.py) when no transport is
configured, else every ``magnum-ansible-conductor`` over oslo.messaging
(api/messaging.py). Whoever has a free worker claims it from the store; a word lost
costs a conductor's next look at the rows, never the job.
"""

import logging

from api import credentials
from api.core import jobs as jobs_mod, operations

LOG = logging.getLogger(__name__)


class JobQueue:
    def __init__(self, settings, store, conductors):
        """``conductors``: what is told of new jobs and of deleted clusters - an object
        with ``job_queued(job_uuid)`` and ``end_health_round(cluster_uuid)``."""
        self.settings = settings
        self.store = store
        self.jobs = jobs_mod.Jobs(store)
        self.conductors = conductors

    def submit(self, operation, extravars, cluster_id=None, resource_id=None, timeout=None):
        """Record a job running ``operation``'s playbook (its record's: core/operations.py)
        with ``extravars``; inside a store transaction (the operation's status change) it
        is part of it, and the conductors hear of it after its commit."""
        job = self.jobs.create(operation, operations.record(operation).playbook, extravars,
                               cluster_id=cluster_id, resource_id=resource_id,
                               timeout=timeout)
        self.store.after_commit(lambda: self.conductors.job_queued(job['uuid']))
        return job

    def submit_resize(self, cluster, group, node_count, nodes_to_remove):
        return self.submit('resize', {
            'cluster_uuid': cluster['uuid'], 'nodegroup': group['uuid'],
            'node_count': node_count, 'nodes_to_remove': nodes_to_remove or []},
            cluster_id=cluster['uuid'], resource_id=group['uuid'])

    def delete_pending(self, cluster_id=None, resource_id=None):
        """Whether a delete of this cluster (or federation) is queued or running."""
        records = self.jobs.for_cluster(cluster_id, active_only=True) if cluster_id else \
            self.jobs.for_resource(resource_id, active_only=True)
        return any(job['operation'] in ('delete', 'federation_delete') for job in records)

    def cancel_cluster_jobs(self, cluster_id):
        """A delete: the cluster's jobs are cancelled (their conductors read the flag)
        and its health round ends wherever it runs (it would wait on servers that are
        going)."""
        self.jobs.request_cancel(cluster_id)
        self.conductors.end_health_round(cluster_id)

    def sweep_credentials(self):
        """Revoke the clusters' credentials that nothing uses any more."""
        try:
            return credentials.sweep(self.settings, self.store, lambda cluster_uuid: bool(
                self.jobs.for_cluster(cluster_uuid, active_only=True)))
        except Exception:  # the next sweep tries again
            LOG.exception('credential sweep failed')
            return []

    def shutdown(self, wait=False):
        close = getattr(self.conductors, 'close', None)
        if close is not None:
            close()
