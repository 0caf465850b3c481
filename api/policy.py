"""Every authorization decision: Magnum's policy rules, read by oslo.policy.

The rule names and defaults are Magnum's current ones (admin, member and reader of the
project; ``*_all_projects`` for the admin), so an operator's Magnum ``policy.yaml``
overrides them unchanged (``--policy-file``). The ``*_deny_cluster_user`` rules are the
plain member/reader ones: a cluster's trust (api/credentials.py) impersonates its
creator, so a token of it is the creator's. The
job records (an extension) have one rule of their own, ``job:get``.
"""

import hashlib
import logging
import os
import stat

from flask import current_app, g
from oslo_config import cfg
from oslo_policy import policy

from api.core import errors

LOG = logging.getLogger(__name__)

ADMIN = 'rule:context_is_admin'
READER = 'rule:admin_or_project_reader'
MEMBER = 'rule:admin_or_project_member'
PROJECT_MEMBER = 'rule:project_member'
PROJECT_READER = 'rule:project_reader'
MEMBER_USER = 'rule:admin_or_project_member_user'
READER_USER = 'rule:admin_or_project_reader_user'

BASE_RULES = (
    ('context_is_admin', 'role:admin'),
    ('admin_or_owner', 'is_admin:True or project_id:%(project_id)s'),
    ('admin_or_user', 'is_admin:True or user_id:%(user_id)s'),
    ('is_user', 'user_id:%(user_id)s'),
    ('project_member', 'role:member and project_id:%(project_id)s'),
    ('project_reader', 'role:reader and project_id:%(project_id)s'),
    ('admin_or_project_reader', '(%s) or (%s)' % (ADMIN, PROJECT_READER)),
    ('admin_or_project_member', '(%s) or (%s)' % (ADMIN, PROJECT_MEMBER)),
    ('admin_or_project_member_user', '(%s) or ((%s) and (rule:is_user))'
     % (ADMIN, PROJECT_MEMBER)),
    ('admin_or_project_member_user_or_cluster_user', '(%s) or ((%s) and (rule:is_user))'
     % (ADMIN, PROJECT_MEMBER)),
    ('admin_or_project_reader_user', '(%s) or ((%s) and (rule:is_user))'
     % (ADMIN, PROJECT_READER)),
    ('project_member_deny_cluster_user', '(%s)' % PROJECT_MEMBER),
    ('admin_or_project_member_deny_cluster_user', '(%s) or (%s)' % (ADMIN, PROJECT_MEMBER)),
    ('project_reader_deny_cluster_user', '(%s)' % PROJECT_READER),
    ('admin_or_project_reader_deny_cluster_user', '(%s) or (%s)' % (ADMIN, PROJECT_READER)),
)

# action -> default, as Magnum's magnum/common/policies/*.py have them.
ACTIONS = {
    'clustertemplate:create': 'rule:admin_or_project_member_deny_cluster_user',
    'clustertemplate:delete': MEMBER,
    'clustertemplate:delete_all_projects': ADMIN,
    'clustertemplate:detail': 'rule:admin_or_project_reader_deny_cluster_user',
    'clustertemplate:detail_all_projects': ADMIN,
    'clustertemplate:get': 'rule:admin_or_project_reader_deny_cluster_user',
    'clustertemplate:get_one_all_projects': ADMIN,
    'clustertemplate:get_all': 'rule:admin_or_project_reader_deny_cluster_user',
    'clustertemplate:get_all_all_projects': ADMIN,
    'clustertemplate:update': MEMBER,
    'clustertemplate:update_all_projects': ADMIN,
    'clustertemplate:publish': ADMIN,
    'cluster:create': 'rule:project_member_deny_cluster_user',
    'cluster:delete': 'rule:project_member_deny_cluster_user',
    'cluster:delete_all_projects': ADMIN,
    'cluster:detail': 'rule:project_reader_deny_cluster_user',
    'cluster:detail_all_projects': ADMIN,
    'cluster:get': 'rule:project_reader_deny_cluster_user',
    'cluster:get_one_all_projects': ADMIN,
    'cluster:get_all': 'rule:project_reader_deny_cluster_user',
    'cluster:get_all_all_projects': ADMIN,
    'cluster:update': 'rule:project_member_deny_cluster_user',
    'cluster:update_health_status': 'rule:admin_or_project_member_user_or_cluster_user',
    'cluster:update_all_projects': ADMIN,
    'cluster:resize': 'rule:project_member_deny_cluster_user',
    'cluster:upgrade': 'rule:project_member_deny_cluster_user',
    'cluster:upgrade_all_projects': ADMIN,
    'nodegroup:get': READER,
    'nodegroup:get_all': READER,
    'nodegroup:get_all_all_projects': ADMIN,
    'nodegroup:get_one_all_projects': ADMIN,
    'nodegroup:create': MEMBER,
    'nodegroup:delete': MEMBER,
    'nodegroup:update': MEMBER,
    'certificate:create': 'rule:admin_or_project_member_user_or_cluster_user',
    'certificate:get': READER_USER,
    'certificate:rotate_ca': MEMBER,
    'credential:rotate': 'rule:project_member_deny_cluster_user',
    'federation:create': 'rule:admin_or_project_member_deny_cluster_user',
    'federation:delete': 'rule:admin_or_project_member_deny_cluster_user',
    'federation:detail': 'rule:admin_or_project_reader_deny_cluster_user',
    'federation:get': 'rule:admin_or_project_reader_deny_cluster_user',
    'federation:get_all': 'rule:admin_or_project_reader_deny_cluster_user',
    'federation:update': 'rule:admin_or_project_member_deny_cluster_user',
    'quota:create': ADMIN,
    'quota:delete': ADMIN,
    'quota:get': READER,
    'quota:get_all': ADMIN,
    'quota:update': ADMIN,
    'stats:get_all': READER,
    'magnum-service:get_all': ADMIN,
    'job:get': READER,
}

# Keystone's default implied roles: an admin is a member, a member a reader. Tokens
# carry the implied roles; noauth headers are given them here.
IMPLIED_ROLES = {'admin': ('member', 'reader'), 'member': ('reader',)}


def _enforcer(overrides=None):
    """An oslo.policy Enforcer of Magnum's defaults with ``overrides`` (a policy file's
    rules) in their place; it never reads a file itself (PolicyRules does)."""
    conf = cfg.ConfigOpts()
    conf([], project='magnum', default_config_files=[], default_config_dirs=[])
    rules = dict(BASE_RULES)
    rules.update(ACTIONS)
    rules.update(overrides or {})
    enforcer = policy.Enforcer(conf, rules=policy.Rules.from_dict(rules), use_conf=False)
    enforcer.register_defaults(
        [policy.RuleDefault(name, check) for name, check in BASE_RULES]
        + [policy.RuleDefault(name, check) for name, check in ACTIONS.items()])
    return enforcer


def parse_rules(data):
    """A policy file's text (YAML or JSON) as its rules: a non-empty mapping of rule
    names to check strings (or oslo.policy's lists). ValueError says what is wrong."""
    try:
        rules = policy.parse_file_contents(data)
    except ValueError as exc:
        raise ValueError('it is not valid YAML or JSON (%s)' % str(exc).splitlines()[0])
    if not rules:
        raise ValueError('it is empty')
    if not isinstance(rules, dict):
        raise ValueError('it is not a mapping of rule names to rules')
    for name, check in rules.items():
        if not isinstance(name, str) or not isinstance(check, (str, list)):
            raise ValueError('rule %r is not a rule name with a check string' % (name,))
    return rules


# The most a policy file may hold (Magnum's whole policy, every rule overridden, is ~20 kB).
MAX_POLICY_BYTES = 1024 * 1024


class PolicyRules(object):
    """Magnum's rules with an operator's policy file over them, read again whenever the
    file's content changes (not its time: an edit within a second, or a file put back,
    is seen). A file that is gone, unreadable, empty or invalid never replaces the last
    rules that were good: it could only widen access (Magnum's defaults are wider than
    most operators' files). Why it was kept is logged once per content."""

    def __init__(self, policy_file=None):
        self.path = os.path.abspath(policy_file) if policy_file else None
        self.digest = None
        self.refused = None    # what was logged last, not to log it on every request
        if not self.path:
            self.enforcer = _enforcer()
        else:
            data = self._read()
            if data is None:
                raise errors.MagnumError("The policy file %s cannot be read." % self.path)
            try:
                self.enforcer = _enforcer(parse_rules(data))
            except ValueError as exc:
                raise errors.MagnumError("The policy file %s is refused: %s." % (self.path, exc))
            self.digest = hashlib.sha256(data).hexdigest()

    def _read(self):
        """The file's content, or None (why logged): only a regular file, at most
        MAX_POLICY_BYTES, opened without waiting (a FIFO or a device put in its place would
        hold every request)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            self._refuse('it cannot be read (%s)' % exc.strerror)
            return None
        with os.fdopen(fd, 'rb') as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._refuse('it is not a regular file')
                return None
            try:
                data = handle.read(MAX_POLICY_BYTES + 1)
            except OSError as exc:
                self._refuse('it cannot be read (%s)' % exc.strerror)
                return None
        if len(data) > MAX_POLICY_BYTES:
            self._refuse('it is larger than %d bytes' % MAX_POLICY_BYTES)
            return None
        return data

    def _refuse(self, why):
        if why != self.refused:
            LOG.error('policy file %s: %s; the rules read from it last stay in force',
                      self.path, why)
            self.refused = why

    def current(self):
        """The enforcer of the file's current content, or of the last good one."""
        if not self.path:
            return self.enforcer
        data = self._read()
        if data is None:
            return self.enforcer
        digest = hashlib.sha256(data).hexdigest()
        if digest == self.digest:
            self.refused = None
            return self.enforcer
        try:
            enforcer = _enforcer(parse_rules(data))
        except ValueError as exc:
            self._refuse(str(exc))
            return self.enforcer
        self.enforcer, self.digest, self.refused = enforcer, digest, None
        LOG.info('policy file %s: its new rules are in force', self.path)
        return enforcer


def make_enforcer(policy_file=None):
    """Magnum's default rules, overridden by ``policy_file`` (YAML or JSON) when given;
    a file that cannot be read or is refused stops the start, not a request."""
    return PolicyRules(policy_file)


def _rules():
    """This request's enforcer (the file is looked at once per request)."""
    enforcer = g.get('magnum_enforcer')
    if enforcer is None:
        enforcer = g.magnum_enforcer = current_app.extensions['magnum_policy'].current()
    return enforcer


def with_implied(roles):
    out = list(roles)
    for role in roles:
        out.extend(r for r in IMPLIED_ROLES.get(role, ()) if r not in out)
    return out


def _creds():
    return {'roles': g.roles, 'project_id': g.scope.project_id, 'user_id': g.scope.user_id,
            'is_admin': g.scope.is_admin}


def allowed(action, target=None):
    """Whether the caller may do ``action`` on ``target`` (its project_id and user_id;
    the caller's own when not given)."""
    target = target or {}
    target = {'project_id': target.get('project_id', g.scope.project_id),
              'user_id': target.get('user_id', g.scope.user_id)}
    return _rules().authorize(action, target, _creds(), do_raise=False)


def authorize(action, target=None):
    """Magnum's 403 unless the caller may do ``action`` on ``target``."""
    if not allowed(action, target):
        raise errors.NotAuthorized("Policy doesn't allow %s to be performed." % action)


def authorize_on(action, record):
    """``action`` on a record: on another project's, its ``<action>_all_projects`` rule
    where Magnum has one (get_one_all_projects for a get), else ``action`` itself."""
    if record.get('project_id') != g.scope.project_id:
        kind, verb = action.split(':', 1)
        cross = '%s:%s_all_projects' % (kind, 'get_one' if verb == 'get' else verb)
        if cross in ACTIONS:
            return authorize(cross, record)
    return authorize(action, record)


def is_admin(roles, project_id, user_id):
    """The context_is_admin rule for a caller (before g.scope exists)."""
    return _rules().authorize('context_is_admin', {}, {
        'roles': roles, 'project_id': project_id, 'user_id': user_id}, do_raise=False)
