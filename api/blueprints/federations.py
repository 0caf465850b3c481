"""/v1/federations (not in python-magnumclient; same conventions as clusters)."""

from flask import Blueprint, g, jsonify

from api import current as ctx
from api.blueprints import collection_needs_ident
from api import bodies, jsonpatch, paging, policy, query_args, views
from api.core import federations, fields, operations

bp = Blueprint('federations', __name__, url_prefix='/v1/federations')
collection_needs_ident(bp, 'federation_ident')

INTERNAL = ('/hostcluster_id', '/status', '/status_reason', '/name')


def _list(expand):
    policy.authorize('federation:detail' if expand else 'federation:get_all')
    return paging.listing(ctx.store(), 'federation', 'federations',
                          lambda r: views.federation(r, expand), scope=g.scope.owned,
                          path='federations' + ('/detail' if expand else ''),
                          columns=None if expand else fields.FEDERATION_LISTED)


@bp.get('')
@bp.get('/')
@query_args.takes(*query_args.PAGE)
def list_federations():
    return _list(False)


@bp.get('/detail')
@query_args.takes(*query_args.PAGE)
def detail():
    return _list(True)


@bp.get('/<ident>')
@query_args.takes()
def show(ident):
    federation = federations.get_federation(ctx.store(), ident, g.scope)
    policy.authorize_on('federation:get', federation)
    return jsonify(views.federation(federation))


def _may_act_on(cluster):
    """The spec's special policy: a federation acts on its host and on each member it
    joins or unjoins, so the caller must be allowed to update each of them too."""
    policy.authorize_on('cluster:update', cluster)


def _submit(operation, federation):
    ctx.executor().submit(operation, {
        'federation_uuid': federation['uuid'],
        'federation_operation': operations.record(operation).action},
        resource_id=federation['uuid'])
    resp = jsonify({'uuid': federation['uuid']})
    resp.status_code = 202
    return resp


@bp.post('')
@bp.post('/')
def create():
    policy.authorize('federation:create')
    data = bodies.body('federation')
    with ctx.store().write():  # the record and its job commit together
        federation = federations.create_federation(ctx.store(), data, g.scope, _may_act_on)
        return _submit('federation_create', federation)


@bp.patch('/<ident>')
def update(ident):
    patch = bodies.json_patch()   # what is fixed is refused once the federation is found
    store = ctx.store()
    current = federations.get_federation(store, ident, g.scope)
    policy.authorize_on('federation:update', current)
    patched = jsonpatch.apply_to(fields.FEDERATION, current, patch, INTERNAL)
    with store.write(lock=federations.federation_lock(current)):
        federation = federations.update_federation(store, current, patched, g.scope,
                                                   _may_act_on)
        return _submit('federation_update', federation)


@bp.delete('/<ident>')
def delete(ident):
    store = ctx.store()
    current = federations.get_federation(store, ident, g.scope)
    policy.authorize_on('federation:delete', current)
    with store.write(lock=federations.federation_lock(current)):
        if ctx.executor().delete_pending(resource_id=current['uuid']):
            return '', 204  # already being deleted: nothing more to queue
        federation = federations.start_federation_operation(
            store, store.get('federation', current['uuid'], by_name=False), 'delete')
        _submit('federation_delete', federation)
    return '', 204


# The federation spec's phase 4: clusters that are not Magnum's, given as a kubeconfig
# (kept sealed, never shown), joined and unjoined through member_ids like the others.
def _external_view(record):
    return dict((k, record[k]) for k in ('uuid', 'name', 'server', 'federation_id',
                                         'created_at'))


@bp.get('/<ident>/external_clusters')
def list_external_clusters(ident):
    federation = federations.get_federation(ctx.store(), ident, g.scope)
    policy.authorize_on('federation:get', federation)
    return jsonify({'external_clusters': [
        _external_view(r) for r in ctx.store().external_clusters(federation['uuid'])]})


@bp.post('/<ident>/external_clusters')
def add_external_cluster(ident):
    federation = federations.get_federation(ctx.store(), ident, g.scope)
    policy.authorize_on('federation:update', federation)
    record = federations.add_external_cluster(ctx.store(), federation, bodies.body())
    resp = jsonify(_external_view(record))
    resp.status_code = 201
    return resp


@bp.delete('/<ident>/external_clusters/<external>')
def remove_external_cluster(ident, external):
    federation = federations.get_federation(ctx.store(), ident, g.scope)
    policy.authorize_on('federation:update', federation)
    federations.remove_external_cluster(ctx.store(), federation, external)
    return '', 204
