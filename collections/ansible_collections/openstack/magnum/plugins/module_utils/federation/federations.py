# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Federations over the store, shared by the API and the modules: create, update
(members joining and leaving, each checked and locked as a host is), their operations
in the cluster state machine, and their external members."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    fields, lifecycle, model, states)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid, NotFound)
from ansible_collections.openstack.magnum.plugins.module_utils.federation import external_clusters


def federation_lock(federation):
    return 'federation-%s' % federation['uuid']


def get_federation(store, ident, scope=None):
    return store.get('federation', ident, scope=lifecycle.scope_filter(scope))


def _federation_cluster(store, ident, scope, authorize=None):
    """A cluster a federation is to be hosted on or to join: one the caller may act on
    (``authorize``, the API's policy), Kubernetes, its last operation complete."""
    cluster = lifecycle.get_cluster(store, ident, scope)
    if authorize:
        authorize(cluster)
    template = store.get('cluster_template', cluster['cluster_template_id'], by_name=False)
    model.check_federable(cluster, template)
    return cluster


def create_federation(store, data, scope, authorize=None):
    """Record a federation to create. ``authorize(cluster)`` (the API's policy) is asked
    for its host and every member: a federation acts on each."""
    fed = model.build_federation(data, project_id=scope.project_id)
    host = _federation_cluster(store, fed['hostcluster_id'], scope, authorize)
    fed['hostcluster_id'] = host['uuid']
    fed['member_ids'] = _unique([_federation_cluster(store, ident, scope, authorize)['uuid']
                                 for ident in fed['member_ids'] or []])
    with store.write() as conn:
        _hold_federated(store, [host['uuid']] + fed['member_ids'])
        return store.create('federation', fed, conn=conn)


def _hold_federated(store, uuids):
    """Within the caller's transaction, take the locks of the clusters a federation is
    to name and check them again: a delete of one of them (which takes its lock, then
    looks for the federations naming it: start_delete) either came first - the cluster
    is no longer *_COMPLETE, refused here - or waits and then sees the federation."""
    with store.write(lock=[lifecycle.cluster_lock({'uuid': uuid}) for uuid in uuids]) as conn:
        for uuid in uuids:
            cluster = store.get('cluster', uuid, conn=conn, by_name=False)
            template = store.get('cluster_template', cluster['cluster_template_id'],
                                 conn=conn, by_name=False)
            model.check_federable(cluster, template)


def _unique(uuids):
    return [uuid for index, uuid in enumerate(uuids) if uuid not in uuids[:index]]


def start_federation_operation(store, federation, operation, values=None):
    """Federations follow the cluster state machine for their own operations."""
    states.check_can_start(operation, federation['status'], federation['name'])
    update = dict(values or {})
    update.update(status=states.running_status(operation), status_reason=None)
    return store.update('federation', federation['uuid'], update,
                        expect_status=federation['status'])


def update_federation(store, current, patched, scope, authorize=None):
    """Only the members and properties of a federation change (the rest is fixed). A
    cluster joining (``authorize``d, as at create) is checked as a host is; one leaving
    is ``authorize``d only (the federation unjoins it whatever its state)."""
    updatable = fields.FEDERATION_UPDATABLE
    other = [k for k in patched if k not in updatable and patched.get(k) != current.get(k)]
    if other:
        raise Invalid("Only %s of a federation can be updated." % ' and '.join(updatable))
    values = {}
    for key in updatable:
        if patched.get(key) != current.get(key):
            values[key] = fields.coerce(fields.FEDERATION, key, patched[key])
    if 'member_ids' in values:
        members = []
        externals = external_clusters.by_ident(store.external_clusters(current['uuid']))
        for ident in values['member_ids']:
            external = externals.get(ident)
            if external is not None:
                ident = external['uuid']   # registered with the federation: joined as given
            elif ident not in current['member_ids']:
                uuid = lifecycle.get_cluster(store, ident, scope)['uuid']
                if uuid not in current['member_ids']:
                    ident = _federation_cluster(store, uuid, scope, authorize)['uuid']
            members.append(ident)   # a joined one stays whatever it is doing now
        values['member_ids'] = _unique(members)
        joining = [uuid for uuid in values['member_ids'] if uuid not in current['member_ids']
                   and uuid not in externals]
        if joining:
            _hold_federated(store, joining)
        for uuid in current['member_ids']:
            if uuid not in values['member_ids'] and authorize:
                try:
                    authorize(store.get('cluster', uuid, by_name=False))
                except NotFound:
                    pass  # a member gone meanwhile: nothing of it to guard
    return start_federation_operation(store, current, 'update', values)


def federation_member(store, federation, ident, scope=None):
    """A member of ``federation`` (or one to be): one of its external clusters (uuid or
    name) as a member cluster, else a cluster."""
    external = store.external_cluster(federation['uuid'], ident, missing_ok=True)
    if external is not None:
        return external_clusters.as_member(external)
    return lifecycle.get_cluster(store, ident, scope)


def add_external_cluster(store, federation, data):
    """Register an external member with ``federation`` (a name and a kubeconfig, kept
    sealed): it is joined by adding it to member_ids."""
    if not isinstance(data, dict) or sorted(data) != ['kubeconfig', 'name']:
        raise Invalid("An external cluster is given as exactly a name and a kubeconfig.")
    name = external_clusters.check_name(data['name'])
    config = external_clusters.parse(data['kubeconfig'])
    if federation['status'] == 'DELETE_IN_PROGRESS':
        raise Conflict("Federation %s is being deleted." % federation['name'])
    return store.add_external_cluster(federation['uuid'], name, external_clusters.server(
        config), external_clusters.dumps(config))


def remove_external_cluster(store, federation, ident):
    """Forget an external cluster that is not a member (unjoin it first)."""
    external = store.external_cluster(federation['uuid'], ident)
    with store.write(lock=federation_lock(federation)) as conn:
        current = store.get('federation', federation['uuid'], conn=conn, by_name=False)
        if external['uuid'] in (current['member_ids'] or []):
            raise Conflict("External cluster %s is a member of federation %s: unjoin it "
                           "first." % (external['name'], current['name']))
        store.forget_external_clusters(current['uuid'], [external['uuid']], conn=conn)
