"""Cluster API's controllers played by the tests (none can run here: no CAPI or CAPO
image can be had), on a management cluster that is either the project's stand-in API
server (CI) or a real kube-apiserver with CAPI's CRDs (the gated test): the same play
through two adapters that read, create, merge-patch (the status subresource too) and
delete objects."""

import json
import threading

ROOT = {'Cluster': 'cluster.x-k8s.io/v1beta1', 'MachineDeployment': 'cluster.x-k8s.io/v1beta1',
        'Machine': 'cluster.x-k8s.io/v1beta1',
        'KubeadmControlPlane': 'controlplane.cluster.x-k8s.io/v1beta1',
        'OpenStackCluster': 'infrastructure.cluster.x-k8s.io/v1beta1',
        'OpenStackMachineTemplate': 'infrastructure.cluster.x-k8s.io/v1beta1',
        'Secret': 'v1', 'Namespace': 'v1'}
SINCE = '2026-01-01T00:00:00Z'


def condition(kind, status='True', **more):
    """A v1beta1 condition (lastTransitionTime is required by the CRDs' schema)."""
    return dict({'type': kind, 'status': status, 'lastTransitionTime': SINCE}, **more)


def differs(obj, status):
    """Whether ``obj``'s status differs from ``status`` in the fields ``status`` has."""
    have = obj.get('status') or {}
    return any(have.get(key) != value for key, value in status.items())


class StandInObjects:
    """The stand-in (tests/standins/k8s_standin.py) through its request handler, as a client's
    requests would reach it (a merge patch of one field never overwrites another's
    change made meanwhile, e.g. Helm's)."""

    def __init__(self, api):
        self.api = api

    def find(self, kind, namespace=None):
        return self.api.find(kind, namespace)

    def _path(self, obj, sub=''):
        from standins.k8s_standin import STORED
        group, _, version = obj['apiVersion'].rpartition('/')
        plural = [p for p, kind, _ns in STORED[(group, version)] if kind == obj['kind']][0]
        return '/apis/%s/%s/namespaces/%s/%s/%s%s' % (
            group, version, obj['metadata']['namespace'], plural, obj['metadata']['name'], sub)

    def _call(self, method, path, body=None, content_type='application/json'):
        code, answer = self.api.handle(method, path, {}, json.dumps(body).encode()
                                       if body is not None else None, content_type)
        assert code < 300 or code == 404, (method, path, answer)
        return answer

    def create(self, obj):
        status = obj.pop('status', None)
        self._call('POST', self._path(obj).rsplit('/', 1)[0], obj)
        if status:
            self.patch(obj, {'status': status}, status=True)

    def patch(self, obj, fragment, status=False):
        self._call('PATCH', self._path(obj, '/status' if status else ''), fragment,
                   'application/merge-patch+json')

    def delete(self, obj):
        self._call('DELETE', self._path(obj))


class KubeObjects:
    """A real API server through the kubernetes client (the gated test's management
    cluster): CAPI's objects' status written through their status subresource."""

    def __init__(self, kubeconfig):
        from kubernetes import config, dynamic
        self.client = dynamic.DynamicClient(config.new_client_from_config(str(kubeconfig)))

    def _resource(self, obj_or_kind):
        kind = obj_or_kind if isinstance(obj_or_kind, str) else obj_or_kind['kind']
        return self.client.resources.get(api_version=ROOT[kind], kind=kind)

    def find(self, kind, namespace=None):
        items = self._resource(kind).get(namespace=namespace).to_dict()['items']
        for item in items:
            item.update(apiVersion=ROOT[kind], kind=kind)
        return dict((item['metadata']['name'], item) for item in items)

    def create(self, obj):
        status = obj.pop('status', None)
        self._resource(obj).create(body=obj, namespace=obj['metadata']['namespace'])
        if status:
            self.patch(obj, {'status': status}, status=True)

    def patch(self, obj, fragment, status=False):
        from kubernetes.dynamic.exceptions import NotFoundError
        resource = self._resource(obj)
        try:
            (resource.status if status else resource).patch(
                name=obj['metadata']['name'], namespace=obj['metadata']['namespace'],
                body=fragment, content_type='application/merge-patch+json')
        except NotFoundError:
            pass  # gone meanwhile (helm uninstall)

    def delete(self, obj):
        from kubernetes.dynamic.exceptions import NotFoundError
        try:
            self._resource(obj).delete(name=obj['metadata']['name'],
                                       namespace=obj['metadata']['namespace'])
        except NotFoundError:
            pass


class PlayCapi(threading.Thread):
    """Cluster API's controllers as they would act on ``objects`` (an adapter above): a
    Cluster gets its infrastructure and endpoint, the control plane becomes ready at its
    version, each MachineDeployment gets its Machines (addresses) and ready replicas; a
    MachineDeployment listed in ``fail`` gets one Machine that failed for good instead (its
    failureMessage, as CAPI mirrors it from CAPO's OpenStackMachine when Nova put the
    server in ERROR) and a False Ready condition of severity Error; a
    Cluster whose name starts with one of ``hold`` is left provisioning; once a Cluster
    is deleted, what belongs to it goes (garbage collection)."""

    def __init__(self, objects, fail=(), hold=()):
        super().__init__(daemon=True)
        self.objects, self.fail, self.hold = objects, set(fail), set(hold)
        self.stop, self.errors = threading.Event(), []

    def run(self):
        while not self.stop.wait(0.5):
            try:
                self.round()
            except Exception as exc:  # a round that raced a change: the next one sees it
                self.errors.append(repr(exc))

    def held(self, release):
        return any(release.startswith(prefix) for prefix in self.hold)

    def round(self):
        objects = self.objects
        clusters = objects.find('Cluster')
        for name, cluster in clusters.items():
            if cluster.get('status', {}).get('infrastructureReady') or self.held(name):
                continue
            objects.patch(cluster, {'spec': {'controlPlaneEndpoint': {
                'host': '203.0.113.10', 'port': 6443}}})
            objects.patch(cluster, {'status': {'infrastructureReady': True, 'conditions': [
                condition('InfrastructureReady')]}}, status=True)
        for name, kcp in objects.find('KubeadmControlPlane').items():
            release = name[:-len('-control-plane')]
            if release not in clusters or self.held(release):
                continue
            want = {'version': kcp['spec']['version'], 'ready': True,
                    'readyReplicas': kcp['spec']['replicas'],
                    'conditions': [condition('Ready')]}
            if differs(kcp, want):
                objects.patch(kcp, {'status': want}, status=True)
                self.machines(kcp['metadata'], release, kcp['spec']['replicas'], True)
        for name, md in objects.find('MachineDeployment').items():
            release = md['spec']['clusterName']
            if release not in clusters or self.held(release):
                continue
            replicas = md['spec'].get('replicas', 1)
            if name in self.fail:
                want = {'readyReplicas': 0, 'conditions': [condition(
                    'Ready', 'False', severity='Error', reason='MachineCreationFailed',
                    message='instance state ERROR is unexpected')]}
            else:
                want = {'readyReplicas': replicas, 'replicas': replicas,
                        'updatedReplicas': replicas}
            if differs(md, want):
                objects.patch(md, {'status': want}, status=True)
                self.machines(md['metadata'], release, 1 if name in self.fail else replicas,
                              failed=name in self.fail)
        # A deleted MachineDeployment's Machines go with it (its MachineSets' deletion).
        deployments = objects.find('MachineDeployment')
        for name, machine in objects.find('Machine').items():
            owner = ((machine.get('metadata') or {}).get('labels') or {}).get(
                'cluster.x-k8s.io/deployment-name')
            if owner and owner not in deployments:
                objects.delete(machine)
        # Garbage collection: what a deleted Cluster owned.
        for kind in ('KubeadmControlPlane', 'MachineDeployment', 'Machine', 'OpenStackCluster'):
            for name, obj in objects.find(kind).items():
                owner = (obj.get('spec') or {}).get('clusterName') or \
                    name.replace('-control-plane', '')
                if owner not in clusters:
                    objects.delete(obj)

    def machines(self, owner_meta, release, count, control_plane=False, failed=False):
        """The owner's Machines brought to ``count`` as a MachineSet does: new ones
        numbered on, and on a scale-down those marked delete-machine first."""
        prefix = owner_meta['name'] + '-'
        have = sorted((m for name, m in self.objects.find('Machine', owner_meta['namespace'])
                       .items() if name.startswith(prefix)),
                      key=lambda m: ((m['metadata'].get('annotations') or {}).get(
                          'cluster.x-k8s.io/delete-machine') != 'yes',
                          -int(m['metadata']['name'].rsplit('-', 1)[1])))
        while len(have) > count:
            self.objects.delete(have.pop(0))
        used = [int(m['metadata']['name'].rsplit('-', 1)[1]) for m in have]
        for _ in range(len(have), count):
            index = max(used + [-1]) + 1
            used.append(index)
            labels = {'cluster.x-k8s.io/control-plane': ''} if control_plane else {
                'cluster.x-k8s.io/deployment-name': owner_meta['name']}
            server = '%08d-0000-4000-8000-%012d' % (index, 1 if control_plane else 2)
            self.objects.create({
                'apiVersion': ROOT['Machine'], 'kind': 'Machine',
                'metadata': {'name': '%s%d' % (prefix, index),
                             'namespace': owner_meta['namespace'], 'labels': labels},
                'spec': {'clusterName': release, 'providerID': 'openstack:///' + server,
                         'bootstrap': {'dataSecretName': '%s%d' % (prefix, index)},
                         'infrastructureRef': {'apiVersion': ROOT['OpenStackCluster'],
                                               'kind': 'OpenStackMachine',
                                               'name': '%s%d' % (prefix, index)}},
                'status': {'failureReason': 'UpdateError',
                           'failureMessage': 'instance state ERROR is unexpected'} if failed
                else {'nodeRef': {'name': 'node-%s%d' % (prefix, index)},
                      'addresses': [{'type': 'InternalIP', 'address': '10.6.0.%d' % (
                          (10 if control_plane else 20) + index)}]}})
