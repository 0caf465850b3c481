"""The Cluster API driver's parts that need a management cluster, against the project's
stand-in API server (tests/standins/k8s_standin.py; no kube-apiserver can run in CI) with the real
helm binary and a stand-in of the openstack-cluster chart (tests/fixtures/openstack-cluster:
no chart repository is reachable from CI)."""

import base64
import contextlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import tarfile

import pytest
import yaml
from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
from standins.capi_play import KubeObjects, PlayCapi, StandInObjects
from conftest import BIN, HELM, NEEDS_LAB, REPO, helm, wait_for
from test_openstack_provider import CLOUD, IMAGE, KEYPAIR, conn, lab

LAB_FIXTURES = (conn, lab)  # the lab tests' project, user, image and keypair

FIXTURE_CHART = REPO / 'tests' / 'fixtures' / 'openstack-cluster'
# A directory of Cluster API's and its OpenStack provider's CRDs (docs, "Clusters through
# Cluster API"), for the gated test on a real management cluster.
CRDS = os.environ.get('MAGNUM_CAPI_CRDS')
pytestmark = pytest.mark.skipif(not HELM, reason='needs helm (python3 scripts/install_helm.py)')


@contextlib.contextmanager
def management_cluster(tmp_path):
    """A stand-in management cluster: yields (api, kubeconfig path) of an admin of its CA."""
    from standins.k8s_standin import StandIn
    tmp_path.mkdir(parents=True, exist_ok=True)
    ca_cert, ca_key = tls.create_ca('management-ca')
    api = StandIn(ca_cert, ca_key, tmp_path).start()
    cert, key = tls.issue_keypair(ca_cert, ca_key, 'admin', 'system:masters', server=False)
    (tmp_path / 'admin.crt').write_text(cert)
    (tmp_path / 'admin.key').write_text(key)
    kubeconfig = tmp_path / 'kubeconfig'
    kubeconfig.write_text(yaml.safe_dump({
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'm',
        'clusters': [{'name': 'm', 'cluster': {'server': api.url, 'certificate-authority':
                                               str(tmp_path / 'ca.crt')}}],
        'users': [{'name': 'admin', 'user': {'client-certificate': str(tmp_path / 'admin.crt'),
                                             'client-key': str(tmp_path / 'admin.key')}}],
        'contexts': [{'name': 'm', 'context': {'cluster': 'm', 'user': 'admin'}}]}))
    try:
        yield api, kubeconfig
    finally:
        api.stop()


def fixture_chart(tmp_path):
    helm('package', str(FIXTURE_CHART), '-d', str(tmp_path))
    return tmp_path / 'openstack-cluster-0.0.0-standin.tgz'


def test_the_stand_in_keeps_helm_releases_and_their_objects(tmp_path):
    """helm install, upgrade and uninstall against the stand-in: the release is stored as
    helm stores it (a Secret client-go sends as protobuf), the chart's objects are made,
    changed and deleted, those the chart keeps stay (Cluster API removes them with the
    Cluster)."""
    with management_cluster(tmp_path) as (api, kubeconfig):
        chart = fixture_chart(tmp_path)
        values = tmp_path / 'values.yaml'
        values.write_text(yaml.safe_dump({
            'kubernetesVersion': '1.33.3', 'cloudCredentialsSecretName': 'creds',
            'controlPlane': {'machineCount': 1},
            'nodeGroups': [{'name': 'default-worker', 'machineCount': 2}]}))
        base = ['--kubeconfig', str(kubeconfig), '-n', 'magnum-p']
        helm('upgrade', '--install', 'rel', str(chart), '--create-namespace', '-f', str(values),
             *base)
        releases = api.find('Secret', 'magnum-p')
        assert list(releases) == ['sh.helm.release.v1.rel.v1']
        assert releases['sh.helm.release.v1.rel.v1']['metadata']['labels']['owner'] == 'helm'
        assert api.find('KubeadmControlPlane')['rel-control-plane']['spec']['version'] == \
            'v1.33.3'
        assert api.find('MachineDeployment')['rel-default-worker']['spec']['replicas'] == 2
        assert 'magnum-p' in api.find('Namespace')
        assert 'rel' in helm('list', *base)

        helm('upgrade', '--install', 'rel', str(chart), '-f', str(values),
             '--set', 'nodeGroups[0].machineCount=3', *base)
        assert api.find('MachineDeployment')['rel-default-worker']['spec']['replicas'] == 3

        helm('uninstall', 'rel', *base)
        assert 'rel' not in helm('list', *base)
        assert api.find('Cluster') == {} and api.find('MachineDeployment') == {}
        assert sorted(api.find('OpenStackMachineTemplate')) == [
            'rel-control-plane', 'rel-default-worker']


def lab_test(test):
    for mark in NEEDS_LAB:
        test = mark(test)
    return test


@lab_test
def test_a_cluster_through_cluster_api_from_openstack_coe_to_its_release_and_back(
        conn, lab, tmp_path):
    """The Cluster API driver end to end on the stand-in management cluster (see
    through_openstack_coe)."""
    with management_cluster(tmp_path / 'm') as (api, kubeconfig):
        through_openstack_coe(conn, lab, tmp_path, StandInObjects(api), kubeconfig,
                              fixture_chart(tmp_path))


@lab_test
@pytest.mark.real_node
@pytest.mark.skipif(not (os.environ.get('MAGNUM_K8S_ARTIFACTS') and CRDS), reason=(
    'needs a real management cluster: set MAGNUM_K8S_ARTIFACTS (a control plane, '
    'tests/test_kubernetes.py) and MAGNUM_CAPI_CRDS (the CRDs of Cluster API and CAPO)'))
def test_a_cluster_through_cluster_api_on_a_real_management_cluster(conn, lab, tmp_path):
    """The same end to end on a real management cluster: a cluster of the kubeadm
    driver on local nodes, Cluster API's and CAPO's CRDs applied (their v1beta1 stored:
    no CAPI controller serves the conversion webhook). No CAPI or CAPO controller can run
    here (no image of theirs can be had): the test plays their part, setting the objects'
    status through the API server as they would; the API server validates every object
    the chart makes, and every status, against the CRDs' schemas."""
    from test_kubernetes import REAL, cluster_config, k8s_on_local_nodes
    (tmp_path / 'mgmt').mkdir()
    with k8s_on_local_nodes(tmp_path / 'mgmt') as made:
        made.rest.coe('cluster', 'template', 'create', 'mt', *REAL)
        cluster = made.rest.create('k', 'mt', 1)
        made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        kubeconfig = cluster_config(made.rest, 'k', tmp_path / 'mgmt-config')
        applied = apply_crds(kubeconfig, pathlib.Path(CRDS))
        assert {'clusters.cluster.x-k8s.io', 'kubeadmcontrolplanes.controlplane.cluster.x-k8s.io',
                'machinedeployments.cluster.x-k8s.io', 'machines.cluster.x-k8s.io',
                'openstackclusters.infrastructure.cluster.x-k8s.io',
                'openstackmachinetemplates.infrastructure.cluster.x-k8s.io'} <= applied, applied
        (tmp_path / 'capi').mkdir()
        through_openstack_coe(conn, lab, tmp_path / 'capi', KubeObjects(kubeconfig),
                              kubeconfig, fixture_chart(tmp_path))
        made.delete_to_nothing()


def apply_crds(kubeconfig, directory):
    """Every CustomResourceDefinition of the YAML files under ``directory``, v1beta1
    stored and served alone where the CRD has it (Cluster API's current CRDs store
    v1beta2 and convert through a webhook its controller serves), made Established;
    returns their names."""
    from kubernetes import client, config
    api = client.ApiextensionsV1Api(config.new_client_from_config(str(kubeconfig)))
    names = set()
    for path in sorted(directory.rglob('*.yaml')):
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd or crd.get('kind') != 'CustomResourceDefinition':
                continue
            spec = crd['spec']
            spec.pop('conversion', None)
            beta1 = [v for v in spec['versions'] if v['name'] == 'v1beta1']
            if beta1:
                spec['versions'] = [dict(beta1[0], served=True, storage=True)]
            api.create_custom_resource_definition(crd)
            names.add(crd['metadata']['name'])
    assert wait_for(lambda: all(any(
        c.type == 'Established' and c.status == 'True' for c in
        api.read_custom_resource_definition(name).status.conditions or [])
        for name in names), timeout=120, interval=1), names
    return names


def declare_addon_provider(kubeconfig):
    """The addon provider's HelmRelease kind on the management cluster (only its CRD: no
    add-on is installed here), for which the driver leaves the add-ons to the chart."""
    from kubernetes import client, config
    api = client.ApiextensionsV1Api(config.new_client_from_config(str(kubeconfig)))
    api.create_custom_resource_definition({
        'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
        'metadata': {'name': 'helmreleases.addons.stackhpc.com'},
        'spec': {'group': 'addons.stackhpc.com', 'scope': 'Namespaced',
                 'names': {'plural': 'helmreleases', 'singular': 'helmrelease',
                           'kind': 'HelmRelease'},
                 'versions': [{'name': 'v1alpha1', 'served': True, 'storage': True,
                               'schema': {'openAPIV3Schema': {
                                   'type': 'object',
                                   'x-kubernetes-preserve-unknown-fields': True}}}]}})


def through_openstack_coe(conn, lab, tmp_path, objects, kubeconfig, chart):
    """A template with capi_helm_chart_version is the Cluster API driver's: a cluster
    created with `openstack coe` becomes a Helm release on the management cluster (its
    project's namespace, its credentials Secret of the job's cloud), CREATE_COMPLETE once
    Cluster API says ready, with the address, version and nodes Cluster API gives, and
    HEALTHY from the same objects; its CA is the cluster's (ca show, cluster config), ca
    rotate refused; resized by changing the release, a shrink naming a node removing that
    Machine (CAPI's delete-machine annotation); a MachineDeployment's failure fails the
    operation with Cluster API's message, and the group deleted; upgraded to the next
    minor version, a downgrade refused; delete uninstalls it, waits for Cluster API,
    leaves nothing. Beside it, a cluster Cluster API does not finish within its
    create_timeout says what CAPI waits for while in progress, ends CREATE_FAILED saying
    so, and a resize retries it to UPDATE_COMPLETE once Cluster API does."""
    from conftest import ApiServer
    from test_kubernetes import cluster_config
    from test_swarm import Rest
    declare_addon_provider(kubeconfig)
    image = conn.image.create_image(
        name=IMAGE + '-capi', data=b'capi image', disk_format='raw', container_format='bare',
        os_distro='ubuntu', kube_version='v1.33.3')
    images = [image]
    server = ApiServer('sqlite:///%s' % (tmp_path / 'api.sqlite'), REPO, tmp_path,
                       provider='openstack', args=['--health-interval', '10'], env={
                           'MAGNUM_CLOUD': CLOUD, 'OS_CLIENT_CONFIG_FILE': lab,
                           'MAGNUM_CAPI_KUBECONFIG': str(kubeconfig),
                           'MAGNUM_CAPI_CHART': str(chart),
                           'XDG_DATA_HOME': str(tmp_path / 'data')}).start()
    capi_controllers = PlayCapi(objects, hold={'slow-'})
    capi_controllers.start()
    rest = Rest(server)
    try:
        rest.coe('cluster', 'template', 'create', 'capi', '--coe', 'kubernetes',
                 '--image', image.name, '--external-network', 'public', '--keypair',
                 KEYPAIR, '--flavor', 'm1.tiny', '--master-flavor', 'm1.tiny',
                 '--network-driver', 'calico', '--labels',
                 'capi_helm_chart_version=0.0.0-standin')
        rest.coe('cluster', 'create', 'slow', '--cluster-template', 'capi', '--node-count',
                 '1', '--timeout', '3')   # held by PlayCapi: it times out after 3 minutes
        # While the operation waits, its status_reason is what Cluster API waits for.
        assert wait_for(lambda: 'infrastructure not ready' in (
            rest.show('slow')['status_reason'] or ''), timeout=150, interval=5)
        assert rest.show('slow')['status'] == 'CREATE_IN_PROGRESS'
        cluster = rest.create('My_CAPI-cluster', 'capi', 2)
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        releases = [r for r in json.loads(helm('list', '-A', '-o', 'json', '--kubeconfig',
                                               str(kubeconfig))) if r['name'].startswith('my-')]
        assert [r['chart'] for r in releases] == ['openstack-cluster-0.0.0-standin']
        release = releases[0]['name']
        assert re.match(r'^my-capi-cluster-[a-z0-9]{12}$', release), release
        assert cluster['api_address'] == 'https://203.0.113.10:6443'
        assert cluster['coe_version'] == 'v1.33.3'
        assert sorted(cluster['node_addresses']) == ['10.6.0.20', '10.6.0.21']
        assert cluster['master_addresses'] == ['10.6.0.10']
        # Health rounds read the same objects.
        assert wait_for(lambda: rest.show('My_CAPI-cluster')['health_status'] == 'HEALTHY',
                        timeout=180, interval=2)
        namespace = 'magnum-' + cluster['project_id'].replace('-', '').lower()
        # No load balancer: the API server's floating IP is the driver's (CAPO would
        # delete an address of its own with the first control plane machine replaced).
        held = [ip for ip in conn.network.ips(project_id=conn.current_project_id)
                if ip.description == 'Magnum cluster %s API server (Cluster API)'
                % cluster['uuid']]
        assert [ip.floating_ip_address for ip in held] == [objects.find(
            'OpenStackCluster', namespace)[release]['spec']['apiServerFloatingIP']], held
        secrets = objects.find('Secret', namespace)
        assert 'sh.helm.release.v1.%s.v1' % release in secrets
        clouds = base64.b64decode(
            secrets[release + '-cloud-credentials']['data']['clouds.yaml'])
        assert yaml.safe_load(clouds)['clouds']['openstack']['auth']['auth_url']
        # The cluster's CA (the store's) is the one CAPI's control plane takes: `ca
        # show` and `cluster config` work as for every cluster; `ca rotate` is refused.
        ca = objects.find('Secret', namespace)[release + '-ca']
        assert ca['type'] == 'cluster.x-k8s.io/secret'
        assert base64.b64decode(ca['data']['tls.crt']).decode().strip() == \
            rest.coe('ca', 'show', 'My_CAPI-cluster').strip()
        config = cluster_config(rest, 'My_CAPI-cluster', tmp_path / 'cfg')
        assert yaml.safe_load(config.read_text())['clusters'][0]['cluster']['server'] == \
            'https://203.0.113.10:6443'
        refused = rest.coe('ca', 'rotate', 'My_CAPI-cluster', check=False)
        assert refused.returncode != 0 and 'Rotating the CA of a Cluster API cluster is ' \
            'not supported' in refused.stderr, refused.stderr
        deployment = objects.find('MachineDeployment', namespace)[release + '-default-worker']
        assert deployment['spec']['replicas'] == 2
        assert objects.find('KubeadmControlPlane')[release + '-control-plane']['spec'][
            'version'] == 'v1.33.3'

        cluster = rest.resize('My_CAPI-cluster', 3)
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        assert objects.find('MachineDeployment')[release + '-default-worker']['spec'][
            'replicas'] == 3
        assert sorted(cluster['node_addresses']) == ['10.6.0.20', '10.6.0.21', '10.6.0.22']
        # A shrink naming a node (its Node name): that Machine is the one that goes.
        workers = json.loads(rest.coe('nodegroup', 'show', 'My_CAPI-cluster',
                                      'default-worker', '-f', 'json'))
        assert sorted(workers['node_addresses']) == sorted(cluster['node_addresses'])
        leaving = 'node-%s-default-worker-1' % release
        cluster = rest.resize('My_CAPI-cluster', 2, [leaving])
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        assert sorted(cluster['node_addresses']) == ['10.6.0.20', '10.6.0.22']
        refused = rest.coe('cluster', 'resize', 'My_CAPI-cluster', '1',
                           '--nodes-to-remove', 'no-such-node', check=False)
        assert refused.returncode != 0 and 'no-such-node' in refused.stderr

        capi_controllers.fail.add(release + '-gpu')
        rest.coe('nodegroup', 'create', 'My_CAPI-cluster', 'gpu', '--node-count', '1')
        failed = wait_for(lambda: 'IN_PROGRESS' not in rest.coe(
            'nodegroup', 'show', 'My_CAPI-cluster', 'gpu', '-f', 'value', '-c', 'status'),
            timeout=600, interval=2)
        assert failed
        shown = rest.coe('nodegroup', 'show', 'My_CAPI-cluster', 'gpu', '-f', 'json')
        assert 'instance state ERROR is unexpected' in shown, shown

        # The failed node group deleted: its MachineDeployment goes with the release.
        rest.coe('nodegroup', 'delete', 'My_CAPI-cluster', 'gpu')
        assert wait_for(lambda: 'gpu' not in rest.coe(
            'nodegroup', 'list', 'My_CAPI-cluster'), timeout=600, interval=2)
        assert sorted(n for n in objects.find('MachineDeployment') if n.startswith(release)) \
            == [release + '-default-worker']
        # Upgrade to a template whose image is the next minor version: the release's
        # version changes; back down is refused (the job fails before any change).
        newer = conn.image.create_image(
            name=IMAGE + '-capi-2', data=b'capi image 2', disk_format='raw',
            container_format='bare', os_distro='ubuntu', kube_version='v1.34.1')
        images.append(newer)
        template_args = ['--coe', 'kubernetes', '--external-network', 'public',
                         '--keypair', KEYPAIR, '--flavor', 'm1.tiny', '--master-flavor',
                         'm1.tiny', '--network-driver', 'calico', '--labels',
                         'capi_helm_chart_version=0.0.0-standin']
        rest.coe('cluster', 'template', 'create', 'capi-2', '--image', newer.name,
                 *template_args)
        rest.coe('cluster', 'upgrade', 'My_CAPI-cluster', 'capi-2')
        cluster = rest.settled('My_CAPI-cluster')
        assert cluster['status'] == 'UPDATE_COMPLETE', cluster['status_reason']
        assert cluster['coe_version'] == 'v1.34.1'
        assert objects.find('KubeadmControlPlane')[release + '-control-plane']['spec'][
            'version'] == 'v1.34.1'
        assert objects.find('MachineDeployment')[release + '-default-worker']['spec'][
            'template']['spec']['version'] == 'v1.34.1'
        # ... in two releases: the control plane first, the node groups on their image
        # until Cluster API had rolled it (Kubernetes' version skew policy), then theirs.
        base = ['-n', releases[0]['namespace'], '--kubeconfig', str(kubeconfig), '-o', 'json']
        last = max(r['revision'] for r in json.loads(helm('history', release, *base)))
        first, second = (json.loads(helm('get', 'values', release, '--revision', str(n), *base))
                         for n in (last - 1, last))
        assert (first['machineImageId'], first['kubernetesVersion']) == (newer.id, '1.34.1')
        assert (first['nodeGroupDefaults']['machineImageId'],
                first['nodeGroupDefaults']['kubernetesVersion']) == (image.id, '1.33.3')
        assert (second['machineImageId'], second['kubernetesVersion']) == (newer.id, '1.34.1')
        assert 'machineImageId' not in second['nodeGroupDefaults'] and \
            'kubernetesVersion' not in second['nodeGroupDefaults'], second
        rest.coe('cluster', 'upgrade', 'My_CAPI-cluster', 'capi')
        cluster = rest.settled('My_CAPI-cluster')
        assert cluster['status'] == 'UPDATE_FAILED'
        assert 'Downgrading a cluster is not supported: Kubernetes v1.34.1 -> 1.33.3' in \
            cluster['status_reason'], cluster['status_reason']
        assert objects.find('KubeadmControlPlane')[release + '-control-plane']['spec'][
            'version'] == 'v1.34.1'

        # The held cluster: failed by its create_timeout; a resize retries it, done
        # once Cluster API is.
        slow = rest.settled('slow')
        assert slow['status'] == 'CREATE_FAILED', slow
        # (the job's create_timeout ends it: the wait for Cluster API started later)
        assert slow['status_reason'] == \
            'Timed out after 3 minutes (create_timeout) during create.', slow['status_reason']
        capi_controllers.hold.clear()
        slow = rest.resize('slow', 1)
        assert slow['status'] == 'UPDATE_COMPLETE', slow['status_reason']
        assert slow['api_address'] == 'https://203.0.113.10:6443'
        rest.coe('cluster', 'delete', 'slow')

        rest.coe('cluster', 'delete', 'My_CAPI-cluster')
        assert rest.settled('My_CAPI-cluster')['status'] == 'GONE'
        assert rest.settled('slow')['status'] == 'GONE'
        assert 'rel' not in helm('list', '-A', '--kubeconfig', str(kubeconfig))
        left = [(kind, sorted(objects.find(kind, namespace))) for kind in (
            'Cluster', 'KubeadmControlPlane', 'MachineDeployment', 'Machine', 'Secret')]
        assert all(not names for _kind, names in left), left
        assert conn.network.find_ip(held[0].id) is None
    finally:
        capi_controllers.stop.set()
        server.stop()
        for made in images:
            conn.image.delete_image(made)


# Cluster API's and CAPO's controllers built locally (docs, "Clusters through Cluster
# API"): images/*.tar (docker archives) and components/<clusterctl's file names>.
CAPI_ARTIFACTS = os.environ.get('MAGNUM_CAPI_ARTIFACTS')
MACHINE_DEPLOYMENT = '''
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: workers, namespace: default}
spec:
  clusterName: c
  selector: {matchLabels: {pool: workers}}
  template:
    metadata: {labels: {pool: workers}}
    spec:
      clusterName: c
      version: %s
      bootstrap: {dataSecretName: workers-bootstrap}
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: OpenStackMachineTemplate
        name: workers
'''


# The gated tests on a management cluster of the project.
NEEDS_CAPI_BUILT = [
    pytest.mark.real_node,
    pytest.mark.skipif(not (os.environ.get('MAGNUM_K8S_ARTIFACTS') and CAPI_ARTIFACTS), reason=(
        'needs a real management cluster and Cluster API built: set MAGNUM_K8S_ARTIFACTS (a '
        'control plane, tests/test_kubernetes.py) and MAGNUM_CAPI_ARTIFACTS (images/*.tar '
        'and components/*.yaml of Cluster API and CAPO)')),
    pytest.mark.skipif(not shutil.which('docker-registry'), reason=(
        "needs Debian's docker-registry (apt-get install docker-registry) to serve the "
        "controllers' images"))]


def needs_capi_built(test):
    for mark in NEEDS_CAPI_BUILT:
        test = mark(test)
    return test


@contextlib.contextmanager
def management_cluster_of_the_project(tmp_path):
    """A one-master cluster of the kubeadm driver on local nodes whose template names a
    private registry (the controllers' images, MAGNUM_CAPI_ARTIFACTS' images/*.tar) as its
    insecure registry; yields (made, kubeconfig, registry, install): ``install()`` runs
    playbooks/capi_management.yml on it (the components of MAGNUM_CAPI_ARTIFACTS, each
    controller's image from the registry) and returns its output."""
    from test_kubernetes import REAL, cluster_config, k8s_on_local_nodes, private_registry
    capi = pathlib.Path(CAPI_ARTIFACTS)
    archives = sorted((capi / 'images').glob('*.tar'))
    with private_registry(tmp_path, archives) as registry, \
            k8s_on_local_nodes(tmp_path) as made:
        made.rest.coe('cluster', 'template', 'create', 'mt', *REAL, '--insecure-registry',
                      registry)
        cluster = made.rest.create('k', 'mt', 0)
        made.uuid = cluster['uuid']
        assert cluster['status'] == 'CREATE_COMPLETE', cluster['status_reason']
        kubeconfig = cluster_config(made.rest, 'k', tmp_path / 'cfg')
        # each archive's image, by its name, from the registry (private_registry: k8s/)
        images = {}
        for archive in archives:
            with tarfile.open(archive) as tar:
                tags = json.load(tar.extractfile('manifest.json'))[0]['RepoTags']
            name = tags[0].rsplit('/', 1)[-1]
            images[name.split(':')[0]] = '%s/k8s/%s' % (registry, name)
        env = dict(os.environ, MAGNUM_CAPI_KUBECONFIG=str(kubeconfig),
                   MAGNUM_CAPI_COMPONENTS=str(capi / 'components'),
                   ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'))
        extra = json.dumps({'capi_management_images': images,
                            'capi_management_state_dir': str(tmp_path / 'state')})

        def install():
            run = subprocess.run([str(BIN / 'ansible-playbook'), 'playbooks/capi_management.yml',
                                  '-e', extra], cwd=str(REPO), env=env, capture_output=True,
                                 text=True, timeout=1800)
            assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
            return run.stdout

        yield made, kubeconfig, registry, install


@needs_capi_built
def test_cluster_apis_controllers_run_on_a_management_cluster_of_the_project(tmp_path):
    """playbooks/capi_management.yml on a cluster of the kubeadm driver on local nodes,
    the controllers' images from an operator's registry: the four providers' controllers
    Available, their webhooks served with the certificates the role issued (a v1beta1
    object is converted to the stored v1beta2 by the core's conversion webhook, defaulted
    and validated by its admission webhooks: an invalid one is refused in Cluster API's
    words), and a second run changes nothing."""
    from test_kubernetes import kubectl
    with management_cluster_of_the_project(tmp_path) as (made, kubeconfig, registry, install):
        install()
        deployments = json.loads(kubectl(kubeconfig, 'get', 'deployments', '-A', '-o', 'json'))
        running = dict((d['metadata']['name'], d['spec']['template']['spec']['containers'][0])
                       for d in deployments['items']
                       if d['metadata']['namespace'].startswith(('capi-', 'capo-')))
        assert set(running) == {
            'capi-controller-manager', 'capi-kubeadm-bootstrap-controller-manager',
            'capi-kubeadm-control-plane-controller-manager', 'capo-controller-manager'}, running
        assert all(c['image'].startswith(registry + '/k8s/') for c in running.values()), running
        kubectl(kubeconfig, 'apply', '--dry-run=server', '-f', '-',
                stdin=MACHINE_DEPLOYMENT % 'v1.36.2')
        refused = kubectl(kubeconfig, 'apply', '--dry-run=server', '-f', '-', check=False,
                          stdin=MACHINE_DEPLOYMENT % 'one-point-thirty-six')
        assert refused.returncode != 0
        assert 'must be a valid semantic version' in refused.stderr, refused.stderr
        again = install()
        recap = re.search(r'localhost\s*:\s*ok=\d+\s+changed=(\d+)', again)
        assert recap and recap.group(1) == '0', again[-3000:]
        made.delete_to_nothing()
