"""The API's state, kept on Flask's ``current_app`` by the factory (api/app.py), as the
blueprints reach it: the store, the job executor, the settings and the cloud connections
(Flask's factory pattern: no module-level state, and no blueprint imports the app)."""

from flask import current_app, g, request

from api import cloud_connections, credentials
from api.core import errors as errors_mod


def store():
    return current_app.extensions['magnum_store']


def executor():
    ex = current_app.extensions.get('magnum_executor')
    if ex is None:
        raise errors_mod.MagnumError("No job executor runs in this API process.", code=503)
    return ex


def settings():
    return current_app.config['SETTINGS']


def core_settings():
    """The core's settings for this request: under keystone auth with the openstack
    provider, cloud checks act as the caller (the request's token), so the caller's
    own images, keypairs and networks are found; else as the provider's cloud. Either
    connection is kept across requests (api/cloud_connections.py)."""
    current = settings()
    if not current.infrastructure.cloud:
        return current.core()
    if not credentials.enabled(current):
        return current.core(provider_connection())
    return current.core(caller_connection())


def _connections():
    return current_app.extensions['magnum_cloud_connections']


def provider_connection():
    """The connection to the provider's cloud (``--cloud``), kept across requests."""
    import openstack
    cloud = settings().cloud
    return _connections().get(_connections().key('provider', cloud),
                              lambda: openstack.connect(cloud=cloud))


def caller_connection():
    """The connection to the cloud as the caller (the request's token), kept until the
    token expires: a caller's requests log in once, and a cluster create's checks and
    its credential share it."""
    if 'caller_connection' not in g:
        token = request.headers.get('X-Auth-Token')
        project = g.scope.project_id
        g.caller_connection = _connections().get(
            _connections().key('caller', token, project),
            lambda: _logged_in(credentials.caller_cloud(settings(), token, project)),
            cloud_connections.token_expiry(request.environ.get('keystone.token_info')))
    return g.caller_connection


def _logged_in(arguments):
    """A connection as the caller, its token scoped now: a token Keystone no longer
    takes (revoked, its project or user deleted since the API's token cache validated
    it) is the caller's 401, not a server error in the middle of a check."""
    import openstack
    from keystoneauth1 import exceptions as ks_exceptions
    connection = openstack.connect(**arguments)
    try:
        connection.session.get_token()
    except ks_exceptions.HttpError as exc:
        if exc.http_status not in (401, 403, 404):
            raise
        raise errors_mod.MagnumError(
            'The request you have made requires authentication.', code=401)
    return connection
