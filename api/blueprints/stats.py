"""/v1/stats (1.4+): cluster and node counts."""

from flask import Blueprint, g, jsonify, request

from api import app as ctx
from api import microversion, policy
from api.core import errors, lifecycle

bp = Blueprint('stats', __name__, url_prefix='/v1/stats')


@bp.get('')
@bp.get('/')
def stats():
    microversion.require((1, 4), 'Stats')
    kind = request.args.get('type', 'cluster')
    if kind != 'cluster':
        raise errors.Invalid("Invalid stats type %s: only 'cluster' is supported." % kind)
    project = request.args.get('project_id')
    if not project and not g.scope.is_admin:
        project = g.scope.project_id
    policy.authorize('stats:get_all', {'project_id': project or g.scope.project_id})
    return jsonify(lifecycle.stats(ctx.store(), project))
