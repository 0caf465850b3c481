"""/v1/mservices (admin): the processes that run jobs, as magnum-conductor services."""

from flask import Blueprint, jsonify
from werkzeug.exceptions import MethodNotAllowed

from api import current as ctx
from api import policy, query_args
from api.core import jobs

bp = Blueprint('mservices', __name__, url_prefix='/v1/mservices')


@bp.get('')
@bp.get('/')
@query_args.takes()
def list_services():
    policy.authorize('magnum-service:get_all')
    services = jobs.Jobs(ctx.store()).services()
    return jsonify({'mservices': [{
        'id': s['id'], 'host': s['host'], 'binary': s['binary'], 'state': s['state'],
        'report_count': s['report_count'], 'disabled': bool(s['disabled']),
        'disabled_reason': s['disabled_reason'], 'created_at': s['created_at'],
        'updated_at': s['updated_at']} for s in services]})


@bp.route('/<path:anything>', methods=['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
def no_record(anything):
    """Magnum has no service record to show, nor a detail list: pecan's 405."""
    raise MethodNotAllowed()
