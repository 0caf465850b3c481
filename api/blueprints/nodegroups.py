"""/v1/clusters/<cluster>/nodegroups (microversion 1.9+)."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api.blueprints import collection_needs_ident
from api import bodies, jsonpatch, microversion, paging, policy, query_args, views
from api.core import fields, lifecycle

bp = Blueprint('nodegroups', __name__, url_prefix='/v1/clusters/<cluster_ident>/nodegroups')
collection_needs_ident(bp, 'nodegroup_id')

INTERNAL = ('/cluster_id', '/is_default', '/stack_id', '/status', '/status_reason',
            '/node_addresses', '/version', '/labels_overridden', '/labels_added',
            '/labels_skipped')


@bp.before_request
def _version():
    # Magnum's controller method for the request (its own pick varies from run to run)
    one = bool((request.view_args or {}).get('ident'))
    api = {'GET': 'get_one' if one else 'get_all', 'POST': 'post', 'PATCH': 'patch',
           'DELETE': 'delete'}.get(request.method, request.method.lower())
    microversion.require((1, 9), api)


def _cluster(ident, action):
    """The cluster of the node groups, once the caller may do ``action`` on them."""
    cluster = lifecycle.get_cluster(ctx.store(), ident, g.scope)
    policy.authorize_on(action, cluster)
    return cluster


def _list(cluster_ident, expand):
    cluster = _cluster(cluster_ident, 'nodegroup:get_all')
    where = {'cluster_id': cluster['uuid']}
    if request.args.get('role'):
        where['role'] = request.args['role']
    return paging.listing(
        ctx.store(), 'nodegroup', 'nodegroups',
        lambda r: views.nodegroup(r, cluster['uuid'], expand=expand), where=where,
        path='clusters/%s/nodegroups' % cluster['uuid'],
        extra={'role': where['role']} if 'role' in where else None,
        columns=None if expand else fields.NODEGROUP_LISTED)


@bp.get('')
@bp.get('/')
@query_args.takes('role', *query_args.PAGE)
def list_nodegroups(cluster_ident):
    return _list(cluster_ident, expand=False)


@bp.get('/<ident>')
@query_args.takes()
def show(cluster_ident, ident):
    cluster = _cluster(cluster_ident, 'nodegroup:get')
    group = lifecycle.get_nodegroup(ctx.store(), cluster, ident)
    return jsonify(views.nodegroup(group, cluster['uuid']))


@bp.post('')
@bp.post('/')
def create(cluster_ident):
    store = ctx.store()
    cluster = _cluster(cluster_ident, 'nodegroup:create')
    data = bodies.body('nodegroup')
    if g.version < (1, 14):
        for key in ('node_labels', 'node_taints'):
            data.pop(key, None)
    with store.write(lock=lifecycle.cluster_lock(cluster)):
        group = lifecycle.create_nodegroup(store, cluster, data, g.scope,
                                           settings=ctx.core_settings())
        ctx.executor().submit('nodegroup_create', {
            'cluster_uuid': cluster['uuid'], 'nodegroup': group['uuid']},
            cluster_id=cluster['uuid'], resource_id=group['uuid'])
    resp = jsonify(views.nodegroup(group, cluster['uuid']))
    resp.status_code = 202
    return resp


@bp.patch('/<ident>')
def update(cluster_ident, ident):
    patch = bodies.json_patch()
    store = ctx.store()
    cluster = _cluster(cluster_ident, 'nodegroup:update')
    group = lifecycle.get_nodegroup(store, cluster, ident)
    record = lifecycle.update_nodegroup(
        store, group, lambda latest: jsonpatch.apply_to(fields.NODEGROUP, latest, patch, INTERNAL),
        g.version)
    resp = jsonify(views.nodegroup(record, cluster['uuid']))
    resp.status_code = 202
    return resp


@bp.delete('/<ident>')
def delete(cluster_ident, ident):
    store = ctx.store()
    cluster = _cluster(cluster_ident, 'nodegroup:delete')
    group = lifecycle.get_nodegroup(store, cluster, ident)
    with store.write(lock=lifecycle.cluster_lock(cluster)):
        lifecycle.start_nodegroup_delete(store, cluster, group)
        ctx.executor().submit('nodegroup_delete', {
            'cluster_uuid': cluster['uuid'], 'nodegroup': group['uuid']},
            cluster_id=cluster['uuid'], resource_id=group['uuid'])
    return '', 204
