"""The Cluster API driver's mapping (module_utils/drivers/capi/capi.py): names, the
openstack-cluster chart's values, and the cluster's state read from CAPI's objects."""

import os
import re
import subprocess

import pytest
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

UUID = '0c5bd0b9-89c4-4c53-b690-52d5004e93a8'
TEMPLATE = {'image_id': 'ubuntu-2404-kube-v1.33.3', 'keypair_id': 'tpl-key',
            'flavor_id': 'm1.small', 'master_flavor_id': 'm1.medium',
            'dns_nameserver': '8.8.8.8, 1.1.1.1', 'network_driver': 'calico',
            'floating_ip_enabled': True, 'labels': {}}
IMAGE = {'id': 'img-1', 'name': 'ubuntu-2404-kube-v1.33.3', 'os_distro': 'ubuntu',
         'properties': {'kube_version': 'v1.33.3'}}


def cluster(**fields):
    found = {'uuid': UUID, 'name': 'My Cluster!', 'project_id': 'Proj-42ab',
             'keypair': 'mykey', 'master_count': 3, 'master_flavor_id': 'm1.large',
             'flavor_id': 'm1.small', 'labels': {}}
    found.update(fields)
    return found


def groups(*extra):
    return [{'name': 'default-master', 'role': 'master', 'node_count': 3, 'is_default': True},
            {'name': 'default-worker', 'role': 'worker', 'node_count': 2, 'is_default': True,
             'flavor_id': 'm1.small', 'min_node_count': 0}] + list(extra)


def test_names_are_valid_kubernetes_names_whatever_the_cluster_is_called():
    names = capi.names(cluster())
    assert names['namespace'] == 'magnum-proj42ab'
    assert re.match(r'^my-cluster-[a-z0-9]{12}$', names['release']), names
    assert names['credentials'] == names['release'] + '-cloud-credentials'
    for name in ('---', 'Ünïcödé', 'x' * 200, '9lives', 'a.b_c'):
        release = capi.names(cluster(name=name))['release']
        assert len(release) <= 53 and re.match(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', release), \
            (name, release)
    # Stable for a cluster, different for another.
    assert capi.names(cluster())['release'] == names['release']
    assert capi.names(cluster(uuid=UUID[:-1] + '9'))['release'] != names['release']


def test_values_map_the_template_cluster_groups_and_labels():
    labels = {'master_lb_floating_ip_enabled': 'false', 'fixed_subnet_cidr': '10.9.0.0/24',
              'boot_volume_size': '40', 'boot_volume_type': 'ssd', 'etcd_volume_size': '10',
              'etcd_volume_type': 'fast', 'monitoring_enabled': 'true',
              'master_lb_allowed_cidrs': '192.0.2.0/24, 198.51.100.0/24',
              'octavia_provider': 'ovn', 'extra_network_names': 'storage-net',
              'auto_healing_enabled': 'false'}
    extra = {'name': 'GPU Workers', 'role': 'gpu', 'node_count': 1, 'flavor_id': 'g1.large'}
    values = capi.values(TEMPLATE, cluster(labels=labels), groups(extra), IMAGE,
                         networks={'external': 'ext-id', 'fixed': 'net-id', 'subnet': 'sub-id'},
                         volume_types=['standard', 'ssd'])
    release = capi.names(cluster())['release']
    assert values == {
        'kubernetesVersion': '1.33.3', 'machineImageId': 'img-1', 'machineSSHKeyName': 'mykey',
        'cloudCredentialsSecretName': release + '-cloud-credentials',
        'etcd': {'blockDevice': {'size': 10, 'type': 'Volume', 'volumeType': 'fast'}},
        'apiServer': {'enableLoadBalancer': True, 'loadBalancerProvider': 'ovn',
                      'associateFloatingIP': False,
                      'allowedCIDRs': ['192.0.2.0/24', '198.51.100.0/24'],
                      'allowedCidrs': ['192.0.2.0/24', '198.51.100.0/24']},
        'clusterNetworking': {
            'dnsNameservers': ['8.8.8.8', '1.1.1.1'], 'externalNetworkId': 'ext-id',
            'internalNetwork': {'networkFilter': {'id': 'net-id'},
                                'subnetFilter': {'id': 'sub-id'}, 'nodeCidr': '10.9.0.0/24'}},
        'osDistro': 'ubuntu',
        'controlPlane': {'machineFlavor': 'm1.large', 'machineCount': 3,
                         'healthCheck': {'enabled': False},
                         'machineRootVolume': {'volumeType': 'ssd', 'diskSize': 40},
                         'kubeadmConfigSpec': {'preKubeadmCommands': [capi.JOIN_RETRY]}},
        'nodeGroupDefaults': {
            'healthCheck': {'enabled': False},
            'kubeadmConfigSpec': {'preKubeadmCommands': [capi.JOIN_RETRY]},
            'machineRootVolume': {'volumeType': 'ssd', 'diskSize': 40},
            'machineNetworking': {'ports': [{}, {'network': {'name': 'storage-net'},
                                                 'securityGroups': []}]}},
        'nodeGroups': [{'name': 'default-worker', 'machineFlavor': 'm1.small', 'machineCount': 2},
                       {'name': 'gpu-workers', 'machineFlavor': 'g1.large', 'machineCount': 1}],
        'addons': {
            'openstack': {
                'csiCinder': {
                    'defaultStorageClass': {
                        'name': 'standard', 'enabled': True, 'volumeType': 'standard',
                        'reclaimPolicy': 'Delete', 'allowVolumeExpansion': True,
                        'volumeBindingMode': 'Immediate', 'availabilityZone': 'nova',
                        'fstype': 'ext4'},
                    'additionalStorageClasses': [{
                        'name': 'ssd', 'enabled': True, 'volumeType': 'ssd',
                        'reclaimPolicy': 'Delete', 'allowVolumeExpansion': True,
                        'volumeBindingMode': 'Immediate', 'availabilityZone': 'nova',
                        'fstype': 'ext4'}]},
                'cloudConfig': {'LoadBalancer': {'lb-provider': 'ovn',
                                                 'lb-method': 'SOURCE_IP_PORT',
                                                 'create-monitor': True}}},
            'monitoring': {'enabled': True}, 'kubernetesDashboard': {'enabled': False},
            'ingress': {'enabled': False}, 'cni': {'type': 'calico'}}}


def test_the_api_load_balancer_follows_master_lb_enabled_the_clusters_over_its_templates():
    def lb(template_lb, cluster_lb):
        tpl = dict(TEMPLATE, master_lb_enabled=template_lb)
        one = cluster(master_count=1, master_lb_enabled=cluster_lb)
        return capi.values(tpl, one, groups(), IMAGE)['apiServer']['enableLoadBalancer']
    assert lb(False, None) is False and lb(True, None) is True
    assert lb(True, False) is False and lb(False, True) is True


def test_label_text_reaches_the_chart_filtered_and_cluster_labels_win():
    tpl = dict(TEMPLATE, labels={'octavia_provider': 'amphora',
                                 'fixed_subnet_cidr': '10.1.0.0/24'})
    values = capi.values(tpl, cluster(labels={'octavia_provider': 'ovn{{ lookup("x") }}'}),
                         groups(), IMAGE)
    # Braces, quotes and parentheses dropped.
    assert values['apiServer']['loadBalancerProvider'] == 'ovn lookupx '
    assert values['clusterNetworking']['internalNetwork']['nodeCidr'] == '10.1.0.0/24'
    # Defaults: auto-healing on (CAPI's MachineHealthChecks), the fixed network made by CAPO.
    assert values['controlPlane']['healthCheck'] == {'enabled': True}
    assert values['clusterNetworking']['internalNetwork']['networkFilter'] is None
    assert values['etcd'] == {} and 'csiCinder' in values['addons']['openstack']


def test_keystone_auth_points_the_webhook_at_the_clouds_keystone():
    values = capi.values(TEMPLATE, cluster(labels={'keystone_auth_enabled': 'true'}), groups(),
                         IMAGE, auth={'auth_url': 'https://keystone/v3', 'project_id': 'p1'})
    assert values['authWebhook'] == 'k8s-keystone-auth'
    assert values['addons']['openstack']['k8sKeystoneAuth'] == {
        'enabled': True, 'values': {'openstackAuthUrl': 'https://keystone/v3',
                                    'projectId': 'p1'}}


def test_autoscaling_gives_each_group_its_bounds():
    extra = {'name': 'batch', 'role': 'worker', 'node_count': 2, 'min_node_count': 1,
             'max_node_count': 5}
    labels = {'auto_scaling_enabled': 'true', 'min_node_count': '1', 'max_node_count': '4'}
    found = capi.values(TEMPLATE, cluster(labels=labels), groups(extra), IMAGE)['nodeGroups']
    assert found == [
        {'name': 'default-worker', 'machineFlavor': 'm1.small', 'machineCount': 2,
         'autoscale': True, 'machineCountMin': 1, 'machineCountMax': 4},
        {'name': 'batch', 'machineFlavor': 'm1.small', 'machineCount': 2,
         'autoscale': True, 'machineCountMin': 1, 'machineCountMax': 5}]
    # Bounds equal to the count: a fixed group.
    fixed = capi.values(TEMPLATE, cluster(labels={'auto_scaling_enabled': 'true'}), groups(),
                        IMAGE)['nodeGroups']
    assert fixed == [{'name': 'default-worker', 'machineFlavor': 'm1.small', 'machineCount': 2}]
    with pytest.raises(Invalid, match=r'max_node_count for default-worker is invalid '
                                      r'\(min_node_count \(2\) should'):
        capi.values(TEMPLATE, cluster(labels=dict(labels, min_node_count='2',
                                                  max_node_count='1')), groups(), IMAGE)


def test_the_image_must_say_its_kubernetes_version():
    with pytest.raises(Invalid, match='does not have a kube_version property'):
        capi.values(TEMPLATE, cluster(), groups(), {'id': 'i', 'name': 'plain'})
    with pytest.raises(Invalid, match="has kube_version 'latest'"):
        capi.kube_version({'id': 'i', 'kube_version': 'latest'})
    assert capi.kube_version({'id': 'i', 'kube_version': '1.31.4'}) == '1.31.4'


def test_chart_from_operator_settings_and_the_template_label():
    assert capi.chart({}) == capi.CHART
    tpl = {'labels': {'capi_helm_chart_version': '0.26.1'}}
    assert capi.chart(tpl, {'repo': 'https://mirror/charts'}) == dict(
        capi.CHART, version='0.26.1', repo='https://mirror/charts')


def condition(kind, status='True', severity=None, message=None):
    return {'type': kind, 'status': status, 'severity': severity, 'message': message}


def obj(name, conditions=(), spec=None, **status):
    return {'metadata': {'name': name}, 'spec': spec or {},
            'status': dict(status, conditions=list(conditions))}


def machine(name, address, control_plane=False):
    labels = {'cluster.x-k8s.io/control-plane': ''} if control_plane else {}
    return {'metadata': {'name': name, 'labels': labels},
            'status': {'addresses': [{'type': 'InternalIP', 'address': address}]}}


def test_status_is_read_from_capis_objects():
    assert capi.status(None, None, [], [])['state'] == 'missing'
    cluster_obj = obj('rel', [condition('InfrastructureReady', 'False')],
                      spec={'controlPlaneEndpoint': {'host': '203.0.113.7', 'port': 6443}})
    found = capi.status(cluster_obj, None, [], [])
    assert found['state'] == 'progressing'
    assert found['reason'] == ('Cluster rel: infrastructure not ready; '
                               'no KubeadmControlPlane yet')
    assert found['api_address'] == 'https://203.0.113.7:6443'

    cluster_obj = obj('rel', [condition('InfrastructureReady')],
                      spec={'controlPlaneEndpoint': {'host': '203.0.113.7', 'port': 6443}})
    kcp = obj('rel-control-plane', [condition('Ready')], version='v1.33.3')
    md = obj('rel-default-worker', spec={'replicas': 2}, readyReplicas=1)
    machines = [machine('m0', '10.0.0.3', True), machine('w0', '10.0.0.4'),
                {'metadata': {'name': 'w1'}, 'status': {}}]
    found = capi.status(cluster_obj, kcp, [md], machines)
    assert (found['state'], found['reason']) == (
        'progressing', 'MachineDeployment rel-default-worker: 1 of 2 replicas ready')
    assert found['coe_version'] == 'v1.33.3'
    assert (found['master_addresses'], found['node_addresses']) == (['10.0.0.3'], ['10.0.0.4'])

    md['status']['readyReplicas'] = 2
    assert capi.status(cluster_obj, kcp, [md], machines)['state'] == 'ready'
    # An upgrade in progress: the control plane ready at the old version, or machines
    # not yet replaced, is not done.
    kcp['spec']['version'] = 'v1.34.1'
    assert capi.status(cluster_obj, kcp, [md], machines)['reason'] == (
        'KubeadmControlPlane rel-control-plane: at v1.33.3, upgrading to v1.34.1')
    kcp['status']['version'] = 'v1.34.1'
    md['status']['updatedReplicas'] = 1
    assert capi.status(cluster_obj, kcp, [md], machines)['reason'] == (
        'MachineDeployment rel-default-worker: 1 of 2 machines updated')
    md['status']['updatedReplicas'] = 2
    assert capi.status(cluster_obj, kcp, [md], machines)['state'] == 'ready'
    # A new image at the same version: the objects stay ready while CAPI rolls every
    # machine - a change its controller has not seen yet, a control plane machine not yet
    # of the spec, an old machine not gone yet are not done.
    kcp['metadata']['generation'], kcp['status']['observedGeneration'] = 3, 2
    kcp['spec']['replicas'], kcp['status']['updatedReplicas'] = 1, 0
    assert capi.status(cluster_obj, kcp, [md], machines)['reason'] == (
        'KubeadmControlPlane rel-control-plane: its change not yet seen by its controller')
    kcp['status']['observedGeneration'] = 3
    assert capi.status(cluster_obj, kcp, [md], machines)['reason'] == (
        'KubeadmControlPlane rel-control-plane: 0 of 1 machines updated')
    kcp['status']['updatedReplicas'], kcp['status']['replicas'] = 1, 2
    assert capi.status(cluster_obj, kcp, [md], machines)['reason'] == (
        'KubeadmControlPlane rel-control-plane: 2 machines, 1 wanted')
    kcp['status']['replicas'] = 1
    md['status']['replicas'] = 3
    assert capi.status(cluster_obj, kcp, [md], machines)['reason'] == (
        'MachineDeployment rel-default-worker: 3 machines, 2 wanted')
    md['status']['replicas'] = 2
    assert capi.status(cluster_obj, kcp, [md], machines)['state'] == 'ready'

    # CAPO's transient errors (severity Warning: it tries again), mirrored by CAPI onto
    # the Cluster and the Machines, are the reason while the cluster is in progress.
    waiting = obj('rel', [condition('InfrastructureReady', 'False', 'Warning',
                                    'Failed to reconcile network: quota exceeded')])
    assert capi.status(waiting, None, [], [])['reason'] == (
        'Cluster rel: infrastructure not ready: Failed to reconcile network: quota exceeded; '
        'no KubeadmControlPlane yet')
    md['status']['readyReplicas'] = 1
    slow = obj('w1', [condition('InfrastructureReady', 'False', 'Warning',
                                'Floating IP cannot be obtained or created: 409 quota')])
    found = capi.status(cluster_obj, kcp, [md], machines + [slow])
    assert (found['state'], found['reason']) == (
        'progressing', 'MachineDeployment rel-default-worker: 1 of 2 replicas ready; '
        'Machine w1: Floating IP cannot be obtained or created: 409 quota')
    md['status']['readyReplicas'] = 2

    # Severity Error is tried again too (CAPI's preflight checks, CAPO's calls to the
    # cloud): in progress, CAPI's words the reason.
    retried = obj('w1', [condition('InfrastructureReady', 'False', 'Error',
                                   'Failed to create server: flavor m1.huge not found')])
    found = capi.status(cluster_obj, kcp, [md], machines + [retried])
    assert (found['state'], found['reason']) == (
        'progressing', 'Machine w1: Failed to create server: flavor m1.huge not found')
    # Nova's refusal of a server (CAPO's OpenStackServer keeps it; the Machine still
    # says it waits for its bootstrap data): the reason names the server and the quota.
    refused = obj('w2', [dict(condition(
        'InstanceReady', 'False', 'Error', 'error creating Openstack instance: ... 403 ... '
        'Quota exceeded for instances: Requested 1, but already used 2 of 2 instances'),
        reason='InstanceCreateFailed')], instanceState='ERROR')
    found = capi.status(cluster_obj, kcp, [md], machines, [refused])
    assert found['state'] == 'progressing'
    assert found['reason'].endswith(
        'OpenStackServer w2: error creating Openstack instance: ... 403 ... Quota exceeded '
        'for instances: Requested 1, but already used 2 of 2 instances'), found['reason']
    # What CAPO does not try again: a server Nova put in ERROR, a TerminalError.
    broken = obj('w1', [dict(condition('InfrastructureReady', 'False', 'Error',
                                       'Instance is in ERROR state'),
                             reason='InstanceStateError')])
    found = capi.status(cluster_obj, kcp, [md], machines + [broken])
    assert (found['state'], found['reason']) == (
        'failed', 'Machine w1: Instance is in ERROR state')
    kcp['status']['failureMessage'] = 'etcd quorum lost'
    assert 'KubeadmControlPlane rel-control-plane: etcd quorum lost' in capi.status(
        cluster_obj, kcp, [md], machines)['reason']


def test_the_template_label_picks_the_cluster_api_driver():
    from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import (
        DRIVERS as drivers)
    from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
        ClusterTypeNotSupported)
    assert drivers.find('kubernetes', 'vm', 'ubuntu').name == 'k8s_kubeadm'
    assert drivers.find('kubernetes', 'vm', 'ubuntu', {'kube_tag': 'v1.33.3'}).name == \
        'k8s_kubeadm'
    chosen = drivers.find('kubernetes', 'vm', 'ubuntu', {'capi_helm_chart_version': '0.27.0'})
    assert chosen.name == 'k8s_capi_helm' and chosen.as_dict()['own_infrastructure']
    assert drivers.find('kubernetes', 'vm', 'flatcar', {'capi_helm_chart_version': '0.27.0'}) \
        is chosen
    # Flatcar only through Cluster API; bare metal never (CAPO builds Nova servers).
    with pytest.raises(ClusterTypeNotSupported):
        drivers.find('kubernetes', 'vm', 'flatcar')
    with pytest.raises(ClusterTypeNotSupported):
        drivers.find('kubernetes', 'bm', 'ubuntu', {'capi_helm_chart_version': '0.27.0'})


def capi_machine(name, deployment=None, node=None, server=None, address=None):
    labels = {'cluster.x-k8s.io/deployment-name': deployment} if deployment else \
        {'cluster.x-k8s.io/control-plane': ''}
    return {'metadata': {'name': name, 'labels': labels},
            'spec': {'providerID': 'openstack:///' + server} if server else {},
            'status': dict({'nodeRef': {'name': node}} if node else {},
                           addresses=[{'type': 'InternalIP', 'address': address}]
                           if address else [])}


def test_machines_give_each_node_group_its_nodes_and_a_shrink_its_machines():
    groups = [{'uuid': 'm', 'name': 'default-master', 'role': 'master'},
              {'uuid': 'w', 'name': 'default-worker', 'role': 'worker'},
              {'uuid': 'g', 'name': 'GPU nodes', 'role': 'gpu'}]
    machines = [capi_machine('rel-control-plane-a', node='rel-cp-a', server='s1',
                             address='10.0.0.3'),
                capi_machine('rel-default-worker-x', 'rel-default-worker', 'rel-w-x', 's2',
                             '10.0.0.4'),
                capi_machine('rel-gpu-nodes-y', 'rel-gpu-nodes'),
                capi_machine('other-z', 'other-md', 'other-z', 's9')]
    assert capi.machine_nodes(machines, 'rel', groups) == {
        'm': [{'name': 'rel-cp-a', 'id': 's1', 'address': '10.0.0.3'}],
        'w': [{'name': 'rel-w-x', 'id': 's2', 'address': '10.0.0.4'}],
        'g': [{'name': 'rel-gpu-nodes-y'}]}
    # By Node name, server id or Machine name; each Machine once.
    chosen = capi.machines_to_delete(machines, ['rel-w-x', 's2', 'rel-gpu-nodes-y'])
    assert [m['metadata']['name'] for m in chosen] == [
        'rel-default-worker-x', 'rel-gpu-nodes-y']
    with pytest.raises(Invalid, match='Cluster API does not have: nope'):
        capi.machines_to_delete(machines, ['rel-w-x', 'nope'])


def test_an_upgrade_goes_up_one_minor_version_at_most():
    capi.check_upgrade('v1.33.3', '1.33.5')
    capi.check_upgrade('v1.33.3', '1.34.0')
    capi.check_upgrade(None, '1.34.0')  # a cluster Cluster API never reported
    with pytest.raises(Invalid, match='Downgrading a cluster is not supported: '
                                      'Kubernetes v1.33.3 -> 1.32.9'):
        capi.check_upgrade('v1.33.3', '1.32.9')
    with pytest.raises(Invalid, match='skips a minor version'):
        capi.check_upgrade('v1.33.3', '1.35.0')


def test_the_kubeadm_driver_refuses_the_cluster_api_drivers_labels():
    from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import (
        DRIVERS as drivers)
    kubeadm = drivers.find('kubernetes', 'vm', 'debian', {'extra_network_names': 'storage'})
    with pytest.raises(Invalid, match="Labels extra_network_names are driver k8s_capi_helm's "
                                      r"\(a template with the capi_helm_chart_version label\); "
                                      "driver k8s_kubeadm does not use them"):
        kubeadm.check({}, {'extra_network_names': 'storage'})
    kubeadm.check({}, {'extra_network_names': ''})
    capi_driver = drivers.find('kubernetes', 'vm', 'ubuntu', {'capi_helm_chart_version': '1'})
    capi_driver.check({}, {'extra_network_names': 'storage', 'csi_cinder_fstype': 'xfs'})
    with pytest.raises(Invalid, match='Rotating the CA of a Cluster API cluster'):
        capi_driver.check_operation('ca_rotate')
    kubeadm.check_operation('ca_rotate')


def test_the_api_floating_ips_of_a_cluster_are_known_by_their_description():
    release = capi.names(cluster())
    described = 'Created by cluster-api-provider-openstack cluster %s-%s' % (
        release['namespace'], release['release'])
    ours = capi.api_floating_ip_description(cluster())
    assert ours == 'Magnum cluster %s API server (Cluster API)' % UUID
    assert capi.left_behind({'description': described, 'port_id': None}, cluster())
    assert capi.left_behind({'description': ours, 'port_id': None}, cluster())
    # in use, another cluster's (a longer name sharing the prefix), or neither's
    assert not capi.left_behind({'description': described, 'port_id': 'p1'}, cluster())
    assert not capi.left_behind({'description': ours, 'port_id': 'p1'}, cluster())
    assert not capi.left_behind({'description': described + 'x', 'port_id': None}, cluster())
    assert not capi.left_behind({'description': 'magnum-cluster=%s' % UUID}, cluster())


def test_a_failed_join_is_tried_again_and_the_operators_commands_kept():
    """CAPI runs a machine's kubeadm join once: the driver's shell function, defined first
    in the same cloud-init script, wraps it (tried again after a reset, the certificates
    CAPI wrote kept); the operator's pre-kubeadm commands follow it."""
    site = {'controlPlane': {'kubeadmConfigSpec': {'preKubeadmCommands': ['echo site']}}}
    found = capi.values(TEMPLATE, cluster(master_count=1), groups(), IMAGE, base=site)
    assert found['controlPlane']['kubeadmConfigSpec']['preKubeadmCommands'] == [
        capi.JOIN_RETRY, 'echo site']
    assert found['nodeGroupDefaults']['kubeadmConfigSpec']['preKubeadmCommands'] == [
        capi.JOIN_RETRY]


def test_the_join_retry_runs_in_clouds_init_shell(tmp_path):
    """The function in a script as cloud-init's runcmd makes it (one /bin/sh script, CAPI's
    join line after it), kubeadm and sleep stand-ins on the PATH: a join failing twice is
    reset and run again until it succeeds, then CAPI's sentinel is written; an init runs
    once as it is; a join failing every time gives up after 5 and writes no sentinel."""
    bin_ = tmp_path / 'bin'
    bin_.mkdir()
    calls = tmp_path / 'calls'
    (bin_ / 'kubeadm').write_text(
        '#!/bin/sh\necho "$*" >> %s\n[ "$1" = join ] && [ "$(grep -c ^join %s)" -le '
        '"$FAILS" ] && exit 1\nexit 0\n' % (calls, calls))
    (bin_ / 'sleep').write_text('#!/bin/sh\nexit 0\n')
    for tool in ('kubeadm', 'sleep'):
        (bin_ / tool).chmod(0o755)
    script = tmp_path / 'runcmd'
    script.write_text('#!/bin/sh\n%s\nkubeadm join --config /run/kubeadm/j.yaml && echo '
                      'success > %s\nkubeadm init --config /run/kubeadm/kubeadm.yaml\n'
                      % (capi.JOIN_RETRY, tmp_path / 'sentinel'))

    def run(fails):
        calls.write_text('')
        subprocess.run(['/bin/sh', str(script)], check=False, capture_output=True, env=dict(
            os.environ, PATH='%s:%s' % (bin_, os.environ['PATH']), FAILS=str(fails)))
        return calls.read_text().splitlines()
    join, reset = 'join --config /run/kubeadm/j.yaml', 'reset -f'
    init = 'init --config /run/kubeadm/kubeadm.yaml'
    assert run(2) == [join, reset, join, reset, join, init]
    assert (tmp_path / 'sentinel').read_text() == 'success\n'
    (tmp_path / 'sentinel').unlink()
    assert run(9) == [join, reset] * 5 + [init]
    assert not (tmp_path / 'sentinel').exists()


def test_without_a_load_balancer_the_api_server_keeps_a_floating_ip_of_the_drivers():
    """CAPO deletes an address it allocated with the control plane machine holding it (the
    cluster's endpoint gone at the first machine replaced): the driver gives its own where
    no load balancer fronts the API and a floating IP is wanted, unless the operator's
    values name one."""
    networks = {'external': 'ext-id'}
    one = cluster(master_count=1, master_lb_enabled=False)
    found = capi.values(TEMPLATE, one, groups(), IMAGE, networks)
    assert capi.api_floating_ip_wanted(found)
    found['apiServer']['floatingIP'] = '192.0.2.7'     # as capi_cluster gives it
    assert not capi.api_floating_ip_wanted(found)
    assert not capi.api_floating_ip_wanted(capi.values(
        TEMPLATE, dict(one, master_lb_enabled=True), groups(), IMAGE, networks))
    assert not capi.api_floating_ip_wanted(capi.values(
        dict(TEMPLATE, floating_ip_enabled=False), one, groups(), IMAGE, networks))
    assert not capi.api_floating_ip_wanted(capi.values(TEMPLATE, one, groups(), IMAGE))
    assert not capi.api_floating_ip_wanted(capi.values(
        TEMPLATE, one, groups(), IMAGE, networks,
        base={'apiServer': {'floatingIP': '192.0.2.9'}}))
