"""/v1/jobs/<uuid>: progress of one job (an extension; Magnum's schema is untouched)."""

from flask import Blueprint, g, jsonify

from api import app as ctx
from api import views
from api.core import errors, jobs

bp = Blueprint('jobs', __name__, url_prefix='/v1/jobs')


@bp.get('/<uuid>')
def show(uuid):
    store = ctx.store()
    records = jobs.Jobs(store)
    job = records.get(uuid)
    if not g.scope.is_admin and not _visible(store, job):
        # Another project's job: as unknown as one that never was.
        raise errors.NotFound("Job %s could not be found." % uuid)
    return jsonify(views.job(job, records.events(uuid)))


def _visible(store, job):
    """Whether the caller's project owns the job's cluster or federation."""
    kind, ident = ('cluster', job['cluster_id']) if job.get('cluster_id') else \
        ('federation', job.get('resource_id'))
    if not ident:
        return False
    try:
        store.get(kind, ident, scope=g.scope.owned, by_name=False)
    except errors.NotFound:
        return False
    return True
