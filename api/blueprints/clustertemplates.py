"""/v1/clustertemplates"""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api.blueprints import collection_needs_ident
from api import bodies, jsonpatch, paging, policy, query_args, views
from api.core import errors, fields, lifecycle

bp = Blueprint('clustertemplates', __name__, url_prefix='/v1/clustertemplates')
collection_needs_ident(bp, 'cluster_template_ident')

INTERNAL = ('/cluster_distro', '/driver')
# What Magnum's ClusterTemplatePatchType will not remove (checked before the lookup).
NON_REMOVABLE = tuple('/' + field for field in fields.TEMPLATE_NOT_REMOVABLE)


@bp.get('')
@bp.get('/')
@bp.get('/detail')
@query_args.takes(*query_args.PAGE)
def list_templates():
    detail = request.path.endswith('/detail')
    policy.authorize('clustertemplate:detail' if detail else 'clustertemplate:get_all')
    return paging.listing(ctx.store(), 'cluster_template', 'clustertemplates', views.template,
                          scope=g.scope.owned_or_public,
                          path='clustertemplates' + ('/detail' if detail else ''))


@bp.get('/<ident>')
@query_args.takes()
def show(ident):
    template = lifecycle.get_template(ctx.store(), ident, g.scope)
    if not template['public']:  # a public template is everyone's to read (Magnum)
        policy.authorize_on('clustertemplate:get', template)
    return jsonify(views.template(template))


@bp.post('')
@bp.post('/')
def create():
    data = bodies.body('cluster_template')

    def allowed(record):
        """Magnum's order: the body checked, then the policy, then publishing."""
        policy.authorize('clustertemplate:create')
        if (record['public'] or record['hidden']) and not policy.allowed(
                'clustertemplate:publish'):
            raise errors.NotAuthorized("Not authorized to set public or hidden flag for "
                                       "cluster template.")
    record = lifecycle.create_template(ctx.store(), data, g.scope, ctx.core_settings(),
                                       allowed=allowed)
    resp = jsonify(views.template(record))
    resp.status_code = 201
    resp.headers['Location'] = views.links('clustertemplates/%s' % record['uuid'])[0]['href']
    return resp


@bp.patch('/<ident>')
def update(ident):
    patch = bodies.json_patch(non_removable=NON_REMOVABLE)
    store = ctx.store()
    current = lifecycle.get_template(store, ident, g.scope)
    policy.authorize_on('clustertemplate:update', current)
    defaults = fields.defaults(fields.CLUSTER_TEMPLATE)
    if any(op['path'] in ('/public', '/hidden') for op in patch):
        if not policy.allowed('clustertemplate:publish'):
            raise errors.NotAuthorized("Not authorized to set public or hidden flag for "
                                       "cluster template.")

    def patched(latest):  # applied to the template as it is when written
        doc = jsonpatch.apply(views.template(latest), patch, INTERNAL, defaults)
        doc.pop('links', None)
        return doc

    record = lifecycle.update_template(store, current, patched, g.scope, ctx.core_settings())
    return jsonify(views.template(record))


@bp.delete('/<ident>')
def delete(ident):
    store = ctx.store()
    current = lifecycle.get_template(store, ident, g.scope)
    policy.authorize_on('clustertemplate:delete', current)
    lifecycle.delete_template(store, current)
    return '', 204
