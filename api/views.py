"""How each resource looks on the wire: fields per microversion, links, list forms."""

from flask import g, request

from api.core import fields, states

CLUSTER_LIST_FIELDS = (
    'uuid', 'name', 'cluster_template_id', 'keypair', 'docker_volume_size', 'labels',
    'node_count', 'status', 'master_flavor_id', 'flavor_id', 'create_timeout',
    'master_count', 'health_status')
NODEGROUP_LIST_FIELDS = ('uuid', 'name', 'flavor_id', 'node_count', 'role', 'is_default',
                         'image_id', 'status', 'stack_id')
FEDERATION_LIST_FIELDS = ('uuid', 'name', 'hostcluster_id', 'member_ids', 'status',
                          'status_reason', 'properties')


def links(path):
    base = request.host_url
    return [{'href': '%sv1/%s' % (base, path), 'rel': 'self'},
            {'href': '%s%s' % (base, path), 'rel': 'bookmark'}]


def template(record):
    data = dict((k, record.get(k)) for k in fields.CLUSTER_TEMPLATE)
    data['links'] = links('clustertemplates/%s' % record['uuid'])
    return data


def _stack_field(data, record):
    if g.version >= (1, 13):
        data['cluster_id'] = record.get('stack_id')
        data.pop('stack_id', None)
    else:
        data['stack_id'] = record.get('stack_id')


def cluster(record, faults=None, expand=True):
    keys = fields.CLUSTER if expand else CLUSTER_LIST_FIELDS
    data = dict((k, record.get(k)) for k in keys)
    _stack_field(data, record)
    if expand and record.get('status') in states.FAILED:
        data['faults'] = faults or {}
    data['links'] = links('clusters/%s' % record['uuid'])
    return data


def nodegroup(record, cluster_uuid, expand=True):
    if not expand:
        return dict((k, record.get(k)) for k in NODEGROUP_LIST_FIELDS)
    data = dict((k, record.get(k)) for k in fields.NODEGROUP)
    data['id'] = record['id']
    if g.version < (1, 14):
        data.pop('node_labels', None)
        data.pop('node_taints', None)
    data['links'] = links('clusters/%s/nodegroups/%s' % (cluster_uuid, record['uuid']))
    return data


def federation(record, expand=True):
    keys = fields.FEDERATION if expand else FEDERATION_LIST_FIELDS
    data = dict((k, record.get(k)) for k in keys)
    data['links'] = links('federations/%s' % record['uuid'])
    return data


def quota(record):
    return dict((k, record.get(k)) for k in fields.QUOTA)


def job(record, events=None):
    data = dict((k, record.get(k)) for k in (
        'uuid', 'cluster_id', 'resource_id', 'operation', 'status', 'status_reason',
        'tasks_done', 'tasks_failed', 'tasks_total', 'current_task', 'created_at',
        'started_at', 'finished_at'))
    data['links'] = links('jobs/%s' % record['uuid'])
    if events is not None:
        data['events'] = [dict((k, e.get(k)) for k in (
            'event', 'task', 'host', 'failed', 'message', 'created_at')) for e in events]
    return data
