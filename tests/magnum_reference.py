"""The request set replayed against real Magnum (magnum-api 23, noauth) and this API, and
how two answers are compared: the status, the version headers, the body's shape (its
keys, recursively; list items by the first's) and, for errors, the title and detail."""

import json
import re

import requests

MV = 'OpenStack-API-Version'
# Roles as a Keystone token carries them (the implied ones too: admin > member > reader).
MEMBER = {'X-Project-Id': 'p1', 'X-User-Id': 'u1', 'X-Roles': 'member,reader'}
READER = {'X-Project-Id': 'p1', 'X-User-Id': 'u1', 'X-Roles': 'reader'}
ADMIN = {'X-Project-Id': 'p1', 'X-User-Id': 'u1', 'X-Roles': 'admin,member,reader'}
OTHER = {'X-Project-Id': 'p2', 'X-User-Id': 'u2', 'X-Roles': 'member,reader'}
VERSION_HEADERS = ('OpenStack-API-Minimum-Version', 'OpenStack-API-Maximum-Version',
                   'OpenStack-API-Version')
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'fedora-coreos',
       'external_network_id': 'public', 'keypair_id': 'kp'}
UUID = '8a3c9f04-9a3b-4d0b-8f53-2f0e7a0c1d11'


def mv(version):
    return {MV: 'container-infra %s' % version}


def request_set():
    """(label, method, path, headers, body) - body a dict/list (JSON) or a str (raw)."""
    R = []

    def add(label, method, path, headers=None, body=None, **extra):
        # As the clients send it: python-magnumclient always, openstacksdk on lists
        R.append((label, method, path, dict(MEMBER, Accept='application/json',
                                            **(headers or {})), body, extra))
        if extra.pop('any_accept', False):   # and as curl does: Magnum's words differ
            R.append((label + ' (Accept */*)', method, path,
                      dict(MEMBER, Accept='*/*', **(headers or {})), body, extra))

    # versions and documents
    for path in ('/', '/v1', '/v1/'):
        add('document ' + path, 'GET', path)
    add('unknown path', 'GET', '/v2', any_accept=True)
    add('unknown v1 collection', 'GET', '/v1/nothing', any_accept=True)
    # microversions
    for version in ('1.1', '1.14', 'latest', '1.0', '1.15', '2.0', 'abc', ''):
        add('microversion %r' % version, 'GET', '/v1/clusters', mv(version), any_accept=True)
    add('microversion of another service', 'GET', '/v1/clusters', {MV: 'compute 2.1'},
        any_accept=True)
    # lists: paging and sorting
    for collection in ('clusters', 'clustertemplates', 'federations'):
        add('list ' + collection, 'GET', '/v1/' + collection)
        add('detail ' + collection, 'GET', '/v1/%s/detail' % collection)
        for query in ('limit=0', 'limit=-1', 'limit=abc', 'sort_dir=sideways',
                      'sort_key=nothing', 'marker=nope', 'marker=' + UUID):
            add('%s ?%s' % (collection, query), 'GET', '/v1/%s?%s' % (collection, query))
    # query arguments a call does not take (WSME's 400, checked before any lookup)
    for path in ('clusters?foo=bar', 'clusters?all_tenants=1', 'clusters/detail?foo=1',
                 'clustertemplates?foo=1', 'federations?foo=1', 'clusters/nope?foo=1',
                 'clusters/nope/nodegroups?foo=1', 'certificates/nope?foo=1',
                 'quotas?foo=1', 'stats?foo=1'):
        add('unknown argument: ' + path, 'GET', '/v1/' + path, mv('1.9'))
    # one record that is not there
    for collection in ('clusters', 'clustertemplates', 'federations'):
        for ident in ('nope', UUID):
            add('show missing %s %s' % (collection, ident), 'GET',
                '/v1/%s/%s' % (collection, ident))
            add('delete missing %s %s' % (collection, ident), 'DELETE',
                '/v1/%s/%s' % (collection, ident))
            add('patch missing %s %s' % (collection, ident), 'PATCH',
                '/v1/%s/%s' % (collection, ident),
                body=[{'op': 'replace', 'path': '/name', 'value': 'x'}])
    add('nodegroups of a missing cluster', 'GET', '/v1/clusters/nope/nodegroups')
    add('certificate of a missing cluster', 'GET', '/v1/certificates/nope')
    add('rotate CA of a missing cluster', 'PATCH', '/v1/certificates/nope')
    # template validation (before any lookup)
    for label, body in (
            ('no coe', {'name': 't', 'image_id': 'i', 'external_network_id': 'public'}),
            ('bad coe', dict(TPL, coe='nomad')),
            ('unknown field', dict(TPL, flavour='m1')),
            ('bad bool', dict(TPL, public='perhaps')),
            ('bad int', dict(TPL, docker_volume_size='big')),
            ('negative int', dict(TPL, docker_volume_size=-1)),
            ('long name', dict(TPL, name='x' * 300)),
            ('bad network driver', dict(TPL, network_driver='weave')),
            ('bad server type', dict(TPL, server_type='mainframe')),
            # external_network_id is optional: the image (no Glance here) answers
            ('no external network', {'name': 't', 'coe': 'kubernetes', 'image_id': 'i'}),
            # the template's own fields before the image lookup
            ('bad server type, unknown image', dict(TPL, image_id='i', server_type='x')),
            ('bad volume driver, unknown image', dict(TPL, image_id='i', volume_driver='nfs')),
            ('volume size 0, unknown image', dict(TPL, image_id='i', docker_volume_size=0)),
            ('list body', [TPL]),
    ):
        add('template create: ' + label, 'POST', '/v1/clustertemplates', body=body)
    add('template create: not JSON', 'POST', '/v1/clustertemplates', body='{not json',
        content_type='application/json')
    add('template create: text/plain', 'POST', '/v1/clustertemplates',
        body=json.dumps(TPL), content_type='text/plain')
    # cluster validation (before the template is looked up)
    for label, body in (
            ('no template', {'name': 'c'}),
            ('missing template', {'name': 'c', 'cluster_template_id': 'nope'}),
            ('bad node_count, missing template', {'name': 'c', 'cluster_template_id': 'nope',
                                                  'node_count': -1}),
            ('string node_count', {'name': 'c', 'cluster_template_id': 'nope',
                                   'node_count': 'two'}),
            ('master_count 0', {'name': 'c', 'cluster_template_id': 'nope',
                                'master_count': 0}),
            ('bad name', {'name': '-c', 'cluster_template_id': 'nope'}),
            ('unknown field', {'name': 'c', 'cluster_template_id': 'nope', 'size': 3}),
            ('bad timeout', {'name': 'c', 'cluster_template_id': 'nope',
                             'create_timeout': -5}),
    ):
        add('cluster create: ' + label, 'POST', '/v1/clusters', body=body)
    add('cluster create: reader', 'POST', '/v1/clusters', READER,
        {'name': 'c', 'cluster_template_id': 'nope'})
    # JSON patches
    for label, body in (('not a list', {'op': 'replace'}), ('bad op', [{'op': 'frob',
                                                                        'path': '/name'}]),
                        ('no path', [{'op': 'replace', 'value': 1}])):
        add('patch missing template: ' + label, 'PATCH', '/v1/clustertemplates/nope',
            body=body)
    # actions on a missing cluster
    add('resize missing', 'POST', '/v1/clusters/nope/actions/resize', mv('1.7'),
        {'node_count': 2})
    add('resize below 1.7', 'POST', '/v1/clusters/nope/actions/resize', mv('1.6'),
        {'node_count': 2}, any_accept=True)
    add('upgrade missing', 'POST', '/v1/clusters/nope/actions/upgrade', mv('1.8'),
        {'cluster_template': 'tpl'})
    add('upgrade below 1.8', 'POST', '/v1/clusters/nope/actions/upgrade', mv('1.7'),
        {'cluster_template': 'tpl'}, any_accept=True)
    # stats, quotas, services
    add('stats', 'GET', '/v1/stats', mv('1.4'))
    add('stats below 1.4', 'GET', '/v1/stats', mv('1.3'))
    add('stats of another project', 'GET', '/v1/stats?project_id=p2', mv('1.4'))
    add('stats as admin', 'GET', '/v1/stats', dict(ADMIN, **mv('1.4')))
    add('quotas as member', 'GET', '/v1/quotas', mv('1.9'))
    add('quotas as admin', 'GET', '/v1/quotas', dict(ADMIN, **mv('1.9')))
    add('quotas all tenants', 'GET', '/v1/quotas?all_tenants=1', dict(ADMIN, **mv('1.9')))
    add('quota below 1.9', 'GET', '/v1/quotas', dict(ADMIN, **mv('1.8')), any_accept=True)
    add('quota of p1', 'GET', '/v1/quotas/p1/Cluster', mv('1.9'))
    add('quota create: bad resource', 'POST', '/v1/quotas', dict(ADMIN, **mv('1.9')),
        {'project_id': 'p1', 'resource': 'Pods', 'hard_limit': 5})
    add('mservices as member', 'GET', '/v1/mservices')
    add('mservices detail', 'GET', '/v1/mservices/detail', ADMIN)
    for path in ('/', '/v1/', '/v1/clusters', '/v1/clusters/c1', '/v1/clustertemplates/tpl'):
        add('HEAD ' + path, 'HEAD', path)
    add('mservices record', 'GET', '/v1/mservices/1', ADMIN)
    add('quota of an unknown resource', 'GET', '/v1/quotas/p1/Pods', mv('1.9'))
    add('quota of an unknown resource, as admin', 'GET', '/v1/quotas/p1/Pods',
        dict(ADMIN, **mv('1.9')))
    add("quota of another project's unknown resource", 'GET', '/v1/quotas/p2/Pods', mv('1.9'))
    add('quota delete: not there', 'DELETE', '/v1/quotas/p1/Cluster', dict(ADMIN, **mv('1.9')))
    add('quota update: not there', 'PATCH', '/v1/quotas/p1/Cluster', dict(ADMIN, **mv('1.9')),
        {'project_id': 'p1', 'resource': 'Cluster', 'hard_limit': 5})
    add('sign with an empty body', 'POST', '/v1/certificates', body={})
    add('sign for a missing cluster', 'POST', '/v1/certificates',
        body={'cluster_uuid': UUID, 'csr': 'x'})
    add('resize {} of a missing cluster', 'POST', '/v1/clusters/nope/actions/resize',
        mv('1.7'), {})
    for collection in ('clusters', 'clustertemplates'):
        add('next link of %s detail' % collection, 'GET', '/v1/%s/detail?limit=1' % collection)
    # methods not allowed
    add('PUT a collection', 'PUT', '/v1/clusters', body={}, any_accept=True)
    add('POST a record', 'POST', '/v1/clusters/nope', body={})
    add('DELETE a collection', 'DELETE', '/v1/clustertemplates', any_accept=True)
    return R


def call(base, method, path, headers, body, extra):
    headers = dict(headers)
    if isinstance(body, str):
        headers['Content-Type'] = extra.get('content_type', 'application/json')
        data = body
    elif body is not None:
        headers['Content-Type'] = 'application/json'
        data = json.dumps(body)
    else:
        data = None
    return requests.request(method, base + path, headers=headers, data=data, timeout=120,
                            allow_redirects=False)


def shape(value):
    if isinstance(value, dict):
        return dict((k, shape(v)) for k, v in sorted(value.items()))
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__ if value is not None else None


def _one_of(text):
    """A 'Value should be one of: a, b' list in sorted order: Magnum's is a set's,
    whose order changes from one process to the next."""
    head, sep, tail = (text or '').partition('Value should be one of: ')
    if not sep:
        return text
    return head + sep + ', '.join(sorted(tail.split(', ')))


def _api_named(text):
    """'the requested API <method> is not supported': which of a controller's methods
    Magnum names changes from one run to the next (pecan looks them up in a set's order)."""
    return re.sub(r'the requested API \w+ is', 'the requested API <method> is', text or '')


def answer(resp):
    """What is compared of an answer."""
    try:
        body = resp.json()
    except ValueError:
        body = resp.text[:200]
    out = {'status': resp.status_code,
           'headers': dict((h, resp.headers.get(h)) for h in VERSION_HEADERS)}
    errors = body.get('errors') if isinstance(body, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        error = errors[0]
        out['error'] = {'keys': sorted(error), 'code': error.get('code'),
                        'title': error.get('title'),
                        'detail': _api_named(_one_of(error.get('detail'))),
                        'description': error.get('description')}
    else:
        out['shape'] = shape(body)
    if isinstance(body, dict) and isinstance(body.get('next'), str):
        out['next'] = re.sub(r'^https?://[^/]+', '', body['next'])
    return out


def differences(reference, ours):
    """Where two answers differ (field -> (reference, ours))."""
    found = {}
    for key in sorted(set(reference) | set(ours)):
        if reference.get(key) != ours.get(key):
            found[key] = (reference.get(key), ours.get(key))
    return found


# Records made here (through this API) and copied into the reference's database, so
# that reads and the checks that need a record have the same one on both sides.
SEED_SCRIPT = r'''
import datetime, json, sys
import sqlalchemy as sa
from magnum.db.sqlalchemy import models

def value(column, v):
    if v is not None and isinstance(column.type, sa.DateTime):
        return datetime.datetime.fromisoformat(v).replace(tzinfo=None)
    return v

engine = sa.create_engine(sys.argv[1], connect_args={'timeout': 60})
with engine.begin() as conn:
    for table_name, record in json.load(sys.stdin):
        table = models.Base.metadata.tables[table_name]
        conn.execute(table.insert().values(**dict(
            (c.name, value(c, record[c.name])) for c in table.columns
            if c.name != 'id' and c.name in record)))
'''


def seed_rows(template, cluster, nodegroups):
    """(table, record) pairs for the reference's database, from this API's views."""
    owner = {'project_id': MEMBER['X-Project-Id'], 'user_id': MEMBER['X-User-Id']}
    rows = [('cluster_template', dict(template, driver=template.get('driver') or 'k8s',
                                      **owner))]
    rows.append(('cluster', dict(cluster, **owner)))
    for group in nodegroups:   # Magnum reads a cluster's addresses from its groups
        addresses = cluster['master_addresses' if group['role'] == 'master'
                            else 'node_addresses']
        rows.append(('nodegroup', dict(group, cluster_id=cluster['uuid'],
                                       node_addresses=addresses,
                                       project_id=owner['project_id'])))
    return rows


def seeded_request_set():
    """Requests about the seeded template ``tpl`` and cluster ``c1`` (CREATE_COMPLETE):
    reads, and what is refused about them (nothing here may succeed in changing them:
    the reference has no driver to carry a change out)."""
    R = []

    def add(label, method, path, headers=None, body=None, **extra):
        # As the clients send it: python-magnumclient always, openstacksdk on lists
        R.append((label, method, path, dict(MEMBER, Accept='application/json',
                                            **(headers or {})), body, extra))
        if extra.pop('any_accept', False):   # and as curl does: Magnum's words differ
            R.append((label + ' (Accept */*)', method, path,
                      dict(MEMBER, Accept='*/*', **(headers or {})), body, extra))

    for path in ('/v1/clustertemplates/tpl', '/v1/clustertemplates',
                 '/v1/clustertemplates/detail', '/v1/clusters', '/v1/clusters/detail'):
        add('seeded: GET ' + path, 'GET', path)
    add('seeded: another project GET template', 'GET', '/v1/clustertemplates/tpl', OTHER)
    add('seeded: another project GET cluster', 'GET', '/v1/clusters/c1', OTHER)
    add('seeded: nodegroups', 'GET', '/v1/clusters/c1/nodegroups', mv('1.9'))
    add('seeded: nodegroups below 1.9', 'GET', '/v1/clusters/c1/nodegroups', mv('1.8'))
    add('seeded: a nodegroup below 1.9', 'GET', '/v1/clusters/c1/nodegroups/x', mv('1.8'))
    add('seeded: nodegroups detail', 'GET', '/v1/clusters/c1/nodegroups/detail', mv('1.9'))
    add('seeded: missing nodegroup', 'GET', '/v1/clusters/c1/nodegroups/nope', mv('1.9'))
    add('seeded: delete template in use', 'DELETE', '/v1/clustertemplates/tpl')
    # (Not here: a template's update in use, a valid create - the reference asks Keystone
    # or Glance for them, which it has not; a create's driver checks - it has no driver.)
    add('seeded: patch template unknown attribute', 'PATCH', '/v1/clustertemplates/tpl',
        body=[{'op': 'add', 'path': '/nothing', 'value': 'x'}])
    add('seeded: patch template remove coe', 'PATCH', '/v1/clustertemplates/tpl',
        body=[{'op': 'remove', 'path': '/coe'}])
    add('seeded: patch cluster internal', 'PATCH', '/v1/clusters/c1',
        body=[{'op': 'replace', 'path': '/stack_id', 'value': 'x'}])
    add('seeded: patch cluster negative count', 'PATCH', '/v1/clusters/c1',
        body=[{'op': 'replace', 'path': '/node_count', 'value': -1}])
    add('seeded: resize negative', 'POST', '/v1/clusters/c1/actions/resize', mv('1.7'),
        {'node_count': -1})
    add('seeded: resize missing nodegroup', 'POST', '/v1/clusters/c1/actions/resize',
        mv('1.9'), {'node_count': 2, 'nodegroup': 'nope'})
    add('seeded: upgrade to missing template', 'POST', '/v1/clusters/c1/actions/upgrade',
        mv('1.8'), {'cluster_template': 'nope'})
    # a node group's bounds (Magnum's NodeGroupInvalidInput, a 409, before its conductor)
    for label, body in (('min above max', {'min_node_count': 3, 'max_node_count': 2}),
                        ('count above max', {'node_count': 4, 'max_node_count': 3}),
                        ('min above count', {'node_count': 1, 'min_node_count': 2})):
        add('seeded: nodegroup create, ' + label, 'POST', '/v1/clusters/c1/nodegroups',
            mv('1.9'), dict(body, name='ng'))
    add('seeded: reader deletes cluster', 'DELETE', '/v1/clusters/c1', READER)
    add('seeded: reader patches template', 'PATCH', '/v1/clustertemplates/tpl', READER,
        [{'op': 'replace', 'path': '/name', 'value': 'x'}])
    add('seeded: stats', 'GET', '/v1/stats', mv('1.4'))
    return R
