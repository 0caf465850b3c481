"""/v1/clusters, its actions (resize, upgrade) and its jobs."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api.blueprints import collection_needs_ident
from api import bodies, credentials, jsonpatch, microversion, paging, policy, query_args, views
from api.core import errors, fields, jobs, labels, lifecycle, model

bp = Blueprint('clusters', __name__, url_prefix='/v1/clusters')
collection_needs_ident(bp, 'cluster_ident')

INTERNAL = ('/stack_id', '/cluster_id', '/status', '/status_reason', '/api_address',
            '/node_addresses', '/master_addresses', '/coe_version', '/container_version',
            '/faults', '/labels_overridden', '/labels_added', '/labels_skipped')
# What Magnum's ClusterPatchType refuses before the cluster is looked up.
MAGNUM_INTERNAL = ('/api_address', '/ca_cert_ref', '/cluster_id', '/etcd_ca_cert_ref',
                   '/front_proxy_ca_cert_ref', '/magnum_cert_ref', '/master_addresses',
                   '/node_addresses', '/stack_id')
NON_REMOVABLE = ('/cluster_template_id',)
# A patch of only these is Magnum's cluster:update_health_status.
HEALTH_PATHS = ('/health_status', '/health_status_reason')


def accepted(uuid):
    resp = jsonify({'uuid': uuid})
    resp.status_code = 202
    return resp


def _check_node_count(count):
    if count == 0 and g.version < (1, 10):
        raise errors.Invalid("Resizing a nodegroup to zero is not supported in the "
                             "provided microversion.")


def _list(expand):
    policy.authorize('cluster:detail' if expand else 'cluster:get_all')
    return paging.listing(ctx.store(), 'cluster', 'clusters',
                          lambda r: views.cluster(r, expand=expand), scope=g.scope.owned,
                          path='clusters' + ('/detail' if expand else ''),
                          columns=None if expand else views.CLUSTER_LIST_COLUMNS)


@bp.get('')
@bp.get('/')
@query_args.takes(*query_args.PAGE)
def list_clusters():
    return _list(expand=False)


@bp.get('/detail')
@query_args.takes(*query_args.PAGE)
def detail():
    return _list(expand=True)


@bp.get('/<ident>')
@query_args.takes()
def show(ident):
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('cluster:get', cluster)
    return jsonify(views.cluster(cluster, lifecycle.cluster_faults(store, cluster)))


@bp.post('')
@bp.post('/')
def create():
    data = bodies.body('cluster')

    def allowed(given):
        """Magnum's order: the body, its template, then the version's and the policy's."""
        if 'node_count' in given:
            _check_node_count(given['node_count'])
        policy.authorize('cluster:create')
    store = ctx.store()
    cluster = lifecycle.record_cluster(store, data, g.scope, ctx.core_settings(),
                                       allowed=allowed)
    if credentials.enabled(ctx.settings()):
        try:
            credentials.issue(ctx.settings(), store, request.headers.get('X-Auth-Token'),
                              g.scope, cluster['uuid'], conn=ctx.caller_connection(),
                              roles=credentials.caller_roles(request.headers))
        except Exception:
            store.purge_cluster(cluster['uuid'])  # nothing of the refused create stays
            raise
    try:
        ctx.executor().submit('create', {'cluster_uuid': cluster['uuid']},
                              cluster_id=cluster['uuid'], timeout=cluster['create_timeout'])
    except Exception:
        store.purge_cluster(cluster['uuid'])  # no job carries it out: nothing of it stays
        raise
    return accepted(cluster['uuid'])


@bp.patch('/<ident>')
def update(ident):
    patch = bodies.json_patch(MAGNUM_INTERNAL, NON_REMOVABLE)
    store = ctx.store()
    current = lifecycle.get_cluster(store, ident, g.scope)
    health_only = isinstance(patch, list) and patch and all(
        isinstance(op, dict) and op.get('path') in HEALTH_PATHS for op in patch)
    policy.authorize_on('cluster:update_health_status' if health_only else 'cluster:update',
                        current)
    patched = jsonpatch.apply_to(fields.CLUSTER, current, patch, INTERNAL)
    new_count = fields.coerce(fields.CLUSTER, 'node_count', patched.get('node_count'))
    if new_count is not None:
        _check_node_count(new_count)
    if isinstance(patched.get('labels'), str):
        patched['labels'] = labels.parse(patched['labels'])
    with store.write(lock=lifecycle.cluster_lock(current)):
        cluster, group = lifecycle.patch_cluster(store, current, patched)
        if group is not None:
            ctx.executor().submit_resize(cluster, group, group_target(new_count), [])
    return accepted(cluster['uuid'])


def group_target(new_count):
    """``remove /node_count`` resets the default worker group to the default of 1."""
    return fields.CLUSTER['node_count'][1] if new_count is None else new_count


@bp.delete('/<ident>')
def delete(ident):
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('cluster:delete', cluster)
    executor = ctx.executor()
    # The status, the cancel of what runs and the delete job: one transaction.
    with store.write(lock=lifecycle.cluster_lock(cluster)):
        current = store.get('cluster', cluster['uuid'], by_name=False)
        if executor.delete_pending(cluster_id=current['uuid']):
            return '', 204  # already being deleted: nothing more to queue
        current = lifecycle.start_delete(store, current)
        executor.cancel_cluster_jobs(current['uuid'])
        executor.submit('delete', {'cluster_uuid': current['uuid']},
                        cluster_id=current['uuid'])
    return '', 204


@bp.post('/<ident>/actions/resize')
def resize(ident):
    microversion.require((1, 7), 'resize')
    # The body first, as Magnum's WSME reads it before the cluster is looked up
    data = bodies.body('cluster_resize_req')
    unknown = set(data) - {'node_count', 'nodes_to_remove', 'nodegroup'}
    if unknown:
        raise errors.Invalid("Unknown attribute for argument cluster: %s"
                             % ', '.join(sorted(unknown)))
    if data.get('node_count') is None:
        raise model.mandatory_missing('node_count')
    node_count = fields.coerce(fields.CLUSTER, 'node_count', data.get('node_count'))
    nodes_to_remove = data.get('nodes_to_remove') or []
    if not isinstance(nodes_to_remove, list) or not all(
            isinstance(node, str) for node in nodes_to_remove):
        raise errors.Invalid("nodes_to_remove must be a list of node ids or names.")
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('cluster:resize', cluster)
    _check_node_count(node_count)
    with store.write(lock=lifecycle.cluster_lock(cluster)):
        cluster, group = lifecycle.start_resize(store, cluster, node_count,
                                                data.get('nodegroup'), nodes_to_remove)
        ctx.executor().submit_resize(cluster, group, node_count, nodes_to_remove)
    return accepted(cluster['uuid'])


@bp.post('/<ident>/actions/upgrade')
def upgrade(ident):
    microversion.require((1, 7), 'upgrade')
    if g.version < (1, 8):
        raise errors.NotSupported("Cluster upgrade is not supported in the provided "
                                  "microversion.")
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('cluster:upgrade', cluster)
    data = bodies.body('cluster_upgrade_req')
    if not data.get('cluster_template'):
        raise errors.Invalid("Invalid input for field/attribute cluster_template. "
                             "Value: None. Mandatory field missing.")
    batch = data.get('max_batch_size', 1)
    batch = fields.coerce(fields.CLUSTER, 'node_count', batch)
    with store.write(lock=lifecycle.cluster_lock(cluster)):
        cluster, template, group = lifecycle.start_upgrade(
            store, cluster, data['cluster_template'], g.scope, batch, data.get('nodegroup'))
        ctx.executor().submit('upgrade', {
            'cluster_uuid': cluster['uuid'], 'cluster_template': template['uuid'],
            'max_batch_size': batch, 'nodegroup': group['uuid'] if group else None},
            cluster_id=cluster['uuid'], resource_id=template['uuid'])
    return accepted(cluster['uuid'])


@bp.get('/<ident>/jobs')
def cluster_jobs(ident):
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('job:get', cluster)
    records = jobs.Jobs(store).for_cluster(cluster['uuid'])
    if request.args.get('active') in ('1', 'true'):
        records = [j for j in records if j['status'] in jobs.ACTIVE]
    return jsonify({'jobs': [views.job(j) for j in records]})
