"""/v1/jobs/<uuid>: progress of one job (an extension; Magnum's schema is untouched)."""

from flask import Blueprint, g, jsonify

from api import app as ctx
from api import views
from api.core import jobs, lifecycle

bp = Blueprint('jobs', __name__, url_prefix='/v1/jobs')


@bp.get('/<uuid>')
def show(uuid):
    store = ctx.store()
    records = jobs.Jobs(store)
    job = records.get(uuid)
    if job.get('cluster_id'):
        try:
            lifecycle.get_cluster(store, job['cluster_id'], g.scope)
        except Exception:
            if not g.scope.is_admin:
                raise
    return jsonify(views.job(job, records.events(uuid)))
