"""Who is calling. noauth: project, user and roles come from headers."""

from flask import current_app, g, request

from api.core import errors, lifecycle


def load():
    """before_request hook: sets ``g.scope`` and ``g.roles``."""
    settings = current_app.config['SETTINGS']
    headers = request.headers
    project = headers.get('X-Project-Id') or headers.get('X-Tenant-Id') or \
        settings.default_project
    roles = headers.get('X-Roles')
    roles = [r.strip().lower() for r in roles.split(',') if r.strip()] if roles is not None \
        else list(settings.default_roles)
    g.roles = roles
    g.scope = lifecycle.Scope(project_id=project, user_id=headers.get('X-User-Id'),
                              is_admin='admin' in roles)


def require_admin(action):
    if not g.scope.is_admin:
        raise errors.NotAuthorized("Policy doesn't allow %s to be performed." % action)
