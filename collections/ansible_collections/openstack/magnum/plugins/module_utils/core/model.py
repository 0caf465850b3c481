# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resource rules: defaults and validation of templates, clusters, node groups,
federations and quotas. Pure functions over dicts; the store persists them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import random
import re
import uuid as uuidlib

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    driver_spec, drivers, fields, images, labels as labels_mod, node_values, registries, states)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Conflict, Invalid)

CLUSTER_NAME_RE = re.compile(r'^[a-zA-Z][a-zA-Z0-9_.-]*$')
CLUSTER_NAME_MAX = 242
NAME_MAX = 255
RESERVED_ROLE = 'master'
DEFAULT_NODEGROUPS = ('default-master', 'default-worker')
TAINT_EFFECTS = ('NoSchedule', 'PreferNoSchedule', 'NoExecute')
_WORDS = ('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota',
          'kappa', 'lambda', 'mu', 'nu', 'xi', 'omicron', 'pi', 'rho', 'sigma', 'tau',
          'upsilon', 'phi', 'chi', 'psi', 'omega')


def new_uuid():
    return str(uuidlib.uuid4())


def generate_name(kind):
    """Magnum-style generated names: "pi-13-model", "gamma-7-cluster"."""
    return '%s-%d-%s' % (random.choice(_WORDS), random.randint(1, 99), kind)


def mandatory_missing(field):
    return Invalid("Invalid input for field/attribute %s. Value: 'None'. "
                   "Mandatory field missing." % field)


def _check_choice(field, value, allowed, what):
    """Magnum's validators' words: the list it expects ends with 'unspecified'."""
    if value is not None and value not in allowed:
        said = tuple(allowed) + (() if 'unspecified' in allowed else ('unspecified',))
        raise Invalid("%s type %s is not supported, expecting a %s %s."
                      % (what, value, '/'.join(said), what.lower()))


# ---------------------------------------------------------------- templates

def build_template(data, project_id=None, user_id=None, image_catalog=None,
                   cluster_user_trust=False):
    """Validate a template create request and return the full record."""
    given = fields.take(fields.CLUSTER_TEMPLATE, data, argument='cluster_template')
    for ro in fields.TEMPLATE_READ_ONLY:
        if ro != 'uuid':
            given.pop(ro, None)
    # Magnum's order: the coe's value, image_id mandatory, a coe at all, then the rest.
    if given.get('coe') not in (None, ''):
        drivers.coe_facts(given['coe'])
    if given.get('image_id') in (None, ''):
        raise mandatory_missing('image_id')
    if given.get('coe') in (None, ''):
        raise Invalid("Requested COE type Unset is not supported.")
    for field in fields.TEMPLATE_MANDATORY:
        if given.get(field) in (None, ''):
            raise mandatory_missing(field)
    coe = given['coe']
    facts = drivers.coe_facts(coe)
    if given.get('network_driver') is None:
        given['network_driver'] = facts['default_network_driver']
    if given.get('docker_storage_driver') is None:
        given['docker_storage_driver'] = facts['default_storage_driver']
    record = fields.with_defaults(fields.CLUSTER_TEMPLATE, given)
    record['labels'] = labels_mod.parse(record['labels'])
    check_template_choices(record)
    record['cluster_distro'] = images.os_distro(record['image_id'], image_catalog)
    record['uuid'] = record['uuid'] or new_uuid()
    record['name'] = record['name'] or generate_name('model')
    record['project_id'] = project_id
    record['user_id'] = user_id
    validate_template(record, cluster_user_trust=cluster_user_trust)
    return record


def check_labels(labels, template, cluster_user_trust=False):
    """The labels of a template, or of a cluster or node group of it: their values, then
    its COE's rules among them, in the template's context (its drivers and distro) and
    the service's ``cluster_user_trust``."""
    labels_mod.validate(labels, coe=template['coe'],
                        network_driver=template.get('network_driver'),
                        volume_driver=template.get('volume_driver'),
                        cluster_distro=template.get('cluster_distro'),
                        docker_storage_driver=template.get('docker_storage_driver'),
                        cluster_user_trust=cluster_user_trust)


def validate_template(tpl, cluster_user_trust=False):
    """Every rule a template must satisfy; sets ``driver``."""
    check_template_choices(tpl)
    coe = tpl['coe']
    registries.host(tpl.get('insecure_registry'))
    node_values.check_template(tpl)
    port = tpl.get('apiserver_port')
    if port is not None and not 1024 <= port <= 65535:
        raise Invalid("Invalid input for field/attribute apiserver_port. Value: '%s'. "
                      "Value should be in the range 1024..65535" % port)
    driver = drivers.find(coe, tpl['server_type'], tpl['cluster_distro'], tpl['labels'])
    tpl['driver'] = driver.name
    check_labels(tpl['labels'], tpl, cluster_user_trust)
    driver.check(tpl, tpl['labels'])
    return tpl


def check_template_choices(tpl):
    """The template's own fields Magnum checks before it looks the image up: the name's
    length, server type, network and volume drivers, storage driver and volume size."""
    if tpl.get('name') and len(tpl['name']) > NAME_MAX:
        raise Invalid("Template name is longer than %d characters." % NAME_MAX)
    coe = tpl['coe']
    facts = drivers.coe_facts(coe)
    if tpl['server_type'] not in driver_spec.SERVER_TYPES:
        raise Invalid("Invalid input for field/attribute server_type. Value: '%s'. "
                      "Value should be one of: bm, vm" % tpl['server_type'])
    _check_choice('network_driver', tpl.get('network_driver'), facts['network_drivers'],
                  'Network driver')
    _check_choice('volume_driver', tpl.get('volume_driver'), facts['volume_drivers'],
                  'Volume driver')
    storage = tpl.get('docker_storage_driver')
    if storage is not None:
        if not facts['storage_drivers']:
            raise Invalid("Docker storage driver is not supported for the %s COE." % coe)
        _check_choice('docker_storage_driver', storage, facts['storage_drivers'],
                      'Docker storage driver')
    check_volume_size(tpl.get('docker_volume_size'), storage)


def check_volume_size(size, storage_driver):
    if size is None:
        return
    fields.check_minimum('docker_volume_size', size)
    minimum = driver_spec.VOLUME_MINIMUM.get(storage_driver, 1)
    if size < minimum:
        raise Invalid("docker volume size %s GB is not valid, expecting minimum value "
                      "%sGB for %s storage" % (size, minimum, storage_driver))


def update_template(current, patched, in_use, image_catalog=None, cluster_user_trust=False):
    """Validate a patched template against the current one."""
    changed = [k for k in fields.CLUSTER_TEMPLATE
               if k not in fields.TEMPLATE_READ_ONLY and patched.get(k) != current.get(k)]
    if in_use:
        blocked = [k for k in changed if k not in fields.TEMPLATE_UPDATABLE_IN_USE]
        if blocked:
            raise Invalid("ClusterTemplate %s is referenced by one or multiple clusters: "
                          "only name, public and hidden can be updated (asked: %s)."
                          % (current['uuid'], ', '.join(sorted(blocked))))
    for field in fields.TEMPLATE_NOT_REMOVABLE:
        if patched.get(field) is None and current.get(field) is not None:
            raise Invalid("Attribute %s can not be removed." % field)
    record = dict(current)
    record.update(dict((k, fields.coerce(fields.CLUSTER_TEMPLATE, k, patched.get(k)))
                       for k in changed))
    record['labels'] = labels_mod.parse(record.get('labels'))
    if 'image_id' in changed:
        check_template_choices(record)
        record['cluster_distro'] = images.os_distro(record['image_id'], image_catalog)
    validate_template(record, cluster_user_trust=cluster_user_trust)
    return record


# ----------------------------------------------------------------- clusters

def check_cluster_name(name):
    """Magnum's cluster name type (wsme StringType: lengths, then the pattern)."""
    name = name or ''
    if not name:
        raise fields.wrong('name', name, "Value should have a minimum character requirement "
                                         "of 1")
    if len(name) > CLUSTER_NAME_MAX:
        raise fields.wrong('name', name, "Value should have a maximum character requirement "
                                         "of %d" % CLUSTER_NAME_MAX)
    if not CLUSTER_NAME_RE.match(name):
        raise fields.wrong('name', name, "Value should match the pattern %s"
                           % CLUSTER_NAME_RE.pattern)


def check_cluster_fields(given):
    """A cluster create request's own constraints (Magnum's, checked by wsme before
    anything is looked up): name, node_count, master_count, create_timeout."""
    if given.get('name') is not None:
        check_cluster_name(given['name'])
    for field in ('node_count', 'master_count', 'create_timeout'):
        fields.check_minimum(field, given.get(field))


def build_cluster(data, template, project_id=None, user_id=None, cluster_user_trust=False):
    """Validate a cluster create request against its template.

    Returns ``(cluster, nodegroups)``: the record with every inherited value,
    and its default node groups.
    """
    given = fields.take(fields.CLUSTER, data, allowed=fields.CLUSTER_CREATE_INPUT,
                        argument='cluster')
    if not given.get('cluster_template_id'):
        raise mandatory_missing('cluster_template_id')
    given['cluster_template_id'] = template['uuid']
    cluster = fields.with_defaults(fields.CLUSTER, given)
    cluster['name'] = cluster['name'] or generate_name('cluster')
    check_cluster_fields(cluster)
    if not cluster['create_timeout']:
        # Magnum passes 0 on to Heat; a job here needs a bound (a deliberate difference).
        raise Invalid("create_timeout must be at least 1 minute: a create here always has "
                      "a bound.")
    cluster['keypair'] = cluster['keypair'] or template.get('keypair_id')
    if not cluster['keypair']:
        raise Invalid("Keypair not specified: give one on the cluster (--keypair) or on "
                      "its cluster template (keypair_id).")
    for field in ('flavor_id', 'master_flavor_id', 'docker_volume_size', 'fixed_network',
                  'fixed_subnet', 'floating_ip_enabled', 'master_lb_enabled'):
        if cluster[field] is None:
            cluster[field] = template.get(field)
    if cluster['master_count'] > 1 and not cluster['master_lb_enabled']:
        raise Invalid("master_count must be 1 when master_lb_enabled is False")
    check_volume_size(cluster['docker_volume_size'], template.get('docker_storage_driver'))
    given_labels = labels_mod.parse(data.get('labels')) if data.get('labels') is not None \
        else None
    effective, overridden, added, skipped = labels_mod.merge(
        template.get('labels'), given_labels, cluster['merge_labels'])
    check_labels(effective, template, cluster_user_trust)
    drivers.find(template['coe'], template.get('server_type', 'vm'),
                 template.get('cluster_distro'), template.get('labels')).check(template, effective)
    effective = labels_mod.csi_default(effective, template.get('volume_driver'),
                                       cluster_user_trust)
    cluster.update(labels=effective, labels_overridden=overridden, labels_added=added,
                   labels_skipped=skipped)
    cluster['uuid'] = cluster['uuid'] or new_uuid()
    cluster['project_id'] = project_id
    cluster['user_id'] = user_id
    cluster['status'] = states.CREATE_IN_PROGRESS
    cluster['status_reason'] = None
    cluster['health_status'] = states.UNKNOWN
    return cluster, default_nodegroups(cluster, template)


def default_nodegroups(cluster, template):
    def group(name, role, count, flavor):
        return fields.with_defaults(fields.NODEGROUP, {
            'uuid': new_uuid(), 'name': name, 'cluster_id': cluster['uuid'],
            'project_id': cluster['project_id'], 'role': role, 'node_count': count,
            'flavor_id': flavor, 'image_id': template['image_id'], 'is_default': True,
            'labels': dict(cluster['labels']), 'min_node_count': 1 if role == 'master' else 0,
            'docker_volume_size': cluster['docker_volume_size'],
            'status': states.CREATE_IN_PROGRESS})
    master, worker = DEFAULT_NODEGROUPS
    groups = [group(master, 'master', cluster['master_count'], cluster['master_flavor_id']),
              group(worker, 'worker', cluster['node_count'], cluster['flavor_id'])]
    if labels_mod.to_bool(cluster['labels'].get('auto_scaling_enabled')):
        # The bounds the cluster autoscaler keeps the default workers in: its magnum
        # provider reads them from the group (node group auto-discovery).
        groups[1]['min_node_count'], groups[1]['max_node_count'] = \
            labels_mod.autoscaling_bounds(cluster['labels'])
    return groups


def update_cluster(current, patched):
    """Validate a JSON-patched cluster: only node_count and health fields change."""
    changed = [k for k in fields.CLUSTER if patched.get(k) != current.get(k)]
    blocked = [k for k in changed if k not in fields.CLUSTER_UPDATABLE]
    if blocked:
        raise Invalid("Updating %s is not supported: only node_count, health_status "
                      "and health_status_reason can be updated." % ', '.join(sorted(blocked)))
    record = dict(current)
    for key in changed:
        record[key] = fields.coerce(fields.CLUSTER, key, patched.get(key))
    if record.get('node_count') is None:
        record['node_count'] = fields.CLUSTER['node_count'][1]
    fields.check_minimum('node_count', record['node_count'])
    if record.get('health_status') not in (None,) + states.HEALTH_STATUSES:
        raise Invalid("Invalid input for field/attribute health_status. Value: '%s'. "
                      "Value should be one of: %s"
                      % (record['health_status'], ', '.join(states.HEALTH_STATUSES)))
    return record, changed


def check_resize(cluster, nodegroup, node_count, nodes_to_remove):
    if node_count is None:
        raise mandatory_missing('node_count')
    fields.check_minimum('node_count', node_count)
    if nodegroup['role'] == RESERVED_ROLE:
        raise Invalid("Resizing a nodegroup with role master is not supported.")
    low, high = nodegroup.get('min_node_count') or 0, nodegroup.get('max_node_count')
    if node_count < low or (high and node_count > high):
        # Magnum's NGResizeOutBounds (its max_node_count 0 is "none", as here)
        raise Invalid("Resizing %s outside the allowed range: min_node_count = %s, "
                      "max_node_count = %s." % (nodegroup['name'], low, high))
    # As Magnum: nodes_to_remove at the same (or a larger) count replaces the named nodes
    # with new ones (the auto-healer repairs a worker so).
    known = nodegroup.get('nodes') or []
    if nodes_to_remove and known:
        # A node is named by its server's name or id (a container's, or its first 12
        # characters), as the providers find it; unknown names are refused here, not
        # by the playbook a minute later.
        names = set()
        for node in known:
            names.update(v for v in (node.get('name'), node.get('id'),
                                     (node.get('id') or '')[:12]) if v)
        unknown = [n for n in nodes_to_remove if n not in names]
        if unknown:
            raise Invalid("nodes_to_remove names nodes that are not in the node group %s: %s "
                          "(its nodes: %s)." % (nodegroup['name'], ', '.join(unknown), ', '.join(
                              sorted(n['name'] for n in known if n.get('name')))))


def check_upgrade(cluster, current_template, new_template, max_batch_size):
    if max_batch_size is not None and max_batch_size < 1:
        raise Invalid("max_batch_size should be greater than 0.")
    if new_template['coe'] != current_template['coe']:
        raise Invalid("Upgrading to a template of another COE (%s -> %s) is not supported."
                      % (current_template['coe'], new_template['coe']))
    driver = drivers.by_name(new_template['driver']) if new_template.get('driver') else None
    if new_template.get('image_id') != current_template.get('image_id') and driver is not None \
            and not (driver.rebuilds_nodes or driver.own_infrastructure):
        raise Invalid("Upgrading to another image (%s -> %s) is not supported by driver %s: "
                      "it cannot rebuild the cluster's nodes."
                      % (current_template.get('image_id'), new_template.get('image_id'),
                         driver.name))
    old = labels_mod.version_tuple(current_template.get('labels', {}).get('kube_tag'))
    new = labels_mod.version_tuple(new_template.get('labels', {}).get('kube_tag'))
    if old is not None and new is not None and new < old:
        raise Invalid("Downgrading a cluster is not supported: kube_tag %s -> %s."
                      % (current_template['labels']['kube_tag'],
                         new_template['labels']['kube_tag']))


# -------------------------------------------------------------- node groups

def build_nodegroup(data, cluster, template, project_id=None, cluster_user_trust=False):
    given = fields.take(fields.NODEGROUP, data, allowed=fields.NODEGROUP_CREATE_INPUT,
                        argument='nodegroup')
    if not given.get('name'):
        raise mandatory_missing('name')
    node_values.check_name('name', given['name'])
    if given.get('role') == RESERVED_ROLE:
        raise Invalid("Creating master nodegroups is currently not supported.")
    group = fields.with_defaults(fields.NODEGROUP, given)
    group['flavor_id'] = group['flavor_id'] or cluster['flavor_id']
    group['image_id'] = group['image_id'] or template['image_id']
    if group['docker_volume_size'] is None:
        group['docker_volume_size'] = cluster.get('docker_volume_size')
    check_volume_size(group['docker_volume_size'], template.get('docker_storage_driver'))
    given_labels = labels_mod.parse(data.get('labels')) if data.get('labels') is not None \
        else None
    effective, overridden, added, skipped = labels_mod.merge(
        cluster.get('labels'), given_labels, group['merge_labels'])
    check_labels(effective, template, cluster_user_trust)
    group.update(labels=effective, labels_overridden=overridden, labels_added=added,
                 labels_skipped=skipped)
    check_node_counts(group)
    check_taints(group['node_taints'], group['role'])
    group.update(uuid=new_uuid(), cluster_id=cluster['uuid'], project_id=project_id,
                 is_default=False, status=states.CREATE_IN_PROGRESS)
    return group


def check_node_counts(group):
    fields.check_minimum('node_count', group['node_count'])
    low = group.get('min_node_count') or 0
    fields.check_minimum('min_node_count', low)
    fields.check_count_range(group['name'], group['node_count'], low,
                             group.get('max_node_count'))


def check_taints(taints, role):
    if taints and role == RESERVED_ROLE:
        raise Invalid("node_taints are not allowed on master nodegroups.")
    for taint in taints or []:
        if not isinstance(taint, dict) or not taint.get('key'):
            raise Invalid("Each node taint needs a key: %r." % (taint,))
        if taint.get('effect') not in TAINT_EFFECTS:
            raise Invalid("Taint effect %r is not one of %s."
                          % (taint.get('effect'), ', '.join(TAINT_EFFECTS)))


def update_nodegroup(current, patched, microversion=(1, 14)):
    allowed = ('min_node_count', 'max_node_count')
    if microversion >= (1, 14):
        allowed += ('node_labels', 'node_taints')
    changed = [k for k in fields.NODEGROUP if patched.get(k) != current.get(k)]
    blocked = [k for k in changed if k not in allowed]
    if blocked:
        raise Invalid("Updating %s of a nodegroup is not supported: only %s can be updated."
                      % (', '.join(sorted(blocked)), ', '.join(allowed)))
    record = dict(current)
    for key in changed:
        record[key] = fields.coerce(fields.NODEGROUP, key, patched.get(key))
    record['min_node_count'] = record.get('min_node_count') or 0
    check_node_counts(record)
    check_taints(record.get('node_taints'), record['role'])
    return record


def check_nodegroup_delete(group):
    if group.get('is_default'):
        raise Invalid("Deleting a default nodegroup is not supported.")


# -------------------------------------------------------------- federations

def build_federation(data, project_id=None):
    given = fields.take(fields.FEDERATION, data,
                        allowed=('name', 'hostcluster_id', 'member_ids', 'properties', 'uuid'),
                        argument='federation')
    if not given.get('name'):
        raise mandatory_missing('name')
    if not given.get('hostcluster_id'):
        raise mandatory_missing('hostcluster_id')
    fed = fields.with_defaults(fields.FEDERATION, given)
    fed.update(uuid=fed['uuid'] or new_uuid(), project_id=project_id,
               status=states.CREATE_IN_PROGRESS)
    return fed


def check_federable(cluster, template):
    """A federation is hosted on, and joined by, Kubernetes clusters that are up: their
    last operation complete (Karmada's control plane and credentials go in through
    their API)."""
    if template['coe'] != 'kubernetes':
        raise Invalid("Cluster %s is a %s cluster: only Kubernetes clusters can host or "
                      "join a federation." % (cluster['name'], template['coe']))
    if not (cluster['status'] or '').endswith('_COMPLETE'):
        raise Invalid("Cluster %s is %s: a federation's host and members must be in a "
                      "*_COMPLETE status." % (cluster['name'], cluster['status']))


def check_member_delete(cluster, federations):
    """A cluster a federation is made of (its host or a member) stays while it does."""
    for fed in federations:
        if cluster['uuid'] in (fed.get('member_ids') or []):
            raise Conflict("Cluster %s is a member of federation %s: unjoin it first."
                           % (cluster['name'], fed['name']))
        if cluster['uuid'] == fed.get('hostcluster_id'):
            raise Conflict("Cluster %s hosts federation %s: delete the federation first."
                           % (cluster['name'], fed['name']))


# ------------------------------------------------------------------- quotas

QUOTA_RESOURCES = ('Cluster',)
DEFAULT_HARD_LIMIT = 20


def build_quota(data):
    given = fields.take(fields.QUOTA, data, allowed=('project_id', 'resource', 'hard_limit'),
                        argument='quota')
    for field in ('project_id', 'resource', 'hard_limit'):
        if given.get(field) in (None, ''):
            raise mandatory_missing(field)
    if given['resource'] not in QUOTA_RESOURCES:
        raise Invalid("Invalid input for field/attribute resource. Value: '%s'. "
                      "Value should be one of: Cluster" % given['resource'])
    if given['hard_limit'] < 0:
        raise Invalid("hard_limit must be greater or equal to 0.")
    return given
