"""The OpenAPI 3 document of the Magnum v1 surface this API serves (/v1/openapi.json):
paths, methods, request bodies with each field's type and limits (from the collection's
field tables, the one place they are defined), status codes and Magnum's error body.
The fuzz test (tests/test_fuzz.py) generates its requests from it."""

from api import limits
from api.core import fields, store

ERROR = {'$ref': '#/components/schemas/Error'}
REF_TEMPLATE = '#/components/schemas/%s'
IDENT = {'name': 'ident', 'in': 'path', 'required': True, 'schema': {'type': 'string'}}
CLUSTER_IDENT = dict(IDENT, name='cluster_ident')
NODEGROUP_IDENT = dict(IDENT, name='nodegroup_ident')


def _field(table, name):
    kind = table[name][0]
    if kind == fields.STR:
        schema = {'type': 'string', 'maxLength': fields.MAX_STR}
        if name in fields.UUID_FIELDS:
            schema['format'] = 'uuid'
    elif kind == fields.INT:
        low = fields.MINIMUMS.get(name, fields.INT_RANGE[0])
        high = fields.MAX_NODES if name in fields.NODE_COUNT_FIELDS else fields.INT_RANGE[1]
        schema = {'type': 'integer', 'minimum': low, 'maximum': high}
    elif kind == fields.BOOL:
        schema = {'type': 'boolean'}
    elif kind == fields.DICT:
        schema = {'type': 'object', 'maxProperties': fields.MAX_LABELS,
                  'additionalProperties': {'type': 'string',
                                           'maxLength': fields.MAX_LABEL_VALUE}}
    else:
        schema = {'type': 'array', 'maxItems': fields.MAX_LIST,
                  'items': {'type': 'string', 'maxLength': fields.MAX_STR}}
    return schema


def _body(table, names, required=()):
    return {'type': 'object', 'additionalProperties': False, 'required': list(required),
            'properties': dict((name, _field(table, name)) for name in names)}


def _resource(table):
    return {'type': 'object', 'properties': dict((name, _field(table, name)) for name in table)}


def _schemas():
    patch_op = {'type': 'object', 'required': ['op', 'path'], 'properties': {
        'op': {'type': 'string', 'enum': ['add', 'replace', 'remove']},
        'path': {'type': 'string', 'pattern': r'^(/[\w-]+)+$', 'maxLength': 255},
        'value': {}}}
    error = {'type': 'object', 'required': ['errors'], 'properties': {'errors': {
        'type': 'array', 'minItems': 1, 'items': {
            'type': 'object', 'required': ['status', 'code', 'title', 'detail'],
            'properties': {'request_id': {'type': 'string'}, 'code': {'type': 'string'},
                           'status': {'type': 'integer'}, 'title': {'type': 'string'},
                           'detail': {'type': 'string'}, 'links': {'type': 'array'}}}}}}
    return {
        'Error': error,
        'JsonPatch': {'type': 'array', 'minItems': 1, 'maxItems': 50, 'items': patch_op},
        'ClusterTemplate': _resource(fields.CLUSTER_TEMPLATE),
        'ClusterTemplateCreate': _body(fields.CLUSTER_TEMPLATE, fields.TEMPLATE_CREATE_INPUT,
                                       fields.TEMPLATE_MANDATORY),
        'Cluster': _resource(fields.CLUSTER),
        'ClusterCreate': _body(fields.CLUSTER, fields.CLUSTER_CREATE_INPUT,
                               ['cluster_template_id']),
        'Nodegroup': _resource(fields.NODEGROUP),
        'NodegroupCreate': _body(fields.NODEGROUP, fields.NODEGROUP_CREATE_INPUT, ['name']),
        'Federation': _resource(fields.FEDERATION),
        'FederationCreate': _body(fields.FEDERATION, ('name', 'hostcluster_id', 'member_ids',
                                                      'properties', 'uuid'),
                                  ['hostcluster_id']),
        'Resize': {'type': 'object', 'additionalProperties': False, 'required': ['node_count'],
                   'properties': {'node_count': _field(fields.CLUSTER, 'node_count'),
                                  'nodes_to_remove': _field(fields.FEDERATION, 'member_ids'),
                                  'nodegroup': {'type': 'string', 'maxLength': 255}}},
        'Upgrade': {'type': 'object', 'additionalProperties': False,
                    'required': ['cluster_template'],
                    'properties': {'cluster_template': {'type': 'string', 'maxLength': 255},
                                   'max_batch_size': {'type': 'integer', 'minimum': 1,
                                                      'maximum': fields.MAX_NODES},
                                   'nodegroup': {'type': 'string', 'maxLength': 255}}},
        'CertificateSign': {'type': 'object', 'additionalProperties': False,
                            'required': ['cluster_uuid', 'csr'], 'properties': {
                                'cluster_uuid': {'type': 'string', 'maxLength': 255},
                                'csr': {'type': 'string', 'maxLength': 16384},
                                'ca_cert_type': {'type': 'string', 'maxLength': 64}}},
        'Quota': _resource(fields.QUOTA),
        'QuotaCreate': _body(fields.QUOTA, ('project_id', 'resource', 'hard_limit'),
                             ['project_id', 'resource', 'hard_limit']),
        'QuotaUpdate': _body(fields.QUOTA, ('hard_limit',), ['hard_limit']),
    }


def _json(schema_name):
    return {'required': True, 'content': {'application/json': {
        'schema': {'$ref': REF_TEMPLATE % schema_name}}}}


def _answers(ok, *errors, body=None):
    out = {str(ok): {'description': 'done', 'content': {'application/json': {
        'schema': body or {'type': 'object'}}}} if ok != 204 else {'description': 'done'}}
    for status in (400, 403, 404, 406, 409, 413) if not errors else errors:
        out[str(status)] = {'description': 'Magnum error body',
                            'content': {'application/json': {'schema': ERROR}}}
    return out


def _listing(kind, summary):
    keys = list(store.sortable(kind))
    return {'summary': summary, 'parameters': [
        {'name': 'limit', 'in': 'query', 'schema': {'type': 'integer', 'minimum': 1}},
        {'name': 'marker', 'in': 'query', 'schema': {'type': 'string', 'maxLength': 255}},
        {'name': 'sort_key', 'in': 'query', 'schema': {'type': 'string', 'enum': keys}},
        {'name': 'sort_dir', 'in': 'query',
         'schema': {'type': 'string', 'enum': ['asc', 'desc']}}],
        'responses': _answers(200)}


def _crud(collection, kind, schema, create_status, patch_status, extra_params=()):
    """The paths of a resource: list, detail, create, show, JSON-patch, delete."""
    params = list(extra_params)
    one = [IDENT] + params
    return {
        '/v1/%s' % collection: {
            'parameters': params,
            'get': _listing(kind, 'List (paged, sorted)'),
            'post': {'summary': 'Create', 'requestBody': _json(schema + 'Create'),
                     'responses': _answers(create_status)}},
        '/v1/%s/detail' % collection: {'parameters': params,
                                       'get': _listing(kind, 'List with every field')},
        '/v1/%s/{ident}' % collection: {
            'parameters': one,
            'get': {'summary': 'Show', 'responses': _answers(200)},
            'patch': {'summary': 'Update (JSON patch)', 'requestBody': _json('JsonPatch'),
                      'responses': _answers(patch_status)},
            'delete': {'summary': 'Delete', 'responses': _answers(204)}},
    }


def document():
    paths = {
        '/': {'get': {'summary': 'API versions', 'responses': {'200': {
            'description': 'versions'}}}},
        '/v1': {'get': {'summary': 'The v1 document', 'responses': {'200': {
            'description': 'links'}}}},
    }
    paths.update(_crud('clustertemplates', 'cluster_template', 'ClusterTemplate', 201, 200))
    paths.update(_crud('clusters', 'cluster', 'Cluster', 202, 202))
    paths.update(_crud('federations', 'federation', 'Federation', 202, 202))
    groups = _crud('clusters/{cluster_ident}/nodegroups', 'nodegroup', 'Nodegroup', 202, 202,
                   extra_params=[CLUSTER_IDENT])
    paths.update(groups)
    paths.update({
        '/v1/clusters/{ident}/actions/resize': {'parameters': [IDENT], 'post': {
            'summary': 'Resize', 'requestBody': _json('Resize'), 'responses': _answers(202)}},
        '/v1/clusters/{ident}/actions/upgrade': {'parameters': [IDENT], 'post': {
            'summary': 'Upgrade', 'requestBody': _json('Upgrade'),
            'responses': _answers(202)}},
        '/v1/clusters/{ident}/jobs': {'parameters': [IDENT], 'get': {
            'summary': "The cluster's jobs (extension)", 'responses': _answers(200)}},
        '/v1/certificates': {'post': {'summary': 'Sign a CSR with the cluster CA',
                                      'requestBody': _json('CertificateSign'),
                                      'responses': _answers(201)}},
        '/v1/certificates/{ident}': {'parameters': [IDENT], 'get': {
            'summary': "The cluster's CA", 'responses': _answers(200)}, 'patch': {
            'summary': 'Rotate the CA', 'responses': _answers(202)}},
        '/v1/quotas': {
            'get': {'summary': 'Quotas', 'parameters': [
                {'name': 'all_tenants', 'in': 'query', 'schema': {'type': 'boolean'}}],
                'responses': _answers(200)},
            'post': {'summary': 'Set a quota', 'requestBody': _json('QuotaCreate'),
                     'responses': _answers(201)}},
        '/v1/quotas/{project_id}/{resource}': {
            'parameters': [dict(IDENT, name='project_id'), dict(IDENT, name='resource')],
            'get': {'summary': 'A quota', 'responses': _answers(200)},
            'patch': {'summary': 'Change a quota', 'requestBody': _json('QuotaUpdate'),
                      'responses': _answers(202)},
            'delete': {'summary': 'Remove a quota', 'responses': _answers(204)}},
        '/v1/stats': {'get': {'summary': 'Cluster and node counts', 'parameters': [
            {'name': 'project_id', 'in': 'query', 'schema': {'type': 'string'}},
            {'name': 'type', 'in': 'query', 'schema': {'type': 'string'}}],
            'responses': _answers(200)}},
        '/v1/mservices': {'get': {'summary': 'The services that run jobs',
                                  'responses': _answers(200)}},
        '/v1/federations/{ident}/external_clusters': {'parameters': [IDENT], 'get': {
            'summary': "The federation's external clusters (extension; no kubeconfig)",
            'responses': _answers(200)}, 'post': {
            'summary': 'Register an external cluster by its kubeconfig (extension)',
            'requestBody': {'required': True, 'content': {'application/json': {'schema': {
                'type': 'object', 'required': ['name', 'kubeconfig'],
                'additionalProperties': False, 'properties': {
                    'name': {'type': 'string', 'maxLength': 63},
                    'kubeconfig': {'type': 'string'}}}}}},
            'responses': _answers(201)}},
        '/v1/federations/{ident}/external_clusters/{external}': {
            'parameters': [IDENT, dict(IDENT, name='external')], 'delete': {
                'summary': 'Forget an external cluster that is not a member (extension)',
                'responses': _answers(204)}},
        '/v1/jobs/{ident}': {'parameters': [IDENT], 'get': {
            'summary': 'A job and its events (extension)', 'responses': _answers(200)}},
    })
    return {
        'openapi': '3.0.3',
        'info': {'title': 'openstack.magnum: Magnum container-infra API v1',
                 'version': '1.14',
                 'description': "Magnum's v1 API. Send OpenStack-API-Version: "
                                "container-infra <1.1..1.14|latest>. Bodies are at most "
                                "%d bytes (413 beyond), JSON nested at most %d deep."
                                % (limits.MAX_BODY_BYTES, limits.MAX_DEPTH)},
        'paths': paths,
        'components': {'schemas': _schemas()},
    }
