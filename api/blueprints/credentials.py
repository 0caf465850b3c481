"""/v1/credentials: rotate a cluster's own OpenStack credential (api/credentials.py)."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api import credentials, microversion, policy
from api.core import errors, lifecycle, states

bp = Blueprint('credentials', __name__, url_prefix='/v1/credentials')

# Magnum's: a cluster being made, deleted or failed at create keeps its credential.
ROTATABLE = tuple(s for s in states.COMPLETE if s != states.DELETE_COMPLETE) + (
    states.UPDATE_IN_PROGRESS, states.UPDATE_FAILED)


@bp.patch('/<ident>')
def rotate(ident):
    """A new application credential of the caller (and a new trust, where clusters get
    trusts) becomes the cluster's; the old one is revoked as soon as no job of the cluster
    uses it (a running job keeps its own)."""
    microversion.require((1, 12), 'patch')
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('credential:rotate', cluster)
    settings = ctx.settings()
    if not credentials.enabled(settings):
        raise errors.NotSupported(
            "Credential rotation is not supported by driver: clusters have a credential of "
            "their own only when the API runs with --auth keystone and the openstack "
            "provider.")
    if cluster['status'] not in ROTATABLE:
        raise errors.NotSupported('Credential rotation when cluster status is "%s" is not '
                                  'supported.' % cluster['status'])
    credentials.issue(settings, store, request.headers.get('X-Auth-Token'), g.scope,
                      cluster['uuid'], roles=credentials.caller_roles(request.headers))
    ctx.executor().sweep_credentials()
    resp = jsonify({'uuid': cluster['uuid']})
    resp.status_code = 202
    return resp
