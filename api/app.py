"""Application factory: settings, store, executor, hooks, one blueprint per resource."""

import json
import logging
import urllib.parse

from flask import Flask, current_app, g, request
from werkzeug.exceptions import MethodNotAllowed

from api import cloud_connections, context, credentials, errors, limits, microversion, policy
from api.blueprints import (certificates, clusters, clustertemplates, credentials as creds,
                            federations, heat, jobs, mservices, nodegroups, quotas, root, stats)
from api.core import errors as errors_mod
from api.core import store as store_mod
from api.settings import Settings

BLUEPRINTS = (root, clustertemplates, clusters, nodegroups, certificates, creds, quotas, stats,
              mservices, federations, jobs, heat)


def create_app(settings=None):
    settings = settings or Settings()
    app = Flask(__name__)
    app.config['SETTINGS'] = settings
    app.config['MAX_CONTENT_LENGTH'] = limits.MAX_BODY_BYTES
    app.json.sort_keys = False
    app.extensions['magnum_store'] = store_mod.Store(
        settings.db_url, secrets=settings.store_secrets(create=True))
    # Secrets stored before there was a key (or under an older first key) are sealed now.
    app.extensions['magnum_store'].reseal_secrets()
    app.extensions['magnum_policy'] = policy.make_enforcer(settings.policy_file)
    app.extensions['magnum_cloud_connections'] = cloud_connections.Connections()
    if settings.start_executor:
        from api.executor import Executor
        app.extensions['magnum_executor'] = Executor(settings, app.extensions['magnum_store'])
    for module in BLUEPRINTS:
        app.register_blueprint(module.bp)
    errors.register(app)

    @app.before_request
    def _before():
        if request.method == 'HEAD' and request.path != '/healthcheck':
            raise MethodNotAllowed()   # pecan answers HEAD nowhere (Flask would, as GET)
        if '\x00' in request.path or any('\x00' in key + value for key, value
                                         in request.args.items(multi=True)):
            raise errors_mod.Invalid("Invalid request: the URL holds a NUL character.")
        if request.path.startswith('/v1'):
            microversion.negotiate()
        else:
            g.version = microversion.MIN_VERSION
        context.load()
        return None

    app.after_request(microversion.add_headers)
    if settings.auth_strategy == 'keystone':
        from api import auth
        if not settings.keystone_cloud:
            raise ValueError("--auth keystone needs --keystone-cloud (or MAGNUM_KEYSTONE_CLOUD): "
                             "the clouds.yaml cloud of the user that validates tokens.")
        app.wsgi_app = auth.KeystoneAuth(app.wsgi_app,
                                         auth.middleware_conf(settings.keystone_cloud))
    logging.getLogger('api').setLevel(logging.INFO)
    return app


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
    if current.provider != 'openstack':
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


def json_document(argument=None):
    """The request's JSON document of any kind, read as Magnum (wsme) reads a body: a
    JSON content type (415 for another; form arguments are unknown arguments), a body
    at all (``argument`` is its name in Magnum's controller), valid JSON, nested no
    deeper than any Magnum body and holding only Unicode text (no lone surrogate)."""
    mimetype = request.mimetype or ''
    raw = request.get_data(cache=True)
    if mimetype in ('', 'application/x-www-form-urlencoded'):
        form = urllib.parse.parse_qsl(raw.decode('utf-8', 'replace'), keep_blank_values=True)
        if form:
            raise errors_mod.Invalid('Unknown argument: "%s"' % form[0][0])
    elif mimetype != 'application/json' and not mimetype.endswith('+json'):
        raise errors_mod.MagnumError('Unknown mimetype: %s' % mimetype, code=415)
    if not raw.strip():
        raise errors_mod.Invalid('Missing argument: "%s"' % argument if argument else
                                 "Invalid request body: a JSON document is expected.")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise errors_mod.Invalid("Request is not in valid JSON format")
    limits.check_document(data)
    return data


def json_patch(internal=(), non_removable=()):
    """The request's JSON patch, checked as Magnum checks it before it looks the record
    up (Magnum's 400 naming what is wrong): ``internal`` and ``non_removable`` are the
    paths Magnum's patch type of the resource refuses then."""
    from api import jsonpatch
    patch = json_document()
    jsonpatch.validate(patch, internal, non_removable)
    return patch


def body(argument=None):
    """The JSON object of a create or an action, or Magnum's 400."""
    data = json_document(argument)
    if not isinstance(data, dict):
        raise errors_mod.Invalid("Invalid request body: a JSON object is expected, not %s."
                                 % _JSON_KINDS.get(type(data), 'that'))
    return data


_JSON_KINDS = {list: 'a list', str: 'a string', bool: 'a boolean', int: 'a number',
               float: 'a number'}
