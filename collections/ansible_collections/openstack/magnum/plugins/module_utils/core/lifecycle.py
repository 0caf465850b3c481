# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lifecycle steps over the store, shared by the API and the modules.

Each function validates with ``model``, checks ``states`` and writes through
``store``, so a REST request and a playbook run leave the same records.
Nothing here runs a playbook: callers queue or run one afterwards.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    drivers, fields, images, labels, model, states, tls)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, NotFound)

DEFAULT_PROJECT = 'default'


class Scope(object):
    """Who is asking: project, user, admin flag. Builds store filters."""

    def __init__(self, project_id=DEFAULT_PROJECT, user_id=None, is_admin=False):
        self.project_id = project_id
        self.user_id = user_id
        self.is_admin = is_admin

    def owned(self, table):
        if self.is_admin:
            return None
        return table.c.project_id == self.project_id

    def owned_or_public(self, table):
        if self.is_admin:
            return None
        return (table.c.project_id == self.project_id) | (table.c.public.is_(True))


def cluster_lock(cluster):
    """The lock of a cluster's status: an operation's start and its job, a delete's
    checks (store.write takes several locks in one order)."""
    return 'cluster-%s' % cluster['uuid']


def scope_filter(scope, public=False):
    """The store filter of what ``scope`` may see (every record for an admin)."""
    if scope is None or scope.is_admin:
        return None
    return scope.owned_or_public if public else scope.owned


# ---------------------------------------------------------------- templates

def get_template(store, ident, scope=None):
    return store.get('cluster_template', ident, scope=scope_filter(scope, public=True))


def template_in_use(store, template_uuid):
    return bool(store.find('cluster', cluster_template_id=template_uuid))


def _checks(settings):
    """The provider's checks the caller gives (settings['checks'], a ProviderChecks), if
    any."""
    return settings.get('checks')


def create_template(store, data, scope, settings=None, allowed=None):
    """Validate and record a template; ``allowed(record)`` (the API's policy) is asked
    once the body is found good, as Magnum asks."""
    settings = settings or {}
    checks = _checks(settings)
    record = model.build_template(
        data, project_id=scope.project_id, user_id=scope.user_id,
        image_catalog=checks.image_catalog() if checks else None,
        cluster_user_trust=settings.get('cluster_user_trust', False))
    labels.check_controller_credential(record['labels'],
                                       settings.get('application_credential_only'))
    if allowed is not None:
        allowed(record)
    if checks is not None:
        checks.template(record)
    return store.create('cluster_template', record)


def update_template(store, current, patched, scope, settings=None):
    """Make template ``current`` what ``patched`` (a full record, or a function of the
    record as it is when written) says: atomic against concurrent updates."""
    settings = settings or {}
    make = patched if callable(patched) else (lambda _latest: patched)

    def change(latest):
        wanted = make(latest)
        checks = _checks(settings)
        image_changed = wanted.get('image_id') != latest.get('image_id')
        record = model.update_template(
            latest, wanted, template_in_use(store, latest['uuid']),
            image_catalog=checks.image_catalog(image_changed) if checks else None,
            cluster_user_trust=settings.get('cluster_user_trust', False))
        if record.get('labels') != latest.get('labels'):
            labels.check_controller_credential(record['labels'],
                                               settings.get('application_credential_only'))
        values = dict((k, v) for k, v in record.items() if v != latest.get(k))
        if checks is not None:
            checks.template(record, image_changed=image_changed, changed=bool(values))
        return values

    return store.modify('cluster_template', current['uuid'], change)


def delete_template(store, template):
    store.delete_template(template['uuid'])


# ----------------------------------------------------------------- clusters

def get_cluster(store, ident, scope=None):
    return store.get('cluster', ident, scope=scope_filter(scope))


def record_cluster(store, data, scope, settings=None, allowed=None):
    """Validate a create request and insert the cluster + default node groups.
    ``allowed(given)`` (the API's version and policy checks) is asked once the body
    and its template are found good, as Magnum asks."""
    settings = settings or {}
    # The body's own fields first (Magnum's order): a bad field is a 400 about that
    # field whatever the template.
    given = fields.take(fields.CLUSTER, data, allowed=fields.CLUSTER_CREATE_INPUT,
                        argument='cluster')
    model.check_cluster_fields(given)
    if not data.get('cluster_template_id'):
        raise model.mandatory_missing('cluster_template_id')
    try:
        template = get_template(store, data['cluster_template_id'], scope)
    except NotFound as exc:
        raise Invalid(str(exc))  # Magnum answers 400 for an unknown template here
    if allowed is not None:
        allowed(given)
    cluster, groups = model.build_cluster(
        data, template, project_id=scope.project_id, user_id=scope.user_id,
        cluster_user_trust=settings.get('cluster_user_trust', False))
    labels.check_controller_credential(cluster['labels'],
                                       settings.get('application_credential_only'))
    cluster['driver'] = template['driver']
    checks = _checks(settings)
    if checks is not None:
        checks.cluster(cluster, template, groups)
    return store.create_cluster(cluster, groups,
                                check_quota=settings.get('check_quota', True))


def cluster_driver(store, cluster, roles_dir=None):
    """The cluster's template and driver. A cluster whose template is gone (a store from
    before templates were deleted only when unused) still has its driver, recorded at
    create, and a template of that driver's defaults, so it can be deleted."""
    try:
        template = store.get('cluster_template', cluster['cluster_template_id'], by_name=False)
    except NotFound:
        if not cluster.get('driver'):
            raise
        driver = drivers.by_name(cluster['driver'])
        template = fields.with_defaults(fields.CLUSTER_TEMPLATE, {
            'uuid': cluster['cluster_template_id'], 'name': 'deleted template',
            'coe': driver.coe, 'cluster_distro': driver.os_distros[0],
            'server_type': driver.server_types[0], 'driver': driver.name,
            'keypair_id': cluster.get('keypair'), 'project_id': cluster.get('project_id')})
        return template, driver.as_dict(roles_dir)
    driver = drivers.find(template['coe'], template['server_type'], template['cluster_distro'],
                          template.get('labels'))
    return template, driver.as_dict(roles_dir)


def patch_cluster(store, current, patched):
    """Apply a JSON-patched cluster.

    A changed ``node_count`` starts a resize of the default worker group
    (refused while another operation runs); health fields are written as
    they are. Returns ``(cluster, resized_group)``; the group is None when no
    resize started.
    """
    record, changed = model.update_cluster(current, patched)
    group = None
    if record['node_count'] != current['node_count']:
        current, group = start_resize(store, current, record['node_count'])
    health = dict((k, record[k]) for k in ('health_status', 'health_status_reason')
                  if k in changed)
    if health:
        current = store.update('cluster', current['uuid'], health)
    return current, group


def default_worker_group(store, cluster):
    for group in store.find('nodegroup', cluster_id=cluster['uuid']):
        if group['is_default'] and group['role'] != model.RESERVED_ROLE:
            return group
    raise NotFound("Cluster %s has no default worker nodegroup." % cluster['uuid'])


def start_resize(store, cluster, node_count, nodegroup=None, nodes_to_remove=None):
    group = get_nodegroup(store, cluster, nodegroup) if nodegroup else \
        default_worker_group(store, cluster)
    model.check_resize(cluster, group, node_count, nodes_to_remove)
    started = store.start_operation(cluster['uuid'], 'resize')
    store.update('nodegroup', group['uuid'], {'status': states.UPDATE_IN_PROGRESS,
                                              'status_reason': None})
    return started, group


def check_upgrade(store, cluster, template_ident, scope, max_batch_size=None,
                  nodegroup=None):
    """Check an upgrade of ``cluster`` to template ``template_ident`` (API and
    playbook path alike). Returns ``(template, nodegroup or None)``."""
    current = store.get('cluster_template', cluster['cluster_template_id'], by_name=False)
    new = get_template(store, template_ident, scope)
    model.check_upgrade(cluster, current, new, max_batch_size)
    group = get_nodegroup(store, cluster, nodegroup) if nodegroup else None
    return new, group


def start_upgrade(store, cluster, template_ident, scope, max_batch_size=None,
                  nodegroup=None):
    new, group = check_upgrade(store, cluster, template_ident, scope, max_batch_size,
                               nodegroup)
    # The template's delete takes this lock too (Store.delete_template): it either
    # happened before (NotFound here) or sees this upgrade's job, recorded by the caller
    # in this transaction with the template as its resource_id.
    with store.write(lock='template-%s' % new['uuid']) as conn:
        store.get('cluster_template', new['uuid'], conn=conn, by_name=False)
        started = store.start_operation(cluster['uuid'], 'upgrade')
    return started, new, group


def start_delete(store, cluster):
    model.check_member_delete(cluster, store.find('federation'))
    return store.start_operation(cluster['uuid'], 'delete')


def set_facts(store, cluster_uuid, facts):
    """Record what a provider or driver found out: the cluster's fields among
    ``allowed``, and ``nodegroup_nodes`` (group uuid -> its nodes, each ``name``,
    ``address`` and, once made, ``id``): every node group's ``node_addresses`` and the
    nodes a resize's nodes_to_remove may name."""
    allowed = ('api_address', 'node_addresses', 'master_addresses', 'coe_version',
               'container_version', 'discovery_url', 'stack_id', 'health_status',
               'health_status_reason', 'node_count', 'master_count', 'facts',
               'nodegroup_nodes')
    values = dict((k, v) for k, v in (facts or {}).items() if k in allowed)
    unknown = sorted(set(facts or {}) - set(allowed))
    if unknown:
        raise Invalid("Unknown cluster facts: %s." % ', '.join(unknown))
    if 'nodegroup_nodes' in values:
        _set_group_nodes(store, cluster_uuid, values.pop('nodegroup_nodes') or {})
    if values:
        return store.update('cluster', cluster_uuid, values)
    return store.get('cluster', cluster_uuid, by_name=False)


def _set_group_nodes(store, cluster_uuid, by_group):
    for group in store.find('nodegroup', cluster_id=cluster_uuid):
        nodes = [n for n in by_group.get(group['uuid']) or [] if isinstance(n, dict)]
        values = {'node_addresses': [n['address'] for n in nodes if n.get('address')],
                  'nodes': [dict((k, n[k]) for k in ('name', 'id', 'address') if n.get(k))
                            for n in nodes]}
        if any(values[k] != group.get(k) for k in values):
            store.update('nodegroup', group['uuid'], values)


def cluster_faults(store, cluster):
    if cluster['status'] not in states.FAILED:
        return {}
    faults = dict((g['name'], g['status_reason']) for g in
                  store.find('nodegroup', cluster_id=cluster['uuid'])
                  if g.get('status') in states.FAILED and g.get('status_reason'))
    if not faults and cluster.get('status_reason'):
        faults['cluster'] = cluster['status_reason']
    return faults


# -------------------------------------------------------------- node groups

def get_nodegroup(store, cluster, ident):
    return store.get('nodegroup', ident, parent=cluster['uuid'])


def create_nodegroup(store, cluster, data, scope, start=True, settings=None):
    """Record a node group; with ``start`` also move the cluster to UPDATE_IN_PROGRESS.

    Both happen in one transaction after the state-machine check, so a busy
    cluster never gets a half-recorded group.
    """
    template = store.get('cluster_template', cluster['cluster_template_id'], by_name=False)
    group = model.build_nodegroup(
        data, cluster, template, project_id=cluster['project_id'],
        cluster_user_trust=(settings or {}).get('cluster_user_trust', False))
    if store.find('nodegroup', cluster_id=cluster['uuid'], name=group['name']):
        raise Conflict("A node group with name %s already exists in the cluster %s."
                       % (group['name'], cluster['name']))
    with store.write(lock='cluster-%s' % cluster['uuid']) as conn:
        current = store.get('cluster', cluster['uuid'], conn=conn, by_name=False)
        states.check_can_start('nodegroup_create', current['status'], current['name'])
        if start:
            store.update('cluster', cluster['uuid'], {
                'status': states.running_status('nodegroup_create'), 'status_reason': None},
                conn=conn, expect_status=current['status'])
        return store.create('nodegroup', group, conn=conn)


def start_nodegroup_delete(store, cluster, group):
    model.check_nodegroup_delete(group)
    started = store.start_operation(cluster['uuid'], 'nodegroup_delete')
    store.update('nodegroup', group['uuid'], {'status': states.DELETE_IN_PROGRESS,
                                              'status_reason': None})
    return started


def update_nodegroup(store, group, patched, microversion=(1, 14)):
    """As update_template, for a node group (``patched``: a record or a function)."""
    make = patched if callable(patched) else (lambda _latest: patched)

    def change(latest):
        record = model.update_nodegroup(latest, make(latest), microversion)
        return dict((k, v) for k, v in record.items() if v != latest.get(k))

    return store.modify('nodegroup', group['uuid'], change)


# ------------------------------------------------------------ certificates

def ensure_ca(store, cluster, ca_cert_type='ca', rotate=False):
    """Create (or with ``rotate`` replace) the cluster CA. Returns (changed, cert)."""
    if rotate or store.certificate(cluster['uuid'], ca_cert_type, missing_ok=True) is None:
        cert, key = tls.create_ca('%s %s CA' % (cluster['name'], ca_cert_type))
        changed = store.save_certificate(cluster['uuid'], cert, key, ca_cert_type,
                                         replace=rotate)
        return changed, store.certificate(cluster['uuid'], ca_cert_type)
    return False, store.certificate(cluster['uuid'], ca_cert_type)


PENDING_SUFFIX = '.next'


def stage_ca_rotation(store, cluster, ca_cert_type='ca'):
    """A new CA kept beside the current one until the driver has re-issued
    the nodes' certificates from it (see ``promote_ca_rotation``)."""
    check_tls(store, cluster)
    cert, key = tls.create_ca('%s %s CA' % (cluster['name'], ca_cert_type))
    store.save_certificate(cluster['uuid'], cert, key, ca_cert_type + PENDING_SUFFIX,
                           replace=True)
    return store.certificate(cluster['uuid'], ca_cert_type + PENDING_SUFFIX)


def promote_ca_rotation(store, cluster, ca_cert_type='ca'):
    """Make the staged CA the cluster's CA; old client certificates stop verifying."""
    pending = store.certificate(cluster['uuid'], ca_cert_type + PENDING_SUFFIX)
    store.save_certificate(cluster['uuid'], pending['cert_pem'], pending['key_pem'],
                           ca_cert_type, replace=True)
    store.delete_certificates(cluster['uuid'], ca_cert_type=ca_cert_type + PENDING_SUFFIX)
    return store.certificate(cluster['uuid'], ca_cert_type)


def check_tls(store, cluster):
    template = store.get('cluster_template', cluster['cluster_template_id'], by_name=False)
    if template.get('tls_disabled'):
        raise Invalid("Certificates of cluster %s are not available: TLS is disabled in its "
                      "cluster template." % cluster['uuid'])


def sign_csr(store, cluster, csr, ca_cert_type='ca'):
    check_tls(store, cluster)
    ca = store.certificate(cluster['uuid'], ca_cert_type)
    return tls.sign_csr(ca['cert_pem'], ca['key_pem'], csr)


# ------------------------------------------------------------------- stats

def stats(store, project_id=None):
    clusters = store.find('cluster', project_id=project_id) if project_id else \
        store.find('cluster')
    nodes = 0
    for cluster in clusters:
        nodes += sum(g['node_count'] or 0 for g in
                     store.find('nodegroup', cluster_id=cluster['uuid']))
    return {'clusters': len(clusters), 'nodes': nodes}


# ------------------------------------------------- operation start and end

def check_driver_operation(store, cluster, operation):
    """Refuse (400) an operation the cluster's driver cannot carry out, before anything
    changes (API and playbooks alike). A delete is never refused, nor held up by a
    cluster whose driver cannot be told any more."""
    if operation == 'delete':
        return
    try:
        _template, driver = cluster_driver(store, cluster)
    except NotFound:
        return
    drivers.by_name(driver['name']).check_operation(operation)


def begin_operation(store, cluster, operation, started_by_job=False, scope=None, **args):
    """Start ``operation`` unless the API already did (``started_by_job``): the checks
    and the state change the API makes when it accepts the operation, in one place for
    every entry point (the API, ``ansible-playbook``, AWX). ``args``: the operation's
    own (resize: node_count, nodegroup, nodes_to_remove; upgrade: cluster_template,
    max_batch_size, nodegroup; nodegroup_delete: nodegroup)."""
    if started_by_job:
        if cluster['status'] != states.running_status(operation):
            raise Conflict("Cluster %s is %s, not %s: its %s job no longer owns it."
                           % (cluster['name'], cluster['status'],
                              states.running_status(operation), operation))
        return False, cluster
    return True, start_operation(store, cluster, operation, scope, **args)


def start_operation(store, cluster, operation, scope=None, node_count=None, nodegroup=None,
                    nodes_to_remove=None, cluster_template=None, max_batch_size=None,
                    nodegroup_fields=None, settings=None):
    """Check ``operation`` on ``cluster`` as the API does and move the cluster to its
    running status, with the cluster's lock (the API's requests take it too). A
    nodegroup_create given ``nodegroup_fields`` records the group with the start, in one
    transaction, as the API's POST does."""
    check_driver_operation(store, cluster, operation)
    if operation == 'nodegroup_create' and nodegroup_fields is not None:
        create_nodegroup(store, cluster, nodegroup_fields, scope, start=True,
                         settings=settings)
        return store.get('cluster', cluster['uuid'], by_name=False)
    with store.write(lock=cluster_lock(cluster)):
        current = store.get('cluster', cluster['uuid'], by_name=False)
        if operation == 'resize':
            return start_resize(store, current, node_count, nodegroup, nodes_to_remove)[0]
        if operation == 'upgrade':
            if not cluster_template:
                raise Invalid("cluster_template (the template to upgrade to) is required to "
                              "start an upgrade.")
            return start_upgrade(store, current, cluster_template, scope, max_batch_size,
                                 nodegroup)[0]
        if operation == 'delete':
            return start_delete(store, current)
        if operation == 'nodegroup_delete':
            if not nodegroup:
                raise Invalid("nodegroup (the node group to delete) is required.")
            group = get_nodegroup(store, current, nodegroup)
            return start_nodegroup_delete(store, current, group)
        if operation == 'ca_rotate':
            check_tls(store, current)
        return store.start_operation(current['uuid'], operation)


def _group_updates(store, cluster, operation, ok, reason, nodegroup, node_count):
    groups = store.find('nodegroup', cluster_id=cluster['uuid'])
    for group in groups:
        target = nodegroup is not None and group['uuid'] == nodegroup['uuid']
        if operation == 'create' and group['is_default']:
            status = states.final_status('create', ok)
        elif target and operation == 'nodegroup_create':
            status = states.final_status('create', ok)
        elif target and operation == 'nodegroup_delete':
            if ok:
                store.delete('nodegroup', group['uuid'])
                continue
            status = states.DELETE_FAILED
        elif target or (states.is_in_progress(group.get('status'))
                        and operation not in ('create', 'delete')):
            status = states.final_status('update', ok)
        else:
            continue
        values = {'status': status, 'status_reason': None if ok else reason}
        if ok and target and node_count is not None:
            values['node_count'] = node_count
        store.update('nodegroup', group['uuid'], values)


def _upgrade_group_images(store, cluster, template_id, group):
    """After an upgrade, the node groups (the one upgraded, or all) are on the new
    template's image, save those given an image of their own (images.upgrade_image)."""
    old = store.get('cluster_template', cluster['cluster_template_id'], by_name=False)
    new = store.get('cluster_template', template_id, by_name=False)
    for each in store.find('nodegroup', cluster_id=cluster['uuid']):
        if group is not None and each['uuid'] != group['uuid']:
            continue
        image = images.upgrade_image(each, old, new)
        if image != each.get('image_id'):
            store.update('nodegroup', each['uuid'], {'image_id': image})


def end_operation(store, cluster, operation, ok, reason=None, facts=None, nodegroup=None,
                  node_count=None, template_id=None):
    """Write the final status of ``operation`` (and of the groups it touched).

    Only from the status the operation set: a cluster a delete took over is
    never moved back by the job it superseded. A successful delete removes
    the records.
    """
    running = states.running_status(operation)
    if cluster['status'] != running:
        raise Conflict("Cluster %s is %s, not %s: refusing to end %s over another operation."
                       % (cluster['name'], cluster['status'], running, operation))
    if ok and operation == 'delete':
        store.purge_cluster(cluster['uuid'])
        return None
    group = get_nodegroup(store, cluster, nodegroup) if nodegroup else None
    if group is None and operation == 'resize' and node_count is not None:
        group = default_worker_group(store, cluster)
    _group_updates(store, cluster, operation, ok, reason, group, node_count)
    values = dict(facts or {})
    if ok:
        if group is not None and group['is_default'] and group['role'] != model.RESERVED_ROLE \
                and node_count is not None:
            values['node_count'] = node_count
        if template_id:
            values['cluster_template_id'] = template_id
            _upgrade_group_images(store, cluster, template_id, group)
    if values:
        set_facts(store, cluster['uuid'], dict((k, v) for k, v in values.items()
                                               if k != 'cluster_template_id'))
        if 'cluster_template_id' in values:
            store.update('cluster', cluster['uuid'],
                         {'cluster_template_id': values['cluster_template_id']})
    if reason is None:
        reason = '%s completed successfully' % operation.replace('_', ' ').capitalize() if ok \
            else '%s failed' % operation
    return store.update('cluster', cluster['uuid'], {
        'status': states.final_status(operation, ok), 'status_reason': reason},
        expect_status=running)
