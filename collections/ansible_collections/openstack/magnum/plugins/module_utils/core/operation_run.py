# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of a lifecycle operation from a playbook: its start and its end.

roles/cluster_operation starts the run (``start``: the record, the state machine, the CA,
what the steps read), loops over the plan's steps (core/operations.py) and ends it
(``end``), each a single task of the module openstack.magnum.cluster_operation.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    fields, jobs, lifecycle, operations, states)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, MagnumError, NotSupported)


def check_job(store, job_uuid, cluster):
    """Refuse (409) a run whose API job is no longer running: a cancelled or superseded
    job's playbook must not touch the cluster."""
    if not job_uuid:
        return
    job = jobs.Jobs(store).get(job_uuid)
    if job['status'] != jobs.RUNNING:
        raise Conflict("Job %s is %s (%s): this run no longer owns cluster %s."
                       % (job['uuid'], job['status'], job.get('status_reason'),
                          cluster['name']))


def check_start(store, cluster, operation, scope=None, job_uuid=None, cluster_template=None,
                max_batch_size=None, nodegroup=None):
    """What check mode asks of a start, changing nothing: the state machine's word, and
    an upgrade's own checks unless the API's job already made them."""
    states.check_can_start(operation, cluster['status'], cluster['name'])
    if operation == 'upgrade' and cluster_template and not job_uuid:
        lifecycle.check_upgrade(store, cluster, cluster_template, scope, max_batch_size,
                                nodegroup)


def _group_acted_on(groups, ident):
    """The node group an operation acts on: the one ``ident`` names (uuid, then name),
    else, when none is named, the default worker group; {} when there is none."""
    if ident:
        found = ([g for g in groups if g.get('uuid') == ident]
                 + [g for g in groups if g.get('name') == ident])
    else:
        found = [g for g in groups if g.get('is_default') and g.get('role') != 'master']
    return dict(found[0]) if found else {}


def start(store, cluster, operation, provider, coe=True, scope=None, job_uuid=None,
          check_mode=False, where=None, group='', **args):
    """Start one run of ``operation`` on ``cluster`` (its record) on ``provider`` (its
    descriptor, providers/contract.py) and read what its steps need, in one call: the job
    check, the start (lifecycle.begin_operation: the API's checks and state change, unless
    the API's job already made them), the driver, the step plan and the roles it lacks,
    the cluster's CA (made at create, staged at ca_rotate). ``args``: the
    operation's own (node_count, nodegroup, nodes_to_remove, cluster_template,
    max_batch_size, nodegroup_fields); ``group``: the name of the node group the run acts
    on ('' for the whole cluster), which it ends with.

    Once started, whatever fails (a CA that cannot be made, a driver or provider whose
    roles are not installed) ends the operation *_FAILED with that reason before the
    error is raised: a run never leaves its cluster *_IN_PROGRESS.

    Returns {'changed', 'cluster', 'cluster_template', 'target_template', 'driver',
    'nodegroups', 'nodegroup' (the name acted on, or ''), 'nodegroup_record', 'plan',
    'missing_roles', 'built'}; in check mode nothing is written."""
    check_job(store, job_uuid, cluster)
    if check_mode:
        check_start(store, cluster, operation, scope, job_uuid, args.get('cluster_template'),
                    args.get('max_batch_size'), args.get('nodegroup'))
        changed = not job_uuid
    else:
        changed, cluster = lifecycle.begin_operation(
            store, cluster, operation, started_by_job=bool(job_uuid), scope=scope, **args)
    try:
        run = _read(store, cluster, operation, provider, coe, scope, group,
                    args.get('cluster_template'), check_mode, where)
    except Exception as exc:
        if not check_mode:
            reason = str(exc) if isinstance(exc, MagnumError) else (
                'The %s could not start: %s' % (operation.replace('_', ' '), type(exc).__name__))
            lifecycle.end_operation(store, cluster, operation, False, reason=reason,
                                    nodegroup=group or None)
        raise
    ca_changed = run.pop('ca_changed')
    run['changed'] = changed or ca_changed
    return run


def _read(store, cluster, operation, provider, coe, scope, group, target, check_mode, where):
    template, driver = lifecycle.cluster_driver(store, cluster)
    target_template = (lifecycle.get_template(store, target, scope)
                       if operation == 'upgrade' else template)
    groups = [dict(g) for g in store.find('nodegroup', cluster_id=cluster['uuid'])]
    steps = operations.plan(driver, operation, provider, coe)
    built = any(cluster.get(f) for f in ('api_address', 'master_addresses', 'node_addresses'))
    missing = operations.missing_roles(
        (driver['roles'] if coe else []) + steps['provider_roles'], where)
    if missing and not (operation == 'delete' and not built):
        raise NotSupported(
            "Cluster type (%s, %s, %s) is not supported here: driver %s on provider %s is "
            "not installed (missing roles: %s)."
            % (template['server_type'], template['cluster_distro'], template['coe'],
               driver['name'], provider.name, ', '.join(missing)))
    ca_changed = False
    if not check_mode and operation == 'create' and not template.get('tls_disabled') \
            and store.certificate(cluster['uuid'], 'ca', missing_ok=True) is None:
        lifecycle.ensure_ca(store, cluster)
        ca_changed = True
    elif not check_mode and operation == 'ca_rotate':
        lifecycle.stage_ca_rotation(store, cluster)
        ca_changed = True
    return {
        'cluster': fields.project(fields.CLUSTER, cluster),
        'cluster_template': fields.project(fields.CLUSTER_TEMPLATE, template),
        'target_template': fields.project(fields.CLUSTER_TEMPLATE, target_template),
        'driver': driver, 'nodegroups': groups, 'nodegroup': group,
        'nodegroup_record': _group_acted_on(groups, group),
        'plan': steps, 'missing_roles': missing, 'built': built, 'ca_changed': ca_changed}


def end(store, cluster, operation, ok, job_uuid=None, reason=None, facts=None,
        nodegroup=None, node_count=None, cluster_template=None):
    """End the run of ``operation`` on ``cluster``: a ca_rotate that succeeded makes the
    staged CA the cluster's first; then the final status (lifecycle.end_operation, with
    the facts the steps reported). Returns the cluster's record (None after a delete)."""
    check_job(store, job_uuid, cluster)
    if ok and operation == 'ca_rotate':
        lifecycle.promote_ca_rotation(store, cluster)
    return lifecycle.end_operation(
        store, cluster, operation, ok, reason=reason, facts=facts, nodegroup=nodegroup or None,
        node_count=node_count if operation == 'resize' else None,
        template_id=cluster_template if operation == 'upgrade' else None)
