"""/v1/quotas (create/update/delete are admin-only, like Magnum's policy)."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api.blueprints import collection_needs_ident
from api import bodies, paging, policy, query_args, views
from api.core import errors, fields, model

bp = Blueprint('quotas', __name__, url_prefix='/v1/quotas')
collection_needs_ident(bp, 'project_id')


@bp.get('')
@bp.get('/')
@query_args.takes('all_tenants', *query_args.PAGE)
def list_quotas():
    page = paging.params(uuid_marker=False)
    all_tenants = request.args.get('all_tenants', '').lower() in ('1', 'true', 'yes')
    policy.authorize('quota:get_all')
    project = None if all_tenants else g.scope.project_id
    records = ctx.store().quotas(project, limit=page['limit'], marker=page['marker'],
                                 sort_key=page['sort_key'], sort_dir=page['sort_dir'])
    data = {'quotas': [views.quota(r) for r in records]}
    nxt = paging.next_link('quotas', records, page, marker_key='id')
    if nxt:
        data['next'] = nxt
    return jsonify(data)


@bp.get('/<project_id>/<resource>')
@query_args.takes()
def show(project_id, resource):
    policy.authorize('quota:get', {'project_id': g.scope.project_id})
    if not g.scope.is_admin and project_id != g.scope.project_id:
        raise errors.NotAuthorized("Not authorized.")
    record = ctx.store().quota(project_id, resource, missing_ok=True)
    if record is None:   # the default limit: Magnum shows no id nor dates for it
        return jsonify({'hard_limit': model.DEFAULT_HARD_LIMIT, 'project_id': project_id,
                        'resource': resource})
    return jsonify(views.quota(record))


@bp.post('')
@bp.post('/')
def create():
    policy.authorize('quota:create')
    data = model.build_quota(bodies.body('quota'))
    record = ctx.store().set_quota(data['project_id'], data['resource'], data['hard_limit'],
                                   create=True)
    resp = jsonify(views.quota(record))
    resp.status_code = 201
    return resp


@bp.patch('/<project_id>/<resource>')
def update(project_id, resource):
    policy.authorize('quota:update')
    data = bodies.body('quotapatch')
    if 'hard_limit' not in data:
        raise errors.Invalid("Invalid input for field/attribute hard_limit. Value: None. "
                             "Mandatory field missing.")
    model.build_quota({'project_id': project_id, 'resource': resource,
                       'hard_limit': data['hard_limit']})
    record = ctx.store().set_quota(project_id, resource,
                                   fields.coerce(fields.QUOTA, 'hard_limit', data['hard_limit']))
    resp = jsonify(views.quota(record))
    resp.status_code = 202
    return resp


@bp.delete('/<project_id>/<resource>')
def delete(project_id, resource):
    policy.authorize('quota:delete')
    ctx.store().delete_quota(project_id, resource)
    return '', 204
