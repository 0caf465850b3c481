"""GET / and GET /v1/: version discovery (no auth)."""

from flask import Blueprint, jsonify, request

from api import microversion

bp = Blueprint('root', __name__)

RESOURCES = ('clustertemplates', 'clusters', 'quotas', 'certificates', 'mservices', 'stats',
             'federations', 'nodegroups', 'credentials')
# Node groups live under their cluster: Magnum's links carry the placeholder as it writes it.
RESOURCE_PATHS = {'nodegroups': 'clusters/{cluster_id}/nodegroups'}


@bp.get('/')
def versions():
    return jsonify({
        'name': 'OpenStack Magnum API',
        'description': 'Magnum is an OpenStack project which aims to provide container '
                       'cluster management.',
        'versions': [{'id': 'v1', 'links': [{'href': request.host_url + 'v1/', 'rel': 'self'}],
                      'status': 'CURRENT',
                      'max_version': microversion.fmt(microversion.MAX_VERSION),
                      'min_version': microversion.fmt(microversion.MIN_VERSION)}],
    })


@bp.get('/v1')
@bp.get('/v1/')
def v1():
    base = request.host_url
    data = {
        'id': 'v1',
        'media_types': [{'base': 'application/json',
                         'type': 'application/vnd.openstack.magnum.v1+json'}],
        'links': [{'href': base + 'v1/', 'rel': 'self'},
                  {'href': 'http://docs.openstack.org/developer/magnum/dev/api-spec-v1.html',
                   'type': 'text/html', 'rel': 'describedby'}],
    }
    for name in RESOURCES:
        data[name] = [{'href': '%sv1/%s' % (base, RESOURCE_PATHS.get(name, name + '/')),
                       'rel': 'self'},
                      {'href': '%s%s' % (base, RESOURCE_PATHS.get(name, name + '/')),
                       'rel': 'bookmark'}]
    return jsonify(data)


@bp.get('/healthcheck')
def healthcheck():
    return 'OK', 200, {'Content-Type': 'text/plain'}


@bp.get('/v1/openapi.json')
def openapi_document():
    """The OpenAPI document of this v1 API (no auth, as the version documents)."""
    from api import openapi
    return jsonify(openapi.document())
