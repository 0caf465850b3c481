# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Job and service records in the store.

A job is one playbook run for one operation. Services are the processes that
run jobs (conductors, reported as ``magnum-conductor`` by ``/v1/mservices``).
Jobs are rows first: a job is recorded QUEUED and held by no service; a
conductor with a free worker claims the oldest one it may run (``claim_next``:
one compare-and-set, so a message told twice or to every conductor runs it
once), which makes it RUNNING under that service. Each service heartbeats;
the RUNNING jobs of one that stopped are orphans: failed with a reason, and
their cluster leaves ``*_IN_PROGRESS``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import os
import socket
import uuid as uuidlib

try:
    import sqlalchemy as sa
except ImportError:  # pragma: no cover - the store reports it
    sa = None

from ansible_collections.openstack.magnum.plugins.module_utils.core import operations, states
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import NotFound
from ansible_collections.openstack.magnum.plugins.module_utils.core.store import ACTIVE_JOBS, utcnow

QUEUED, RUNNING, SUCCESSFUL, FAILED, CANCELED = (
    'QUEUED', 'RUNNING', 'SUCCESSFUL', 'FAILED', 'CANCELED')
ACTIVE = ACTIVE_JOBS  # (QUEUED, RUNNING)
SERVICE_DOWN_AFTER = 60  # seconds without a heartbeat
BINARY = 'magnum-conductor'


def _parse(ts):
    return datetime.datetime.fromisoformat(ts) if ts else None


class Jobs(object):
    def __init__(self, store):
        self.store = store
        self.t = store.meta.tables['jobs']
        self.ev = store.meta.tables['job_events']
        self.svc = store.meta.tables['services']

    # ---------------------------------------------------------------- jobs
    def create(self, operation, playbook, extravars, cluster_id=None, resource_id=None,
               timeout=None, service_id=None):
        job = {'uuid': str(uuidlib.uuid4()), 'cluster_id': cluster_id,
               'resource_id': resource_id, 'operation': operation, 'playbook': playbook,
               'extravars': json.dumps(extravars, sort_keys=True), 'status': QUEUED,
               'service_id': service_id, 'timeout': timeout, 'tasks_done': 0,
               'tasks_failed': 0, 'cancel_requested': False, 'created_at': utcnow()}
        with self.store.write() as conn:
            conn.execute(self.t.insert().values(**job))
        return self.get(job['uuid'])

    def get(self, uuid):
        with self.store.read() as conn:
            row = conn.execute(sa.select(self.t).where(self.t.c.uuid == uuid)).first()
        if row is None:
            raise NotFound("Job %s could not be found." % uuid)
        return self._decode(row)

    @staticmethod
    def _decode(row):
        job = dict(row._mapping)
        job['extravars'] = json.loads(job['extravars'] or '{}')
        return job

    def for_cluster(self, cluster_id, active_only=False):
        return self._where('cluster_id', cluster_id, active_only)

    def for_resource(self, resource_id, active_only=False):
        return self._where('resource_id', resource_id, active_only)

    def _where(self, column, value, active_only):
        """The jobs whose ``column`` is ``value`` (only queued or running ones, with
        ``active_only``), oldest first."""
        query = sa.select(self.t).where(self.t.c[column] == value)
        if active_only:
            query = query.where(self.t.c.status.in_(ACTIVE))
        with self.store.read() as conn:
            return [self._decode(r) for r in conn.execute(query.order_by(self.t.c.id))]

    def update(self, uuid, **values):
        values['updated_at'] = utcnow()
        with self.store.write() as conn:
            conn.execute(self.t.update().where(self.t.c.uuid == uuid).values(**values))

    def claim_next(self, service_id):
        """The oldest QUEUED job no service holds whose cluster (or federation) runs no
        other job, made RUNNING under ``service_id`` - or None. One job at a time per
        cluster, in the order they were recorded, across every conductor: claims are
        one transaction under one lock (PostgreSQL; SQLite's writes exclude each
        other whole)."""
        queued, running = self.t, self.t.alias('running')

        def key(table):
            return sa.func.coalesce(table.c.cluster_id, table.c.resource_id, table.c.uuid)

        busy = sa.select(running.c.id).where(running.c.status == RUNNING,
                                             key(running) == key(queued))
        oldest = sa.select(queued.c.uuid).where(
            queued.c.status == QUEUED, queued.c.service_id.is_(None), ~sa.exists(busy)
        ).order_by(queued.c.id).limit(1)
        with self.store.read() as conn:  # most looks find nothing: no writer waits on them
            if conn.execute(oldest).first() is None:
                return None
        with self.store.write(lock='magnum-job-claim') as conn:
            found = conn.execute(oldest).first()
            if found is None:
                return None
            conn.execute(self.t.update().where(
                self.t.c.uuid == found.uuid, self.t.c.status == QUEUED).values(
                    status=RUNNING, service_id=service_id, started_at=utcnow(),
                    updated_at=utcnow()))
        return self.get(found.uuid)

    def release(self, uuid, service_id):
        """Give back a job ``service_id`` claimed and never started: QUEUED, no one's."""
        with self.store.write() as conn:
            conn.execute(self.t.update().where(
                self.t.c.uuid == uuid, self.t.c.status == RUNNING,
                self.t.c.service_id == service_id).values(
                    status=QUEUED, service_id=None, started_at=None, updated_at=utcnow()))

    def start(self, uuid):
        """QUEUED -> RUNNING; False when the job was canceled meanwhile."""
        with self.store.write() as conn:
            res = conn.execute(self.t.update().where(
                self.t.c.uuid == uuid, self.t.c.status == QUEUED).values(
                    status=RUNNING, started_at=utcnow(), updated_at=utcnow()))
            return res.rowcount == 1

    def finish(self, uuid, status, reason=None):
        with self.store.write() as conn:
            conn.execute(self.t.update().where(
                self.t.c.uuid == uuid, self.t.c.status.in_(ACTIVE)).values(
                    status=status, status_reason=reason, finished_at=utcnow(),
                    updated_at=utcnow(), current_task=None))

    def request_cancel(self, cluster_id):
        with self.store.write() as conn:
            conn.execute(self.t.update().where(
                self.t.c.cluster_id == cluster_id, self.t.c.status.in_(ACTIVE)).values(
                    cancel_requested=True, updated_at=utcnow()))

    def cancel_requested(self, uuid):
        with self.store.read() as conn:
            return bool(conn.execute(sa.select(self.t.c.cancel_requested).where(
                self.t.c.uuid == uuid)).scalar())

    def add_event(self, job_uuid, event, task=None, host=None, failed=False, message=None,
                  done_delta=0, failed_delta=0):
        with self.store.write() as conn:
            conn.execute(self.ev.insert().values(
                job_uuid=job_uuid, event=event, task=task, host=host, failed=failed,
                message=message, created_at=utcnow()))
            values = {'updated_at': utcnow()}
            if task is not None and not done_delta:
                values['current_task'] = task
            if done_delta:
                values['tasks_done'] = self.t.c.tasks_done + done_delta
            if failed_delta:
                values['tasks_failed'] = self.t.c.tasks_failed + failed_delta
            conn.execute(self.t.update().where(self.t.c.uuid == job_uuid).values(**values))

    def events(self, job_uuid, limit=200):
        with self.store.read() as conn:
            rows = conn.execute(sa.select(self.ev).where(self.ev.c.job_uuid == job_uuid)
                                .order_by(self.ev.c.id).limit(limit))
            return [dict(r._mapping) for r in rows]

    # ------------------------------------------------------------ services
    def register_service(self, binary=BINARY):
        """A service row whose creation is its first report (report_count 1), as Magnum's."""
        now = utcnow()
        with self.store.write() as conn:
            res = conn.execute(self.svc.insert().values(
                host=socket.gethostname(), binary=binary, pid=os.getpid(), report_count=1,
                disabled=False, stopped=False, created_at=now, updated_at=now))
            return res.inserted_primary_key[0]

    def heartbeat(self, service_id):
        with self.store.write() as conn:
            conn.execute(self.svc.update().where(self.svc.c.id == service_id).values(
                report_count=self.svc.c.report_count + 1, updated_at=utcnow()))

    def stop_service(self, service_id):
        with self.store.write() as conn:
            conn.execute(self.svc.update().where(self.svc.c.id == service_id).values(
                stopped=True, updated_at=utcnow()))

    def live_services(self, binary=BINARY):
        """The ids of the services of ``binary`` that are up, in order."""
        return [s['id'] for s in self.services() if s['state'] == 'up' and
                s['binary'] == binary]

    def services(self):
        with self.store.read() as conn:
            rows = [dict(r._mapping) for r in conn.execute(
                sa.select(self.svc).order_by(self.svc.c.id))]
        for row in rows:
            row['state'] = 'up' if self._alive(row) else 'down'
        return rows

    @staticmethod
    def _alive(service, now=None):
        if service.get('stopped'):
            return False
        now = now or datetime.datetime.now(datetime.timezone.utc)
        seen = _parse(service.get('updated_at'))
        if seen is None or (now - seen).total_seconds() > SERVICE_DOWN_AFTER:
            return False
        if service.get('host') == socket.gethostname() and service.get('pid'):
            try:
                os.kill(service['pid'], 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
        return True

    # ------------------------------------------------------------- orphans
    def reap_orphans(self, own_service_id=None):
        """Fail the running jobs of dead services and end their clusters' operations; a
        queued job a dead service held (one recorded before jobs were claimed) is given
        back to every conductor.

        Returns the uuids of the jobs it failed.
        """
        services = dict((s['id'], s) for s in self.services())
        with self.store.read() as conn:
            active = [self._decode(r) for r in conn.execute(
                sa.select(self.t).where(self.t.c.status.in_(ACTIVE)))]
        reaped = []
        for job in active:
            sid = job.get('service_id')
            if sid == own_service_id:
                continue
            service = services.get(sid)
            if sid is None or (service is not None and service['state'] == 'up'):
                continue
            if job['status'] == QUEUED:
                with self.store.write() as conn:
                    conn.execute(self.t.update().where(
                        self.t.c.uuid == job['uuid'], self.t.c.status == QUEUED,
                        self.t.c.service_id == sid).values(service_id=None))
                continue
            reason = ("Job %s (%s) was orphaned: the %s running it stopped (crash or "
                      "restart) before it ended." % (job['uuid'], job['operation'],
                                                     _service_name(service)))
            self.finish(job['uuid'], FAILED, reason)
            fail_operation(self.store, job, reason)
            reaped.append(job['uuid'])
        return reaped


def _service_name(service):
    if not service:
        return 'service'
    return '%s on %s (pid %s)' % (service['binary'], service['host'], service['pid'])


def fail_operation(store, job, reason):
    """End the resource a failed job was working on: its cluster or federation."""
    if job['operation'].startswith('federation_'):
        _fail_federation(store, job, reason)
    else:
        fail_cluster_operation(store, job, reason)


def _others_active(store, job, **where):
    records = Jobs(store)
    query = sa.select(records.t.c.uuid).where(
        records.t.c.status.in_(ACTIVE), records.t.c.uuid != job['uuid'])
    for key, value in where.items():
        query = query.where(records.t.c[key] == value)
    with store.read() as conn:
        return conn.execute(query).first() is not None


def _fail_federation(store, job, reason):
    try:
        fed = store.get('federation', job['resource_id'], by_name=False)
    except NotFound:
        return
    if _others_active(store, job, resource_id=fed['uuid']):
        return
    operation = operations.record(job['operation']).action
    if fed['status'] == states.running_status(operation):
        store.update('federation', fed['uuid'],
                     {'status': states.final_status(operation, False), 'status_reason': reason})


def fail_cluster_operation(store, job, reason):
    """Move the job's cluster (and node groups) out of its *_IN_PROGRESS status.

    Only when the cluster is still in the status this job's operation set and
    no other job is active on it, so a later operation is never failed by
    mistake.
    """
    if not job.get('cluster_id'):
        return
    try:
        cluster = store.get('cluster', job['cluster_id'], by_name=False)
    except NotFound:
        return
    if _others_active(store, job, cluster_id=cluster['uuid']):
        return
    if job['operation'] in states.OPERATIONS and \
            cluster['status'] == states.running_status(job['operation']):
        _op, failed = states.operation_of(cluster['status'])
        store.update('cluster', cluster['uuid'], {'status': failed, 'status_reason': reason})
    for group in store.find('nodegroup', cluster_id=cluster['uuid']):
        if states.is_in_progress(group.get('status')):
            _op, failed = states.operation_of(group['status'])
            store.update('nodegroup', group['uuid'],
                         {'status': failed, 'status_reason': reason})
