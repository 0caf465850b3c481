"""Kubernetes add-ons' pure parts: what the labels turn on (the guide's defaults), chart
versions, values and image prefix, and where each chart comes from."""

import json

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import addons
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    k8s_config as k8s)
from ansible_collections.openstack.magnum.plugins.module_utils.core import healing, labels, model
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

TEMPLATE = {'coe': 'kubernetes', 'network_driver': 'flannel'}


def plan(**labels):
    return addons.plan(k8s.settings({'labels': labels}, TEMPLATE), labels)


def one(name, **labels):
    (made,) = [a for a in plan(**labels) if a['name'] == name]
    return made


def names(**labels):
    return [a['name'] for a in plan(**labels)]


def test_metrics_server_is_on_by_default_as_in_the_guide_and_its_label_turns_it_off():
    assert names() == ['metrics-server', 'node-problem-detector', 'headlamp']
    made = one('metrics-server')
    assert made['namespace'] == 'kube-system'
    assert made['chart'] == 'metrics-server' and made['version'] == '3.13.0'
    assert made['archive'] == 'metrics-server-3.13.0.tgz'
    assert made['repo'] == 'https://kubernetes-sigs.github.io/metrics-server/'
    assert '--kubelet-insecure-tls' in made['values']['args']
    assert 'image' not in made['values']  # the chart's own image when there is no mirror
    for off in ('false', 'False', '0', 'no'):
        assert names(metrics_server_enabled=off) == ['node-problem-detector', 'headlamp']
    assert names(metrics_server_enabled='true', npd_enabled='false',
                 kube_dashboard_enabled='false') == ['metrics-server']


def test_chart_tags_take_magnums_leading_v_and_the_prefix_names_the_image():
    made = one('metrics-server', metrics_server_chart_tag='v3.12.2',
               container_infra_prefix='registry.example.com:5000/mirror/')
    assert made['version'] == '3.12.2' and made['archive'] == 'metrics-server-3.12.2.tgz'
    assert made['values']['image'] == {
        'repository': 'registry.example.com:5000/mirror/metrics-server'}
    assert one('metrics-server', metrics_server_chart_tag='3.11.0')['version'] == '3.11.0'


def test_the_node_problem_detector_is_on_by_default_as_in_the_guide():
    made = one('node-problem-detector')
    assert (made['chart'], made['version'], made['namespace']) == (
        'node-problem-detector', '2.4.1', 'kube-system')
    assert made['repo'].startswith('https://raw.githubusercontent.com/deliveryhero/')
    assert made['values'] == {}  # the chart's image, tolerations and privileges
    tagged = one('node-problem-detector', node_problem_detector_tag='v1.34.0',
                 container_infra_prefix='registry.example.com:5000/mirror')
    assert tagged['values'] == {'image': {
        'repository': 'registry.example.com:5000/mirror/node-problem-detector',
        'tag': 'v1.34.0'}}
    assert names(npd_enabled='false') == ['metrics-server', 'headlamp']


def test_charts_come_from_the_offline_directory_and_missing_ones_are_named(tmp_path):
    made = plan(npd_enabled='false', kube_dashboard_enabled='false')
    with pytest.raises(Invalid) as err:
        addons.chart_sources(made, offline_dir=str(tmp_path))
    assert 'lacks the add-ons\' charts: charts/metrics-server-3.13.0.tgz' in str(err.value)
    assert 'metrics_server_enabled=false' in str(err.value)
    (tmp_path / 'charts').mkdir()
    (tmp_path / 'charts' / 'metrics-server-3.13.0.tgz').write_bytes(b'chart')
    found = addons.chart_sources(made, offline_dir=str(tmp_path))
    assert found == {'charts': {'metrics-server': str(
        tmp_path / 'charts' / 'metrics-server-3.13.0.tgz')}, 'downloads': []}


def test_charts_are_fetched_once_from_a_mirror_or_their_repository(tmp_path):
    made = plan(npd_enabled='false', kube_dashboard_enabled='false')
    dest = str(tmp_path / 'charts' / 'metrics-server-3.13.0.tgz')
    upstream = addons.chart_sources(made, cache_dir=str(tmp_path))
    assert upstream['downloads'] == [{
        'name': 'metrics-server', 'dest': dest, 'chart': 'metrics-server', 'version': '3.13.0',
        'repo': 'https://kubernetes-sigs.github.io/metrics-server/'}]
    mirror = addons.chart_sources(made, charts_url='http://mirror/charts/',
                                  cache_dir=str(tmp_path))
    assert mirror['downloads'] == [{'name': 'metrics-server', 'dest': dest,
                                    'url': 'http://mirror/charts/metrics-server-3.13.0.tgz'}]
    (tmp_path / 'charts').mkdir()
    (tmp_path / 'charts' / 'metrics-server-3.13.0.tgz').write_bytes(b'chart')
    again = addons.chart_sources(made, cache_dir=str(tmp_path))
    assert again == {'charts': {'metrics-server': dest}, 'downloads': []}
    assert addons.chart_sources([], offline_dir=None) == {'charts': {}, 'downloads': []}


def test_the_admin_kubeconfig_names_the_credential_by_path():
    doc = k8s.admin_kubeconfig('https://10.0.0.5:6443', '/tmp/cred')
    assert doc['clusters'][0]['cluster'] == {
        'server': 'https://10.0.0.5:6443', 'certificate-authority': '/tmp/cred/ca.crt'}
    assert doc['users'][0]['user'] == {'client-certificate': '/tmp/cred/admin.crt',
                                       'client-key': '/tmp/cred/admin.key'}
    with pytest.raises(Invalid):
        k8s.admin_kubeconfig('', '/tmp/cred')


def test_an_upgrade_takes_the_target_templates_chart_versions_and_image_tags_only():
    cluster = {'metrics_server_enabled': 'true', 'metrics_server_chart_tag': 'v3.12.2',
               'kube_tag': 'v1.35.0', 'node_problem_detector_tag': 'v1.34.0'}
    target = {'metrics_server_chart_tag': 'v3.13.0', 'metrics_server_enabled': 'false',
              'kube_tag': 'v1.36.0', 'npd_enabled': 'false',
              'node_problem_detector_tag': 'v1.35.1'}
    assert addons.upgrade_labels(cluster, target) == dict(
        cluster, metrics_server_chart_tag='v3.13.0', node_problem_detector_tag='v1.35.1')
    assert addons.upgrade_labels(cluster, {}) == cluster
    made = addons.plan(k8s.settings({'labels': cluster}, TEMPLATE),
                       addons.upgrade_labels(cluster, target))
    assert [(a['name'], a['version']) for a in made] == [
        ('metrics-server', '3.13.0'), ('node-problem-detector', '2.4.1'), ('headlamp', '0.45.0')]
    assert made[1]['values']['image']['tag'] == 'v1.35.1'


def test_labels_naming_add_ons_not_deployed_are_found_never_ignored():
    assert addons.not_deployed({}) == []
    assert addons.not_deployed({'npd_enabled': 'false', 'ingress_controller': '',
                                'metrics_server_enabled': 'true'}) == []
    assert addons.not_deployed({'cloud_provider_enabled': 'True', 'ingress_controller': 'nginx',
                                'auto_healing_enabled': '1'}) == [
        'ingress_controller=nginx (ingress-nginx, retired upstream in March 2026; '
        'ingress_controller=traefik serves the same Ingress resources)',
        ]
    # draino is refused only where auto-healing is on; magnum-auto-healer (the default) runs.
    assert addons.not_deployed({'auto_healing_enabled': '1'}) == []
    assert addons.not_deployed({'auto_healing_controller': 'draino'}) == []
    assert addons.not_deployed({'auto_healing_enabled': 'true',
                                'auto_healing_controller': 'draino'}) == [
        'auto_healing_controller=draino (draino, archived upstream; magnum-auto-healer, the '
        'default, replaces broken workers)']
    # traefik is deployed (an add-on), never refused.
    assert addons.not_deployed({'ingress_controller': 'traefik'}) == []
    # Every one is a label of the guide's catalogue, and none is an add-on deployed.
    deployed = set(a.label for a in addons.ADDONS if not isinstance(a.when, str))
    for label, _ in addons.NOT_DEPLOYED:
        assert label in labels.catalogue() and label not in deployed
    assert set(addons.VALUES_NOT_DEPLOYED['ingress_controller']) | {'traefik', 'octavia'} == set(
        v for v in labels.catalogue()['ingress_controller'][1] if v)
    assert set(addons.VALUES_NOT_DEPLOYED['auto_healing_controller']) | set(
        healing.CONTROLLERS) == set(labels.catalogue()['auto_healing_controller'][1])


def test_traefik_serves_ingresses_from_the_nodes_of_the_ingress_role():
    assert 'traefik' not in names(ingress_controller='')
    made = one('traefik', ingress_controller='traefik')
    assert (made['chart'], made['version'], made['repo']) == (
        'traefik', '41.3.0', 'https://traefik.github.io/charts')
    values = made['values']
    assert values['deployment'] == {'kind': 'DaemonSet'}
    assert values['nodeSelector'] == {'role': 'ingress'}  # the guide's default role
    assert values['ports'] == {'web': {'hostPort': 80}, 'websecure': {'hostPort': 443}}
    assert values['updateStrategy']['rollingUpdate'] == {
        'maxUnavailable': 1, 'maxSurge': 0}
    assert values['service'] == {'spec': {'type': 'ClusterIP'}} and 'image' not in values
    mirrored = one('traefik', ingress_controller='traefik', ingress_controller_role='edge',
                   container_infra_prefix='registry.example.com:5000/mirror/',
                   traefik_ingress_controller_tag='v3.7.10')['values']
    assert mirrored['nodeSelector'] == {'role': 'edge'}
    assert mirrored['image'] == {'registry': 'registry.example.com:5000/mirror',
                                 'repository': 'traefik', 'tag': 'v3.7.10'}


def test_the_dashboard_label_deploys_headlamp_its_successor_on_by_default():
    made = one('headlamp')
    assert (made['chart'], made['version'], made['repo']) == (
        'headlamp', '0.45.0', 'https://kubernetes-sigs.github.io/headlamp/')
    assert made['values']['clusterRoleBinding'] == {'create': False}
    assert 'image' not in made['values']
    assert one('headlamp', container_infra_prefix='registry.example.com:5000/mirror')[
        'values']['image'] == {'registry': 'registry.example.com:5000/mirror',
                               'repository': 'headlamp'}
    assert 'headlamp' not in names(kube_dashboard_enabled='false')


def test_monitoring_is_kube_prometheus_stack_with_the_templates_grafana_password():
    assert 'kube-prometheus-stack' not in names()
    for label in ('monitoring_enabled', 'prometheus_monitoring'):
        assert 'kube-prometheus-stack' in names(**{label: 'true'})
    made = one('kube-prometheus-stack', monitoring_enabled='true', grafana_admin_passwd='s3cret',
               prometheus_operator_chart_tag='v88.0.0')
    assert (made['chart'], made['version'], made['namespace']) == (
        'kube-prometheus-stack', '88.0.0', 'monitoring')
    assert made['values'] == {'grafana': {'adminPassword': 's3cret'}}
    mirrored = one('kube-prometheus-stack', monitoring_enabled='true',
                   container_infra_prefix='mirror.example:5000/m')['values']
    assert mirrored['prometheus']['prometheusSpec']['image'] == {
        'registry': 'mirror.example:5000/m', 'repository': 'prometheus'}
    assert mirrored['grafana']['sidecar']['image'] == {
        'registry': 'mirror.example:5000/m', 'repository': 'k8s-sidecar'}
    assert mirrored['kube-state-metrics']['image']['repository'] == 'kube-state-metrics'
    assert 'grafana' not in one('kube-prometheus-stack', monitoring_enabled='true')['values']


def test_the_prometheus_adapter_comes_with_monitoring_unless_turned_off():
    assert 'prometheus-adapter' not in names(prometheus_adapter_enabled='true')
    assert names(monitoring_enabled='true')[-2:] == ['kube-prometheus-stack',
                                                     'prometheus-adapter']
    assert 'prometheus-adapter' not in names(monitoring_enabled='true',
                                             prometheus_adapter_enabled='false')
    made = one('prometheus-adapter', prometheus_monitoring='true',
               prometheus_adapter_configmap='my-rules', prometheus_adapter_chart_tag='v5.2.0',
               container_infra_prefix='mirror.example:5000/m')
    assert (made['version'], made['namespace']) == ('5.2.0', 'monitoring')
    assert made['values'] == {
        'prometheus': {'url': 'http://kube-prometheus-stack-prometheus.monitoring.svc',
                       'port': 9090},
        'rules': {'existing': 'my-rules'},
        'image': {'repository': 'mirror.example:5000/m/prometheus-adapter'}}


UUID = '7b2c6a4e-25d5-4a2e-9d1c-1f3c1f0f1f51'


def cloud_plan(provider, template=None, **labels):
    conf = k8s.settings({'uuid': UUID, 'labels': labels}, dict(TEMPLATE, **(template or {})),
                        provider=provider)
    return dict((a['name'], a) for a in addons.plan(conf, labels))


def test_the_cloud_provider_initializes_the_clouds_servers_and_serves_local_nodes_lbs_only():
    assert 'openstack-cloud-controller-manager' not in cloud_plan('openstack')
    made = cloud_plan('openstack', cloud_provider_enabled='true',
                      container_infra_prefix='mirror.example.com/k8s',
                      cloud_provider_tag='v1.36.1')['openstack-cloud-controller-manager']
    assert (made['chart'], made['version'], made['namespace']) == (
        'openstack-cloud-controller-manager', '2.36.0', 'kube-system')
    values = made['values']
    # Its load balancers are kube_service_<uuid>_..., what the cluster's delete removes.
    assert values['cluster'] == {'name': UUID}
    assert values['enabledControllers'] == ['cloud-node', 'cloud-node-lifecycle', 'service']
    assert values['image'] == {
        'repository': 'mirror.example.com/k8s/openstack-cloud-controller-manager',
        'tag': 'v1.36.1'}
    # The cloud-config reaches the chart as a file written by openstack_cloud_config.
    assert made['cloud_conf_key'] == ['cloudConfigContents']
    assert 'cloudConfigContents' not in values
    local = cloud_plan('docker', cloud_provider_enabled='true')
    assert local['openstack-cloud-controller-manager']['values']['enabledControllers'] == [
        'service']
    # The controller manager's leader-election timing (the role's component flags) is
    # the cloud's controller manager's too; none given, Kubernetes' own.
    assert 'controllerExtraArgs' not in values
    conf = k8s.settings({'uuid': UUID, 'labels': {'cloud_provider_enabled': 'true'}},
                        TEMPLATE, provider='openstack')
    conf['component_flags'] = {'controllerManager': {
        'leader-elect-lease-duration': '60s', 'leader-elect-renew-deadline': '40s',
        'terminated-pod-gc-threshold': '10'}}
    made = dict((a['name'], a) for a in addons.plan(conf, {'cloud_provider_enabled': 'true'}))
    assert made['openstack-cloud-controller-manager']['values']['controllerExtraArgs'] == (
        '- --leader-elect-lease-duration=60s\n- --leader-elect-renew-deadline=40s')
    conf['component_flags']['controllerManager']['leader-elect-retry-period'] = '{{ x }}'
    with pytest.raises(Invalid, match='must be a duration'):
        addons.plan(conf, {'cloud_provider_enabled': 'true'})


def test_kubelets_leave_node_initialization_to_the_cloud_provider_on_the_clouds_servers():
    def kubelet_args(provider, **labels):
        conf = k8s.settings({'uuid': UUID, 'labels': labels}, TEMPLATE, provider=provider)
        node = {'name': 'n', 'address': '10.0.0.5', 'role': 'worker',
                'nodegroup': 'default-worker'}
        return k8s.kubeadm_join(conf, node, '10.0.0.2', 't', 'sha256:x')
    assert 'cloud-provider' not in str(kubelet_args('openstack'))
    assert 'cloud-provider' not in str(kubelet_args('docker', cloud_provider_enabled='true'))
    assert {'name': 'cloud-provider', 'value': 'external'} in \
        kubelet_args('openstack', cloud_provider_enabled='true')['nodeRegistration'][
            'kubeletExtraArgs']


def test_cinder_csi_comes_with_the_cinder_volume_driver_as_magnums_default_storage():
    assert 'cinder-csi' not in cloud_plan('openstack')
    made = cloud_plan('openstack', {'volume_driver': 'cinder'}, cloud_provider_enabled='true',
                      container_infra_prefix='mirror.example.com/k8s',
                      csi_attacher_tag='v4.9.0', cinder_csi_plugin_tag='v1.36.1')['cinder-csi']
    values = made['values']
    assert (made['chart'], made['version']) == ('openstack-cinder-csi', '2.36.0')
    # Its volumes carry cinder.csi.openstack.org/cluster=<uuid>: the delete finds them.
    assert values['clusterID'] == UUID
    assert values['secret'] == {'enabled': True, 'create': True, 'hostMount': False,
                                'name': 'cinder-csi-cloud-config'}
    assert made['cloud_conf_key'] == ['secret', 'data', 'cloud.conf']
    assert values['storageClass']['delete'] == {'isDefault': True}
    assert values['csi']['plugin']['image'] == {
        'repository': 'mirror.example.com/k8s/cinder-csi-plugin', 'tag': 'v1.36.1'}
    assert values['csi']['attacher']['image'] == {
        'repository': 'mirror.example.com/k8s/csi-attacher', 'tag': 'v4.9.0'}
    assert values['csi']['livenessprobe']['image'] == {
        'repository': 'mirror.example.com/k8s/livenessprobe'}
    assert 'cinder-csi' not in cloud_plan('openstack', {'volume_driver': 'cinder'},
                                          cinder_csi_enabled='false')
    with pytest.raises(Invalid, match='cinder_csi_enabled requires volume_driver=cinder'):
        labels.validate({'cinder_csi_enabled': 'true'}, coe='kubernetes', cluster_user_trust=True)


def test_cinder_csi_follows_the_services_cluster_user_trust_as_the_credential_is_handed_over():
    """Accepted either way (Magnum 23 accepts it; Horizon's form picks Cinder by default);
    unset, the cluster records CSI off unless the service hands credentials over."""
    labels.validate({}, coe='kubernetes', volume_driver='cinder')
    labels.validate({}, coe='kubernetes', volume_driver='cinder', cluster_user_trust=True)
    assert labels.csi_default({}, 'cinder', False) == {'cinder_csi_enabled': 'false'}
    assert labels.csi_default({}, 'cinder', True) == {}
    assert labels.csi_default({'cinder_csi_enabled': 'true'}, 'cinder', False) == {
        'cinder_csi_enabled': 'true'}
    assert labels.csi_default({}, None, False) == {}
    with pytest.raises(Invalid, match='requires cloud_provider_enabled=true'):
        labels.validate({'cinder_csi_enabled': 'true'}, coe='kubernetes', volume_driver='cinder')
    labels.validate({'cinder_csi_enabled': 'false'}, coe='kubernetes', volume_driver='cinder')
    # What the cluster's delete then removes from the cloud on local nodes.
    assert addons.cloud_addons({}, {'volume_driver': 'cinder'})['makes'] == ['cinder-csi']
    assert addons.cloud_addons({'cloud_provider_enabled': 'true'}, {})['makes'] == [
        'openstack-cloud-controller-manager']
    assert addons.cloud_addons({'cinder_csi_enabled': 'false'},
                               {'volume_driver': 'cinder'}) == {
        'addons': [], 'makes': [], 'sections': ['Global']}
    assert addons.cloud_addons({'keystone_auth_enabled': 'true', 'auto_scaling_enabled': 'true',
                                'ingress_controller': 'octavia'}, {}) == {
        'addons': ['octavia-ingress-controller', 'k8s-keystone-auth', 'cluster-autoscaler'],
        'makes': ['octavia-ingress-controller'], 'sections': ['Global', 'LoadBalancer']}


def api_server_of(conf):
    node = {'name': 'm', 'address': '10.0.0.5', 'role': 'master', 'nodegroup': 'default-master'}
    (cluster,) = [d for d in k8s.kubeadm_init(conf, node, '10.0.0.5')
                  if d['kind'] == 'ClusterConfiguration']
    args = cluster['apiServer']['extraArgs']   # kubeadm's v1beta3 takes a mapping
    return cluster['apiServer'], args if isinstance(args, dict) else dict(
        (a['name'], a['value']) for a in args)


def test_keystone_auth_puts_the_webhook_before_rbac_on_every_master():
    conf = k8s.settings({'uuid': UUID, 'project_id': 'p1',
                         'labels': {'keystone_auth_enabled': 'true'}}, TEMPLATE)
    server, args = api_server_of(conf)
    assert args['authentication-token-webhook-config-file'] == k8s.KEYSTONE_WEBHOOK_CONFIG
    assert args['authentication-token-webhook-version'] == 'v1beta1'
    # From 1.30, structured authorization: kubeadm then sets no authorization-mode.
    assert args['authorization-config'] == k8s.KEYSTONE_AUTHZ_CONFIG
    assert 'authorization-mode' not in args
    authz = json.loads(k8s.keystone_authorization_config(conf))
    assert authz['apiVersion'] == 'apiserver.config.k8s.io/v1'
    assert [a['type'] for a in authz['authorizers']] == ['Node', 'Webhook', 'RBAC']
    webhook = authz['authorizers'][1]['webhook']
    # Only users not the cluster's own go to Keystone; a silent webhook is no opinion.
    assert webhook['failurePolicy'] == 'NoOpinion' and webhook['timeout'] == '3s'
    assert webhook['subjectAccessReviewVersion'] == 'v1beta1'  # what k8s-keystone-auth reads
    assert "!request.user.startsWith('system:')" in [
        m['expression'] for m in webhook['matchConditions']]
    assert webhook['connectionInfo']['kubeConfigFile'] == k8s.KEYSTONE_WEBHOOK_CONFIG
    assert server['extraVolumes'] == [{
        'name': 'keystone-webhook', 'hostPath': '/etc/kubernetes/keystone-webhook',
        'mountPath': '/etc/kubernetes/keystone-webhook', 'readOnly': True,
        'pathType': 'DirectoryOrCreate'}]
    webhook_kubeconfig = json.loads(k8s.keystone_webhook_kubeconfig())
    assert webhook_kubeconfig['clusters'][0]['cluster']['server'] == \
        'https://127.0.0.1:8443/webhook'
    # Before 1.30 (no structured authorization) it is refused, by the API and here.
    assert k8s.settings({'labels': {'keystone_auth_enabled': 'true', 'kube_tag': 'v1.31.0'}},
                        TEMPLATE)['keystone_authz_api'] == 'apiserver.config.k8s.io/v1beta1'
    with pytest.raises(Invalid, match='needs kube_tag v1.30.0 or later'):
        labels.validate({'keystone_auth_enabled': 'true', 'kube_tag': 'v1.29.4'}, coe='kubernetes')
    with pytest.raises(Invalid, match='needs Kubernetes v1.30 or later'):
        k8s.settings({'labels': {'keystone_auth_enabled': 'true', 'kube_tag': 'v1.29.4'}},
                     TEMPLATE)
    # Off, the API server is kubeadm's; a kubeapi_options authorization stands.
    server, args = api_server_of(k8s.settings({'labels': {}}, TEMPLATE))
    assert 'extraVolumes' not in server and not any(a.startswith('authori') for a in args)
    own = k8s.settings({'labels': {'keystone_auth_enabled': 'true',
                                   'kubeapi_options': '--authorization-mode=Node,RBAC,Webhook'}},
                       TEMPLATE)
    _, args = api_server_of(own)
    assert args['authorization-mode'] == 'Node,RBAC,Webhook' and 'authorization-config' not in args


def test_keystone_auth_runs_on_the_masters_with_the_clouds_keystone_and_a_default_policy():
    labels_ = {'keystone_auth_enabled': 'true', 'container_infra_prefix': 'mirror.example.com/k8s',
               'k8s_keystone_auth_tag': 'v1.36.1'}
    conf = k8s.settings({'uuid': UUID, 'project_id': 'p1', 'labels': labels_}, TEMPLATE)
    made = addons.keystone_auth(conf, labels_, 'https://keystone.example.com/v3')
    (daemonset,) = [o for o in made['objects'] if o['kind'] == 'DaemonSet']
    pod = daemonset['spec']['template']['spec']
    (container,) = pod['containers']
    assert container['image'] == 'mirror.example.com/k8s/k8s-keystone-auth:v1.36.1'
    assert '--keystone-url=https://keystone.example.com/v3' in container['args']
    assert '--listen=127.0.0.1:8443' in container['args']
    assert pod['hostNetwork'] and pod['nodeSelector'] == {
        'node-role.kubernetes.io/control-plane': ''}
    (policy,) = made['placeholders']
    rules = json.loads(policy['data']['policies'])
    assert {'type': 'project', 'values': ['p1']} in rules[0]['match']
    assert [r['match'][0]['values'] for r in rules[:3]] == [
        ['k8s_admin'], ['k8s_developer'], ['k8s_viewer']]
    own = addons.keystone_auth(conf, labels_, 'https://k/v3', '[{"match": [{"type": "project", '
                                                              '"values": ["$PROJECT_ID"]}]}]')
    assert json.loads(own['placeholders'][0]['data']['policies']) == [
        {'match': [{'type': 'project', 'values': ['p1']}]}]
    with pytest.raises(Invalid, match='not JSON'):
        addons.keystone_auth(conf, labels_, 'https://k/v3', '[{')
    with pytest.raises(Invalid, match='needs the cloud whose Keystone'):
        addons.keystone_auth(conf, labels_, None)


def test_the_operators_values_of_an_add_on_go_over_the_ones_its_labels_give():
    conf = k8s.settings({'labels': {}}, TEMPLATE)
    given = one('metrics-server')['values']
    conf['addon_values'] = {'metrics-server': {
        'livenessProbe': {'timeoutSeconds': 30}, 'args': ['--kubelet-insecure-tls']}}
    (made,) = [a for a in addons.plan(conf, {}) if a['name'] == 'metrics-server']
    assert made['values'] == dict(given, livenessProbe={'timeoutSeconds': 30},
                                  args=['--kubelet-insecure-tls'])
    # Mappings merge key by key, as Helm merges values; the rest is replaced.
    assert addons.merged({'a': {'b': 1, 'c': 2}, 'd': [1]}, {'a': {'c': 3}, 'd': [2]}) == {
        'a': {'b': 1, 'c': 3}, 'd': [2]}
    conf['addon_values'] = {'metrics-server': ['livenessProbe']}
    with pytest.raises(Invalid, match="metrics-server's must be a mapping"):
        addons.plan(conf, {})


def test_the_autoscaler_scales_the_default_workers_between_the_labels_through_magnum():
    labels_ = {'auto_scaling_enabled': 'true', 'min_node_count': '2', 'max_node_count': '7',
               'container_infra_prefix': 'mirror.example.com/k8s', 'autoscaler_tag': 'v1.36.1'}
    conf = k8s.settings({'uuid': UUID, 'labels': labels_}, TEMPLATE)
    made = addons.cluster_autoscaler(conf, labels_)
    (deployment,) = [o for o in made['objects'] if o['kind'] == 'Deployment']
    (container,) = deployment['spec']['template']['spec']['containers']
    assert container['image'] == 'mirror.example.com/k8s/cluster-autoscaler:v1.36.1'
    # node groups by auto-discovery, not --nodes: v1.36's magnum provider builds no node
    # template for a --nodes group and panics on its first loop (#62, on the lab's guests);
    # the default worker group carries the labels' bounds
    assert {'--cloud-provider=magnum', '--cluster-name=%s' % UUID,
            '--node-group-auto-discovery=magnum:role=worker'} <= set(container['args'])
    assert not [a for a in container['args'] if a.startswith('--nodes')]
    cluster = {'labels': labels_, 'project_id': 'p', 'docker_volume_size': None,
               'master_count': 1, 'node_count': 3, 'master_flavor_id': 'm', 'flavor_id': 'w',
               'uuid': UUID}
    master, worker = model.default_nodegroups(cluster, {'image_id': 'i'})
    assert (worker['min_node_count'], worker['max_node_count']) == (2, 7)
    assert master['max_node_count'] is None
    del cluster['labels']['auto_scaling_enabled']
    master, worker = model.default_nodegroups(cluster, {'image_id': 'i'})
    assert (worker['min_node_count'], worker['max_node_count']) == (0, None)
    cluster['labels']['auto_scaling_enabled'] = 'true'
    assert made['secret']['metadata']['name'] == \
        deployment['spec']['template']['spec']['volumes'][0]['secret']['secretName']
    # What its informers list (upstream's example ClusterRole): without dynamic resource
    # allocation's kinds it waits for their caches and never runs a loop (#62, on guests).
    (role,) = [o for o in made['objects'] if o['kind'] == 'ClusterRole']
    granted = set((group, resource) for rule in role['rules'] for group in rule['apiGroups']
                  for resource in rule['resources'] if 'list' in rule['verbs'])
    assert {('resource.k8s.io', 'deviceclasses'), ('resource.k8s.io', 'resourceslices'),
            ('resource.k8s.io', 'resourceclaims'), ('storage.k8s.io', 'csinodes'),
            ('', 'nodes'), ('', 'pods'), ('policy', 'poddisruptionbudgets')} <= granted
    # The operator's flags (kubernetes_autoscaler_flags: scale-down timing) come after the
    # driver's, which the operator cannot replace.
    assert not [a for a in container['args'] if a.startswith('--scale-down')]
    conf['autoscaler_flags'] = {'scale-down-unneeded-time': '2m', 'balance-similar-node-groups':
                                True}
    (deployment,) = [o for o in addons.cluster_autoscaler(conf, labels_)['objects']
                     if o['kind'] == 'Deployment']
    args = deployment['spec']['template']['spec']['containers'][0]['args']
    assert args[-3:] == ['--balance-similar-node-groups=true', '--scale-down-unneeded-time=2m',
                         '--v=2']
    for flags in ({'nodes': '0:9:default-worker'}, {'node-group-auto-discovery': 'x'},
                  {'--x': '1'}, {'scale-down-unneeded-time': {}}):
        conf['autoscaler_flags'] = flags
        with pytest.raises(Invalid, match='kubernetes_autoscaler_flags'):
            addons.cluster_autoscaler(conf, labels_)
    assert 'stringData' not in made['secret']  # the module writes the credential in
    # The guide's min_node_count default is 1; max_node_count has none: it is required.
    assert labels.autoscaling_bounds({'max_node_count': '3'}) == (1, 3)
    with pytest.raises(Invalid, match='auto_scaling_enabled needs max_node_count'):
        labels.validate({'auto_scaling_enabled': 'true'}, coe='kubernetes', cluster_user_trust=True)
    with pytest.raises(Invalid, match='below min_node_count'):
        labels.validate({'auto_scaling_enabled': 'true', 'min_node_count': '4',
                         'max_node_count': '2'}, coe='kubernetes', cluster_user_trust=True)
    with pytest.raises(Invalid, match='needs cluster_user_trust'):
        labels.validate({'auto_scaling_enabled': 'true', 'max_node_count': '2'}, coe='kubernetes')
    # A service that would hand it an application credential refuses it up front.
    with pytest.raises(Invalid, match='gives clusters no trust'):
        labels.check_controller_credential({'auto_scaling_enabled': 'true'}, True)
    labels.check_controller_credential({'auto_scaling_enabled': 'true'}, False)
    labels.check_controller_credential({'auto_scaling_enabled': 'false'}, True)
    # That service: keystone auth and the openstack provider without a trustee domain.
    from api import credentials
    from api.settings import Settings

    def service(**given):
        return Settings(start_executor=False, auth_strategy='keystone', provider='openstack',
                        cluster_user_trust=True, **given)
    assert credentials.application_credential_only(service())
    assert not credentials.application_credential_only(service(trustee_domain='magnum'))
    assert credentials.trusts_enabled(service(trustee_domain='magnum'))
    assert not credentials.application_credential_only(Settings(start_executor=False,
                                                                provider='openstack'))


def test_octavia_ingresses_and_the_manifest_add_ons_come_with_their_cloud_secrets():
    labels_ = {'ingress_controller': 'octavia', 'keystone_auth_enabled': 'true',
               'auto_scaling_enabled': 'true', 'max_node_count': '4',
               'octavia_ingress_controller_tag': 'v1.36.1'}
    conf = k8s.settings({'uuid': UUID, 'project_id': 'p1', 'labels': labels_}, TEMPLATE)
    made = dict((a['name'], a) for a in addons.manifest_addons(conf, labels_, 'https://k/v3'))
    assert sorted(made) == ['cluster-autoscaler', 'k8s-keystone-auth',
                            'octavia-ingress-controller']
    # None of the cluster's controllers is BestEffort: a busy master's kernel gives such a
    # pod almost no CPU (the cloud controller manager's chart values likewise).
    for addon in made.values():
        for obj in addon['objects']:
            if obj['kind'] in ('Deployment', 'DaemonSet', 'StatefulSet'):
                for container in obj['spec']['template']['spec']['containers']:
                    assert container['resources']['requests']['cpu'], obj['metadata']
    cloud = dict((a['name'], a) for a in addons.plan(dict(conf, provider='openstack'),
                                                     {'cloud_provider_enabled': 'true'}))
    assert cloud['openstack-cloud-controller-manager']['values']['resources'] == {
        'requests': {'cpu': '200m'}}
    ingress = made['octavia-ingress-controller']
    assert (ingress['sections'], ingress['config_format']) == (
        ['Global', 'LoadBalancer'], 'octavia_ingress')
    (stateful,) = [o for o in ingress['objects'] if o['kind'] == 'StatefulSet']
    pod = stateful['spec']['template']['spec']
    assert pod['containers'][0]['image'] == \
        'registry.k8s.io/provider-os/octavia-ingress-controller:v1.36.1'
    assert pod['volumes'][0]['secret']['secretName'] == ingress['secret']['metadata']['name']
    assert (made['cluster-autoscaler']['sections'],
            made['cluster-autoscaler']['config_format']) == (['Global'], 'autoscaler')
    assert 'secret' not in made['k8s-keystone-auth']
    assert addons.manifest_addons(k8s.settings({'labels': {}}, TEMPLATE), {}) == []
