#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: federation_members
short_description: Join and unjoin a federation's member clusters with Karmada
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Brings the member clusters registered with the federation's Karmada control plane
    to I(members) (the federation's C(member_ids) when not given), in Push mode.
  - A join makes, in the member, a service account with the rights Karmada's Push mode
    needs and its token Secret (never the member's admin certificate), and registers in
    Karmada a Secret of that token and the member's CA, and a C(Cluster) of the member's
    API address; the member is joined once Karmada reports it Ready.
  - An unjoin removes the C(Cluster) (waiting until Karmada has let it go) and its
    Secret from Karmada, and the credential from the member.
  - When a member cannot be joined, the federation's C(member_ids) is set to the members
    that are (with I(record)) and the module fails naming each one that is not and why.
extends_documentation_fragment:
  - openstack.magnum.store
options:
  federation:
    description: The federation (name or UUID).
    type: str
    required: true
  members:
    description:
      - Member clusters (UUIDs or names) and external clusters registered with the
        federation (UUIDs or names); the federation's C(member_ids) when not given.
      - An external cluster is reached through the kubeconfig it was registered with
        (the API's C(/v1/federations/{id}/external_clusters)); it is forgotten once
        unjoined.
    type: list
    elements: str
  timeout:
    description: Seconds to wait for Karmada's API server, and for the members to be Ready.
    type: int
    default: 600
  interval:
    description: Seconds between two looks.
    type: int
    default: 5
  record:
    description: On a failed join, record the members that are joined as the federation's C(member_ids).
    type: bool
    default: true
  karmada_api:
    description:
      - Whether Karmada's control plane is there to ask. Without it (a delete of a
        federation whose control plane was never installed, or whose host does not
        answer) only the members' credentials are removed, and I(members) must be empty.
    type: bool
    default: true
notes:
  - A member whose API does not answer when it is unjoined keeps Karmada's credential
    (said in the result's warnings); everything else of it is removed.
  - Check mode reports what would be joined and unjoined without changing anything.
'''

EXAMPLES = r'''
- name: Join the federation's members
  openstack.magnum.federation_members:
    federation: myfed

- name: Unjoin every member (before the control plane goes)
  openstack.magnum.federation_members:
    federation: myfed
    members: []
'''

RETURN = r'''
joined:
  description: Member clusters (UUIDs) Karmada reports Ready.
  returned: always
  type: list
  elements: str
unjoined:
  description: Clusters (UUIDs) unjoined by this run.
  returned: always
  type: list
  elements: str
names:
  description: The members' C(Cluster) names in Karmada (what PropagationPolicies name), by UUID.
  returned: always
  type: dict
'''

import base64
import time

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.openstack.magnum.plugins.module_utils.federation import federations
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import kube_access
from ansible_collections.openstack.magnum.plugins.module_utils.federation import (
    external_clusters, karmada, karmada_store)
from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    Invalid, NotFound)

CLUSTER_API = 'cluster.karmada.io/v1alpha1'


class FederationMembersModule(MagnumModule):
    argument_spec = dict(
        federation=dict(type='str', required=True),
        members=dict(type='list', elements='str'),
        timeout=dict(type='int', default=600),
        interval=dict(type='int', default=5),
        record=dict(type='bool', default=True),
        karmada_api=dict(type='bool', default=True),
    )

    def run(self):
        if not kube_access.HAS_KUBERNETES:
            self.fail_json(msg=missing_required_lib('kubernetes'),
                           exception=kube_access.KUBERNETES_ERROR)
        self.federation = federations.get_federation(self.store, self.params['federation'],
                                                     self.scope)
        wanted = self.params['members']
        if wanted is None:
            wanted = self.federation['member_ids'] or []
        wanted = [federations.federation_member(self.store, self.federation, m, self.scope)[
            'uuid'] for m in wanted]
        self.deadline = time.time() + self.params['timeout']
        self.warnings = []
        try:
            host = self.store.get('cluster', self.federation['hostcluster_id'], by_name=False)
            found = karmada.settings(self.federation['properties'])
            config = karmada_store.access(self.store, self.federation, host, found)
        except (Invalid, NotFound):
            if wanted:
                raise
            config = None   # a delete: Karmada (or its host) cannot be told, the members can
        if config is None or not self.params['karmada_api']:
            if wanted:
                self.fail_json(msg='Federation %s has no Karmada control plane to join '
                               'members to.' % self.federation['name'])
            # Nothing to ask Karmada: the members' side of every member goes.
            gone = list(self.federation['member_ids'] or [])
            if not self.check_mode:
                for uuid in gone:
                    self.remove_credential(uuid)
            self.exit_json(changed=bool(gone), joined=[], unjoined=gone, names={},
                           warnings=self.warnings)
        api = self.karmada(config)
        present = self.registered(api)
        leaving = [uuid for uuid in present if uuid not in wanted]
        joining = [uuid for uuid in wanted if uuid not in present]
        if self.check_mode:
            self.exit_json(changed=bool(leaving or joining), joined=sorted(
                set(present) & set(wanted)), unjoined=leaving, names=dict(
                (uuid, c['metadata']['name']) for uuid, c in present.items()))
        failed = {}
        for uuid in leaving:
            self.unjoin(api, uuid, present.pop(uuid))
        for uuid in joining:
            try:
                present[uuid] = self.join(api, uuid, [c['metadata']['name']
                                                      for c in present.values()])
            except Exception as exc:  # one member's failure is reported with its name
                failed[uuid] = kube_access.error_text(exc)
        joined = self.wait_ready(api, [u for u in wanted if u in present], failed)
        for uuid in failed:   # what a failed join made goes: a retry starts afresh
            self.abandon(api, uuid, present.pop(uuid, None))
        if not wanted:   # a delete: members whose join never registered them too
            for uuid in self.federation['member_ids'] or []:
                if uuid not in leaving:
                    self.remove_credential(uuid)
        names = dict((uuid, c['metadata']['name']) for uuid, c in present.items())
        if failed:
            self.record(joined)
            self.fail_json(msg='Not joined to federation %s: %s.' % (
                self.federation['name'], '; '.join(
                    '%s (%s): %s' % (self.cluster_name(uuid), uuid, why)
                    for uuid, why in sorted(failed.items()))),
                joined=joined, unjoined=leaving, names=names, warnings=self.warnings)
        self.exit_json(changed=bool(leaving or joining), joined=joined, unjoined=leaving,
                       names=names, warnings=self.warnings)

    # ------------------------------------------------------------------ Karmada
    def karmada(self, config):
        """A client of Karmada's API server, waited for (it may still be starting)."""
        while True:
            try:
                kube_access.reachable(config)
                api = kube_access.client(config)
                kube_access.resource(api, CLUSTER_API, 'Cluster')
                return api
            except Exception as exc:
                if time.time() >= self.deadline:
                    self.fail_json(msg="Karmada's API server of federation %s did not answer "
                                   "at %s within %ds: %s" % (
                                       self.federation['name'],
                                       config['clusters'][0]['cluster']['server'],
                                       self.params['timeout'], kube_access.error_text(exc)))
                time.sleep(self.params['interval'])

    def registered(self, api):
        """The federation's member Clusters in Karmada, by Magnum cluster uuid."""
        return dict((c['metadata']['labels'][karmada.LABEL_CLUSTER], c) for c in
                    kube_access.listed(api, CLUSTER_API, 'Cluster', '%s=%s' % (
                        karmada.LABEL_FEDERATION, self.federation['uuid'])))

    def member(self, uuid):
        """A member cluster, or an external cluster as one (None once it is gone)."""
        try:
            return self.store.get('cluster', uuid, by_name=False)
        except NotFound:
            external = self.store.external_cluster(self.federation['uuid'], uuid,
                                                   missing_ok=True)
            return external_clusters.as_member(external) if external else None

    def member_access(self, cluster):
        """A client of the member's API: an admin certificate of a Magnum cluster's CA
        issued for the occasion; an external cluster's own kubeconfig."""
        if cluster.get('external'):
            record = self.store.external_cluster(self.federation['uuid'], cluster['uuid'],
                                                 kubeconfig=True)
            config = external_clusters.pinned(external_clusters.loads(record['kubeconfig']))
        else:
            config = kube_access.cluster_admin(self.store, cluster)
        kube_access.reachable(config)
        return config, kube_access.client(config)

    def cluster_name(self, uuid):
        cluster = self.member(uuid)
        return cluster['name'] if cluster else uuid

    def join(self, api, uuid, taken):
        cluster = self.member(uuid)
        if cluster is None:
            raise NotFound('the cluster no longer exists')
        member_config, member = self.member_access(cluster)
        objects = karmada.member_objects(self.federation['uuid'], cluster)
        for obj in objects:
            kube_access.apply(member, obj)
        token = self.token(member, objects[2])
        name = karmada.member_name(cluster, taken)
        registered = karmada.karmada_objects(self.federation['uuid'], cluster, name, token,
                                             kube_access.ca_of(member_config))
        for obj in registered:
            kube_access.apply(api, obj)
        return registered[-1]

    def token(self, member, secret):
        """The service account's token, once the member's token controller wrote it."""
        while True:
            current = kube_access.get(member, secret) or {}
            token = (current.get('data') or {}).get('token')
            if token:
                return base64.b64decode(token).decode()
            if time.time() >= self.deadline:
                raise RuntimeError('its token controller did not fill Secret %s/%s' % (
                    karmada.MEMBER_NAMESPACE, secret['metadata']['name']))
            time.sleep(min(self.params['interval'], 2))

    def wait_ready(self, api, uuids, failed):
        """The members Karmada reports Ready; the others' reasons into ``failed`` once
        the time is up."""
        waiting = dict((uuid, None) for uuid in uuids)
        ready = []
        while waiting:
            registered = self.registered(api)   # one list a round, for every member
            for uuid in list(waiting):
                state, why = karmada.member_state(registered.get(uuid))
                if state == 'ready':
                    ready.append(uuid)
                    del waiting[uuid]
                else:
                    waiting[uuid] = why
            if not waiting or time.time() >= self.deadline:
                break
            time.sleep(self.params['interval'])
        for uuid, why in waiting.items():
            failed[uuid] = 'Karmada did not report it Ready within %ds: %s' % (
                self.params['timeout'], why)
        return sorted(ready, key=uuids.index)

    def unjoin(self, api, uuid, registered):
        name = registered['metadata']['name']
        kube_access.delete(api, registered)
        while kube_access.get(api, registered) is not None:   # Karmada's finalizer
            if time.time() >= self.deadline:
                self.fail_json(msg='Karmada did not let member %s go within %ds.'
                               % (name, self.params['timeout']))
            time.sleep(min(self.params['interval'], 2))
        kube_access.delete(api, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {
            'name': name, 'namespace': karmada.MEMBER_NAMESPACE}})
        self.remove_credential(uuid)
        # An external cluster's kubeconfig is kept no longer than it is a member.
        self.store.forget_external_clusters(self.federation['uuid'], [uuid])

    def remove_credential(self, uuid):
        """Karmada's credential removed from the member (a warning when the member does
        not answer: it keeps it)."""
        cluster = self.member(uuid)
        if cluster is None or not cluster.get('api_address'):
            return   # the member is gone: nothing of the credential is left to remove
        try:
            self.remove_from(cluster)
        except Exception as exc:
            self.warnings.append(
                "Member %s (%s) did not answer: its service account %s/%s, Karmada's "
                "credential, is left in it (%s)." % (
                    cluster['name'], uuid, karmada.MEMBER_NAMESPACE,
                    karmada.credential_name(self.federation['uuid']),
                    kube_access.error_text(exc)))

    def remove_from(self, cluster):
        member = self.member_access(cluster)[1]
        for obj in reversed(karmada.member_objects(self.federation['uuid'], cluster)[1:]):
            kube_access.delete(member, obj)
        # The namespace goes with the last credential in it (a service account other
        # than the namespace's default: another federation's, or someone else's).
        left = [sa for sa in kube_access.listed(member, 'v1', 'ServiceAccount',
                                                namespace=karmada.MEMBER_NAMESPACE)
                if sa['metadata']['name'] != 'default']
        if not left:
            kube_access.delete(member, {'apiVersion': 'v1', 'kind': 'Namespace',
                                        'metadata': {'name': karmada.MEMBER_NAMESPACE}})

    def abandon(self, api, uuid, registered):
        """Best effort, after a failed join: its registration and its credential."""
        try:
            if registered is not None:
                kube_access.delete(api, registered)
                kube_access.delete(api, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {
                    'name': registered['metadata']['name'],
                    'namespace': karmada.MEMBER_NAMESPACE}})
        except Exception as exc:
            self.warnings.append('Karmada kept the registration of %s: %s'
                                 % (self.cluster_name(uuid), kube_access.error_text(exc)))
        self.remove_credential(uuid)

    def record(self, joined):
        if not self.params['record']:
            return
        current = self.store.get('federation', self.federation['uuid'], by_name=False)
        if current['status'].endswith('_IN_PROGRESS'):
            self.store.update('federation', current['uuid'], {'member_ids': joined},
                              expect_status=current['status'])


def main():
    FederationMembersModule()()


if __name__ == '__main__':
    main()
