"""The Cluster API driver's parts that need a management cluster, against the project's
stand-in API server (tests/k8s_standin.py; no kube-apiserver can run in CI) with the real
helm binary and a stand-in of the openstack-cluster chart (tests/fixtures/openstack-cluster:
no chart repository is reachable from CI)."""

import contextlib

import pytest
import yaml
from ansible_collections.openstack.magnum.plugins.module_utils import tls
from conftest import HELM, REPO, helm

FIXTURE_CHART = REPO / 'tests' / 'fixtures' / 'openstack-cluster'
pytestmark = pytest.mark.skipif(not HELM, reason='needs helm (python3 scripts/install_helm.py)')


@contextlib.contextmanager
def management_cluster(tmp_path):
    """A stand-in management cluster: yields (api, kubeconfig path) of an admin of its CA."""
    from k8s_standin import StandIn
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
