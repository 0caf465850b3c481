"""The Cluster API driver's values through the real openstack-cluster chart (`helm
template`): the chart accepts them and renders the CAPI objects the mapping means.
Gated on MAGNUM_CAPI_CHART, a packaged chart (`openstack-cluster-<version>.tgz` of
azimuth-cloud/capi-helm-charts: `helm dependency build charts/openstack-cluster && helm
package charts/openstack-cluster`): no chart repository is reachable from CI."""

import json
import os
import subprocess

import pytest
import yaml
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi
from conftest import HELM

CHART = os.environ.get('MAGNUM_CAPI_CHART')
pytestmark = pytest.mark.skipif(
    not CHART or not HELM, reason='needs MAGNUM_CAPI_CHART (a packaged openstack-cluster chart; '
                                  'none can be downloaded here) and helm')


TEMPLATE = {'image_id': 'ubuntu-kube-v1.33.3', 'flavor_id': 'm1.small',
            'master_flavor_id': 'm1.medium', 'network_driver': 'calico', 'labels': {}}
IMAGE = {'id': 'img-1', 'os_distro': 'ubuntu', 'properties': {'kube_version': 'v1.33.3'}}
GROUPS = [{'name': 'default-master', 'role': 'master', 'node_count': 3},
          {'name': 'default-worker', 'role': 'worker', 'node_count': 2, 'flavor_id': 'm1.small'},
          {'name': 'GPU Workers', 'role': 'gpu', 'node_count': 1, 'flavor_id': 'g1.large'}]


def cluster(labels):
    return {'uuid': '0c5bd0b9-89c4-4c53-b690-52d5004e93a8', 'name': 'c', 'project_id': 'p',
            'keypair': 'mykey', 'master_count': 3, 'master_flavor_id': 'm1.large',
            'labels': labels}


def rendered(values, tmp_path):
    path = tmp_path / 'values.json'
    path.write_text(json.dumps(values))
    out = subprocess.run([HELM, 'template', 'rel', CHART, '-n', 'magnum-p', '-f', str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = {}
    for doc in yaml.safe_load_all(out.stdout):
        if doc:
            found.setdefault(doc['kind'], []).append(doc)
    return found


def test_the_chart_renders_the_mapped_cluster(tmp_path):
    labels = {'master_lb_floating_ip_enabled': 'false', 'boot_volume_size': '40',
              'boot_volume_type': 'ssd', 'auto_scaling_enabled': 'true', 'max_node_count': '5',
              'extra_network_names': 'storage-net', 'keystone_auth_enabled': 'true'}
    objects = rendered(capi.values(
        TEMPLATE, cluster(labels), GROUPS, IMAGE,
        networks={'external': 'ext-id', 'fixed': 'net-id', 'subnet': 'sub-id'},
        volume_types=['standard'], auth={'auth_url': 'https://ks/v3', 'project_id': 'p'}),
        tmp_path)
    kcp = objects['KubeadmControlPlane'][0]['spec']
    assert (kcp['replicas'], kcp['version']) == (3, 'v1.33.3')
    deployments = dict((d['metadata']['name'], d) for d in objects['MachineDeployment'])
    assert sorted(deployments) == ['rel-default-worker', 'rel-gpu-workers']
    scaled = deployments['rel-default-worker']['metadata']['annotations']
    assert scaled['cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size'] == '5'
    assert deployments['rel-gpu-workers']['spec']['replicas'] == 1
    infra = objects['OpenStackCluster'][0]['spec']
    assert infra['externalNetwork'] == {'id': 'ext-id'} and infra['network'] == {'id': 'net-id'}
    assert infra['disableAPIServerFloatingIP'] is True
    machines = dict((t['metadata']['name'].rsplit('-', 1)[0], t['spec']['template']['spec'])
                    for t in objects['OpenStackMachineTemplate'])
    assert machines['rel-control-plane']['flavor'] == 'm1.large'
    assert machines['rel-gpu-workers']['flavor'] == 'g1.large'
    assert all(m['image'] == {'id': 'img-1'} and m['sshKeyName'] == 'mykey'
               and m['rootVolume']['sizeGiB'] == 40 for m in machines.values())
    assert len(objects['MachineHealthCheck']) == 3
    # A load balancer in front of the API server, open to the allowed networks only.
    assert infra['apiServerLoadBalancer'] == {'enabled': True, 'provider': 'amphora'}


def test_without_master_lb_enabled_no_load_balancer_is_made(tmp_path):
    one = dict(cluster({'master_lb_allowed_cidrs': '192.0.2.0/24'}), master_count=1)
    infra = rendered(capi.values(dict(TEMPLATE, master_lb_enabled=True), one, GROUPS[1:], IMAGE),
                     tmp_path)['OpenStackCluster'][0]['spec']
    assert infra['apiServerLoadBalancer']['allowedCIDRs'] == ['192.0.2.0/24']
    one['master_lb_enabled'] = False
    infra = rendered(capi.values(TEMPLATE, one, GROUPS[1:], IMAGE),
                     tmp_path)['OpenStackCluster'][0]['spec']
    assert 'apiServerLoadBalancer' not in infra and infra['disableAPIServerFloatingIP'] is False


def test_without_an_addon_provider_the_kubelets_name_their_servers(tmp_path):
    """No addon provider on the management cluster: the chart makes no add-on (its
    HelmRelease and Manifests kinds would have no controller), the kubelets run without an
    external cloud provider and give their Node the id CAPO gives the Machine, the pod and
    service networks are the cluster's; the operator's values sit under the cluster's."""
    site = {'registryMirrors': {}, 'apiServer': {'enableLoadBalancer': True},
            'controlPlane': {'kubeadmConfigSpec': {'clusterConfiguration': {
                'apiServer': {'timeoutForControlPlane': '20m0s'}}}}}
    one = dict(cluster({'flannel_network_cidr': '10.101.0.0/16'}), master_count=1,
               master_lb_enabled=False)
    objects = rendered(capi.values(dict(TEMPLATE, network_driver='flannel'), one, GROUPS[1:],
                                   IMAGE, addon_provider=False, base=site), tmp_path)
    assert not set(objects) & {'HelmRelease', 'Manifests'}, sorted(objects)
    spec = objects['KubeadmControlPlane'][0]['spec']['kubeadmConfigSpec']
    kubelets = [spec['initConfiguration']['nodeRegistration']['kubeletExtraArgs'],
                spec['joinConfiguration']['nodeRegistration']['kubeletExtraArgs']] + [
        t['spec']['template']['spec']['joinConfiguration']['nodeRegistration']['kubeletExtraArgs']
        for t in objects['KubeadmConfigTemplate']]
    assert all(k.get('provider-id') == 'openstack:///{{ v1.instance_id }}'
               and 'cloud-provider' not in k for k in kubelets), kubelets
    assert spec['clusterConfiguration']['apiServer']['timeoutForControlPlane'] == '20m0s'
    network = objects['Cluster'][0]['spec']['clusterNetwork']
    assert network['pods']['cidrBlocks'] == ['10.101.0.0/16']
    assert network['services']['cidrBlocks'] == ['10.254.0.0/16']
    # The cluster's own (no load balancer: master_lb_enabled) over the site's.
    assert 'apiServerLoadBalancer' not in objects['OpenStackCluster'][0]['spec']
