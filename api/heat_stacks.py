"""A node group as the Heat stacks Magnum's Heat driver made for it, for the clients
that read them: the cluster-autoscaler's magnum provider (and magnum-auto-healer) find
a node group's servers through Heat - the group's stack (its ``stack_id``), its
``kube_minions`` resource, that nested stack's ``refs_map`` output (node index ->
server id) and one resource per node, each a stack of its own whose ``kube-minion``
is the server. Here those stacks are views of the node group's record: nothing is
stored, ids are derived from the group's uuid (uuid5), statuses from the group's.
"""

import re
import uuid

# The namespace of the derived stack ids (fixed: ids must not change between calls).
NAMESPACE = uuid.UUID('6b1f2c9e-6b8e-4a53-9a53-3f8f5d0c7a11')
MINIONS = 'kube_minions'
SERVER = 'kube-minion'
DEPLOYMENT = 'node_config_deployment'
NOT_MADE = 'kube-minion'      # refs_map's value for a node whose server is not made yet


def derived_id(group_uuid, *parts):
    return str(uuid.uuid5(NAMESPACE, '/'.join((group_uuid,) + parts)))


def node_index(node, position):
    """A node's index in its group: its name's last number (``...-node-3``)."""
    match = re.search(r'-(\d+)$', node.get('name') or '')
    return match.group(1) if match else str(position)


class GroupStacks:
    """The stacks of one node group of a cluster (records as the store has them)."""

    def __init__(self, cluster, group, base_url):
        self.cluster, self.group, self.base_url = cluster, group, base_url.rstrip('/')
        self.name = '%s-%s' % (cluster['name'], group['name'])
        self.minions_id = derived_id(group['uuid'], MINIONS)
        self.minions_name = '%s-%s' % (self.name, MINIONS)
        self.nodes = [(node_index(n, i), n) for i, n in enumerate(group.get('nodes') or [])]

    # -- identities
    def minion_id(self, index):
        return derived_id(self.group['uuid'], MINIONS, index)

    def minion_name(self, index):
        return '%s-%s' % (self.minions_name, index)

    def stacks(self):
        """Every stack of the group: (id, name) -> what it is (None: the group's;
        MINIONS; else a node's index)."""
        found = {(self.group['uuid'], self.name): None,
                 (self.minions_id, self.minions_name): MINIONS}
        for index, _ in self.nodes:
            found[(self.minion_id(index), self.minion_name(index))] = index
        return found

    def find(self, identity, name=None):
        """What ``identity`` (a stack's id or name; with ``name``, both) is, or
        ``False`` when it is not one of the group's stacks."""
        for (stack_id, stack_name), what in self.stacks().items():
            if name is None and identity in (stack_id, stack_name):
                return what
            if name is not None and (identity, name) in ((stack_id, stack_name),
                                                         (stack_name, stack_id)):
                return what
        return False

    # -- views
    def _status(self):
        status = self.group.get('status') or 'CREATE_COMPLETE'
        return status, self.group.get('status_reason') or ''

    def _time(self, key):
        value = self.cluster.get(key) or self.group.get(key)
        if not value:
            return None
        return str(value).replace(' ', 'T').split('.')[0].split('+')[0].rstrip('Z') + 'Z'

    def _links(self, stack_id, name):
        return [{'href': '%s/stacks/%s/%s' % (self.base_url, name, stack_id), 'rel': 'self'}]

    def stack(self, what):
        """The stack ``what`` (as ``find`` answers) as Heat shows it."""
        status, reason = self._status()
        if what is None:
            stack_id, name, parent, outputs = self.group['uuid'], self.name, None, []
        elif what == MINIONS:
            stack_id, name, parent = self.minions_id, self.minions_name, self.group['uuid']
            outputs = [{'output_key': 'refs_map', 'description': 'node index -> server id',
                        'output_value': dict((i, n.get('id') or NOT_MADE)
                                             for i, n in self.nodes)}]
        else:
            stack_id, name, parent, outputs = (self.minion_id(what), self.minion_name(what),
                                               self.minions_id, [])
            status, reason = self._node_status(dict(self.nodes)[what])
        return {'id': stack_id, 'stack_name': name, 'stack_status': status,
                'stack_status_reason': reason, 'description': '', 'template_description': '',
                'creation_time': self._time('created_at'),
                'updated_time': self._time('updated_at'), 'parent': parent,
                'outputs': outputs, 'parameters': {}, 'capabilities': [],
                'notification_topics': [], 'tags': None, 'timeout_mins': None,
                'disable_rollback': True, 'links': self._links(stack_id, name)}

    def _node_status(self, node):
        if node.get('id'):
            return 'CREATE_COMPLETE', 'Stack CREATE completed successfully'
        return 'CREATE_IN_PROGRESS', 'Stack CREATE started'

    def _resource(self, name, physical_id, kind, status, reason, stack_id, stack_name):
        return {'resource_name': name, 'logical_resource_id': name,
                'physical_resource_id': physical_id or '', 'resource_type': kind,
                'resource_status': status, 'resource_status_reason': reason,
                'creation_time': self._time('created_at'),
                'updated_time': self._time('updated_at'), 'required_by': [],
                'attributes': {}, 'description': '',
                'links': [{'href': '%s/stacks/%s/%s/resources/%s' % (
                    self.base_url, stack_name, stack_id, name), 'rel': 'self'}]}

    def resources(self, what):
        """The resources of stack ``what``."""
        if what is None:
            status, reason = self._status()
            return [self._resource(MINIONS, self.minions_id, 'OS::Heat::ResourceGroup',
                                   status, reason, self.group['uuid'], self.name)]
        if what == MINIONS:
            return [self._resource(index, self.minion_id(index), 'file:///kubeminion.yaml',
                                   *self._node_status(node), self.minions_id, self.minions_name)
                    for index, node in self.nodes]
        node = dict(self.nodes)[what]
        status, reason = self._node_status(node)
        stack_id, name = self.minion_id(what), self.minion_name(what)
        return [self._resource(SERVER, node.get('id'), 'OS::Nova::Server', status, reason,
                               stack_id, name),
                self._resource(DEPLOYMENT, derived_id(self.group['uuid'], 'deployment', what),
                               'OS::Heat::SoftwareDeployment', status, reason, stack_id, name)]
