"""Keystone authentication, as Magnum has it: keystonemiddleware's auth_token in front
of the application. It validates X-Auth-Token with Keystone and sets the X-Project-Id,
X-User-Id and X-Roles headers `context.load` reads (headers a caller sends itself are
removed first). The version documents (`/`, `/v1`: Magnum's acl_public_routes) need
no token. A refusal carries Magnum's error body."""

import json

from api.errors import body as magnum_body

PUBLIC_ROUTES = ('', '/v1', '/v1/openapi.json')
# Identity headers only auth_token may set (a caller's own are dropped).
IDENTITY_HEADERS = ('HTTP_X_PROJECT_ID', 'HTTP_X_TENANT_ID', 'HTTP_X_ROLES', 'HTTP_X_USER_ID')
# The service credentials auth_token validates tokens with: a clouds.yaml cloud's auth.
AUTH_KEYS = ('auth_url', 'username', 'user_id', 'password', 'project_name', 'project_id',
             'user_domain_name', 'user_domain_id', 'project_domain_name',
             'project_domain_id', 'system_scope')


def middleware_conf(cloud_name):
    """auth_token's options from the clouds.yaml cloud ``cloud_name`` (password auth)."""
    import openstack.config
    cloud = openstack.config.OpenStackConfig().get_one(cloud=cloud_name)
    auth = dict((k, v) for k, v in cloud.auth.items() if k in AUTH_KEYS and v)
    if not auth.get('auth_url'):
        raise ValueError("Cloud %s in clouds.yaml has no auth_url." % cloud_name)
    conf = dict(auth, auth_type='password', www_authenticate_uri=auth['auth_url'],
                delay_auth_decision=False, include_service_catalog=False)
    if cloud.config.get('region_name'):
        conf['region_name'] = cloud.config['region_name']
    if cloud.config.get('cacert'):
        conf['cafile'] = cloud.config['cacert']
    if cloud.config.get('verify') is False:
        conf['insecure'] = True
    return conf


def is_public(path):
    """The version documents, which need no token (Magnum's acl_public_routes)."""
    return (path or '/').rstrip('/') in PUBLIC_ROUTES


class KeystoneAuth:
    """WSGI middleware: auth_token for everything but the public routes."""

    def __init__(self, app, conf):
        try:
            from keystonemiddleware import auth_token
        except ImportError:
            raise ValueError("--auth keystone needs keystonemiddleware: "
                             "pip install 'openstack-magnum-ansible[keystone]'.")
        self.app = app
        self.protected = auth_token.AuthProtocol(app, conf)

    def __call__(self, environ, start_response):
        if is_public(environ.get('PATH_INFO')):
            for key in IDENTITY_HEADERS:
                environ.pop(key, None)
            return self.app(environ, start_response)
        captured = {}

        def capture(status, headers, exc_info=None):
            captured.update(status=status, headers=headers, exc_info=exc_info)
            return captured.setdefault('written', []).append

        result = self.protected(environ, capture)
        try:
            payload = b''.join(captured.get('written', []) + list(result))
        finally:
            getattr(result, 'close', lambda: None)()
        status, headers = captured['status'], captured['headers']
        code = int(status.split()[0])
        if code >= 400 and not _is_magnum_error(payload):
            payload = json.dumps(magnum_body(code, _detail(code, payload))).encode()
            headers = [(k, v) for k, v in headers
                       if k.lower() not in ('content-type', 'content-length')]
            headers += [('Content-Type', 'application/json'),
                        ('Content-Length', str(len(payload)))]
        start_response(status, headers, captured.get('exc_info'))
        return [payload]


def _is_magnum_error(payload):
    try:
        return 'errors' in json.loads(payload)
    except ValueError:
        return False


def _detail(code, payload):
    """auth_token's own message ({"error": {"message": ...}}), else a standard one."""
    try:
        return json.loads(payload)['error']['message']
    except (ValueError, KeyError, TypeError):
        return {401: 'The request you have made requires authentication.',
                503: 'The authentication service is unavailable.'}.get(
                    code, 'Authentication failed.')
