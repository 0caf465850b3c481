"""/v1/clustertemplates"""

from flask import Blueprint, g, jsonify

from api import app as ctx
from api import jsonpatch, paging, views
from api.core import errors, fields, lifecycle

bp = Blueprint('clustertemplates', __name__, url_prefix='/v1/clustertemplates')

INTERNAL = ('/cluster_distro', '/driver')


@bp.get('')
@bp.get('/')
@bp.get('/detail')
def list_templates():
    return paging.listing(ctx.store(), 'cluster_template', 'clustertemplates', views.template,
                          scope=g.scope.owned_or_public)


@bp.get('/<ident>')
def show(ident):
    return jsonify(views.template(lifecycle.get_template(ctx.store(), ident, g.scope)))


@bp.post('')
@bp.post('/')
def create():
    record = lifecycle.create_template(ctx.store(), ctx.body(), g.scope, ctx.core_settings())
    resp = jsonify(views.template(record))
    resp.status_code = 201
    resp.headers['Location'] = views.links('clustertemplates/%s' % record['uuid'])[0]['href']
    return resp


@bp.patch('/<ident>')
def update(ident):
    store = ctx.store()
    current = lifecycle.get_template(store, ident, g.scope)
    _check_owner(current)
    defaults = fields.defaults(fields.CLUSTER_TEMPLATE)
    patch = ctx.json_document()

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
    _check_owner(current)
    lifecycle.delete_template(store, current)
    return '', 204


def _check_owner(template):
    if not g.scope.is_admin and template['project_id'] != g.scope.project_id:
        raise errors.NotAuthorized("Policy doesn't allow clustertemplate:update to be "
                                   "performed on a template of another project.")
