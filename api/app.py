"""Application factory: settings, store, executor, hooks, one blueprint per resource."""

import logging

from flask import Flask, g, request
from werkzeug.exceptions import MethodNotAllowed

from api import cloud_connections, context, errors, limits, microversion, policy
from api.blueprints import (certificates, clusters, clustertemplates, credentials as creds,
                            federations, heat, jobs, mservices, nodegroups, quotas, root, stats)
from api.core import errors as errors_mod
from api.core import store as store_mod
from api.settings import Settings

BLUEPRINTS = (root, clustertemplates, clusters, nodegroups, certificates, creds, quotas, stats,
              mservices, federations, jobs, heat)


def _jobs(settings, store):
    """Where the API's jobs go: to the conductors over the transport, when there is one;
    else to the conductor embedded in this process."""
    if settings.transport_url:
        from api.jobqueue import JobQueue
        from api.messaging import ConductorClient
        return JobQueue(settings, store, ConductorClient(settings.transport_url))
    from api.executor import Executor
    return Executor(settings, store)


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
        app.extensions['magnum_executor'] = _jobs(settings, app.extensions['magnum_store'])
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
