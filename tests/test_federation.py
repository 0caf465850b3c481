"""Federations on Karmada (role federation_kubernetes) through `openstack coe federation`
(osc_coe_federation, the federation spec's CLI, in the real openstackclient), with the
host, the members and Karmada's API server played by the project's stand-in API
server (no kube-apiserver, nor any Karmada image, can run in CI), the real helm
installing a stand-in of Karmada's chart (tests/fixtures/karmada) from an offline
directory, and the test playing Karmada's controller: it starts Karmada's API server
once the chart gave it its certificates, and reports a member Ready once the member
answers the credential Karmada was given. The clusters are the fixture driver's
(conftest.project), their records pointed at the stand-ins."""

import base64
import contextlib
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import threading

import pytest
import requests
import yaml

from conftest import HELM, REPO, ApiServer, api_settled, free_port, helm, wait_for
from standins.k8s_standin import StandIn
from test_swarm import Rest

pytestmark = pytest.mark.skipif(not HELM, reason='needs helm (python3 scripts/install_helm.py)')
KARMADA_CHART = REPO / 'tests' / 'fixtures' / 'karmada'
# `federation show`'s rows, as the federation spec shows them.
SHOW = ['uuid', 'name', 'hostcluster', 'members', 'project_id', 'properties', 'status',
        'status_reason']


def settled(rest, name):
    """`openstack coe federation show` once no operation runs ({'status': 'GONE'} once
    it is gone); the wait asks the API (api_settled)."""
    if api_settled(rest.server.url, '/v1/federations/' + name) != 'GONE':
        proc = rest.coe('federation', 'show', name, '-f', 'json', check=False)
        if proc.returncode == 0:
            return json.loads(proc.stdout)
        assert 'could not be found' in proc.stderr, proc.stderr
    return {'status': 'GONE'}


def b64(text):
    return base64.b64decode(text).decode()


def enc(text):
    return base64.b64encode(text.encode()).decode()


def write_kubeconfig(path, server, ca_pem, user):
    path.write_text(yaml.safe_dump({
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'admin@ext',
        'clusters': [{'name': 'ext', 'cluster': {
            'server': server, 'certificate-authority-data': enc(ca_pem)}}],
        'users': [{'name': 'admin', 'user': user}],
        'contexts': [{'name': 'admin@ext', 'context': {'cluster': 'ext', 'user': 'admin'}}]}))


class PlayKarmada(threading.Thread):
    """Karmada's control plane as it would come up and act: its API server (a stand-in
    of the federation's CA, on the node port the chart was given) once the chart's cert
    Secret is on the host; each member Cluster Ready when its API answers the token and
    CA Karmada holds for it (False with the error otherwise)."""

    def __init__(self, host, tmp_path, port):
        super().__init__(daemon=True)
        self.host, self.tmp_path, self.port = host, tmp_path, port
        self.api, self.stop, self.errors = None, threading.Event(), []

    def run(self):
        while not self.stop.wait(0.3):
            try:
                self.round()
            except Exception as exc:
                self.errors.append(repr(exc))

    def round(self):
        if self.api is None:
            cert = self.host.find('Secret', 'karmada-system').get('karmada-cert')
            if cert:
                (self.tmp_path / 'karmada').mkdir(exist_ok=True)
                self.api = StandIn(b64(cert['data']['server-ca.crt']),
                                   b64(cert['data']['server-ca.key']),
                                   self.tmp_path / 'karmada', port=self.port).start()
            return
        secrets = self.api.find('Secret', 'karmada-cluster')
        for name, cluster in self.api.find('Cluster').items():
            secret = secrets.get(cluster['spec']['secretRef']['name'])
            if secret is None:
                continue
            ca = self.tmp_path / 'karmada' / ('%s-ca.crt' % name)
            ca.write_text(b64(secret['data']['caBundle']))
            token = b64(secret['data']['token'])
            try:
                answer = requests.get(cluster['spec']['apiEndpoint'] + '/readyz', timeout=5,
                                      verify=str(ca), headers={'Authorization': 'Bearer ' + token})
                ready = ('True', 'ClusterReady', 'cluster is healthy and ready') \
                    if answer.status_code == 200 else \
                    ('False', 'ClusterNotReachable', 'HTTP %d' % answer.status_code)
            except requests.RequestException as exc:
                ready = ('False', 'ClusterNotReachable', str(exc))
            want = [{'type': 'Ready', 'status': ready[0], 'reason': ready[1],
                     'message': ready[2]}]
            if (cluster.get('status') or {}).get('conditions') != want:
                self.api.put_object(dict(cluster, status={'conditions': want}))


@pytest.fixture
def clusters(tmp_path, project):
    """The API (its jobs given the stand-in chart in an offline directory), and the
    fixture driver's clusters host, m1, m2 and m3 pointed at stand-ins of their CAs
    (m3's at an address where nothing answers)."""
    from ansible_collections.openstack.magnum.plugins.module_utils.core import store as store_mod
    from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
    offline = tmp_path / 'offline'
    (offline / 'charts').mkdir(parents=True)
    helm('package', str(KARMADA_CHART), '-d', str(tmp_path))
    shutil.copy(tmp_path / 'karmada-0.0.0-standin.tgz', offline / 'charts' / 'karmada-1.16.0.tgz')
    db = 'sqlite:///%s' % (tmp_path / 'fed.sqlite')
    server = ApiServer(db, project, tmp_path, workers=4, env={
        'MAGNUM_K8S_ARTIFACTS': str(offline), 'XDG_DATA_HOME': str(tmp_path / 'data'),
        'XDG_CACHE_HOME': str(tmp_path / 'cache'),
        # The stand-ins answer on the loopback, which external clusters may not be in
        # by default: only the metadata service's network is denied here.
        'MAGNUM_EXTERNAL_CLUSTER_DENIED_NETWORKS': '169.254.0.0/16'}).start()
    rest = Rest(server)
    rest.coe('cluster', 'template', 'create', 'tpl', '--coe', 'kubernetes', '--image',
             'debian-12', '--external-network', 'public', '--keypair', 'kp')
    store = store_mod.Store(db)
    made, apis = {}, {}
    try:
        for name in ('host', 'm1', 'm2', 'm3'):
            rest.coe('cluster', 'create', name, '--cluster-template', 'tpl', '--node-count', '1')
        for name in ('host', 'm1', 'm2', 'm3'):
            cluster = rest.settled(name)
            assert cluster['status'] == 'CREATE_COMPLETE', cluster
            ca = store.certificate(cluster['uuid'])
            (tmp_path / name).mkdir()
            if name == 'm3':
                url = 'https://127.0.0.1:%d' % free_port()
            else:
                apis[name] = StandIn(ca['cert_pem'], ca['key_pem'], tmp_path / name).start()
                url = apis[name].url
            store.update('cluster', cluster['uuid'], {
                'api_address': url, 'master_addresses': ['127.0.0.1']})
            made[name] = cluster['uuid']
        # A cluster that is not Magnum's: its own CA, an admin certificate of it.
        ca_pem, ca_key = tls.create_ca('ext')
        (tmp_path / 'ext').mkdir()
        apis['ext'] = StandIn(ca_pem, ca_key, tmp_path / 'ext').start()
        cert, key = tls.issue_keypair(ca_pem, ca_key, 'ext-admin', 'system:masters',
                                      server=False)
        write_kubeconfig(tmp_path / 'ext.kubeconfig', apis['ext'].url, ca_pem,
                         {'client-certificate-data': enc(cert), 'client-key-data': enc(key)})
        yield rest, store, made, apis
    finally:
        server.stop()
        for api in apis.values():
            api.stop()


def test_a_federation_on_karmada_from_create_to_delete(clusters, tmp_path):
    """Create (Karmada's chart on the host, with the federation's settings; a member
    joined with a service account of its own, never its admin certificate; Ready once
    Karmada reached it with that token), join, a member that cannot join (the update
    fails naming it, member_ids keeps those joined), a property changed (a Helm upgrade),
    unjoin (the member's credential goes), delete (nothing of Karmada left in the host or
    the members); a bad property refused before anything is made."""
    rest, store, uuids, apis = clusters
    port = free_port()
    karmada = PlayKarmada(apis['host'], tmp_path, port)
    karmada.start()
    try:
        out = rest.coe('federation', 'create', 'fed', '--hostcluster', 'host', '--member',
                       'm1', '--property', 'apiserver_nodeport=%d' % port,
                       '--property', 'owner=team-a')
        assert out.startswith('Request to create federation ') and out.strip().endswith(
            ' accepted'), out
        shown = settled(rest, 'fed')
        assert shown['status'] == 'CREATE_COMPLETE', (shown, karmada.errors)
        assert list(shown) == SHOW
        assert shown['hostcluster'] == uuids['host'] and shown['members'] == [uuids['m1']]
        assert shown['properties'] == "apiserver_nodeport='%d', owner='team-a'" % port
        fed_uuid = shown['uuid']
        assert json.loads(rest.coe('federation', 'list', '-f', 'json')) == [
            {'uuid': fed_uuid, 'name': 'fed', 'members': 1, 'status': 'CREATE_COMPLETE'}]
        host = apis['host']
        assert 'sh.helm.release.v1.karmada.v1' in host.find('Secret', 'karmada-system')
        assert 'karmada-hook-job' in host.find('ClusterRoleBinding')   # the chart's hook's
        assert host.find('Service', 'karmada-system')['karmada-apiserver']['spec'] == {
            'type': 'NodePort', 'selector': {'app': 'karmada-apiserver'}, 'ports': [
                {'name': 'karmada-apiserver', 'port': 5443, 'nodePort': port}]}
        images = sorted(d['spec']['template']['spec']['containers'][0]['image']
                        for d in host.find('Deployment', 'karmada-system').values())
        # Every image of Karmada's own at the chart's version (the chart's values give
        # each component its tag: karmadaImageVersion alone changes none of them).
        assert images == ['docker.io/karmada/karmada-%s:v1.16.0' % c for c in (
            'aggregated-apiserver', 'controller-manager', 'scheduler', 'webhook')] + [
            'registry.k8s.io/kube-apiserver:v1.34.1'], images
        # The member: a service account of its own, bound to a role with Push mode's
        # rights, whose token Karmada holds - no admin certificate of the member.
        credential = 'magnum-federation-' + fed_uuid[:8]
        m1 = apis['m1']
        assert credential in m1.find('ServiceAccount', 'karmada-cluster')
        assert m1.find('ClusterRoleBinding')[credential]['subjects'] == [
            {'kind': 'ServiceAccount', 'name': credential, 'namespace': 'karmada-cluster'}]
        member = karmada.api.find('Cluster')['m1']
        assert member['spec'] == {'id': uuids['m1'], 'syncMode': 'Push',
                                  'apiEndpoint': m1.url, 'secretRef': {
                                      'namespace': 'karmada-cluster', 'name': 'm1'}}
        held = karmada.api.find('Secret', 'karmada-cluster')['m1']['data']
        assert sorted(held) == ['caBundle', 'token']
        assert b64(held['caBundle']) == store.certificate(uuids['m1'])['cert_pem']
        assert ('/readyz', 'system:serviceaccount:karmada-cluster:' + credential, None) in \
            m1.requests

        # Join m2, m3 whose API does not answer, and ext, a cluster that is not Magnum's
        # given by a kubeconfig: m3 named in the failure and left out; ext joined with a
        # service account of its own made through its kubeconfig, which is kept sealed.
        out = rest.coe('federation', 'join', 'fed', 'm2', 'm3', '--external',
                       'ext=%s' % (tmp_path / 'ext.kubeconfig'))
        assert 'Request to join m2, m3, ext to federation %s accepted' % fed_uuid in out, out
        shown = settled(rest, 'fed')
        assert shown['status'] == 'UPDATE_FAILED', shown
        assert 'Not joined to federation fed: m3 (%s)' % uuids['m3'] in shown['status_reason'], \
            shown['status_reason']
        [ext] = json.loads(rest.coe('federation', 'external', 'list', 'fed', '-f', 'json'))
        assert ext == {'uuid': ext['uuid'], 'name': 'ext', 'server': apis['ext'].url,
                       'member': True}
        assert shown['members'] == [uuids['m1'], uuids['m2'], ext['uuid']]
        assert sorted(karmada.api.find('Cluster')) == ['ext', 'm1', 'm2']
        assert karmada.api.find('Cluster')['ext']['spec']['apiEndpoint'] == apis['ext'].url
        assert credential in apis['ext'].find('ServiceAccount', 'karmada-cluster')
        assert ('/readyz', 'system:serviceaccount:karmada-cluster:' + credential, None) in \
            apis['ext'].requests
        with sqlite3.connect(str(tmp_path / 'fed.sqlite')) as db:
            [(sealed,)] = db.execute('SELECT kubeconfig FROM external_clusters').fetchall()
        assert sealed.startswith('fernet:'), sealed[:20]
        # A kubeconfig that would run a program on the controller, or whose server is in
        # a denied network, is refused (400) and nothing of it is kept.
        write_kubeconfig(tmp_path / 'exec.kubeconfig', apis['ext'].url, 'x', {'exec': {
            'apiVersion': 'client.authentication.k8s.io/v1', 'command': 'touch',
            'args': [str(tmp_path / 'ran')]}})
        write_kubeconfig(tmp_path / 'metadata.kubeconfig', 'https://169.254.169.254',
                         store.certificate(uuids['m1'])['cert_pem'], {'token': 'x'})
        for bad, says in (('exec', "The kubeconfig's user sets 'exec'"),
                          ('metadata', 'in a network external clusters may not be in')):
            refused = rest.coe('federation', 'join', 'fed', '--external', '%s=%s' % (
                bad, tmp_path / ('%s.kubeconfig' % bad)), check=False)
            assert refused.returncode != 0 and says in refused.stderr, refused.stderr
        assert len(json.loads(rest.coe('federation', 'external', 'list', 'fed',
                                       '-f', 'json'))) == 1
        assert not (tmp_path / 'ran').exists()
        refused = rest.coe('federation', 'join', 'fed', 'nope', check=False)
        assert refused.returncode != 0 and 'Cluster nope could not be found' in refused.stderr
        # A member is not deleted under its federation, nor the host.
        refused = rest.coe('cluster', 'delete', 'm1', check=False)
        assert refused.returncode != 0 and 'unjoin it first' in refused.stderr, refused.stderr
        refused = rest.coe('cluster', 'delete', 'host', check=False)
        assert refused.returncode != 0 and 'hosts federation fed' in refused.stderr

        # A property reaches the control plane; the members stay.
        rest.coe('federation', 'update', 'fed', '--property', 'dns=example.internal',
                 '--remove-property', 'owner')
        shown = settled(rest, 'fed')
        assert shown['status'] == 'UPDATE_COMPLETE', shown
        assert shown['properties'] == "apiserver_nodeport='%d', dns='example.internal'" % port
        args = host.find('Deployment', 'karmada-system')['karmada-scheduler']['spec'][
            'template']['spec']['containers'][0]['args']
        assert args == ['--cluster-domain=example.internal']
        assert 'sh.helm.release.v1.karmada.v2' in host.find('Secret', 'karmada-system')

        # Unjoin m1 and ext: gone from Karmada, their credentials gone from them, ext's
        # kubeconfig forgotten.
        rest.coe('federation', 'unjoin', 'fed', 'm1', 'ext')
        shown = settled(rest, 'fed')
        assert shown['status'] == 'UPDATE_COMPLETE' and shown['members'] == [uuids['m2']]
        assert sorted(karmada.api.find('Cluster')) == ['m2']
        for member in (apis['m1'], apis['ext']):
            for kind in ('ServiceAccount', 'Secret', 'ClusterRole', 'ClusterRoleBinding'):
                assert credential not in member.find(kind), kind
            assert 'karmada-cluster' not in member.find('Namespace')
        assert json.loads(rest.coe('federation', 'external', 'list', 'fed', '-f', 'json')) == []
        refused = rest.coe('federation', 'unjoin', 'fed', 'm1', check=False)
        assert refused.returncode != 0 and \
            'Cluster m1 is not a member of federation fed' in refused.stderr

        # Delete: m2 unjoined, the control plane and its namespace gone from the host.
        out = rest.coe('federation', 'delete', 'fed')
        assert out.strip() == 'Request to delete federation fed has been accepted.'
        assert settled(rest, 'fed') == {'status': 'GONE'}
        assert karmada.api.find('Cluster') == {}
        assert apis['m2'].find('ServiceAccount', 'karmada-cluster') == {}
        assert host.find('Secret', 'karmada-system') == {}
        assert host.find('Deployment', 'karmada-system') == {}
        assert 'karmada-system' not in host.find('Namespace')
        # The chart's install hook's cluster-wide rights (kept by Helm) are gone too.
        assert 'karmada-hook-job' not in host.find('ClusterRole')
        assert 'karmada-hook-job' not in host.find('ClusterRoleBinding')
        assert all(store.certificate(fed_uuid, kind, missing_ok=True) is None
                   for kind in ('karmada-ca', 'karmada-apiserver'))
        # A bad property fails the create before anything is made; the delete goes.
        rest.coe('federation', 'create', 'bad', '--hostcluster', 'host', '--property',
                 'apiserver_nodeport=not-a-port')
        shown = settled(rest, 'bad')
        assert shown['status'] == 'CREATE_FAILED'
        assert "Federation property apiserver_nodeport='not-a-port' is not valid" in \
            shown['status_reason'], shown['status_reason']
        assert host.find('Secret', 'karmada-system') == {}
        # A host with no CA (no kubeconfig can be made for it) does not hold the delete.
        store.delete_certificates(uuids['host'], ca_cert_type='ca')
        rest.coe('federation', 'delete', 'bad')
        assert settled(rest, 'bad') == {'status': 'GONE'}
        assert json.loads(rest.coe('federation', 'list', '-f', 'json')) == []
        # The host goes once it hosts nothing.
        rest.coe('cluster', 'delete', 'host')
        assert rest.settled('host')['status'] == 'GONE'
    finally:
        karmada.stop.set()
        if karmada.api:
            karmada.api.stop()


# --- On two real clusters (gated: no Kubernetes server binary or image can be had in CI) --
ARTIFACTS = os.environ.get('MAGNUM_K8S_ARTIFACTS')
KARMADA_ARCHIVES = sorted(glob.glob(os.path.join(ARTIFACTS or '/nonexistent', 'charts',
                                                 'karmada-*.tgz')))
PROPAGATED = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: magnum-test/busybox:1
          imagePullPolicy: Never
          command: [sleep, '86400']
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
"""


@contextlib.contextmanager
def routed_between(uuids):
    """The clusters' networks routed to each other, as a cloud's router would route
    them (Docker keeps its networks apart): rules in DOCKER-USER, removed after."""
    bridges = ['br-' + subprocess.run(['docker', 'network', 'inspect', '-f', '{{.Id}}',
                                       'magnum-' + uuid], capture_output=True, text=True,
                                      check=True).stdout.strip()[:12] for uuid in uuids]
    rules = [['DOCKER-USER', '-i', a, '-o', b, '-j', 'ACCEPT']
             for a in bridges for b in bridges if a != b]
    for rule in rules:
        subprocess.run(['iptables', '-I'] + rule, check=True)
    try:
        yield
    finally:
        for rule in rules:
            subprocess.run(['iptables', '-D'] + rule, capture_output=True)


@pytest.mark.skipif(not (ARTIFACTS and KARMADA_ARCHIVES), reason=(
    'needs two real clusters: MAGNUM_K8S_ARTIFACTS with Kubernetes and Karmada '
    '(charts/karmada-<version>.tgz and its images in images/; docs "Federations")'))
def test_karmada_federates_two_real_clusters_on_local_nodes(tmp_path):
    """Two Kubernetes clusters on local nodes; a federation hosted on one with both
    joined: Karmada reports both Ready; a Deployment with a PropagationPolicy runs its
    pods in both; unjoined, a member loses them and Karmada's credential; the delete
    leaves nothing of Karmada in either cluster."""
    from ansible_collections.openstack.magnum.plugins.module_utils.federation import (
        karmada, karmada_store)
    from ansible_collections.openstack.magnum.plugins.module_utils.core import store as store_mod
    from test_infra_docker import docker_ok, nothing_left, remove_leftovers
    from test_kubernetes import REAL, cluster_config, kubectl, load_workload
    assert docker_ok(), 'needs a running Docker engine and debootstrap'
    version = os.path.basename(KARMADA_ARCHIVES[-1])[len('karmada-'):-len('.tgz')]
    db = 'sqlite:///%s' % (tmp_path / 'fed.sqlite')
    server = ApiServer(db, REPO, tmp_path, provider='docker', env={
        'MAGNUM_K8S_ARTIFACTS': ARTIFACTS, 'XDG_DATA_HOME': str(tmp_path / 'data'),
        'XDG_CACHE_HOME': str(tmp_path / 'cache')})
    rest = Rest(server.start())
    store = store_mod.Store(db)
    uuids = {}
    try:
        rest.coe('cluster', 'template', 'create', 'kt', *REAL)
        # The host's worker runs Karmada's control plane too: a bigger flavor.
        rest.coe('cluster', 'create', 'host', '--cluster-template', 'kt', '--node-count',
                 '1', '--flavor', 'm1.medium')
        rest.coe('cluster', 'create', 'member', '--cluster-template', 'kt',
                 '--node-count', '1')
        for name in ('host', 'member'):
            cluster = rest.settled(name)
            uuids[name] = cluster['uuid']
            assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        confs = dict((name, cluster_config(rest, name, tmp_path / name)) for name in uuids)
        for uuid in uuids.values():
            load_workload(uuid, tmp_path)
        with routed_between(list(uuids.values())):
            rest.coe('federation', 'create', 'fed', '--hostcluster', 'host', '--member',
                     'host', '--member', 'member', '--property',
                     'karmada_version=%s' % version)
            shown = settled(rest, 'fed')
            assert shown['status'] == 'CREATE_COMPLETE', shown['status_reason']
            assert sorted(shown['members']) == sorted(uuids.values())
            federation = store.get('federation', shown['uuid'], by_name=False)
            host = store.get('cluster', uuids['host'], by_name=False)
            (tmp_path / 'karmada.kubeconfig').write_text(yaml.safe_dump(karmada_store.access(
                store, federation, host, karmada.settings(federation['properties']))))
            plane = tmp_path / 'karmada.kubeconfig'
            ready = kubectl(plane, 'get', 'clusters', '-o', 'jsonpath={range .items[*]}'
                            '{.metadata.name}={.status.conditions[?(@.type=="Ready")]'
                            '.status} {.spec.syncMode}{"\\n"}{end}')
            assert sorted(ready.split('\n')[:-1]) == ['host=True Push', 'member=True Push'], \
                ready
            # The members' credential: a service account of Karmada's own in each.
            credential = karmada.credential_name(shown['uuid'])
            for conf in confs.values():
                kubectl(conf, '-n', 'karmada-cluster', 'get', 'serviceaccount', credential)
            # Propagated to both: each member runs the Deployment's two pods.
            kubectl(plane, 'apply', '-f', '-', stdin=PROPAGATED % 'host, member')

            def running(conf):
                return kubectl(conf, 'get', 'pods', '-l', 'app=web', '--field-selector',
                               'status.phase=Running', '-o', 'name').split()
            wait_for(lambda: all(len(running(c)) == 2 for c in confs.values()),
                     timeout=600, interval=3)

            # Unjoin the member: Karmada lets it go, its pods and credential go.
            rest.coe('federation', 'unjoin', 'fed', 'member')
            shown = settled(rest, 'fed')
            assert shown['status'] == 'UPDATE_COMPLETE', shown['status_reason']
            assert shown['members'] == [uuids['host']]
            assert kubectl(plane, 'get', 'clusters', '-o', 'name').split() == [
                'cluster.cluster.karmada.io/host']
            wait_for(lambda: kubectl(confs['member'], 'get', 'deployments', '-o',
                                     'name').split() == [], timeout=300, interval=3)
            wait_for(lambda: running(confs['member']) == [], timeout=300, interval=3)
            assert len(running(confs['host'])) == 2
            assert 'karmada-cluster' not in kubectl(confs['member'], 'get', 'namespaces',
                                                    '-o', 'name')

            # Delete: nothing of Karmada left in either cluster.
            rest.coe('federation', 'delete', 'fed')
            assert settled(rest, 'fed') == {'status': 'GONE'}
            for name, conf in confs.items():
                namespaces = kubectl(conf, 'get', 'namespaces', '-o', 'name').split()
                assert not [n for n in namespaces if 'karmada' in n], (name, namespaces)
                found = kubectl(conf, 'get', 'clusterroles,clusterrolebindings,'
                                'customresourcedefinitions,apiservices,'
                                'mutatingwebhookconfigurations,'
                                'validatingwebhookconfigurations', '-o', 'name')
                assert 'karmada' not in found and credential not in found, (name, found)
            wait_for(lambda: running(confs['host']) == [], timeout=300, interval=3)
        for name in ('member', 'host'):
            rest.coe('cluster', 'delete', name)
        for name in ('member', 'host'):
            assert rest.settled(name)['status'] == 'GONE'
            nothing_left(uuids[name])
    finally:
        for uuid in uuids.values():
            remove_leftovers(uuid)
        server.stop()
