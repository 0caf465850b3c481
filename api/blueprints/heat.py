"""/heat/v1/<tenant_id>: the Heat API's stack and resource reads, for the node groups'
stacks (api/heat_stacks.py) - what the cluster-autoscaler's magnum provider and
magnum-auto-healer read from Heat. Register this URL as the cloud's ``orchestration``
endpoint where Magnum's Heat is gone (docs, "Autoscaler"). Read-only: a request that
would change a stack is Heat's 405."""

from flask import Blueprint, g, jsonify, request

from api import current as ctx
from api import heat_stacks, policy

bp = Blueprint('heat', __name__, url_prefix='/heat/v1/<tenant_id>')


class StackNotFound(Exception):
    pass


@bp.errorhandler(StackNotFound)
def _not_found(exc):
    """Heat's own 404 body."""
    resp = jsonify({'explanation': 'The resource could not be found.', 'code': 404,
                    'title': 'Not Found',
                    'error': {'message': str(exc), 'type': 'EntityNotFound',
                              'traceback': None}})
    resp.status_code = 404
    return resp


def _groups(tenant_id):
    """The node groups' stacks of project ``tenant_id`` the caller may read."""
    if tenant_id != g.scope.project_id and not g.scope.is_admin:
        return
    base = '%sheat/v1/%s' % (request.host_url, tenant_id)
    store = ctx.store()
    for cluster in store.find('cluster', project_id=tenant_id):
        if not policy.allowed('nodegroup:get', cluster):
            continue
        for group in store.find('nodegroup', cluster_id=cluster['uuid']):
            yield heat_stacks.GroupStacks(cluster, group, base)


def _locate(tenant_id, identity, name=None):
    for stacks in _groups(tenant_id):
        what = stacks.find(identity, name)
        if what is not False:
            return stacks, what
    raise StackNotFound('The Stack (%s) could not be found.' % (name or identity))


# A stack by its identity (id or name, as stacks.Find and stackresources.Find ask) or by
# name and id.
@bp.get('/stacks/<identity>', defaults={'stack_name': None})
@bp.get('/stacks/<stack_name>/<identity>')
def show_stack(tenant_id, identity, stack_name):
    stacks, what = _locate(tenant_id, identity, stack_name)
    return jsonify({'stack': stacks.stack(what)})


@bp.get('/stacks/<identity>/resources', defaults={'stack_name': None})
@bp.get('/stacks/<stack_name>/<identity>/resources')
def list_resources(tenant_id, identity, stack_name):
    stacks, what = _locate(tenant_id, identity, stack_name)
    return jsonify({'resources': stacks.resources(what)})


@bp.get('/stacks/<stack_name>/<stack_id>/resources/<resource_name>')
def get_resource(tenant_id, stack_name, stack_id, resource_name):
    stacks, what = _locate(tenant_id, stack_id, stack_name)
    for resource in stacks.resources(what):
        if resource['resource_name'] == resource_name:
            return jsonify({'resource': resource})
    raise StackNotFound('The Resource (%s) could not be found in Stack %s.'
                        % (resource_name, stack_name))
