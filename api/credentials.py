"""Clusters' own OpenStack credentials, under keystone auth with the openstack provider.

Magnum delegates the caller's authority to each cluster (a Keystone trust; the Cluster
API driver, an application credential): the cluster's servers, networks and load
balancers are made in the caller's project, with the caller's roles, not in the
service's. Here: at cluster create the API makes an application credential of the
caller (with the caller's token), keeps it with the cluster, and every job of the
cluster runs on a clouds.yaml of its own holding only that credential.
`coe credential rotate` makes a new one and retires the old; a retired credential, or
one whose cluster is gone, is revoked (service user) once no job of its cluster runs.
The token itself is never stored or handed to a job.

With ``--cluster-user-trust`` and a trustee domain (``--trustee-domain``), each cluster
also gets Magnum's trust: a trustee user of its own in that domain (made by the service
user, a random password) to whom the caller delegates their roles in the project
(impersonating). That is what the cluster's own controllers sign in with (the cloud
controller manager, Cinder CSI, the cluster autoscaler, whose magnum provider takes no
application credential): a job's clouds.yaml holds it as a second cloud, TRUST_CLOUD,
which the cloud-config is written from. Rotated, retired and revoked with the
application credential (the trust and its trustee user deleted).
"""

import logging
import os
import secrets as secrets_mod
import uuid as uuidlib

import yaml

from api.core import errors, store as store_mod
from api.private_files import write_private

LOG = logging.getLogger(__name__)
# The cloud name a cluster's jobs see (their MAGNUM_CLOUD).
CLUSTER_CLOUD = 'magnum-cluster'
# The cloud of the cluster's trust in a job's clouds.yaml, and the variable naming it for
# the roles (the cloud the cluster's own controllers are given).
TRUST_CLOUD = 'magnum-cluster-trust'
ENV_CLUSTER_CONFIG_CLOUD = 'MAGNUM_CLUSTER_CONFIG_CLOUD'
# Connection settings taken over from the provider's cloud (everything but auth).
ENDPOINT_KEYS = ('region_name', 'interface', 'identity_api_version', 'cacert', 'cert', 'key',
                 'verify')


def enabled(settings):
    return settings.auth_strategy == 'keystone' and settings.infrastructure.cloud


def trusts_enabled(settings):
    """Whether clusters get Magnum's trust (their controllers' credential)."""
    return enabled(settings) and settings.cluster_user_trust and bool(settings.trustee_domain)


def application_credential_only(settings):
    """Whether the cluster's own controllers would be handed its application credential
    (keystone auth, the openstack provider, no trustee domain)."""
    return enabled(settings) and not trusts_enabled(settings)


def _endpoints(settings):
    """auth_url and the connection settings of the provider's cloud."""
    import openstack.config
    cloud = openstack.config.OpenStackConfig().get_one(cloud=settings.cloud)
    config = dict((k, cloud.config[k]) for k in ENDPOINT_KEYS if cloud.config.get(k) is not None)
    return cloud.auth['auth_url'], config


def caller_cloud(settings, token, project_id):
    """openstack.connect() arguments that act as the caller (the request's token)."""
    auth_url, config = _endpoints(settings)
    return dict(config, load_yaml_config=False, load_envvars=False, auth_type='v3token',
                auth={'auth_url': auth_url, 'token': token, 'project_id': project_id})


def issue(settings, store, token, scope, cluster_uuid, conn=None, roles=()):
    """A new application credential of the caller for the cluster, made active
    (``conn``: the request's connection as the caller, if it has one already); and,
    where clusters get trusts, a new trust over the caller's ``roles``."""
    import openstack
    import openstack.exceptions
    try:
        conn = conn or openstack.connect(**caller_cloud(settings, token, scope.project_id))
        made = conn.identity.create_application_credential(
            user=scope.user_id, name='magnum-%s-%s' % (cluster_uuid, uuidlib.uuid4().hex[:8]),
            description='openstack.magnum: the OpenStack credential of cluster %s'
                        % cluster_uuid)
    except openstack.exceptions.ForbiddenException as exc:
        raise errors.NotAuthorized("Could not create the cluster's application credential "
                                   "(a token of an application credential cannot make "
                                   "another): %s" % _reason(exc))
    except openstack.exceptions.SDKException as exc:
        raise errors.MagnumError("Could not create the cluster's application credential: %s"
                                 % _reason(exc), code=503)
    trust = None
    if trusts_enabled(settings):
        try:
            trust = make_trust(settings, scope, roles, cluster_uuid, conn)
        except Exception:
            # a failed request leaves nothing: the credential goes with the trust
            _delete_quietly(lambda: conn.identity.delete_application_credential(
                scope.user_id, made.id, ignore_missing=True), 'application credential', made.id)
            raise
    store.save_credential(cluster_uuid, made.id, made.secret, user_id=scope.user_id,
                          project_id=scope.project_id)
    if trust is not None:
        store.save_credential(cluster_uuid, trust['id'], trust['password'],
                              user_id=trust['trustee_id'], project_id=scope.project_id,
                              kind=store_mod.TRUST)
    return made.id


def make_trust(settings, scope, roles, cluster_uuid, conn):
    """Magnum's trust for the cluster: a trustee user in the trustee domain (the service
    user makes it) and the caller's trust to it over ``roles`` in the project (``conn``:
    the caller's connection). Returns its id, the trustee's id and password; nothing
    stays of a failed one."""
    import openstack
    import openstack.exceptions
    password = secrets_mod.token_urlsafe(32)
    trustee = None
    try:
        admin = trustee_admin(settings)
        domain = admin.identity.find_domain(settings.trustee_domain, ignore_missing=True)
        if domain is None:
            raise errors.MagnumError("Could not create the cluster's trust: the trustee "
                                     "domain %s does not exist." % settings.trustee_domain,
                                     code=503)
        trustee = admin.identity.create_user(
            name='%s_%s_%s' % (cluster_uuid, scope.project_id, uuidlib.uuid4().hex[:8]),
            domain_id=domain.id,
            password=password,
            description='openstack.magnum: the trustee of cluster %s' % cluster_uuid)
        trust = conn.identity.create_trust(
            trustor_user_id=scope.user_id, trustee_user_id=trustee.id,
            project_id=scope.project_id, impersonation=True,
            roles=[{'name': role} for role in roles])
    except openstack.exceptions.SDKException as exc:
        if trustee is not None:
            _delete_quietly(lambda: admin.identity.delete_user(trustee.id, ignore_missing=True),
                            'trustee user', trustee.id)
        raise errors.MagnumError("Could not create the cluster's trust: %s" % _reason(exc),
                                 code=503)
    return {'id': trust.id, 'trustee_id': trustee.id, 'password': password}


def trustee_admin(settings):
    """A connection of the trustee domain's admin."""
    import openstack
    return openstack.connect(cloud=settings.trustee_cloud or settings.keystone_cloud)


def _delete_quietly(delete, what, ident):
    import openstack.exceptions
    try:
        delete()
    except openstack.exceptions.SDKException as exc:
        LOG.warning('could not delete the %s %s of a refused request: %s', what, ident,
                    _reason(exc))


def caller_roles(headers):
    """The roles of the caller's token, as Keystone names them (X-Roles): what a trust
    delegates (Magnum's default)."""
    return [role.strip() for role in (headers.get('X-Roles') or '').split(',') if role.strip()]


def _reason(exc):
    return getattr(exc, 'details', None) or str(exc)


def write_clouds_yaml(settings, credential, directory, trust=None):
    """The clouds.yaml of a job of the cluster (mode 0600): CLUSTER_CLOUD, authenticated
    by the cluster's application credential, and TRUST_CLOUD by its ``trust`` (the trustee
    user's password, scoped to the trust) when it has one. Returns its path."""
    auth_url, config = _endpoints(settings)
    clouds = {CLUSTER_CLOUD: dict(config, auth_type='v3applicationcredential', auth={
        'auth_url': auth_url, 'application_credential_id': credential['credential_id'],
        'application_credential_secret': credential['secret']})}
    if trust is not None:
        clouds[TRUST_CLOUD] = dict(config, auth_type='v3password', auth={
            'auth_url': auth_url, 'user_id': trust['user_id'], 'password': trust['secret'],
            'trust_id': trust['credential_id']})
    return write_private(os.path.join(str(directory), 'clouds.yaml'),
                         yaml.safe_dump({'clouds': clouds}))


def job_env(settings, store, cluster_uuid, directory):
    """The environment a job of the cluster adds: its own clouds.yaml, when it has a
    credential, and the cloud its controllers are given (its trust, when it has one);
    else nothing (the provider's cloud, as configured)."""
    credential = store.credential(cluster_uuid) if cluster_uuid and enabled(settings) else None
    if credential is None:
        return {}
    trust = store.credential(cluster_uuid, kind=store_mod.TRUST)
    env = {'OS_CLIENT_CONFIG_FILE': write_clouds_yaml(settings, credential, directory, trust),
           'MAGNUM_CLOUD': CLUSTER_CLOUD, 'OS_CLOUD': CLUSTER_CLOUD}
    if trust is not None:
        env[ENV_CLUSTER_CONFIG_CLOUD] = TRUST_CLOUD
    return env


def sweep(settings, store, busy):
    """Revoke retired credentials and those of clusters that are gone, except while a
    job of their cluster runs (``busy(cluster_uuid)``). A failed revocation is kept
    for the next sweep. Returns the ids revoked."""
    if settings.auth_strategy != 'keystone':
        return []
    retired = [c for c in store.retired_credentials() if not busy(c['cluster_uuid'])]
    if not retired:
        return []
    import openstack
    import openstack.exceptions
    revoked = []
    try:
        conn = openstack.connect(cloud=settings.keystone_cloud)
        for credential in retired:
            if credential['kind'] == store_mod.TRUST:
                # the trustee user goes with its trust (Keystone deletes a deleted
                # user's trusts; the trust first, in case the user is already gone)
                conn.identity.delete_trust(credential['credential_id'], ignore_missing=True)
                trustees = trustee_admin(settings) if settings.trustee_cloud else conn
                trustees.identity.delete_user(credential['user_id'], ignore_missing=True)
            else:
                conn.identity.delete_application_credential(
                    credential['user_id'], credential['credential_id'], ignore_missing=True)
            store.forget_credential(credential['credential_id'])
            revoked.append(credential['credential_id'])
    except openstack.exceptions.SDKException as exc:
        LOG.warning('could not revoke a cluster credential (kept for the next sweep): %s',
                    _reason(exc))
    return revoked
