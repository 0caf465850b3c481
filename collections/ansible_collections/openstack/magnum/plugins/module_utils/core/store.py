# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state store: one data-access layer over SQLAlchemy Core.

SQLite file by default, PostgreSQL by URL. Columns are derived from the field
tables in ``fields``; dicts and lists are stored as JSON text. Schema changes
are versioned migrations recorded in ``schema_version``. Writers are safe
across processes: SQLite write transactions begin IMMEDIATE (WAL mode, busy
timeout) and PostgreSQL ones take an advisory lock where a read-check-write
must be atomic (quota, status transitions).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import datetime
import json
import os
import random
import threading
import time
import uuid as uuid_mod
import zlib

try:
    import sqlalchemy as sa
    from sqlalchemy import event
    HAS_SQLALCHEMY = True
    SQLALCHEMY_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported by modules
    HAS_SQLALCHEMY = False
    SQLALCHEMY_IMPORT_ERROR = exc

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    fields, notifications, states)
from ansible_collections.openstack.magnum.plugins.module_utils.core.secrets import Secrets
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, NotFound, OperationNotAllowed, StaleRecord)

ENV_DB_URL = 'MAGNUM_DB_URL'
ENV_DB_URL_FILE = 'MAGNUM_DB_URL_FILE'

# The kinds of a cluster's own OpenStack credentials (table credentials).
APPLICATION_CREDENTIAL = 'application_credential'
TRUST = 'trust'
CREDENTIAL_KINDS = (APPLICATION_CREDENTIAL, TRUST)

# kind -> (table name, field table, display name, parent key)
KINDS = {
    'cluster_template': ('cluster_templates', fields.CLUSTER_TEMPLATE, 'ClusterTemplate'),
    'cluster': ('clusters', fields.CLUSTER, 'Cluster'),
    'nodegroup': ('nodegroups', fields.NODEGROUP, 'Nodegroup'),
    'federation': ('federations', fields.FEDERATION, 'Federation'),
}
# Columns looked up by (besides uuid): per project, by name, a cluster's node groups,
# a template's clusters.
INDEXED = {
    'cluster_templates': ('project_id', 'name'),
    'clusters': ('project_id', 'name', 'cluster_template_id'),
    'nodegroups': ('cluster_id', 'name'),
    'federations': ('project_id', 'name'),
}
# Internal columns that are not API fields.
EXTRA = {
    'nodegroups': {'nodes': fields.LIST},
    'clusters': {'driver': fields.STR, 'facts': fields.DICT},
}


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def url_from_env(name):
    """The environment variable ``name``, else the content of the file ``name``_FILE names
    (a URL that may hold a password, kept off command lines and environments), else ''."""
    if os.environ.get(name):
        return os.environ[name]
    if os.environ.get(name + '_FILE'):
        with open(os.environ[name + '_FILE']) as handle:
            return handle.read().strip()
    return ''


def default_url():
    """MAGNUM_DB_URL, else the content of the file MAGNUM_DB_URL_FILE names (how the API
    hands a job a URL that may hold a password), else the default SQLite file."""
    url = url_from_env(ENV_DB_URL)
    if url:
        return url
    base = os.environ.get('XDG_DATA_HOME') or os.path.join(
        os.path.expanduser('~'), '.local', 'share')
    return 'sqlite:///' + os.path.join(base, 'openstack-magnum', 'magnum.sqlite')


def _columns(kind):
    """A kind's columns (API fields and internal ones), and those holding JSON."""
    table_fields = dict((k, v[0]) for k, v in KINDS[kind][1].items())
    table_fields.update(EXTRA.get(KINDS[kind][0], {}))
    return (frozenset(table_fields),
            frozenset(k for k, v in table_fields.items() if v in (fields.DICT, fields.LIST)))


_COLUMNS = dict((kind, _columns(kind)) for kind in KINDS)


def sortable(kind):
    """The fields a list of ``kind`` sorts on: its scalar API fields and the row id
    (Magnum's sort keys; lists and dicts are not ordered)."""
    table_fields = KINDS[kind][1]
    return ('id',) + tuple(sorted(name for name, (field_kind, _d) in table_fields.items()
                                  if field_kind not in (fields.DICT, fields.LIST)))


def _column(name, kind):
    if kind == fields.INT:
        return sa.Column(name, sa.Integer)
    if kind == fields.BOOL:
        return sa.Column(name, sa.Boolean)
    if kind in (fields.DICT, fields.LIST):
        return sa.Column(name, sa.Text)
    return sa.Column(name, sa.String(255) if name.endswith(('_id', 'uuid', 'status'))
                     else sa.Text)


_META = []
_META_LOCK = threading.Lock()


def metadata():
    """The store's tables (the same for every store: made once a process - before the
    operation plays' workers fork, plugins/strategy/operation.py - and shared)."""
    with _META_LOCK:
        if not _META:
            _META.append(_make_metadata())
        return _META[0]


def load_dialect(url=None):
    """Import the SQL dialect and driver of ``url`` (else the default store's), which
    SQLAlchemy imports on a process's first engine - before the operation plays' workers
    fork, each finds them imported (~14 ms a task otherwise)."""
    dialect = sa.engine.make_url(url or default_url()).get_dialect()
    dialect.import_dbapi()


def _make_metadata():
    meta = sa.MetaData()
    sa.Table('schema_version', meta,
             sa.Column('version', sa.Integer, primary_key=True),
             sa.Column('description', sa.Text), sa.Column('applied_at', sa.Text))
    for table, table_fields, _display in KINDS.values():
        cols = [sa.Column('id', sa.Integer, primary_key=True, autoincrement=True)]
        for name, (kind, _default) in table_fields.items():
            if name == 'uuid':
                cols.append(sa.Column('uuid', sa.String(36), nullable=False, unique=True))
            elif name != 'id':
                cols.append(_column(name, kind))
        for name, kind in EXTRA.get(table, {}).items():
            cols.append(_column(name, kind))
        cols.append(_row_version())
        sa.Table(table, meta, *cols)
    # What the API looks records up by, besides uuids (Magnum's indexes too).
    for table, columns in INDEXED.items():
        for column in columns:
            sa.Index('ix_%s_%s' % (table, column), meta.tables[table].c[column])
    sa.Table('quotas', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('project_id', sa.String(255), nullable=False),
             sa.Column('resource', sa.String(255), nullable=False),
             sa.Column('hard_limit', sa.Integer),
             sa.Column('created_at', sa.Text), sa.Column('updated_at', sa.Text),
             sa.UniqueConstraint('project_id', 'resource'))
    sa.Table('certificates', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('cluster_uuid', sa.String(36), nullable=False),
             sa.Column('ca_cert_type', sa.String(64), nullable=False),
             sa.Column('cert_pem', sa.Text, nullable=False),
             sa.Column('key_pem', sa.Text, nullable=False),
             sa.Column('created_at', sa.Text),
             sa.UniqueConstraint('cluster_uuid', 'ca_cert_type'))
    # A cluster's own OpenStack credentials, made by the API under keystone auth, of two
    # kinds: the application credential of its creator (the provider builds in the
    # cluster's project with it; credential_id its id, secret its secret, user_id its
    # owner) and, with cluster_user_trust and a trustee domain, Magnum's trust (what the
    # cluster's own controllers sign in with; credential_id the trust's id, secret and
    # user_id its trustee user's). One of each kind is active per cluster; a rotated one,
    # or one whose cluster is gone, is retired until the API revokes it in Keystone.
    sa.Table('credentials', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('cluster_uuid', sa.String(36), nullable=False, index=True),
             sa.Column('credential_id', sa.String(64), nullable=False, unique=True),
             sa.Column('secret', sa.Text, nullable=False),
             sa.Column('user_id', sa.String(64)), sa.Column('project_id', sa.String(64)),
             sa.Column('retired', sa.Boolean, default=False),
             sa.Column('created_at', sa.Text),
             sa.Column('kind', sa.String(32), nullable=False,
                       default=APPLICATION_CREDENTIAL,
                       server_default=APPLICATION_CREDENTIAL))
    # A federation's external members (module_utils.external_clusters): what reaches
    # each, its kubeconfig, sealed.
    sa.Table('external_clusters', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('uuid', sa.String(36), nullable=False, unique=True),
             sa.Column('federation_id', sa.String(36), nullable=False, index=True),
             sa.Column('name', sa.String(63), nullable=False),
             sa.Column('server', sa.Text, nullable=False),
             sa.Column('kubeconfig', sa.Text, nullable=False),
             sa.Column('created_at', sa.Text),
             sa.UniqueConstraint('federation_id', 'name'))
    sa.Table('jobs', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('uuid', sa.String(36), nullable=False, unique=True),
             sa.Column('cluster_id', sa.String(36)),
             sa.Column('resource_id', sa.String(36)),
             sa.Column('operation', sa.String(64), nullable=False),
             sa.Column('playbook', sa.Text, nullable=False),
             sa.Column('extravars', sa.Text),
             sa.Column('status', sa.String(32), nullable=False),
             sa.Column('status_reason', sa.Text),
             sa.Column('service_id', sa.Integer),
             sa.Column('timeout', sa.Integer),
             sa.Column('tasks_done', sa.Integer, default=0),
             sa.Column('tasks_failed', sa.Integer, default=0),
             sa.Column('current_task', sa.Text),
             sa.Column('cancel_requested', sa.Boolean, default=False),
             sa.Column('created_at', sa.Text), sa.Column('started_at', sa.Text),
             sa.Column('finished_at', sa.Text), sa.Column('updated_at', sa.Text))
    sa.Index('ix_jobs_cluster_id', meta.tables['jobs'].c.cluster_id)
    sa.Index('ix_jobs_resource_id', meta.tables['jobs'].c.resource_id)
    sa.Index('ix_jobs_status', meta.tables['jobs'].c.status)
    sa.Table('job_events', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('job_uuid', sa.String(36), nullable=False, index=True),
             sa.Column('event', sa.String(64)), sa.Column('task', sa.Text),
             sa.Column('host', sa.String(255)), sa.Column('failed', sa.Boolean),
             sa.Column('message', sa.Text), sa.Column('created_at', sa.Text))
    sa.Table('services', meta,
             sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
             sa.Column('host', sa.String(255), nullable=False),
             sa.Column('binary', sa.String(255), nullable=False),
             sa.Column('pid', sa.Integer),
             sa.Column('report_count', sa.Integer, default=0),
             sa.Column('disabled', sa.Boolean, default=False),
             sa.Column('disabled_reason', sa.Text),
             sa.Column('stopped', sa.Boolean, default=False),
             sa.Column('created_at', sa.Text), sa.Column('updated_at', sa.Text))
    return meta


def _add_credential_kinds(conn, meta):
    inspector = sa.inspect(conn)
    if 'kind' not in [c['name'] for c in inspector.get_columns('credentials')]:
        conn.execute(sa.text("ALTER TABLE credentials ADD COLUMN kind VARCHAR(32) NOT NULL "
                             "DEFAULT '%s'" % APPLICATION_CREDENTIAL))


# A job's statuses while it is queued or running (jobs.ACTIVE).
ACTIVE_JOBS = ('QUEUED', 'RUNNING')

# Every record of a resource counts its updates: a compare-and-set update names the
# count it read (Store.modify), so no concurrent writer's change is ever lost.
ROW_VERSION = 'row_version'


def _row_version():
    return sa.Column(ROW_VERSION, sa.Integer, nullable=False, default=0, server_default='0')


def _create_missing_tables(conn, meta):
    meta.create_all(conn)


def _create_indexes(conn, meta):
    for table in meta.tables.values():
        for index in table.indexes:
            index.create(conn, checkfirst=True)


def _add_row_versions(conn, meta):
    inspector = sa.inspect(conn)
    for table, _fields, _display in KINDS.values():
        if ROW_VERSION not in [c['name'] for c in inspector.get_columns(table)]:
            conn.execute(sa.text('ALTER TABLE %s ADD COLUMN %s INTEGER NOT NULL DEFAULT 0'
                                 % (table, ROW_VERSION)))


# Versioned migrations, applied in order, each in its own transaction.
MIGRATIONS = (
    (1, 'initial schema', _create_missing_tables),
    (2, 'credentials of clusters', _create_missing_tables),
    (3, 'row versions for compare-and-set updates', _add_row_versions),
    (4, 'indexes for lookups by project, name, cluster and template', _create_indexes),
    (5, "external members of federations", _create_missing_tables),
    (6, "clusters' trusts beside their application credentials", _add_credential_kinds),
)
# How often Store.modify reads again after a concurrent writer got in first.
MODIFY_ATTEMPTS = 60


def _quota_not_found(project_id, resource):
    """Magnum's QuotaNotFound, word for word."""
    return NotFound("Quota could not be found: project_id %s resource %s."
                    % (project_id, resource))


class Store(object):
    """Data access for every resource. Construct once per process."""

    def __init__(self, url=None, migrate=True, secrets=None):
        if not HAS_SQLALCHEMY:
            raise Invalid("SQLAlchemy is required for the store: %s" % SQLALCHEMY_IMPORT_ERROR)
        self.url = url or default_url()
        # CA private keys and credential secrets are sealed at rest (module_utils.secrets).
        self.secrets = secrets if secrets is not None else Secrets.from_env(self.url)
        self.is_sqlite = self.url.startswith('sqlite')
        # This thread's open write transaction: store calls made inside ``write()`` join
        # it, so one request's changes (a status and the job that carries it out) commit
        # together or not at all.
        self._local = threading.local()
        if self.is_sqlite:
            self._prepare_sqlite_file()
            self.engine = sa.create_engine(self.url, connect_args={'timeout': 60})
            event.listen(self.engine, 'connect', self._sqlite_connect)
            event.listen(self.engine, 'begin', self._sqlite_begin)
        else:
            self.engine = sa.create_engine(self.url, pool_pre_ping=True)
        self.meta = metadata()
        self.t = self.meta.tables
        if migrate:
            self.migrate()

    # ------------------------------------------------------------ plumbing
    def _prepare_sqlite_file(self):
        path = self.url.split(':///', 1)[-1]
        if path and path != ':memory:':
            directory = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(directory):
                os.makedirs(directory, 0o700)
            if not os.path.exists(path):
                # The store holds CA private keys: never world-readable.
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))

    @staticmethod
    def _sqlite_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute('PRAGMA journal_mode=WAL')
        cur.execute('PRAGMA busy_timeout=60000')
        cur.close()

    @staticmethod
    def _sqlite_begin(conn):
        conn.exec_driver_sql('BEGIN IMMEDIATE' if conn.info.get('write') else 'BEGIN')

    @contextlib.contextmanager
    def write(self, lock=None):
        """A write transaction; ``lock`` names an advisory lock (PostgreSQL), or several
        (a list), always taken in one order so two writers never wait on each other.
        SQLite's write transactions exclude each other whole (BEGIN IMMEDIATE)."""
        names = sorted(set([lock] if isinstance(lock, str) else (lock or [])))
        outer = getattr(self._local, 'conn', None)
        if outer is not None:
            # Within this thread's transaction: one transaction, its locks added.
            self._lock(outer, names)
            yield outer
            return
        after = []
        with self.engine.connect() as conn:
            conn.info['write'] = True
            self._local.conn, self._local.after = conn, after
            try:
                with conn.begin():
                    self._lock(conn, names)
                    yield conn
            finally:
                self._local.conn = self._local.after = None
                conn.info['write'] = False
        for callback in after:  # committed: what was to follow it
            callback()

    def _lock(self, conn, names):
        if not self.is_sqlite:
            for name in names:
                conn.execute(sa.text('SELECT pg_advisory_xact_lock(:k)'),
                             {'k': zlib.crc32(name.encode('utf-8'))})

    def after_commit(self, callback):
        """Run ``callback`` once this thread's write transaction commits (never, if it
        rolls back); at once outside a transaction."""
        after = getattr(self._local, 'after', None)
        if after is None:
            callback()
        else:
            after.append(callback)

    @contextlib.contextmanager
    def read(self):
        outer = getattr(self._local, 'conn', None)
        if outer is not None:  # inside this thread's write transaction: read what it wrote
            yield outer
            return
        with self.engine.connect() as conn:
            with conn.begin():
                yield conn

    def migrate(self):
        with self.write(lock='magnum-schema') as conn:
            version_table = self.meta.tables['schema_version']
            version_table.create(conn, checkfirst=True)
            done = set(r[0] for r in conn.execute(sa.select(version_table.c.version)))
            for version, description, apply_fn in MIGRATIONS:
                if version in done:
                    continue
                apply_fn(conn, self.meta)
                conn.execute(version_table.insert().values(
                    version=version, description=description, applied_at=utcnow()))

    def schema_version(self):
        with self.read() as conn:
            return conn.execute(sa.select(sa.func.max(
                self.meta.tables['schema_version'].c.version))).scalar()

    # ------------------------------------------------------ (de)serialising
    def _table(self, kind):
        return self.t[KINDS[kind][0]]

    def _encode(self, kind, values):
        columns, json_columns = _COLUMNS[kind]
        out = {}
        for key, value in values.items():
            if key not in columns and key != 'id':
                continue
            if key in json_columns and value is not None:
                value = json.dumps(value, sort_keys=True)
            out[key] = value
        return out

    def _decode(self, kind, row):
        if row is None:
            return None
        json_columns = _COLUMNS[kind][1]
        out = row._asdict()
        for key in json_columns.intersection(out):
            if out[key] is not None:
                out[key] = json.loads(out[key])
        return out

    # ------------------------------------------------------------- generic
    def create(self, kind, record, conn=None):
        values = self._encode(kind, record)
        values.pop('id', None)
        now = utcnow()
        values['created_at'] = record.get('created_at') or now
        values['updated_at'] = None
        if conn is None:
            with self.write() as c:
                return self.create(kind, record, conn=c)
        table = self._table(kind)
        if conn.execute(sa.select(table.c.id).where(table.c.uuid == values['uuid'])).first():
            raise Conflict("A %s with UUID %s already exists."
                           % (KINDS[kind][2], values['uuid']))
        conn.execute(table.insert().values(**values))
        made = self.get(kind, record['uuid'], conn=conn, by_name=False)
        self._tell(kind, made)
        return made

    def get(self, kind, ident, conn=None, scope=None, parent=None, by_name=True):
        """One record by uuid, or by name when unique; 404/409 otherwise."""
        table = self._table(kind)
        display = KINDS[kind][2]
        if isinstance(ident, bool) or not isinstance(ident, (str, int)):
            raise Invalid("Invalid %s identifier %s: a name or a UUID is expected."
                          % (display.lower(), json.dumps(ident)))
        ident = str(ident)
        if '\x00' in ident or len(ident) > fields.MAX_STR:
            raise NotFound("%s %s could not be found." % (display, ident[:80]))
        row_id = fields.id_number(ident) if kind == 'nodegroup' else None  # Magnum's ids
        query = sa.select(table)
        if parent is not None:
            query = query.where(table.c.cluster_id == parent)
        condition = scope(table) if scope is not None else None
        if condition is not None:
            query = query.where(condition)

        def run(c):
            row = c.execute(query.where(table.c.uuid == ident)).first()
            if row is None and row_id is not None:
                row = c.execute(query.where(table.c.id == row_id)).first()
            if row is None and by_name and 'name' in table.c:
                rows = c.execute(query.where(table.c.name == ident)).fetchall()
                if len(rows) > 1:
                    raise Conflict("Multiple %ss exist with same name. Please use the "
                                   "%s uuid instead." % (display.lower(), display.lower()))
                row = rows[0] if rows else None
            return row

        if conn is not None:
            row = run(conn)
        else:
            with self.read() as c:
                row = run(c)
        if row is None:
            raise NotFound("%s %s could not be found." % (display, ident))
        return self._decode(kind, row)

    def find(self, kind, conn=None, **where):
        table = self._table(kind)
        query = sa.select(table).order_by(table.c.id)
        for key, value in where.items():
            query = query.where(table.c[key] == value)
        if conn is not None:
            return [self._decode(kind, r) for r in conn.execute(query)]
        with self.read() as c:
            return [self._decode(kind, r) for r in c.execute(query)]

    def page(self, kind, scope=None, where=None, limit=None, marker=None,
             sort_key='id', sort_dir='asc', columns=None):
        """A page of records for the API's limit/marker/sort_key/sort_dir; with
        ``columns``, records of those fields only (and id, uuid)."""
        table = self._table(kind)
        if sort_key not in sortable(kind):
            raise Invalid('The sort_key value "%s" is an invalid field for sorting' % sort_key)
        if sort_dir not in ('asc', 'desc'):
            raise Invalid("Invalid sort direction: %s. Acceptable values are 'asc' or "
                          "'desc'" % sort_dir)
        column, order = table.c[sort_key], sort_dir == 'asc'
        query = sa.select(table)
        condition = scope(table) if scope is not None else None
        if condition is not None:
            query = query.where(condition)
        for key, value in (where or {}).items():
            query = query.where(table.c[key] == value)
        with self.read() as conn:
            if marker:
                # Only a record the caller may list is a marker: its sort value bounds
                # the page, and must tell nothing of what the caller cannot see.
                mrow = conn.execute(query.where(table.c.uuid == str(marker))).first()
                if mrow is None:
                    raise NotFound("%s %s could not be found." % (KINDS[kind][2], marker))
                mval, mid = mrow._mapping[sort_key], mrow._mapping['id']
                if order:
                    query = query.where(sa.or_(column > mval,
                                               sa.and_(column == mval, table.c.id > mid)))
                else:
                    query = query.where(sa.or_(column < mval,
                                               sa.and_(column == mval, table.c.id < mid)))
            query = query.order_by(column.asc() if order else column.desc(),
                                   table.c.id.asc() if order else table.c.id.desc())
            if limit:
                query = query.limit(limit)
            if columns is not None:
                wanted = set(columns) | {'id', 'uuid'}
                query = query.with_only_columns(*[c for c in table.c if c.name in wanted])
            return [self._decode(kind, r) for r in conn.execute(query)]

    def update(self, kind, uuid, values, conn=None, expect_status=None, expect_version=None):
        """Update a record; with ``expect_status`` only if the status still matches, with
        ``expect_version`` only if no other update came since the one read (StaleRecord)."""
        table = self._table(kind)
        encoded = self._encode(kind, values)
        encoded.pop('id', None)
        encoded.pop('uuid', None)
        encoded['updated_at'] = utcnow()
        encoded[ROW_VERSION] = table.c[ROW_VERSION] + 1
        stmt = table.update().where(table.c.uuid == uuid).values(**encoded)
        if expect_status is not None:
            stmt = stmt.where(table.c.status == expect_status)
        if expect_version is not None:
            stmt = stmt.where(table.c[ROW_VERSION] == expect_version)

        def run(c):
            # Told only when the status changes (notifications, when configured).
            tell = 'status' in values and kind in notifications.KINDS and \
                notifications.configured() and c.execute(
                    sa.select(table.c.status).where(table.c.uuid == uuid)).scalar() != \
                values['status']
            if c.execute(stmt).rowcount != 1:
                current = self.get(kind, uuid, conn=c, by_name=False)
                if expect_version is not None and current[ROW_VERSION] != expect_version:
                    raise StaleRecord("%s %s was changed by another request meanwhile."
                                      % (KINDS[kind][2], uuid))
                raise OperationNotAllowed(
                    "%s %s changed status to %s meanwhile."
                    % (KINDS[kind][2], uuid, current.get('status')))
            made = self.get(kind, uuid, conn=c, by_name=False)
            if tell:
                self._tell(kind, made)
            return made

        if conn is not None:
            return run(conn)
        with self.write() as c:
            return run(c)

    def modify(self, kind, uuid, change, attempts=MODIFY_ATTEMPTS):
        """Read-modify-write of one record, atomic against every other writer.

        ``change(current)`` gives the values to write (none: nothing to do); they are
        written only if the record is still the one ``change`` saw, else it is read
        again and ``change`` asked again (so two JSON patches both land). After
        ``attempts`` lost races: Magnum's 409, and nothing was written.
        """
        for attempt in range(attempts):
            current = self.get(kind, uuid, by_name=False)
            values = change(current)
            if not values:
                return current
            try:
                return self.update(kind, uuid, values, expect_version=current[ROW_VERSION])
            except StaleRecord:
                time.sleep(random.uniform(0, min(0.05, 0.002 * (attempt + 1))))
        raise Conflict("%s %s is being changed by other requests: nothing was changed, "
                       "try again." % (KINDS[kind][2], uuid))

    def delete(self, kind, uuid, conn=None):
        table = self._table(kind)
        if conn is None:
            with self.write() as c:
                return self.delete(kind, uuid, conn=c)
        if kind in notifications.KINDS:
            gone = conn.execute(sa.select(table).where(table.c.uuid == uuid)).first()
            if gone is not None:
                self._tell(kind, dict(self._decode(kind, gone), status='DELETE_COMPLETE'))
        conn.execute(table.delete().where(table.c.uuid == uuid))
        return None

    def _tell(self, kind, record):
        """A cluster's or federation's status change, notified once it is committed
        (module_utils/core/notifications.py; nothing when not configured)."""
        if kind in notifications.KINDS and notifications.configured():
            self.after_commit(lambda: notifications.status_changed(kind, record))

    # ------------------------------------------------------------ clusters
    def count_clusters(self, project_id, conn):
        table = self.t['clusters']
        return conn.execute(sa.select(sa.func.count()).select_from(table).where(
            table.c.project_id == project_id)).scalar()

    def create_cluster(self, cluster, nodegroups, check_quota=True):
        """Insert a cluster and its node groups atomically, within the quota, while its
        template exists (a template's delete takes the same lock: delete_template)."""
        template_uuid = cluster['cluster_template_id']
        with self.write(lock=['quota-%s' % cluster['project_id'],
                              'template-%s' % template_uuid]) as conn:
            try:
                self.get('cluster_template', template_uuid, conn=conn, by_name=False)
            except NotFound as exc:  # deleted since the request looked it up: as unknown
                raise Invalid(str(exc))
            if check_quota:
                limit = self.quota_limit(cluster['project_id'], 'Cluster', conn=conn)
                if self.count_clusters(cluster['project_id'], conn) >= limit:
                    from ansible_collections.openstack.magnum.plugins.module_utils.core.errors \
                        import ResourceLimitExceeded
                    raise ResourceLimitExceeded(
                        "Cluster creation failed: the project %s already has %d clusters "
                        "(hard_limit of resource Cluster)." % (cluster['project_id'], limit))
            created = self.create('cluster', cluster, conn=conn)
            for group in nodegroups:
                self.create('nodegroup', group, conn=conn)
        return created

    def delete_template(self, template_uuid):
        """Delete a template no cluster uses, nor an upgrade moves a cluster to (its
        queued or running job names the template as its resource), in one step with the
        check (a cluster's create and an upgrade's start take the same lock)."""
        clusters, jobs = self.t['clusters'], self.t['jobs']
        with self.write(lock='template-%s' % template_uuid) as conn:
            used = conn.execute(sa.select(clusters.c.uuid).where(
                clusters.c.cluster_template_id == template_uuid).limit(1)).first()
            if used is None:
                # An upgrade whose cluster is gone (deleted, its job cancelled) uses nothing.
                used = conn.execute(sa.select(jobs.c.uuid).where(
                    jobs.c.resource_id == template_uuid, jobs.c.operation == 'upgrade',
                    jobs.c.status.in_(ACTIVE_JOBS),
                    jobs.c.cluster_id.in_(sa.select(clusters.c.uuid))).limit(1)).first()
            if used is not None:
                raise Invalid("ClusterTemplate %s is referenced by one or multiple clusters."
                              % template_uuid)
            self.delete('cluster_template', template_uuid, conn=conn)

    def start_operation(self, cluster_uuid, operation, values=None):
        """Atomically check the state machine and move the cluster to running."""
        with self.write(lock='cluster-%s' % cluster_uuid) as conn:
            cluster = self.get('cluster', cluster_uuid, conn=conn, by_name=False)
            states.check_can_start(operation, cluster['status'], cluster['name'])
            update = dict(values or {})
            update.update(status=states.running_status(operation), status_reason=None)
            return self.update('cluster', cluster_uuid, update, conn=conn,
                               expect_status=cluster['status'])

    # -------------------------------------------------------------- quotas
    def quota_limit(self, project_id, resource, conn=None, default=20):
        row = self.quota(project_id, resource, conn=conn, missing_ok=True)
        return default if row is None else row['hard_limit']

    def quota(self, project_id, resource, conn=None, missing_ok=False):
        table = self.t['quotas']
        query = sa.select(table).where(table.c.project_id == project_id,
                                       table.c.resource == resource)
        if conn is not None:
            row = conn.execute(query).first()
        else:
            with self.read() as c:
                row = c.execute(query).first()
        if row is None:
            if missing_ok:
                return None
            raise _quota_not_found(project_id, resource)
        return dict(row._mapping)

    def quotas(self, project_id=None, limit=None, marker=None, sort_key='id', sort_dir='asc'):
        table = self.t['quotas']
        if sort_key not in table.c:
            raise Invalid('The sort_key value "%s" is an invalid field for sorting' % sort_key)
        if sort_dir not in ('asc', 'desc'):
            raise Invalid("Invalid sort direction: %s. Acceptable values are 'asc' or "
                          "'desc'" % sort_dir)
        query = sa.select(table)
        if project_id is not None:
            query = query.where(table.c.project_id == project_id)
        if marker is not None:
            after = fields.id_number(marker)
            if after is None:
                raise Invalid("Invalid marker %s: quotas are paged by their id, a number."
                              % marker)
            query = query.where(table.c.id > after if sort_dir == 'asc' else table.c.id < after)
        col = table.c[sort_key]
        query = query.order_by(col.asc() if sort_dir == 'asc' else col.desc())
        if limit:
            query = query.limit(limit)
        with self.read() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def set_quota(self, project_id, resource, hard_limit, create=False):
        table = self.t['quotas']
        with self.write() as conn:
            existing = self.quota(project_id, resource, conn=conn, missing_ok=True)
            if create:
                if existing is not None:
                    raise Conflict("Quota for project %s already exists." % project_id)
                conn.execute(table.insert().values(
                    project_id=project_id, resource=resource, hard_limit=hard_limit,
                    created_at=utcnow()))
            else:
                if existing is None:
                    raise _quota_not_found(project_id, resource)
                conn.execute(table.update().where(table.c.id == existing['id']).values(
                    hard_limit=hard_limit, updated_at=utcnow()))
            return self.quota(project_id, resource, conn=conn)

    def delete_quota(self, project_id, resource):
        table = self.t['quotas']
        with self.write() as conn:
            existing = self.quota(project_id, resource, conn=conn)
            conn.execute(table.delete().where(table.c.id == existing['id']))

    # -------------------------------------------------------- certificates
    def certificate(self, cluster_uuid, ca_cert_type='ca', missing_ok=False):
        table = self.t['certificates']
        with self.read() as conn:
            row = conn.execute(sa.select(table).where(
                table.c.cluster_uuid == cluster_uuid,
                table.c.ca_cert_type == ca_cert_type)).first()
        if row is None:
            if missing_ok:
                return None
            raise NotFound("The %s certificate of cluster %s could not be found."
                           % (ca_cert_type, cluster_uuid))
        return self._unsealed(row, 'key_pem')

    def save_certificate(self, cluster_uuid, cert_pem, key_pem, ca_cert_type='ca',
                         replace=False):
        """Store a CA; returns False when one exists and ``replace`` is off."""
        table = self.t['certificates']
        key_pem = self.secrets.seal(key_pem)
        with self.write(lock='ca-%s' % cluster_uuid) as conn:
            row = conn.execute(sa.select(table.c.id).where(
                table.c.cluster_uuid == cluster_uuid,
                table.c.ca_cert_type == ca_cert_type)).first()
            if row is not None and not replace:
                return False
            if row is not None:
                conn.execute(table.update().where(table.c.id == row[0]).values(
                    cert_pem=cert_pem, key_pem=key_pem, created_at=utcnow()))
            else:
                conn.execute(table.insert().values(
                    cluster_uuid=cluster_uuid, ca_cert_type=ca_cert_type, cert_pem=cert_pem,
                    key_pem=key_pem, created_at=utcnow()))
            return True

    def delete_certificates(self, cluster_uuid, conn=None, ca_cert_type=None):
        table = self.t['certificates']
        stmt = table.delete().where(table.c.cluster_uuid == cluster_uuid)
        if ca_cert_type is not None:
            stmt = stmt.where(table.c.ca_cert_type == ca_cert_type)
        if conn is not None:
            conn.execute(stmt)
            return
        with self.write() as c:
            c.execute(stmt)

    # --------------------------------------------------------- credentials
    def credential(self, cluster_uuid, kind=APPLICATION_CREDENTIAL):
        """The cluster's active credential of ``kind``, or None."""
        table = self.t['credentials']
        with self.read() as conn:
            row = conn.execute(sa.select(table).where(
                table.c.cluster_uuid == cluster_uuid, table.c.kind == kind,
                table.c.retired.is_(False))).first()
        return self._unsealed(row, 'secret') if row is not None else None

    def save_credential(self, cluster_uuid, credential_id, secret, user_id=None,
                        project_id=None, kind=APPLICATION_CREDENTIAL):
        """Make this the cluster's active credential of ``kind``; the one before is
        retired."""
        if kind not in CREDENTIAL_KINDS:
            raise ValueError('no credential kind %s' % kind)
        table = self.t['credentials']
        with self.write(lock='credential-%s' % cluster_uuid) as conn:
            conn.execute(table.update().where(table.c.cluster_uuid == cluster_uuid,
                                              table.c.kind == kind).values(retired=True))
            conn.execute(table.insert().values(
                cluster_uuid=cluster_uuid, credential_id=credential_id,
                secret=self.secrets.seal(secret), kind=kind,
                user_id=user_id, project_id=project_id, retired=False, created_at=utcnow()))

    def retired_credentials(self):
        """Credentials to revoke: retired ones, and those of clusters that are gone
        (without their secrets: revoking needs none)."""
        table, clusters = self.t['credentials'], self.t['clusters']
        columns = [c for c in table.c if c.name != 'secret']
        with self.read() as conn:
            rows = conn.execute(sa.select(*columns).where(sa.or_(
                table.c.retired.is_(True),
                ~table.c.cluster_uuid.in_(sa.select(clusters.c.uuid))))).all()
        return [dict(row._mapping) for row in rows]

    def forget_credential(self, credential_id):
        table = self.t['credentials']
        with self.write() as conn:
            conn.execute(table.delete().where(table.c.credential_id == credential_id))

    # --------------------------------------------- federations' external members
    EXTERNAL_FIELDS = ('uuid', 'federation_id', 'name', 'server', 'created_at')

    def add_external_cluster(self, federation_uuid, name, server, kubeconfig):
        """Record an external member (its kubeconfig sealed); Conflict when the
        federation has one of that name."""
        table = self.t['external_clusters']
        record = {'uuid': str(uuid_mod.uuid4()), 'federation_id': federation_uuid,
                  'name': name, 'server': server, 'created_at': utcnow()}
        with self.write(lock='federation-%s' % federation_uuid) as conn:
            if conn.execute(sa.select(table.c.id).where(
                    table.c.federation_id == federation_uuid,
                    table.c.name == name)).first() is not None:
                raise Conflict("Federation %s already has an external cluster named %s."
                               % (federation_uuid, name))
            conn.execute(table.insert().values(
                kubeconfig=self.secrets.seal(kubeconfig), **record))
        return record

    def external_clusters(self, federation_uuid, kubeconfig=False):
        """A federation's external members, oldest first (their kubeconfigs with
        ``kubeconfig``)."""
        table = self.t['external_clusters']
        columns = [table.c[n] for n in self.EXTERNAL_FIELDS]
        if kubeconfig:
            columns.append(table.c.kubeconfig)
        with self.read() as conn:
            rows = conn.execute(sa.select(*columns).where(
                table.c.federation_id == federation_uuid).order_by(table.c.id)).all()
        if kubeconfig:
            return [self._unsealed(row, 'kubeconfig') for row in rows]
        return [dict(row._mapping) for row in rows]

    def external_cluster(self, federation_uuid, ident, kubeconfig=False, missing_ok=False):
        """One of them, by uuid or name."""
        for record in self.external_clusters(federation_uuid, kubeconfig):
            if ident in (record['uuid'], record['name']):
                return record
        if missing_ok:
            return None
        raise NotFound("External cluster %s of federation %s could not be found."
                       % (ident, federation_uuid))

    def forget_external_clusters(self, federation_uuid, uuids=None, conn=None):
        """Remove a federation's external members (those of ``uuids``, else all)."""
        table = self.t['external_clusters']
        stmt = table.delete().where(table.c.federation_id == federation_uuid)
        if uuids is not None:
            stmt = stmt.where(table.c.uuid.in_(list(uuids)))
        if conn is not None:
            conn.execute(stmt)
            return
        with self.write() as c:
            c.execute(stmt)

    # ------------------------------------------------------------- secrets
    # Where each secret lives: table -> its sealed column.
    SEALED = {'certificates': 'key_pem', 'credentials': 'secret',
              'external_clusters': 'kubeconfig'}

    def _unsealed(self, row, column):
        record = dict(row._mapping)
        record[column] = self.secrets.unseal(record[column])
        return record

    def reseal_secrets(self):
        """Seal every secret with the first key (after a key file is set or a key
        is added); returns how many were rewritten, per table."""
        rewritten = {}
        for name, column in self.SEALED.items():
            table = self.t[name]
            rewritten[name] = 0
            with self.write(lock='reseal-secrets') as conn:
                for row_id, value in conn.execute(sa.select(table.c.id, table.c[column])).all():
                    sealed = self.secrets.reseal(value)
                    if sealed != value:
                        conn.execute(table.update().where(table.c.id == row_id)
                                     .values({column: sealed}))
                        rewritten[name] += 1
        return rewritten

    def purge_cluster(self, cluster_uuid):
        """Remove a deleted cluster, its node groups and certificates (its credentials
        are retired, for the API to revoke)."""
        with self.write() as conn:
            credentials = self.t['credentials']
            conn.execute(credentials.update().where(credentials.c.cluster_uuid == cluster_uuid)
                         .values(retired=True))
            self.delete_certificates(cluster_uuid, conn=conn)
            ng = self.t['nodegroups']
            conn.execute(ng.delete().where(ng.c.cluster_id == cluster_uuid))
            self.delete('cluster', cluster_uuid, conn=conn)
