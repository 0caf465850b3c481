"""The conductor: it runs jobs - each one playbook run through ansible-runner - and
the clusters' health rounds.

Jobs are rows (api/jobqueue.py records them): a conductor with a free worker claims
the oldest one it may run (one job at a time per cluster, across every conductor) when
it is told of one, when one of its own ends, and at each heartbeat - so a word lost,
or a conductor that was down, loses no job. Each job has a private data dir; runner
events stream into the job record; ``create_timeout`` ends an overrunning create; a
delete cancels what runs on its cluster. A heartbeat thread keeps this conductor's row
fresh and fails the running jobs of conductors that died. Health rounds are spread
over the live conductors by a consistent hash ring (api/health_ring.py).

With no transport configured, the API runs one in its own process (the embedded
conductor: it is told of jobs directly); else ``magnum-ansible-conductor``
(api/conductor.py) runs it, told over oslo.messaging.
"""

import logging
import os
import shlex
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import ansible_runner

from api import (auth_cache, credentials, extravars as extravars_mod, health_check,
                 health_ring, playbook_server, processes)
from api.core import errors, failures, healing, lifecycle
from api.core import jobs as jobs_mod
from api.core import secrets
from api.core import states
from api.core import store as store_mod
from api.jobqueue import JobQueue
from api.private_files import write_private

LOG = logging.getLogger(__name__)
DEFAULT_TIMEOUT_MINUTES = 180
STORE_URL_NAME = 'store-url'   # a run's file of the store's URL (MAGNUM_DB_URL_FILE)


def job_inventory(settings):
    """The inventories of a run: the project's own (the controller), then the operator's
    (--inventory), whose variables win."""
    own = str(settings.project_dir / 'inventory')
    return [own] + list(settings.inventories) if settings.inventories else own


class Executor(JobQueue):
    """A conductor; as a JobQueue, the jobs it records itself (an API's embedded
    conductor, the healer's resizes) are its own to tell of."""

    def __init__(self, settings, store):
        super().__init__(settings, store, conductors=self)
        self._workers = max(1, settings.workers)
        self.pool = ThreadPoolExecutor(max_workers=self._workers,
                                       thread_name_prefix='magnum-job')
        self.service_id = self.jobs.register_service()
        self._playbooks = None   # the playbook server (api/playbook_server.py), once started
        self._playbooks_lock = threading.Lock()
        self._running = set()  # uuids of the jobs whose playbooks run in this process
        self._claiming = threading.Lock()
        self._busy = 0  # jobs claimed by this conductor and not ended
        self._stop = threading.Event()
        # Health checks get their own threads so they never hold up operations.
        self._health_pool = ThreadPoolExecutor(max_workers=max(1, settings.health_workers),
                                               thread_name_prefix='magnum-health')
        self._health_pending = set()
        # ... and the reads of the clusters' COEs without a playbook (api/health_check.py).
        self._health_threads = ThreadPoolExecutor(max_workers=max(1, settings.health_threads),
                                                  thread_name_prefix='magnum-health-read')
        self.health_checks = health_check.HealthChecks(
            store, settings.infrastructure.reaches_nodes,
            timeout=settings.health_timeout) \
            if settings.health_direct else None
        self._broken_since = {}  # cluster uuid -> {node name: when first seen broken}
        self._health_due = time.monotonic() + settings.health_interval
        self._secrets_due = 0.0
        self._remove_stale_secrets()
        self._reap()
        self._beat = threading.Thread(target=self._heartbeat, name='magnum-heartbeat',
                                      daemon=True)
        self._beat.start()
        self.take_jobs()  # what was queued while no conductor ran

    # ------------------------------------------------- what it is told
    def job_queued(self, job_uuid=None):
        """A job was recorded (by an API, or the healer): take what this conductor has
        workers for. The word names a job, but any may be the one taken: claims go
        oldest first."""
        self.take_jobs()

    def end_health_round(self, cluster_uuid):
        """Kill the process tree of the cluster's health round on this host (its runs name
        their private directory, runner_dir/health/<cluster uuid>)."""
        kill_job_processes(str(self.settings.runner_dir / 'health' / cluster_uuid))

    def take_jobs(self):
        """Claim queued jobs while this conductor has free workers; each runs at once.
        Returns the uuids claimed."""
        taken = []
        with self._claiming:
            while not self._stop.is_set() and self._busy < self._workers:
                try:
                    job = self.jobs.claim_next(self.service_id)
                except Exception:  # the store is away: the next look tries again
                    LOG.exception('could not claim a job')
                    break
                if job is None:
                    break
                try:
                    self.pool.submit(self._run_claimed, job['uuid'])
                except RuntimeError:  # shutting down meanwhile: the job is anyone's again
                    self.jobs.release(job['uuid'], self.service_id)
                    break
                self._busy += 1
                taken.append(job['uuid'])
        return taken

    def shutdown(self, wait=False):
        """Stop: no job is claimed any more, running ones and health rounds are ended
        with their whole process trees (another conductor's reaper, or this one's next
        start, fails the jobs; the queued ones stay for whoever claims them)."""
        self._stop.set()
        for job_uuid in list(self._running):
            kill_job_processes(job_uuid)
        for cluster_uuid in list(self._health_pending):
            self.end_health_round(cluster_uuid)
        self._health_pool.shutdown(wait=wait, cancel_futures=True)
        self._health_threads.shutdown(wait=wait, cancel_futures=True)
        if self.health_checks:
            self.health_checks.close()
        self.pool.shutdown(wait=wait, cancel_futures=True)
        with self._playbooks_lock:
            if self._playbooks:
                self._playbooks.stop()
        self.jobs.stop_service(self.service_id)

    # ------------------------------------------------------------ running
    def _runner_args(self, cluster_uuid, private_dir, playbook):
        """What every run gives ansible-runner: its playbook, its environment and, with the
        playbook server, the server's launcher as ansible-playbook (started at the first
        run, started again if it died; a launcher that finds no server runs the real
        ansible-playbook). ansible-runner gives a ``binary`` of its own no playbook: it
        is the launcher's first argument (``cmdline``)."""
        playbook = str(self.settings.playbooks_dir / playbook)
        args = {'playbook': playbook, 'envvars': self._envvars(cluster_uuid, private_dir)}
        if not self.settings.playbook_server or self._stop.is_set():
            return args
        with self._playbooks_lock:
            if self._playbooks is None or not self._playbooks.alive:
                if self._playbooks is not None:
                    LOG.warning('the playbook server ended (%s): starting another',
                                self._playbooks.process.returncode)
                    self._playbooks.stop()
                self._playbooks = playbook_server.PlaybookServer(self.settings.job_nice)
            args['binary'] = str(self._playbooks.launcher)
        args['cmdline'] = shlex.quote(playbook)
        return args

    def _heartbeat(self):
        while not self._stop.wait(self.settings.heartbeat_interval):
            try:
                self.jobs.heartbeat(self.service_id)
                self._reap()
                self.take_jobs()
                self._schedule_health()
                self.sweep_credentials()
                self._remove_stale_secrets()
            except Exception:  # keep beating whatever one round did
                LOG.exception('heartbeat failed')

    def _remove_stale_secrets(self):
        """At start, then every few minutes: the secrets runs left behind (a process
        killed with them running: kill -9, a machine restarted) go."""
        if time.monotonic() < self._secrets_due:
            return
        self._secrets_due = time.monotonic() + 5 * SECRETS_GRACE
        for directory in remove_stale_secrets(
                self.settings.runner_dir, held=set(self._running) | set(self._health_pending)):
            LOG.warning('removed the secrets left in %s by a run no process holds', directory)

    def _reap(self):
        """Fail orphaned jobs, and stop what is left of their playbook runs here."""
        reaped = self.jobs.reap_orphans(own_service_id=self.service_id)
        for job_uuid in reaped:
            LOG.warning('job %s was orphaned: failed it', job_uuid)
            kill_job_processes(job_uuid)
        return reaped

    def _schedule_health(self):
        """Every health_interval, refresh the health of the settled clusters that are
        this conductor's share (api/health_ring.py): read over their COE's API where their
        driver can be (api/health_check.py), else by playbooks/cluster_health.yml."""
        if not self.settings.health_interval or time.monotonic() < self._health_due:
            return
        self._health_due = time.monotonic() + self.settings.health_interval
        ring = health_ring.Ring(self.jobs.live_services(), self.service_id)
        mine = [c for c in self.store.find('cluster')
                if c['status'] in states.COMPLETE and ring.is_mine(c['uuid'])]
        groups, templates = {}, {}
        if self.health_checks:
            templates = dict((t['uuid'], t) for t in self.store.find('cluster_template'))
            # clients of clusters gone or now another conductor's (not of a read under way)
            self.health_checks.forget(set(c['uuid'] for c in mine) | self._health_pending)
            for group in self.store.find('nodegroup'):
                groups.setdefault(group['cluster_id'], []).append(group)
        for cluster in mine:
            if cluster['uuid'] in self._health_pending:
                continue
            self._health_pending.add(cluster['uuid'])
            if self.health_checks:
                self._health_threads.submit(self._read_health, cluster,
                                            groups.get(cluster['uuid'], []), templates)
            else:
                self._health_pool.submit(self._run_health, cluster['uuid'])

    def _read_health(self, cluster, groups, templates):
        """A cluster's health read without a playbook; the playbook's when only it can tell
        (that run ends the cluster's pending round)."""
        by_playbook = False
        try:
            if self.health_checks.check(cluster, groups, templates) is None:
                self._health_pool.submit(self._run_health, cluster['uuid'])
                by_playbook = True
            elif healing.enabled(cluster) or cluster['uuid'] in self._broken_since:
                self.heal(cluster['uuid'])
        except RuntimeError:  # shutting down: no playbook starts any more
            pass
        except Exception:
            LOG.exception('health read of %s crashed', cluster['uuid'])
        finally:
            if not by_playbook:
                self._health_pending.discard(cluster['uuid'])

    def _run_health(self, cluster_uuid):
        """Run playbooks/cluster_health.yml; it writes the cluster's health fields."""
        private_dir = self.settings.runner_dir / 'health' / cluster_uuid
        try:
            lower_priority(self.settings.job_nice)
            private_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            extravars_mod.write(private_dir, {'cluster_uuid': cluster_uuid})
            runner = ansible_runner.run(
                private_data_dir=str(private_dir), project_dir=str(self.settings.project_dir),
                **self._runner_args(cluster_uuid, private_dir, 'cluster_health.yml'),
                inventory=job_inventory(self.settings), quiet=True,
                rotate_artifacts=1, settings={'suppress_ansible_output': True})
            if runner.status != 'successful':
                LOG.info('health check of %s ended %s', cluster_uuid, runner.status)
            else:
                self.heal(cluster_uuid)
        except Exception:
            LOG.exception('health check of %s crashed', cluster_uuid)
        finally:
            _remove_run_secrets(private_dir)
            self._health_pending.discard(cluster_uuid)

    def heal(self, cluster_uuid, now=None):
        """Auto-healing after a health round (module_utils/core/healing.py): replace the
        workers broken for the grace period, one node group per round, through a resize
        job as the API's own. Returns the jobs started."""
        cluster = self.store.get('cluster', cluster_uuid, by_name=False)
        if not healing.enabled(cluster) or cluster['status'] not in states.COMPLETE:
            self._broken_since.pop(cluster_uuid, None)
            return []
        groups = self.store.find('nodegroup', cluster_id=cluster_uuid)
        seen = self._broken_since.setdefault(cluster_uuid, {})
        repairs = healing.due(healing.broken_workers(cluster, groups), seen,
                              time.monotonic() if now is None else now,
                              self.settings.auto_healing_grace, groups)
        for group_uuid, names in repairs[:1]:
            group = [g for g in groups if g['uuid'] == group_uuid][0]
            try:
                with self.store.write(lock=lifecycle.cluster_lock(cluster)):
                    started, group = lifecycle.start_resize(
                        self.store, cluster, group['node_count'], group_uuid, names)
                    job = self.submit_resize(started, group, group['node_count'], names)
            except errors.MagnumError as exc:  # busy since, or another API process healed
                LOG.info('auto-healing of %s not started: %s', cluster_uuid, exc)
                return []
            LOG.warning('auto-healing cluster %s: replacing %s (not Ready for %ds or more)',
                        cluster_uuid, ', '.join(names), self.settings.auto_healing_grace)
            for name in names:
                seen.pop(name, None)
            return [job]
        return []

    def _envvars(self, cluster_uuid, private_dir):
        """The environment of a run; a cluster with a credential of its own gets its
        clouds.yaml in the run's private dir (api/credentials.py); the openstack
        provider's module runs share one authentication (api/auth_cache.py)."""
        env = {'MAGNUM_PROVIDER': self.settings.provider,
               'ANSIBLE_CONFIG': str(self.settings.project_dir / 'ansible.cfg'),
               # the modules open the store with the API's keys
               secrets.ENV_KEY_FILE: self.store.secrets.key_file or '',
               # ansible-playbook from the same environment as this API
               'PATH': os.pathsep.join([os.path.dirname(sys.executable),
                                        os.environ.get('PATH', '')])}
        # The store's URL may hold its password: a file of the run's, removed with its
        # other secrets, never the environment (ansible-runner keeps a run's environment
        # in artifacts/*/command and env/envvars); one the API inherited is blanked.
        env[store_mod.ENV_DB_URL] = ''
        env[store_mod.ENV_DB_URL_FILE] = write_private(
            os.path.join(str(private_dir), STORE_URL_NAME), self.store.url)
        own_cloud = credentials.job_env(self.settings, self.store, cluster_uuid, private_dir)
        env.update(own_cloud)
        if self.settings.infrastructure.cloud:
            env.update(auth_cache.job_env(private_dir, inherit='OS_CLIENT_CONFIG_FILE' not in
                                          own_cloud))
        return env

    def _run_claimed(self, job_uuid):
        try:
            lower_priority(self.settings.job_nice)
            self._run_guarded(job_uuid)
        finally:
            with self._claiming:
                self._busy -= 1
            self.take_jobs()  # a worker is free, and the cluster's next job may run

    def _run_guarded(self, job_uuid):
        try:
            self._run(self.jobs.get(job_uuid))
        except Exception as exc:
            LOG.exception('job %s crashed', job_uuid)
            reason = 'Job %s crashed in the executor: %s' % (job_uuid, exc)
            self.jobs.finish(job_uuid, jobs_mod.FAILED, reason)
            jobs_mod.fail_operation(self.store, self.jobs.get(job_uuid), reason)

    def _run(self, job):
        """Run a job this conductor claimed (it is RUNNING under this conductor)."""
        job_uuid = job['uuid']
        if self.jobs.cancel_requested(job_uuid):
            self.jobs.finish(job_uuid, jobs_mod.CANCELED, 'Canceled before it started.')
            return
        minutes = job.get('timeout') or DEFAULT_TIMEOUT_MINUTES
        deadline = time.monotonic() + minutes * 60
        flags = {'timed_out': False, 'canceled': False, 'checked': 0.0, 'error': None}

        def cancel_callback():
            now = time.monotonic()
            if now > deadline:
                flags['timed_out'] = True
                return True
            if now - flags['checked'] > 1.0:
                flags['checked'] = now
                if self.jobs.cancel_requested(job_uuid):
                    flags['canceled'] = True
                    return True
            return False

        def event_handler(event):
            try:
                self._record_event(job_uuid, event, flags)
            except Exception:
                LOG.exception('could not record event of job %s', job_uuid)
            return True

        private_dir = self.settings.runner_dir / job_uuid
        private_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Request data is data: the extravars go to the run as unsafe values (api/extravars.py).
        extravars_mod.write(private_dir, dict(job['extravars'], job_uuid=job_uuid))
        self._running.add(job_uuid)
        try:
            thread, runner = ansible_runner.run_async(
                private_data_dir=str(private_dir),
                project_dir=str(self.settings.project_dir),
                **self._runner_args(job.get('cluster_id'), private_dir, job['playbook']),
                inventory=job_inventory(self.settings),
                event_handler=event_handler,
                cancel_callback=cancel_callback,
                quiet=True,
                settings={'suppress_ansible_output': True},
            )
            thread.join()
        finally:
            self._running.discard(job_uuid)
            # Cancelled, timed out or ended: nothing of the run outlives it.
            kill_job_processes(job_uuid)
            _remove_run_secrets(private_dir)
        if runner.status != 'successful' and not flags['error']:
            flags['error'] = _output_tail(runner)
        self._finalize(job, runner.status, flags, minutes)
        if runner.status == 'successful':
            shutil.rmtree(private_dir / 'env', ignore_errors=True)
        self.sweep_credentials()

    def _record_event(self, job_uuid, event, flags):
        kind = event.get('event')
        data = event.get('event_data') or {}
        task = data.get('task')
        if kind == 'playbook_on_task_start':
            self.jobs.add_event(job_uuid, kind, task=task)
        elif kind in ('runner_on_ok', 'runner_on_skipped'):
            self.jobs.add_event(job_uuid, kind, task=task, host=data.get('host'),
                                done_delta=1)
        elif kind in ('runner_on_failed', 'runner_on_unreachable'):
            res = data.get('res') or {}
            message = failures.failure_reason(res, default=str(res)[:500])
            if kind == 'runner_on_unreachable' and not res.get('results'):
                message = '%s is unreachable: %s' % (data.get('host'), message)
            ignored = bool(data.get('ignore_errors'))
            self.jobs.add_event(job_uuid, kind, task=task, host=data.get('host'),
                                failed=not ignored, message=message, done_delta=1,
                                failed_delta=0 if ignored else 1)
            if not ignored:
                flags['error'] = '%s: %s' % (task, message)

    def _finalize(self, job, status, flags, minutes):
        job_uuid = job['uuid']
        if flags['canceled']:
            self.jobs.finish(job_uuid, jobs_mod.CANCELED,
                             'Canceled: a delete of the cluster superseded it.')
            return
        if flags['timed_out']:
            what = 'create_timeout' if job['operation'] == 'create' else 'operation timeout'
            reason = 'Timed out after %d minutes (%s) during %s.' % (
                minutes, what, job['operation'])
            self.jobs.finish(job_uuid, jobs_mod.FAILED, reason)
            jobs_mod.fail_operation(self.store, job, reason)
            return
        if status == 'successful':
            self.jobs.finish(job_uuid, jobs_mod.SUCCESSFUL)
            reason = 'The playbook ended without writing a final status.'
        else:
            reason = flags['error'] or 'The playbook run ended %s.' % status
            self.jobs.finish(job_uuid, jobs_mod.FAILED, reason)
        # Whatever happened in the playbook, never leave the cluster in progress.
        jobs_mod.fail_operation(self.store, job, reason)


# The files of a run's private directory that hold a secret: its cloud credential, the
# store's URL (its password), the cached authentication (api/auth_cache.py).
RUN_SECRETS = ('clouds.yaml', STORE_URL_NAME, auth_cache.CACHE_NAME, auth_cache.SECURE_NAME)
# A run's secrets younger than this are another process's run about to start, never stale.
SECRETS_GRACE = 120


def lower_priority(nice):
    """The calling thread, and every thread and process it starts after, at niceness
    ``nice`` (Linux keeps a niceness per thread, and a thread or process started inherits
    its starter's): a job worker's playbook runs yield the CPU to the API's requests.
    Never raised back (an unprivileged process cannot)."""
    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError:   # not permitted here: the runs keep the process's priority
        LOG.warning('could not lower the priority of the playbook runs to %d', nice)


def _remove_run_secrets(private_dir):
    """A run's credential and cached authentication do not outlive it."""
    for name in ('clouds.yaml', STORE_URL_NAME):
        try:
            os.unlink(os.path.join(str(private_dir), name))
        except FileNotFoundError:
            pass
    auth_cache.forget(private_dir)


def remove_stale_secrets(runner_dir, held=(), proc='/proc', now=None):
    """Remove the secrets of the runs no process holds any more - a crashed or killed
    API's or conductor's, or a restarted machine's - from the private directories under
    ``runner_dir`` (a job's, named after its uuid, and health/<cluster uuid>): those no
    process on this host names on its command line (a run's Ansible processes name their
    private directory), that are not among ``held`` (this process's own runs, named as
    their directories are) and whose secrets are older than SECRETS_GRACE. Returns the
    directories cleaned."""
    runner_dir = str(runner_dir)
    dirs = []
    for top in (runner_dir, os.path.join(runner_dir, 'health')):
        try:
            dirs += [os.path.join(top, name) for name in os.listdir(top) if name != 'health']
        except OSError:
            continue
    now = time.time() if now is None else now
    named = None
    cleaned = []
    for directory in dirs:
        ages = []
        for name in RUN_SECRETS:
            try:
                ages.append(now - os.stat(os.path.join(directory, name)).st_mtime)
            except OSError:
                pass
        if not ages or min(ages) < SECRETS_GRACE or os.path.basename(directory) in held:
            continue
        if named is None:   # read once, only when some run has secrets left
            named = [cmd for _ppid, cmd in processes.table(proc).values() if 'ansible' in cmd]
        if any(os.path.basename(directory) in cmd for cmd in named):
            continue
        _remove_run_secrets(directory)
        cleaned.append(directory)
    return cleaned


def _output_tail(runner, lines=3):
    """The last lines ansible printed, for a run that failed before any task."""
    try:
        text = runner.stdout.read()
    except Exception:
        return None
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return ' '.join(tail)[:1000] or None


def kill_job_processes(job_uuid, proc='/proc'):
    """Kill every process of a job's runs on this host: the whole tree.

    ansible-runner starts ansible-playbook in its own session with the job's private
    data dir (named after the job uuid) on its command line, and kills that session's
    group when it cancels; but Ansible's workers start sessions of their own, and what
    they run (a module, its commands) is theirs. So the tree under every process
    naming the job is taken first, then each process and its group are killed, until
    none is left (a run of the playbook server shows its launcher's command line, its
    workers too). Returns the process groups killed.
    """
    killed, own = set(), os.getpgid(0)
    for _ in range(5):
        table = processes.table(proc)
        roots = [pid for pid, (_ppid, cmdline) in table.items()
                 if job_uuid in cmdline and 'ansible' in cmdline and pid != os.getpid()]
        if not roots:
            break
        processes.kill(processes.tree(roots, table), killed, own)
        time.sleep(0.1)
    return killed
