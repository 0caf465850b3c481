"""/v1/certificates: show the cluster CA, sign a CSR, rotate the CA."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api.blueprints import collection_needs_ident
from api import bodies, policy, query_args, views
from api.core import errors, lifecycle

bp = Blueprint('certificates', __name__, url_prefix='/v1/certificates')
collection_needs_ident(bp, 'cluster_ident', methods=('PATCH',))


def _links(cluster_uuid):
    return views.links('certificates/%s' % cluster_uuid)


def _ca_cert_type(value):
    """The CA a request names: 'ca' unless given; a string of the store's length."""
    if value is None or value == '':
        return 'ca'
    if not isinstance(value, str) or len(value) > 64:
        raise errors.Invalid("Invalid input for field/attribute ca_cert_type. Value: %r. "
                             "Expected a string of at most 64 characters." % (value,))
    return value


@bp.get('/<ident>')
@query_args.takes('ca_cert_type')
def show(ident):
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('certificate:get', cluster)
    lifecycle.check_tls(store, cluster)
    ca = store.certificate(cluster['uuid'], _ca_cert_type(request.args.get('ca_cert_type')))
    return jsonify({'cluster_uuid': cluster['uuid'], 'pem': ca['cert_pem'],
                    'links': _links(cluster['uuid'])})


@bp.post('')
@bp.post('/')
def sign():
    data = bodies.body('certificate')
    for field in ('cluster_uuid', 'csr'):
        if not data.get(field):
            raise errors.Invalid("Invalid input for field/attribute %s. Value: None. "
                                 "Mandatory field missing." % field)
    store = ctx.store()
    try:
        cluster = lifecycle.get_cluster(store, data['cluster_uuid'], g.scope)
    except errors.NotFound as missing:   # Magnum's: a 404 is no answer to a POST
        raise errors.Invalid(str(missing))
    policy.authorize_on('certificate:create', cluster)
    if not isinstance(data['csr'], str):
        raise errors.Invalid("Invalid input for field/attribute csr. Value: %r. Wrong type. "
                             "Expected 'str'." % (data['csr'],))
    pem = lifecycle.sign_csr(store, cluster, data['csr'], _ca_cert_type(data.get('ca_cert_type')))
    resp = jsonify({'cluster_uuid': cluster['uuid'], 'csr': data['csr'], 'pem': pem,
                    'links': _links(cluster['uuid'])})
    resp.status_code = 201
    return resp


@bp.patch('/<ident>')
def rotate(ident):
    store = ctx.store()
    cluster = lifecycle.get_cluster(store, ident, g.scope)
    policy.authorize_on('certificate:rotate_ca', cluster)
    lifecycle.check_tls(store, cluster)
    lifecycle.check_driver_operation(store, cluster, 'ca_rotate')
    with store.write(lock=lifecycle.cluster_lock(cluster)):
        cluster = store.start_operation(cluster['uuid'], 'ca_rotate')
        ctx.executor().submit('ca_rotate', {'cluster_uuid': cluster['uuid']},
                              cluster_id=cluster['uuid'])
    resp = jsonify({'uuid': cluster['uuid']})
    resp.status_code = 202
    return resp
