"""Who is calling: project, user and roles from the identity headers, which keystone
auth (api/auth.py) sets from a validated token; with noauth the caller sends them, and
the settings' defaults fill what it leaves out."""

from flask import current_app, g, request

from api import auth, policy
from api.core import errors, fields, lifecycle


def load():
    """before_request hook: sets ``g.scope`` and ``g.roles``."""
    settings = current_app.config['SETTINGS']
    headers = request.headers
    noauth = settings.auth_strategy == 'noauth'
    project = headers.get('X-Project-Id') or headers.get('X-Tenant-Id') or \
        (settings.default_project if noauth else None)
    roles = headers.get('X-Roles')
    roles = [r.strip().lower() for r in roles.split(',') if r.strip()] if roles is not None \
        else (list(settings.default_roles) if noauth else [])
    if not noauth and project is None and not auth.is_public(request.path):
        raise errors.NotAuthorized("A project-scoped token is required.")
    for header, value in (('X-Project-Id', project), ('X-User-Id', headers.get('X-User-Id'))):
        if value is not None and len(value) > fields.MAX_STR:
            raise errors.Invalid("%s is longer than %d characters." % (header, fields.MAX_STR))
    g.roles = policy.with_implied(roles)
    user = headers.get('X-User-Id')
    g.scope = lifecycle.Scope(project_id=project, user_id=user,
                              is_admin=policy.is_admin(g.roles, project, user))
