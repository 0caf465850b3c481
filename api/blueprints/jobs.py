"""/v1/jobs/<uuid>: progress of one job (an extension; Magnum's schema is untouched)."""

from flask import Blueprint, g, jsonify

from api import current as ctx
from api import policy, views
from api.core import errors, jobs

bp = Blueprint('jobs', __name__, url_prefix='/v1/jobs')


@bp.get('/<uuid>')
def show(uuid):
    store = ctx.store()
    records = jobs.Jobs(store)
    job = records.get(uuid)
    owner = _owner(store, job)
    if owner is None and not g.scope.is_admin:
        # Another project's job: as unknown as one that never was.
        raise errors.NotFound("Job %s could not be found." % uuid)
    policy.authorize_on('job:get', owner or {})
    return jsonify(views.job(job, records.events(uuid)))


def _owner(store, job):
    """The job's cluster or federation, if the caller's scope holds it, else None."""
    kind, ident = ('cluster', job['cluster_id']) if job.get('cluster_id') else \
        ('federation', job.get('resource_id'))
    if not ident:
        return None
    try:
        return store.get(kind, ident, scope=g.scope.owned, by_name=False)
    except errors.NotFound:
        return None
