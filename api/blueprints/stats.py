"""/v1/stats: cluster and node counts (Magnum says 1.4 and checks no version)."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api import policy, query_args
from api.core import errors, lifecycle

bp = Blueprint('stats', __name__, url_prefix='/v1/stats')


@bp.get('')
@bp.get('/')
@query_args.takes('project_id', 'type')
def stats():
    # As Magnum: no microversion asked (it says 1.4, it checks none); the policy, then
    # the type, then another project's stats for an admin only.
    policy.authorize('stats:get_all', {'project_id': g.scope.project_id})
    kind = request.args.get('type', 'cluster')
    if kind.lower() != 'cluster':
        raise errors.Invalid("Invalid stats type. Allowed values are 'cluster'")
    project = request.args.get('project_id')
    if not g.scope.is_admin:
        project = project or g.scope.project_id
        if project != g.scope.project_id:
            raise errors.NotAuthorized("Not authorized.")
    return jsonify(lifecycle.stats(ctx.store(), project))
