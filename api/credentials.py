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
"""

import logging
import os
import uuid as uuidlib

import yaml

from api.core import errors
from api.private_files import write_private

LOG = logging.getLogger(__name__)
# The cloud name a cluster's jobs see (their MAGNUM_CLOUD).
CLUSTER_CLOUD = 'magnum-cluster'
# Connection settings taken over from the provider's cloud (everything but auth).
ENDPOINT_KEYS = ('region_name', 'interface', 'identity_api_version', 'cacert', 'cert', 'key',
                 'verify')


def enabled(settings):
    return settings.auth_strategy == 'keystone' and settings.provider == 'openstack'


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


def issue(settings, store, token, scope, cluster_uuid, conn=None):
    """A new application credential of the caller for the cluster, made active
    (``conn``: the request's connection as the caller, if it has one already)."""
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
    store.save_credential(cluster_uuid, made.id, made.secret, user_id=scope.user_id,
                          project_id=scope.project_id)
    return made.id


def _reason(exc):
    return getattr(exc, 'details', None) or str(exc)


def write_clouds_yaml(settings, credential, directory):
    """The clouds.yaml of a job of the cluster (mode 0600): one cloud, CLUSTER_CLOUD,
    authenticated by the cluster's credential. Returns its path."""
    auth_url, config = _endpoints(settings)
    cloud = dict(config, auth_type='v3applicationcredential', auth={
        'auth_url': auth_url, 'application_credential_id': credential['credential_id'],
        'application_credential_secret': credential['secret']})
    return write_private(os.path.join(str(directory), 'clouds.yaml'),
                         yaml.safe_dump({'clouds': {CLUSTER_CLOUD: cloud}}))


def job_env(settings, store, cluster_uuid, directory):
    """The environment a job of the cluster adds: its own clouds.yaml, when it has a
    credential; else nothing (the provider's cloud, as configured)."""
    credential = store.credential(cluster_uuid) if cluster_uuid and enabled(settings) else None
    if credential is None:
        return {}
    return {'OS_CLIENT_CONFIG_FILE': write_clouds_yaml(settings, credential, directory),
            'MAGNUM_CLOUD': CLUSTER_CLOUD, 'OS_CLOUD': CLUSTER_CLOUD}


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
            conn.identity.delete_application_credential(
                credential['user_id'], credential['credential_id'], ignore_missing=True)
            store.forget_credential(credential['credential_id'])
            revoked.append(credential['credential_id'])
    except openstack.exceptions.SDKException as exc:
        LOG.warning('could not revoke a cluster credential (kept for the next sweep): %s',
                    _reason(exc))
    return revoked
