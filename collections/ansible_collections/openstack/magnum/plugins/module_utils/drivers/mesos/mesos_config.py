# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Mesos cluster's configuration, as Magnum's Mesos driver laid it out: ZooKeeper on
every master (an ensemble of 1, 3 or 5), mesos-master with the quorum of that count and
Marathon on the masters, mesos-agent with the Docker containerizer (and Mesos' own where
the labels ask for its isolators or image providers) on the agents.

Pure: from the cluster, its labels and the masters' addresses to the
flags each daemon takes, written as the Mesos packages read them - one file per flag in
/etc/mesos-master, /etc/mesos-slave and /etc/marathon/conf, the ZooKeeper URL in
/etc/mesos/zk - and Debian's ZooKeeper configuration."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import posixpath
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

MASTER_COUNTS = (1, 3, 5)
ZK_CLIENT_PORT, ZK_PEER_PORT, ZK_ELECTION_PORT = 2181, 2888, 3888
MASTER_PORT, AGENT_PORT, MARATHON_PORT = 5050, 5051, 8080
MASTER_WORK_DIR = '/var/lib/mesos/master'
AGENT_WORK_DIR = '/var/lib/mesos/agent'
ZK_DATA_DIR = '/var/lib/zookeeper'
# Docker images take minutes to pull on a new agent (Mesos' default is one minute).
EXECUTOR_REGISTRATION_TIMEOUT = '5mins'
# What Mesos' own containerizer needs to run images (its documentation: "container
# image support"): a root filesystem per container.
IMAGE_ISOLATOR = 'filesystem/linux'


def check_master_count(count):
    if count not in MASTER_COUNTS:
        raise Invalid("A Mesos cluster has 1, 3 or 5 masters (they run the ZooKeeper "
                      "ensemble, which needs a majority), not %s." % count)


def quorum(count):
    """mesos-master's --quorum: a majority of the masters."""
    return count // 2 + 1


def zk_url(masters, path):
    return 'zk://%s/%s' % (','.join('%s:%d' % (m, ZK_CLIENT_PORT) for m in masters), path)


def _absolute(label, value):
    if not posixpath.isabs(value) or '\n' in value or '..' in value.split('/'):
        raise Invalid("Label %s must be an absolute path on the agents, not %r."
                      % (label, value))
    return value


def agent_flags(labels, zk):
    """mesos-agent's flags from the mesos_slave_* labels (the guide's meanings); ``zk``:
    the masters' ZooKeeper URL."""
    isolation = labels.get('mesos_slave_isolation') or ''
    providers = labels.get('mesos_slave_image_providers') or ''
    flags = {'master': zk, 'port': str(AGENT_PORT),
             'containerizers': 'docker',
             'work_dir': _absolute('mesos_slave_work_dir',
                                   labels.get('mesos_slave_work_dir') or AGENT_WORK_DIR),
             'executor_registration_timeout': EXECUTOR_REGISTRATION_TIMEOUT}
    if isolation or providers:
        # Isolators and image providers are the Mesos containerizer's.
        flags['containerizers'] = 'docker,mesos'
    if isolation:
        flags['isolation'] = isolation
    if providers:
        if IMAGE_ISOLATOR not in isolation.split(','):
            raise Invalid("Label mesos_slave_image_providers=%s needs %s in "
                          "mesos_slave_isolation (Mesos runs an image in a root filesystem "
                          "of its own)." % (providers, IMAGE_ISOLATOR))
        flags['image_providers'] = providers
    env_file = labels.get('mesos_slave_executor_env_variables')
    if env_file:
        flags['executor_environment_variables'] = 'file://' + _absolute(
            'mesos_slave_executor_env_variables', env_file)
    return flags


def zoo_cfg(masters):
    """Debian's /etc/zookeeper/conf/zoo.cfg for the ensemble of the masters."""
    lines = ['tickTime=2000', 'initLimit=10', 'syncLimit=5', 'dataDir=%s' % ZK_DATA_DIR,
             'clientPort=%d' % ZK_CLIENT_PORT,
             # what zkServer.sh status and the role's quorum check ask (none by default)
             '4lw.commands.whitelist=srvr,ruok']
    if len(masters) > 1:
        lines += ['server.%d=%s:%d:%d' % (i + 1, m, ZK_PEER_PORT, ZK_ELECTION_PORT)
                  for i, m in enumerate(masters)]
    return '\n'.join(lines) + '\n'


def settings(cluster, labels, masters, api_host=None):
    """Everything the role writes. ``masters``: the masters' addresses, master-0 first
    (ZooKeeper's ids follow that order); ``api_host``: the master load balancer's
    address when there is one (else the first master's)."""
    masters = [str(m) for m in masters]
    check_master_count(len(masters))
    labels = labels or {}
    zk = zk_url(masters, 'mesos')
    return {
        'zookeeper': {'zoo_cfg': zoo_cfg(masters),
                      'myid': dict((m, str(i + 1)) for i, m in enumerate(masters))},
        'zk': zk,
        'master': {'zk': zk, 'quorum': str(quorum(len(masters))),
                   'port': str(MASTER_PORT), 'work_dir': MASTER_WORK_DIR,
                   'cluster': str(cluster['name'])},
        'agent': agent_flags(labels, zk),
        'marathon': {'master': zk, 'zk': zk_url(masters, 'marathon'),
                     'http_port': str(MARATHON_PORT)},
        'api_address': 'http://%s:%d' % (api_host or masters[0], MARATHON_PORT),
    }


def flag_files(found, role, address=None):
    """The files (path -> content) of ``role`` ('master' or 'agent'): its flags one file
    each, as the Mesos packages' start scripts read them, and the ZooKeeper URL; a
    master also has Marathon's flags. With the node's ``address``, the daemon listens and
    names itself by it (--ip, --hostname: how the masters and maintenance know agents)."""
    files = {'/etc/mesos/zk': found['zk'] + '\n'}
    where = {'master': '/etc/mesos-master', 'agent': '/etc/mesos-slave'}[role]
    flags = dict(found[role])
    if address:
        flags.update(ip=str(address), hostname=str(address))
    for flag, value in flags.items():
        if flag not in ('zk', 'master'):   # the start scripts take it from /etc/mesos/zk
            files['%s/%s' % (where, flag)] = value + '\n'
    if role == 'master':
        for flag, value in found['marathon'].items():
            files['/etc/marathon/conf/%s' % flag] = value + '\n'
    return files


# Where Mesos and Marathon come from: Apache retired Mesos and no repository these machines
# reach has it, so an operator names one (as Kubernetes' artifacts are named).
ARTIFACTS_ENV = 'MAGNUM_MESOS_ARTIFACTS'
BINARIES = ('mesos-master', 'mesos-agent')
_APT_LINE = re.compile(r'^deb (\[[^\]\n]*\] )?https?://[^\s]+ [^\s]+( [^\s]+)+$')


def _pick(names, where, env):
    """From the files ``names`` (paths relative to ``where``) of a source: ``('debs',
    [mesos_*.deb..., marathon_*.deb...])``, else ``('binaries', [bin/mesos-master,
    bin/mesos-agent, marathon-<version>.tgz])``; Invalid naming what is missing."""
    debs = dict((kind, sorted(n for n in names if n.startswith(kind + '_')
                              and n.endswith('.deb') and '/' not in n))
                for kind in ('mesos', 'marathon'))
    if debs['mesos'] or debs['marathon']:
        missing = [kind + '_*.deb' for kind in ('mesos', 'marathon') if not debs[kind]]
        if missing:
            raise Invalid("%s=%s is incomplete: missing %s." % (env, where, ', '.join(missing)))
        return 'debs', debs['mesos'] + debs['marathon']
    tarballs = sorted(n for n in names if n.startswith('marathon-') and n.endswith('.tgz')
                      and '/' not in n)
    missing = ['bin/' + b for b in sorted(BINARIES) if 'bin/' + b not in names]
    if not tarballs:
        missing.append('marathon-<version>.tgz')
    if missing:
        raise Invalid("%s=%s is incomplete: missing %s (or give mesos_*.deb and "
                      "marathon_*.deb)." % (env, where, ', '.join(missing)))
    return 'binaries', ['bin/' + b for b in BINARIES] + tarballs[-1:]


def artifact_source(offline_dir='', apt_repository=''):
    """``{'mode': 'debs', 'debs': [...]}`` (an offline directory's mesos_*.deb and
    marathon_*.deb), ``{'mode': 'binaries', 'bin': {...}, 'marathon': tarball}`` (its
    bin/mesos-master, bin/mesos-agent and marathon-*.tgz) or ``{'mode': 'apt',
    'repository': line, 'packages': [...]}`` (an apt repository in the layout third-party
    Mesos repositories use: its sources.list line). Else Invalid, naming what is missing,
    before any node is touched. (A download mirror is fetched into a directory first:
    mirror_files.)"""
    if offline_dir:
        if not os.path.isdir(offline_dir):
            raise Invalid("%s=%s is not a directory." % (ARTIFACTS_ENV, offline_dir))
        names = sorted(os.listdir(offline_dir)) + [
            'bin/' + b for b in BINARIES if os.path.isfile(os.path.join(offline_dir, 'bin', b))]
        mode, found = _pick(names, offline_dir, ARTIFACTS_ENV)
        paths = [os.path.join(offline_dir, n) for n in found]
        if mode == 'debs':
            return {'mode': 'debs', 'debs': paths}
        return {'mode': 'binaries', 'bin': dict(zip(BINARIES, paths)), 'marathon': paths[-1]}
    if apt_repository:
        if not _APT_LINE.match(apt_repository):
            raise Invalid("The Mesos apt repository must be a sources.list line "
                          "('deb https://<host>/<path> <suite> <component>'), not %r."
                          % apt_repository)
        return {'mode': 'apt', 'repository': apt_repository,
                'packages': ['mesos', 'marathon']}
    raise Invalid("Mesos and Marathon are in no package repository these machines reach "
                  "(Apache retired Mesos): set %s to a directory of their .debs (or "
                  "bin/mesos-master, bin/mesos-agent and marathon-<version>.tgz), %s to a "
                  "download mirror of them with a SHA256SUMS, or name an apt repository that "
                  "has them." % (ARTIFACTS_ENV, MIRROR_ENV))


MIRROR_ENV = 'MAGNUM_MESOS_MIRROR'
_SUM_LINE = re.compile(r'^([0-9a-f]{64}) [ *]([A-Za-z0-9][A-Za-z0-9._+~/-]*)$')


def mirror_files(sums, url):
    """What to download from a mirror (``url``, whose ``SHA256SUMS`` lists the files as
    sha256sum writes them, ``sums`` its text): the same files an offline directory holds
    (_pick), each ``{'name', 'url', 'sha256'}``; Invalid naming a malformed line or what
    the listing lacks."""
    listed = {}
    for number, line in enumerate((sums or '').splitlines(), 1):
        if not line.strip():
            continue
        match = _SUM_LINE.match(line.strip())
        if not match or '..' in match.group(2).split('/'):
            raise Invalid("%s/SHA256SUMS line %d is not '<sha256>  <file>': %r."
                          % (url.rstrip('/'), number, line[:100]))
        listed[match.group(2)] = match.group(1)
    _mode, found = _pick(sorted(listed), url.rstrip('/') + '/SHA256SUMS', MIRROR_ENV)
    return [{'name': n, 'url': '%s/%s' % (url.rstrip('/'), n), 'sha256': listed[n]}
            for n in found]


def health(state, agents, marathon_answers):
    """A Mesos cluster's health_status and health_status_reason (Magnum's shape: what is
    wrong by name, and ``api``) from the leading master's ``/master/state`` (None: no
    master answered), the agents' addresses the cluster has and whether Marathon answered:
    HEALTHY when a leader is elected, every agent registered and active and Marathon
    answers; else UNHEALTHY naming what is not; UNKNOWN when no master answered."""
    if not state:
        return {'status': 'UNKNOWN', 'reason': {'api': 'The cluster is not accessible'}}
    reason = {}
    if not state.get('leader'):
        reason['masters'] = 'no leading master elected'
    registered = dict((s.get('hostname'), s) for s in state.get('slaves') or [])
    for agent in agents or []:
        found = registered.get(str(agent))
        if found is None:
            reason['%s.status' % agent] = 'not registered with the masters'
        elif not found.get('active', False):
            reason['%s.status' % agent] = 'inactive'
    if not marathon_answers:
        reason['marathon'] = 'not answering'
    status = 'UNHEALTHY' if reason else 'HEALTHY'
    reason['api'] = 'ok'
    return {'status': status, 'reason': reason}


def maintenance(machines, now_ns):
    """The bodies of Mesos' maintenance calls for the agents that leave (their addresses,
    which are their --hostname and --ip): ``schedule`` (a window starting ``now_ns``, so
    frameworks are asked to move their tasks) and ``down`` (the machines taken down, their
    tasks killed and rescheduled elsewhere by Marathon)."""
    ids = [{'hostname': str(m), 'ip': str(m)} for m in machines]
    return {'schedule': {'windows': [{'machine_ids': ids, 'unavailability': {
        'start': {'nanoseconds': int(now_ns)}}}]} if ids else {'windows': []},
        'down': ids}


SERVICES = {'/etc/mesos-master/': 'mesos-master', '/etc/mesos-slave/': 'mesos-slave',
            '/etc/marathon/conf/': 'marathon'}


def node_files(found, roles, addresses):
    """Every node's flag files as one list, for a loop: ``roles`` and ``addresses`` map the
    node names (inventory hosts) to their role (``master``, else an agent) and address.
    Each entry: node, path, content, and the services that read it (restarted when it
    changes; the ZooKeeper URL is read by all of a node's)."""
    entries = []
    for node in sorted(roles):
        role = 'master' if roles[node] == 'master' else 'agent'
        files = flag_files(found, role, addresses.get(node))
        mine = ['mesos-master', 'marathon'] if role == 'master' else ['mesos-slave']
        for path in sorted(files):
            services = [s for prefix, s in SERVICES.items() if path.startswith(prefix)] or mine
            entries.append({'node': node, 'path': path, 'content': files[path],
                            'services': services})
    return entries


def running_tasks(state, agents):
    """How many tasks still run on the agents of ``agents`` (their addresses), from the
    leading master's ``/master/state``: a leaving agent is taken down once this is 0 (or
    its drain time is over)."""
    ids = set(s.get('id') for s in (state or {}).get('slaves') or []
              if s.get('hostname') in set(str(a) for a in agents or []))
    return sum(1 for framework in (state or {}).get('frameworks') or []
               for task in framework.get('tasks') or []
               if task.get('slave_id') in ids and task.get('state') in ('TASK_RUNNING',
                                                                        'TASK_STARTING',
                                                                        'TASK_STAGING'))
