"""How each resource looks on the wire: fields per microversion, links, list forms."""

from flask import g, request

from api.core import fields, states

# What a cluster list (not detail) reads of each record (a list's fields are the field
# table's: fields.*_LISTED).
CLUSTER_LIST_COLUMNS = fields.CLUSTER_LISTED + ('stack_id',)
JOB_FIELDS = ('uuid', 'cluster_id', 'resource_id', 'operation', 'status', 'status_reason',
              'tasks_done', 'tasks_failed', 'current_task', 'created_at',
              'started_at', 'finished_at')
EVENT_FIELDS = ('event', 'task', 'host', 'failed', 'message', 'created_at')


def links(path):
    base = request.host_url
    return [{'href': '%sv1/%s' % (base, path), 'rel': 'self'},
            {'href': '%s%s' % (base, path), 'rel': 'bookmark'}]


def template(record):
    data = fields.project(fields.CLUSTER_TEMPLATE, record)
    data['links'] = links('clustertemplates/%s' % record['uuid'])
    return data


def _stack_field(data, record):
    if g.version >= (1, 13):
        data['cluster_id'] = record.get('stack_id')
        data.pop('stack_id', None)
    else:
        data['stack_id'] = record.get('stack_id')


def cluster(record, faults=None, expand=True):
    data = fields.project(fields.CLUSTER if expand else fields.CLUSTER_LISTED, record)
    _stack_field(data, record)
    if expand and record.get('status') in states.FAILED:
        data['faults'] = faults or {}
    data['links'] = links('clusters/%s' % record['uuid'])
    return data


def _group_stack(data, record):
    """A node group's stack is itself (its Heat view, api/heat_stacks.py): the
    autoscaler's magnum provider finds the group's servers from it."""
    if 'stack_id' in data:
        data['stack_id'] = record.get('stack_id') or record['uuid']
    return data


def nodegroup(record, cluster_uuid, expand=True):
    if not expand:
        return _group_stack(fields.project(fields.NODEGROUP_LISTED, record), record)
    data = _group_stack(fields.project(fields.NODEGROUP, record, extra=('id',)), record)
    if g.version < (1, 14):
        data.pop('node_labels', None)
        data.pop('node_taints', None)
    data['links'] = links('clusters/%s/nodegroups/%s' % (cluster_uuid, record['uuid']))
    return data


def federation(record, expand=True):
    data = fields.project(fields.FEDERATION if expand else fields.FEDERATION_LISTED, record)
    data['links'] = links('federations/%s' % record['uuid'])
    return data


def quota(record):
    return fields.project(fields.QUOTA, record)


def job(record, events=None):
    data = fields.project(JOB_FIELDS, record)
    data['links'] = links('jobs/%s' % record['uuid'])
    if events is not None:
        data['events'] = [fields.project(EVENT_FIELDS, e) for e in events]
    return data
