# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Magnum's notifications: a CADF event (pycadf) through oslo.messaging's notifier for
every cluster and federation operation - ``magnum.cluster.create``, ``.update``,
``.delete`` (``magnum.federation.*`` likewise), outcome ``pending`` when it starts,
``success`` or ``failure`` when it ends (failures at the error priority), the target
the record with Magnum's ``cluster_data`` attachment. Resizes, upgrades, CA rotations
and node group operations are cluster updates, as Magnum sends them.

Off unless configured: ``MAGNUM_NOTIFICATIONS_CONFIG`` names an oslo.config file
(magnum.conf will do) whose ``[oslo_messaging_notifications]`` sets ``driver``
(``messagingv2``), ``transport_url`` (else ``[DEFAULT] transport_url``) and ``topics``
(default ``notifications``). The API and the collection's modules read the same
variable, so operations from REST and from ``ansible-playbook`` notify alike.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import logging
import os
import socket
import warnings

CONFIG_ENV = 'MAGNUM_NOTIFICATIONS_CONFIG'
LOG = logging.getLogger(__name__)
CLUSTER_FIELDS = ('status', 'status_reason', 'project_id', 'created_at', 'updated_at',
                  'cluster_template_id', 'keypair', 'docker_volume_size', 'labels',
                  'master_flavor_id', 'flavor_id', 'stack_id', 'health_status',
                  'create_timeout', 'api_address', 'discovery_url', 'node_addresses',
                  'master_addresses', 'node_count', 'master_count')
FEDERATION_FIELDS = ('status', 'status_reason', 'project_id', 'created_at', 'updated_at',
                     'hostcluster_id', 'member_ids', 'properties')
PENDING, SUCCESS, FAILURE = 'pending', 'success', 'failure'
# What is notified: the store tells of these kinds' status changes (store._tell).
KINDS = ('cluster', 'federation')
OUTCOMES = (('_IN_PROGRESS', PENDING), ('_COMPLETE', SUCCESS), ('_FAILED', FAILURE))


def action_of(operation):
    """The CADF action of an operation: create and delete are themselves, anything
    else changes the cluster (resize, upgrade, ca_rotate, nodegroup_*: update)."""
    return operation if operation in ('create', 'delete') else 'update'


def event_of(status):
    """(action, outcome) of a status the state machine sets (CREATE_IN_PROGRESS:
    create pending; UPDATE_FAILED: update failure; ...), or None."""
    for suffix, outcome in OUTCOMES:
        if (status or '').endswith(suffix):
            return action_of(status[:-len(suffix)].lower()), outcome
    return None


def _attachment_content(kind, record):
    fields = CLUSTER_FIELDS if kind == 'cluster' else FEDERATION_FIELDS
    content = dict((name, record.get(name)) for name in fields)
    if kind == 'cluster':
        # Magnum's key, as it sends it (a stray colon included).
        content['docker_volume_size:'] = content.pop('docker_volume_size')
    return content


def event_payload(kind, action, outcome, record):
    """The CADF event Magnum sends for ``record`` (a cluster or federation)."""
    from pycadf import attachment, cadftaxonomy, cadftype, eventfactory, resource
    initiator = resource.Resource(typeURI=cadftaxonomy.ACCOUNT_USER)
    for key in ('user_id', 'project_id'):
        if record.get(key):
            setattr(initiator, key, record[key])
    type_uri = 'service/magnum/%s' % kind
    target = resource.Resource(id=record['uuid'], name=record.get('name'), typeURI=type_uri)
    target.add_attachment(attach_val=attachment.Attachment(
        typeURI=type_uri, content=_attachment_content(kind, record),
        name='%s_data' % kind))
    event = eventfactory.EventFactory().new_event(
        eventType=cadftype.EVENTTYPE_ACTIVITY, outcome=outcome, action=action,
        initiator=initiator, target=target,
        observer=resource.Resource(typeURI=type_uri))
    return event.as_dict()


class Notifier:
    """oslo.messaging's notifier as configured by ``path`` (an oslo.config file)."""

    def __init__(self, path):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            import oslo_messaging
            from oslo_config import cfg
        conf = cfg.ConfigOpts()
        conf([], project='magnum', default_config_files=[path])
        transport = oslo_messaging.get_notification_transport(conf)
        self._notifier = oslo_messaging.Notifier(
            transport, publisher_id='container-infra.%s' % socket.getfqdn())
        self.enabled = self._notifier.is_enabled()

    def send(self, kind, action, outcome, record):
        if not self.enabled or not record:
            return
        payload = event_payload(kind, action, outcome, record)
        method = self._notifier.error if outcome == FAILURE else self._notifier.info
        try:
            method({}, 'magnum.%s.%s' % (kind, action), payload)
        except Exception:  # pylint: disable=broad-except
            # A notification never fails the operation it tells of.
            LOG.exception('could not send magnum.%s.%s', kind, action)


_NOTIFIERS = {}


def configured():
    return bool(os.environ.get(CONFIG_ENV))


def notifier():
    """The configured notifier (one per configuration file), or None when off."""
    path = os.environ.get(CONFIG_ENV)
    if not path:
        return None
    if path not in _NOTIFIERS:
        _NOTIFIERS[path] = Notifier(path)
    return _NOTIFIERS[path]


def status_changed(kind, record):
    """Tell of ``record``'s (a cluster's or federation's) new status, when configured.
    Runs once the change is committed: a notifier that cannot be made or reach its
    broker is logged, never raised to the operation."""
    event = event_of(record.get('status'))
    if event is None:
        return
    try:
        found = notifier()
        if found is not None:
            found.send(kind, event[0], event[1], record)
    except Exception:  # pylint: disable=broad-except
        LOG.exception('could not notify magnum.%s.%s', kind, event[0])
