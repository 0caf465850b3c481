"""The Kubernetes driver's pure parts: label -> setting mapping, generated kubeadm,
kubelet, kube-proxy and containerd configuration, artifact sources, node selection."""

import json
import pathlib
import tarfile

import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils.core import registries
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    addons, k8s_config as k8s)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_node
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

ROLE_DEFAULTS = (pathlib.Path(__file__).resolve().parents[2] / 'collections' / 'ansible_collections'
                 / 'openstack' / 'magnum' / 'roles' / 'kubernetes' / 'defaults' / 'main.yml')

TEMPLATE = {'coe': 'kubernetes', 'network_driver': 'flannel'}
CALICO = dict(TEMPLATE, network_driver='calico')
CALICO_FIXTURE = pathlib.Path(__file__).parents[1] / 'fixtures' / 'calico.yaml'
ROLE = pathlib.Path(k8s.__file__).parents[4] / 'roles' / 'kubernetes'
MASTER = {'name': 'k-abc-master-0', 'address': '10.192.3.10', 'role': 'master',
          'nodegroup': 'default-master'}
WORKER = {'name': 'k-abc-node-0', 'address': '10.192.3.11', 'role': 'worker',
          'nodegroup': 'default-worker'}


def conf(**labels):
    return k8s.settings({'labels': labels}, TEMPLATE)


def test_defaults_follow_the_guide():
    c = conf()
    assert c['kube_tag'] == k8s.DEFAULT_KUBE_TAG and c['pod_cidr'] == '10.100.0.0/16'
    assert c['service_cidr'] == '10.254.0.0/16' and c['dns_service_ip'] == '10.254.0.10'
    assert c['image_repository'] == 'registry.k8s.io' and c['cgroup_driver'] == 'systemd'
    assert c['flannel_backend'] == 'vxlan'


def test_labels_map_to_settings():
    c = conf(kube_tag='v1.35.2', flannel_network_cidr='10.50.0.0/16',
             service_cluster_ip_range='10.60.0.0/20', container_infra_prefix='mirror.local/k8s/',
             coredns_tag='v1.12.0', kubeapi_options='--audit-log-maxage=3 --profiling',
             availability_zone='az1')
    assert c['version'] == '1.35.2' and c['pod_cidr'] == '10.50.0.0/16'
    assert c['dns_service_ip'] == '10.60.0.10' and c['image_repository'] == 'mirror.local/k8s'
    assert c['extra_args']['apiServer'] == [{'name': 'audit-log-maxage', 'value': '3'},
                                            {'name': 'profiling', 'value': 'true'}]
    calico = k8s.settings({'labels': {'calico_ipv4pool': '192.168.0.0/16'}},
                          dict(TEMPLATE, network_driver='calico'))
    assert calico['pod_cidr'] == '192.168.0.0/16' and calico['network_driver'] == 'calico'


def test_the_pod_network_filter_is_the_settings_pod_network():
    """What the OpenStack provider lets through the nodes' ports and security groups is
    the network the settings give the pods."""
    from ansible.errors import AnsibleFilterError
    from ansible_collections.openstack.magnum.plugins.filter.kubeadm import FilterModule
    pod_network = FilterModule().filters()['k8s_pod_network']
    calico = dict(TEMPLATE, network_driver='calico')
    for cluster, template, expected in (
            ({}, TEMPLATE, '10.100.0.0/16'),
            ({'labels': {'flannel_network_cidr': '10.50.0.0/16'}}, TEMPLATE, '10.50.0.0/16'),
            ({'labels': {'flannel_network_cidr': '10.50.0.0/16'}}, calico, '10.100.0.0/16'),
            ({'labels': {'calico_ipv4pool': '192.168.0.0/16'}}, calico, '192.168.0.0/16')):
        assert pod_network(cluster, template) == expected
        assert k8s.settings(dict(cluster, labels=cluster.get('labels') or {}),
                            template)['pod_cidr'] == expected
    with pytest.raises(AnsibleFilterError, match="k8s_pod_network: Label calico_ipv4pool: "
                                                 "'10.1.2.3/16' is not a network CIDR"):
        pod_network({'labels': {'calico_ipv4pool': '10.1.2.3/16'}}, calico)


def test_flannels_subnet_length_is_the_size_of_each_nodes_pod_subnet():
    """flannel_network_subnetlen: kube-controller-manager gives each node a subnet of that
    length (node-cidr-mask-size), which flannel's Kubernetes subnet manager routes."""
    def manager_args(**labels):   # v1beta4's name/value list, as a mapping
        return dict((a['name'], a['value']) for a in k8s.kubeadm_init(
            conf(**labels), MASTER, '10.0.0.5')[1]['controllerManager']['extraArgs'])
    assert 'node-cidr-mask-size' not in manager_args()
    assert manager_args(flannel_network_subnetlen='26')['node-cidr-mask-size'] == '26'
    # An operator's own kubecontroller_options flag is the one kept.
    assert manager_args(flannel_network_subnetlen='26', kubecontroller_options=(
        '--node-cidr-mask-size=25'))['node-cidr-mask-size'] == '25'
    # Calico allocates its own blocks: the label is flannel's only.
    calico_args = k8s.kubeadm_init(k8s.settings({'labels': {'flannel_network_subnetlen': '26'}},
                                                CALICO), MASTER, '10.0.0.5')[1]
    assert calico_args['controllerManager']['extraArgs'] == []
    for bad in ('16', '8', '31', '33'):
        with pytest.raises(Invalid, match=r'/%s does not divide the pod network 10.100.0.0/16 '
                           r'into node subnets \(from /17 to /30\)' % bad):
            conf(flannel_network_subnetlen=bad)
    # At most 16 bits longer than the pod network (kube-controller-manager's bound).
    with pytest.raises(Invalid, match=r'/29 does not .* \(from /13 to /28\)'):
        conf(flannel_network_cidr='172.16.0.0/12', flannel_network_subnetlen='29')


def test_admission_control_list_is_the_api_servers_admission_plugins():
    def api_args(**labels):
        return dict((a['name'], a['value']) for a in k8s.kubeadm_init(
            conf(**labels), MASTER, '10.0.0.5')[1]['apiServer']['extraArgs'])
    assert 'enable-admission-plugins' not in api_args()
    assert api_args(admission_control_list='NodeRestriction, LimitRanger')[
        'enable-admission-plugins'] == 'NodeRestriction,LimitRanger'
    assert api_args(admission_control_list='NodeRestriction', kubeapi_options=(
        '--enable-admission-plugins=PodNodeSelector'))['enable-admission-plugins'] == \
        'PodNodeSelector'


def flannel_manifest(c, endpoint='10.0.0.5'):
    import jinja2
    templates = ROLE.parent / 'kubernetes_control_plane/templates'
    template = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates))) \
        .get_template('flannel.yml.j2')
    return template.render(ansible_managed='test', kubernetes_conf=c, kubernetes_endpoint=endpoint)


def test_flannel_reaches_the_api_server_where_the_kubelets_do():
    """Not through the kubernetes service, whose address works only once kube-proxy's
    rules are there (minutes later on a slow node: until then no pod traffic crosses)."""
    import yaml
    docs = list(yaml.safe_load_all(flannel_manifest(conf(), endpoint='10.113.0.7')))
    env = dict((e['name'], e.get('value'))
               for e in docs[5]['spec']['template']['spec']['containers'][0]['env'])
    assert (env['KUBERNETES_SERVICE_HOST'], env['KUBERNETES_SERVICE_PORT']) == (
        '10.113.0.7', '6443')


def test_flannels_udp_backend_is_given_the_tun_device():
    import yaml
    for backend, tun in (('udp', True), ('vxlan', False), ('host-gw', False)):
        docs = list(yaml.safe_load_all(flannel_manifest(conf(flannel_backend=backend))))
        net = json.loads(docs[4]['data']['net-conf.json'])
        assert net['Backend'] == {'Type': backend}
        pod = docs[5]['spec']['template']['spec']
        flannel = pod['containers'][0]
        assert ({'name': 'tun', 'mountPath': '/dev/net/tun'} in flannel['volumeMounts']) == tun
        assert ({'name': 'tun', 'hostPath': {'path': '/dev/net/tun', 'type': 'CharDevice'}}
                in pod['volumes']) == tun


@pytest.mark.parametrize('labels, message', [
    ({'kube_tag': 'latest'}, 'not a Kubernetes version'),
    ({'flannel_network_cidr': '10.100.0.1/16'}, 'not a network CIDR'),
    ({'flannel_network_cidr': '10.254.0.0/16'}, 'overlaps the service range'),
    ({'kubelet_options': 'max-pods=10'}, 'not a --flag'),
    ({'kubeproxy_options': '--proxy-mode=ipvs'}, 'IPVS is not available'),
    ({'kubeproxy_options': '--oom-score-adj=1'}, 'no kube-proxy configuration field'),
])
def test_bad_labels_get_clear_errors(labels, message):
    with pytest.raises(Invalid, match=message):
        k8s.kube_proxy_config(conf(**labels))


def test_kubeadm_init_for_the_first_master():
    c = conf(availability_zone='az1', kubelet_options='--max-pods=50')
    init, cluster, kubelet, proxy = k8s.kubeadm_init(c, MASTER, '10.192.3.5', ['k.example'])
    assert cluster['controlPlaneEndpoint'] == '10.192.3.5:6443'
    assert cluster['apiServer']['certSANs'] == ['10.192.3.10', '10.192.3.5', 'k.example']
    assert cluster['networking'] == {'podSubnet': '10.100.0.0/16',
                                     'serviceSubnet': '10.254.0.0/16',
                                     'dnsDomain': 'cluster.local'}
    reg = init['nodeRegistration']
    assert reg['name'] == MASTER['name'] and reg['taints'][0]['effect'] == 'NoSchedule'
    args = dict((a['name'], a['value']) for a in reg['kubeletExtraArgs'])
    assert args['node-labels'] == ('magnum.openstack.org/nodegroup=default-master,'
                                   'magnum.openstack.org/role=master,'
                                   'topology.kubernetes.io/zone=az1')
    assert args['max-pods'] == '50' and args['node-ip'] == '10.192.3.10'
    assert kubelet['failCgroupV1'] is False and kubelet['clusterDNS'] == ['10.254.0.10']
    assert proxy['mode'] == 'iptables' and proxy['conntrack'] == {'maxPerCore': 0}
    assert 'dns' not in cluster
    assert k8s.kubeadm_init(conf(coredns_tag='v1.12.0'), MASTER, 'x')[1]['dns'] == {
        'imageTag': 'v1.12.0'}


def test_the_kubeadm_configuration_follows_the_version():
    """kubeadm reads v1beta4 (flags as name/value lists) from 1.31, v1beta3 (flags as
    maps) from 1.22 and v1beta2 (maps too) before: the README's kube_tag=v1.30.2 needs
    v1beta3. kubelet knows failCgroupV1 from 1.31 only."""
    new = conf(kube_tag='v1.31.0', kubeapi_options='--profiling=false')
    init, cluster, kubelet, _ = k8s.kubeadm_init(new, MASTER, '10.192.3.5')
    assert init['apiVersion'] == cluster['apiVersion'] == 'kubeadm.k8s.io/v1beta4'
    assert cluster['apiServer']['extraArgs'] == [{'name': 'profiling', 'value': 'false'}]
    assert kubelet['failCgroupV1'] is False
    old = conf(kube_tag='v1.30.2', kubeapi_options='--profiling=false',
               kubelet_options='--max-pods=50')
    init, cluster, kubelet, _ = k8s.kubeadm_init(old, MASTER, '10.192.3.5')
    assert init['apiVersion'] == cluster['apiVersion'] == 'kubeadm.k8s.io/v1beta3'
    assert cluster['apiServer']['extraArgs'] == {'profiling': 'false'}
    assert cluster['scheduler']['extraArgs'] == {}
    assert init['nodeRegistration']['kubeletExtraArgs'] == {
        'node-labels': 'magnum.openstack.org/nodegroup=default-master,'
                       'magnum.openstack.org/role=master',
        'node-ip': '10.192.3.10', 'max-pods': '50'}
    assert 'failCgroupV1' not in kubelet
    join = k8s.kubeadm_join(old, WORKER, '10.192.3.5', 'abcdef.0123456789abcdef', 'sha256:00')
    assert join['apiVersion'] == 'kubeadm.k8s.io/v1beta3'
    # kubeadm's own waits (the role's kubernetes_kubeadm_timeouts): v1beta4 only.
    waits = {'kubernetesAPICall': '5m0s', 'tlsBootstrap': '10m0s'}
    assert 'timeouts' not in k8s.kubeadm_init(new, MASTER, '10.192.3.5')[0]
    new['kubeadm_timeouts'] = old['kubeadm_timeouts'] = waits
    assert k8s.kubeadm_init(new, MASTER, '10.192.3.5')[0]['timeouts'] == waits
    assert k8s.kubeadm_join(new, WORKER, '10.192.3.5', 'abcdef.0123456789abcdef',
                            'sha256:00')['timeouts'] == waits
    assert 'timeouts' not in k8s.kubeadm_init(old, MASTER, '10.192.3.5')[0]
    assert 'timeouts' not in k8s.kubeadm_join(old, WORKER, '10.192.3.5',
                                              'abcdef.0123456789abcdef', 'sha256:00')
    assert join['nodeRegistration']['kubeletExtraArgs']['node-ip'] == '10.192.3.11'
    oldest = conf(kube_tag='v1.20.2', kubeapi_options='--profiling=false')
    init, cluster, kubelet, _ = k8s.kubeadm_init(oldest, MASTER, '10.192.3.5')
    assert init['apiVersion'] == cluster['apiVersion'] == 'kubeadm.k8s.io/v1beta2'
    assert cluster['apiServer']['extraArgs'] == {'profiling': 'false'}
    assert init['nodeRegistration']['kubeletExtraArgs']['node-ip'] == '10.192.3.10'
    assert 'failCgroupV1' not in kubelet
    assert conf(kube_tag='v1.21.14')['kubeadm_api'] == 'kubeadm.k8s.io/v1beta2'
    assert conf(kube_tag='v1.22.0')['kubeadm_api'] == 'kubeadm.k8s.io/v1beta3'
    with pytest.raises(Invalid, match='brings up Kubernetes v1.20 and later'):
        conf(kube_tag='v1.19.16')


@pytest.mark.parametrize('tag, pause', [
    ('v1.20.2', '3.2'), ('v1.21.14', '3.4.1'), ('v1.22.17', '3.5'), ('v1.25.0', '3.8'),
    ('v1.30.2', '3.9'), ('v1.33.1', '3.10'), ('v1.35.2', '3.10.1'), ('v1.36.2', '3.10.2'),
    ('v1.40.0', '3.10.2')])
def test_containerd_runs_pods_in_the_pause_image_kubeadm_names(tag, pause):
    """Offline, only the images kubeadm lists are there: containerd's sandbox image must be
    the version's own."""
    text = k8s.containerd_config(conf(kube_tag=tag))
    assert 'sandbox_image = "registry.k8s.io/pause:%s"' % pause in text


def test_the_pause_tag_is_the_one_kubeadm_lists_else_the_tables():
    listing = ('mirror.local/kube-apiserver:v1.36.2\nmirror.local/coredns/coredns:v1.13.1\n'
               'mirror.local/pause:3.10.2\nmirror.local/etcd:3.6.5-0\n')
    assert k8s.pause_tag(listing, '3.10.1') == '3.10.2'
    assert k8s.pause_tag('registry.k8s.io/pause:3.11\n', 'x') == '3.11'
    # kubeadm did not run (another architecture), printed nothing, or no pause image
    for printed in ('', None, 'exec format error', 'registry.k8s.io/etcd:3.6.5-0',
                    'localhost:5000/pause'):
        assert k8s.pause_tag(printed, '3.10.1') == '3.10.1'


def test_every_kubeadm_command_that_checks_preflight_gets_the_clusters_settings():
    c = conf(kube_tag='v1.36.2')
    assert k8s.kubeadm_command(c, ['upgrade', 'apply', 'v1.36.3', '--yes']) == [
        'kubeadm', 'upgrade', 'apply', 'v1.36.3', '--yes',
        '--ignore-preflight-errors=SystemVerification,NumCPU', '--config', k8s.UPGRADE_CONFIG]
    assert k8s.kubeadm_command(c, ['upgrade', 'node']) == [
        'kubeadm', 'upgrade', 'node', '--ignore-preflight-errors=SystemVerification,NumCPU',
        '--config', k8s.UPGRADE_CONFIG]
    # before kubeadm's v1beta4 there is no UpgradeConfiguration: flags alone
    assert k8s.kubeadm_command(conf(kube_tag='v1.30.2'), ['upgrade', 'node']) == [
        'kubeadm', 'upgrade', 'node', '--ignore-preflight-errors=SystemVerification,NumCPU']
    assert k8s.kubeadm_command(c, ['token', 'create']) == ['kubeadm', 'token', 'create']
    # init and join take them from their configuration, from the same setting
    init = k8s.kubeadm_init(c, MASTER, '10.0.0.5')[0]
    join = k8s.kubeadm_join(c, WORKER, '10.0.0.5', 't', 'h')
    for doc in (init, join):
        assert doc['nodeRegistration']['ignorePreflightErrors'] == c['preflight_ignored']
    # a master of one vCPU (Magnum's m1.small) is not refused for it; its memory is checked
    assert 'NumCPU' in c['preflight_ignored'] and 'Mem' not in c['preflight_ignored']
    # and the driver's roles run no kubeadm upgrade (nor init/join without --config) by hand
    for path in ROLE.parent.glob('kubernetes*/tasks/*.yml'):
        for line in path.read_text().splitlines():
            command = line.split('#')[0]
            assert 'kubeadm upgrade' not in command, (path.name, line)
            for verb in ('kubeadm init ', 'kubeadm join '):
                assert verb not in command or '--config' in command or 'phase' in command, (
                    path.name, line)


def test_the_templates_proxies_reach_containerd_with_the_clusters_own_ranges_excluded():
    assert conf()['proxy'] == {}
    c = k8s.settings({'labels': {'service_cluster_ip_range': '10.60.0.0/20'}},
                     dict(TEMPLATE, http_proxy='http://proxy:3128', https_proxy='http://p2:3128',
                          no_proxy='registry.local, 127.0.0.1'))
    assert c['proxy'] == {
        'HTTP_PROXY': 'http://proxy:3128', 'HTTPS_PROXY': 'http://p2:3128',
        'NO_PROXY': 'registry.local,127.0.0.1,localhost,.svc,.cluster.local,10.100.0.0/16,'
                    '10.60.0.0/20'}
    only_https = k8s.settings({'labels': {}}, dict(TEMPLATE, https_proxy='http://p2:3128'))
    assert sorted(only_https['proxy']) == ['HTTPS_PROXY', 'NO_PROXY']


def test_addon_images_follow_the_mirror_and_their_tag_labels():
    """container_infra_prefix is the mirror of every image (the guide), flannel_tag and
    flannel_cni_tag pick flannel's tags; the flannel manifest the role applies uses them."""
    import yaml
    assert k8s.addon_image('ghcr.io/flannel-io/flannel:v0.26.7') == \
        'ghcr.io/flannel-io/flannel:v0.26.7'
    assert k8s.addon_image('ghcr.io/flannel-io/flannel:v0.26.7', 'mirror.local:5000/k8s',
                           'v0.27.0') == 'mirror.local:5000/k8s/flannel:v0.27.0'
    assert k8s.addon_image('flannel', None, 'v1') == 'flannel:v1'
    defaults = yaml.safe_load((ROLE / 'defaults' / 'main.yml').read_text())
    addons = {'flannel': defaults['kubernetes_flannel_image'],
              'flannel_cni': defaults['kubernetes_flannel_cni_plugin_image']}
    plain = k8s.settings({'labels': {}}, TEMPLATE, addons)
    assert plain['images'] == addons
    c = k8s.settings({'labels': {'container_infra_prefix': 'mirror.local/k8s/',
                                 'flannel_tag': 'v0.27.0'}}, TEMPLATE, addons)
    assert c['images']['flannel'] == 'mirror.local/k8s/flannel:v0.27.0'
    assert c['images']['flannel_cni'] == 'mirror.local/k8s/flannel-cni-plugin:' + \
        addons['flannel_cni'].rpartition(':')[2]
    manifest = flannel_manifest(c)
    images = [line.split()[-1] for line in manifest.splitlines() if 'image:' in line]
    assert sorted(set(images)) == sorted(c['images'].values()), images


def test_kubeadm_join_for_workers_and_masters():
    c = conf()
    worker = k8s.kubeadm_join(c, WORKER, '10.192.3.5', 'abcdef.0123456789abcdef', 'sha256:00')
    assert worker['discovery']['bootstrapToken']['apiServerEndpoint'] == '10.192.3.5:6443'
    assert 'controlPlane' not in worker and worker['nodeRegistration']['taints'] == []
    master = dict(MASTER, name='k-abc-master-1', address='10.192.3.12')
    joined = k8s.kubeadm_join(c, master, '10.192.3.5', 't', 'sha256:00', certificate_key='ck')
    assert joined['controlPlane']['certificateKey'] == 'ck'
    with pytest.raises(Invalid, match='certificate key'):
        k8s.kubeadm_join(c, master, '10.192.3.5', 't', 'sha256:00')


def test_containerd_config():
    text = k8s.containerd_config(conf(container_infra_prefix='mirror.local/', kube_tag='v1.32.1'))
    assert 'sandbox_image = "mirror.local/pause:3.10"' in text
    assert 'SystemdCgroup = true' in text and 'restrict_oom_score_adj = true' in text
    assert 'SystemdCgroup = false' in k8s.containerd_config(conf(cgroup_driver='cgroupfs'))


def test_the_templates_insecure_registry_is_pulled_from_unverified_then_over_http():
    assert conf()['insecure_registry'] is None
    assert 'config_path = "/etc/containerd/certs.d"' in k8s.containerd_config(conf())
    for given in ('10.0.0.5:5000', 'http://10.0.0.5:5000', 'https://10.0.0.5:5000/v2/'):
        c = k8s.settings({'labels': {}}, dict(TEMPLATE, insecure_registry=given))
        assert c['insecure_registry'] == '10.0.0.5:5000', given
    assert list(k8s.registry_hosts(c)) == ['10.0.0.5:5000']
    hosts = k8s.registry_hosts(c)['10.0.0.5:5000']['hosts.toml']
    assert hosts.startswith(k8s.REGISTRY_HOSTS_MARK + '\nserver = "http://10.0.0.5:5000"\n')
    assert '[host."https://10.0.0.5:5000"]\n  capabilities = ["pull", "resolve"]\n' \
        '  skip_verify = true\n' in hosts
    assert registries.host('registry.local') == 'registry.local'
    assert registries.host('[fd00::5]:5000') == '[fd00::5]:5000'
    with pytest.raises(Invalid, match="insecure_registry. Value: 'a b:5000'"):
        registries.host('a b:5000')


CA = ('-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQm9ndXM=\n-----END CERTIFICATE-----\n')


def test_container_infra_prefixs_registry_is_verified_with_the_operators_ca():
    """MAGNUM_K8S_REGISTRY_CA: the prefix's registry over HTTPS verified with it (ca.crt
    beside hosts.toml); not a registry given as insecure (plain HTTP wins); nothing
    without a prefix naming a registry host; PEM certificates only."""
    def with_ca(prefix, insecure=None, ca=CA):
        return k8s.settings({'labels': {'container_infra_prefix': prefix}},
                            dict(TEMPLATE, insecure_registry=insecure), registry_ca=ca)
    hosts = k8s.registry_hosts(with_ca('registry.local:5443/magnum'))
    assert list(hosts) == ['registry.local:5443']
    files = hosts['registry.local:5443']
    assert files['ca.crt'] == CA
    assert files['hosts.toml'] == (
        k8s.REGISTRY_HOSTS_MARK + '\nserver = "https://registry.local:5443"\n\n'
        '[host."https://registry.local:5443"]\n  capabilities = ["pull", "resolve"]\n'
        '  ca = "/etc/containerd/certs.d/registry.local:5443/ca.crt"\n')
    plain = k8s.registry_hosts(with_ca('registry.local:5000/m', insecure='registry.local:5000'))
    assert list(plain) == ['registry.local:5000'] and 'ca.crt' not in plain['registry.local:5000']
    assert k8s.registry_hosts(with_ca('magnum')) == {}   # Docker Hub's namespace
    assert k8s.registry_hosts(with_ca('registry.local/m', ca=None)) == {}
    for bad in ('not a certificate', CA + 'ExecStart=/bin/sh\n',
                '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'):
        with pytest.raises(Invalid, match='MAGNUM_K8S_REGISTRY_CA does not hold PEM '
                                          'certificates only'):
            with_ca('registry.local/m', ca=bad)
    # What the job's log says
    assert k8s.pull_sources(with_ca('registry.local:5443/magnum'), ['a:1', 'b:2', 'a:1']) == [
        'Images the nodes lack are pulled from registry.local:5443/magnum '
        '(container_infra_prefix): HTTPS verified with the operator\'s CA '
        '(MAGNUM_K8S_REGISTRY_CA)',
        '2 images come with the nodes (offline directory or node image): a:1, b:2']
    assert k8s.pull_sources(conf())[0] == (
        "Images the nodes lack are pulled from registry.k8s.io: HTTPS verified with the "
        "nodes' CAs")


def test_artifacts_upstream_or_offline(tmp_path):
    with pytest.raises(Invalid, match='needs a cache directory'):
        k8s.artifact_source('v1.35.2')
    up = k8s.artifact_source('v1.35.2', cache_dir='/cache')
    assert up['mode'] == 'upstream' and up['download_dir'] == '/cache/v1.35.2/amd64'
    # Every binary, crictl too, is at the same kind of place as an offline directory's.
    assert up['binaries'] == dict((b, '/cache/v1.35.2/amd64/' + b) for b in k8s.BINARIES)
    downloads = dict((d['dest'].rpartition('/')[2], d) for d in up['downloads'])
    assert downloads['kubeadm'] == {
        'url': 'https://dl.k8s.io/release/v1.35.2/bin/linux/amd64/kubeadm',
        'dest': '/cache/v1.35.2/amd64/kubeadm', 'mode': '0755'}
    assert 'crictl' not in downloads   # cri-tools releases it, one tarball per minor
    tarball = 'crictl-v1.35.0-linux-amd64.tar.gz'
    assert downloads[tarball] == {
        'url': 'https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.35.0/'
               + tarball, 'dest': '/cache/v1.35.2/amd64/' + tarball, 'mode': '0644'}
    assert up['unpack'] == [{'src': '/cache/v1.35.2/amd64/' + tarball, 'member': 'crictl'}]
    mirrored = k8s.artifact_source('v1.35.2', '', 'http://mirror.local/k8s/',
                                   'http://mirror.local/cri-tools', '/cache')
    assert sorted(d['url'] for d in mirrored['downloads']) == [
        'http://mirror.local/cri-tools/v1.35.0/' + tarball] + [
        'http://mirror.local/k8s/release/v1.35.2/bin/linux/amd64/' + b
        for b in sorted(k8s.BINARIES) if b != 'crictl']
    with pytest.raises(Invalid, match='missing bin/kubeadm.*no images'):
        k8s.artifact_source('v1.35.2', str(tmp_path))
    (tmp_path / 'bin').mkdir()
    (tmp_path / 'images').mkdir()
    for name in k8s.BINARIES:
        (tmp_path / 'bin' / name).write_text('')
    (tmp_path / 'images' / 'kube-apiserver.tar').write_text('')
    off = k8s.artifact_source('v1.35.2', str(tmp_path))
    assert off['mode'] == 'offline' and off['images'] == [
        str(tmp_path / 'images' / 'kube-apiserver.tar')]
    # One directory per version (what an offline upgrade needs): the version's own.
    newer = tmp_path / 'v1.36.1'
    with pytest.raises(Invalid, match='%s is incomplete' % newer):
        (newer / 'bin').mkdir(parents=True)
        k8s.artifact_source('v1.36.1', str(tmp_path))
    (newer / 'images').mkdir()
    for name in k8s.BINARIES:
        (newer / 'bin' / name).write_text('')
    (newer / 'images' / 'kube-apiserver.tar').write_text('')
    assert k8s.artifact_source('v1.36.1', str(tmp_path))['binaries']['kubeadm'] == \
        str(newer / 'bin' / 'kubeadm')
    assert k8s.artifact_source('v1.36.1', str(tmp_path))['dir'] == str(newer)  # manifests/
    assert k8s.artifact_source('v1.35.2', str(tmp_path))['binaries']['kubeadm'] == \
        str(tmp_path / 'bin' / 'kubeadm')
    assert k8s.artifact_source('v1.35.2', str(tmp_path))['dir'] == str(tmp_path)


def elf(path, machine, byte_order=1):
    """An ELF header (all that elf_arch reads) of the machine number given."""
    path.write_bytes(b'\x7fELF\x02' + bytes([byte_order]) + b'\x01' + bytes(11)
                     + machine.to_bytes(2, 'little' if byte_order == 1 else 'big') + bytes(44))
    return str(path)


def test_the_nodes_architecture_as_kubernetes_names_it():
    assert k8s.node_arch({}) == 'amd64'
    assert k8s.node_arch({'m0': 'x86_64\r\n', 'w0': 'x86_64'}) == 'amd64'
    assert k8s.node_arch({'w0': 'aarch64\n'}) == 'arm64'
    with pytest.raises(Invalid, match=r'more than one architecture \(amd64: m0, w1; arm64: w0\)'):
        k8s.node_arch({'m0': 'x86_64', 'w0': 'aarch64', 'w1': 'x86_64'})
    with pytest.raises(Invalid, match='Node w0 is a mips64 machine: Kubernetes is released for '
                                      'aarch64, armv7l'):
        k8s.node_arch({'w0': 'mips64'})


def test_before_the_nodes_exist_their_images_machine_stands_and_they_must_agree():
    # the preflight: no node yet, the provider's word on the image
    assert k8s.node_arch({}, 'aarch64') == 'arm64'
    assert k8s.node_arch({'w0': 'aarch64'}, 'aarch64') == 'arm64'
    with pytest.raises(Invalid, match=r"The nodes w0, w1 are x86_64 machines, and their image's "
                                      r"architecture property says aarch64, .* \(openstack image "
                                      r"set --property architecture=x86_64\)"):
        k8s.node_arch({'w0': 'x86_64', 'w1': 'x86_64'}, 'aarch64')
    with pytest.raises(Invalid, match=r"The cluster's image is a sparc machine \(its "
                                      r"architecture property\)"):
        k8s.node_arch({}, 'sparc')


def test_an_executables_architecture_from_its_elf_header(tmp_path):
    import platform
    import sys
    assert k8s.elf_arch(sys.executable) == k8s.UNAME_ARCHES[platform.machine()]
    assert k8s.elf_arch(elf(tmp_path / 'a', 183)) == 'arm64'
    assert k8s.elf_arch(elf(tmp_path / 'b', 22, byte_order=2)) == 's390x'
    assert k8s.elf_arch(elf(tmp_path / 'c', 8)) == 'ELF machine 8'
    (tmp_path / 'script').write_text('#!/bin/sh\n')
    assert k8s.elf_arch(str(tmp_path / 'script')) is None


def test_artifacts_of_the_nodes_architecture(tmp_path):
    arm = k8s.artifact_source('v1.35.2', cache_dir='/cache', arch='arm64')
    assert arm['download_dir'] == '/cache/v1.35.2/arm64'
    assert sorted(d['url'].rpartition('/')[0] for d in arm['downloads']) == [
        'https://dl.k8s.io/release/v1.35.2/bin/linux/arm64'] * 3 + [
        'https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.35.0']
    assert arm['downloads'][-1]['url'].endswith('/crictl-v1.35.0-linux-arm64.tar.gz')
    # An offline directory built for another architecture is refused, naming what.
    (tmp_path / 'bin').mkdir()
    (tmp_path / 'images').mkdir()
    for name in k8s.BINARIES:
        elf(tmp_path / 'bin' / name, 62)
    elf(tmp_path / 'bin' / 'kubelet', 183)
    docker_archive(tmp_path / 'images' / 'a.tar', 'registry.k8s.io/pause:3.10.1')
    docker_archive(tmp_path / 'images' / 'b.tar', 'registry.k8s.io/etcd:3.6.5-0',
                   arch='arm64')
    with pytest.raises(Invalid, match=r'MAGNUM_K8S_ARTIFACTS=%s is not for the nodes, which are '
                                      r'amd64: bin/kubelet is built for arm64; images/b.tar '
                                      r'holds arm64 images\.$' % tmp_path):
        k8s.artifact_source('v1.35.2', str(tmp_path))
    elf(tmp_path / 'bin' / 'kubelet', 62)
    docker_archive(tmp_path / 'images' / 'b.tar', 'registry.k8s.io/etcd:3.6.5-0', arch='amd64')
    assert k8s.artifact_source('v1.35.2', str(tmp_path), arch='amd64')['mode'] == 'offline'
    with pytest.raises(Invalid, match='which are arm64: bin/kubeadm is built for amd64; '):
        k8s.artifact_source('v1.35.2', str(tmp_path), arch='arm64')


def calico(**labels):
    return k8s.settings({'labels': labels}, CALICO)


def test_calicos_manifest_from_the_offline_directory_a_file_or_its_tags_download(tmp_path):
    c = calico()
    assert c['calico_tag'] is None and c['calico_ipip'] == 'Never'   # the guide's Off
    assert calico(calico_ipv4pool_ipip='CrossSubnet')['calico_ipip'] == 'CrossSubnet'
    assert k8s.calico_source(c, cache_dir='/c') == {
        'path': '/c/calico/v3.31.3/calico.yaml',
        'url': 'https://raw.githubusercontent.com/projectcalico/calico/v3.31.3/manifests/'
               'calico.yaml'}
    assert k8s.calico_source(calico(calico_tag='v3.30.1'), '', 'http://mirror.local/calico/',
                             '/c') == {'path': '/c/calico/v3.30.1/calico.yaml',
                                       'url': 'http://mirror.local/calico/v3.30.1/manifests/'
                                              'calico.yaml'}
    with pytest.raises(Invalid, match='needs a cache directory'):
        k8s.calico_source(c)
    # An offline directory must have it (its images are in images/): nothing is downloaded.
    with pytest.raises(Invalid, match=r'%s/manifests/calico.yaml is not a file \('
                       'MAGNUM_K8S_ARTIFACTS=%s is incomplete' % (tmp_path, tmp_path)):
        k8s.calico_source(c, str(tmp_path), cache_dir='/c')
    (tmp_path / 'manifests').mkdir()
    (tmp_path / 'manifests' / 'calico.yaml').write_text('')
    assert k8s.calico_source(c, str(tmp_path), cache_dir='/c') == {
        'path': str(tmp_path / 'manifests' / 'calico.yaml'), 'url': None}
    # The role's variable names a file of the operator's, whatever the directory.
    with pytest.raises(Invalid, match='/nowhere.yaml is not a file.$'):
        k8s.calico_source(c, str(tmp_path), None, '/c', '/nowhere.yaml')
    assert k8s.calico_source(c, None, None, None, str(CALICO_FIXTURE))['path'] == \
        str(CALICO_FIXTURE)


def containers(docs):
    return dict((c['name'], c) for doc in docs if doc['kind'] in ('DaemonSet', 'Deployment')
                for key in ('initContainers', 'containers')
                for c in doc['spec']['template']['spec'].get(key, []))


def test_calicos_manifest_gets_the_pod_network_the_ipip_mode_and_the_mirror():
    import yaml
    original = list(yaml.safe_load_all(CALICO_FIXTURE.read_text()))
    docs = list(yaml.safe_load_all(k8s.calico_manifest(CALICO_FIXTURE.read_text(), calico(
        calico_ipv4pool='10.20.0.0/16', container_infra_prefix='mirror.local:5000/k8s/'))))
    node = containers(docs)['calico-node']
    env = dict((e['name'], e.get('value', e.get('valueFrom'))) for e in node['env'])
    assert env['CALICO_IPV4POOL_CIDR'] == '10.20.0.0/16'
    assert env['CALICO_IPV4POOL_IPIP'] == 'Never'
    assert env['CALICO_IPV4POOL_VXLAN'] == 'Never' and env['IP'] == 'autodetect'
    assert env['NODENAME'] == {'fieldRef': {'fieldPath': 'spec.nodeName'}}
    assert [e['name'] for e in node['env']].count('CALICO_IPV4POOL_IPIP') == 1
    assert sorted(set(c['image'] for c in containers(docs).values())) == [
        'mirror.local:5000/k8s/cni:v3.31.3', 'mirror.local:5000/k8s/kube-controllers:v3.31.3',
        'mirror.local:5000/k8s/node:v3.31.3']
    # The rest is Calico's, as published (the ConfigMap, the CRDs).
    assert docs[:2] == original[:2]
    # Without a mirror the images are Calico's; a calico_tag label is the manifest's own.
    plain = k8s.calico_manifest(CALICO_FIXTURE.read_text(), calico(calico_tag='v3.31.3'))
    assert sorted(set(c['image'] for c in containers(yaml.safe_load_all(plain)).values())) == [
        'docker.io/calico/cni:v3.31.3', 'docker.io/calico/kube-controllers:v3.31.3',
        'docker.io/calico/node:v3.31.3']


@pytest.mark.parametrize('text, labels, message', [
    (None, {'calico_tag': 'v3.30.1'},
     'Label calico_tag v3.30.1: the calico manifest deploys v3.31.3'),
    ('kind: ConfigMap\n', {}, 'has no calico-node container'),
    ('a: [b\n', {}, 'The calico manifest is not YAML'),
])
def test_a_manifest_that_is_not_calicos_or_not_its_tags_is_refused(text, labels, message):
    with pytest.raises(Invalid, match=message):
        k8s.calico_manifest(text or CALICO_FIXTURE.read_text(), calico(**labels))


def test_the_calico_filter_takes_ansibles_strings_and_names_itself_in_errors():
    from ansible.errors import AnsibleFilterError
    from ansible.utils.unsafe_proxy import wrap_var
    from ansible_collections.openstack.magnum.plugins.filter.kubeadm import FilterModule
    manifest = FilterModule().filters()['k8s_calico_manifest']
    conf = wrap_var(calico(calico_ipv4pool='10.20.0.0/16'))
    assert 'value: 10.20.0.0/16' in manifest(wrap_var(CALICO_FIXTURE.read_text()), conf)
    with pytest.raises(AnsibleFilterError, match='^k8s_calico_manifest: .*has no calico-node'):
        manifest('kind: ConfigMap\n', conf)


def docker_archive(path, *tags, arch=None):
    """A tarball laid out as `docker save` writes one (its manifest, and its image's
    config when an architecture is given)."""
    manifest = path.parent / 'manifest.json'
    manifest.write_text(json.dumps([{'Config': 'c.json', 'RepoTags': list(tags), 'Layers': []}]))
    config = path.parent / 'c.json'
    config.write_text(json.dumps({'architecture': arch, 'os': 'linux'}))
    with tarfile.open(path, 'w') as tar:
        tar.add(manifest, arcname='manifest.json')
        if arch:
            tar.add(config, arcname='c.json')
    manifest.unlink()
    config.unlink()
    return str(path)


def test_workers_are_not_given_the_control_plane_images(tmp_path):
    (tmp_path / 'bin').mkdir()
    (tmp_path / 'images').mkdir()
    for name in k8s.BINARIES:
        (tmp_path / 'bin' / name).write_text('')
    images = tmp_path / 'images'
    control_plane = [docker_archive(images / 'a.tar', 'registry.k8s.io/kube-apiserver:v1.35.2'),
                     docker_archive(images / 'b.tar', 'mirror.local:5000/k8s/etcd:3.6.5-0',
                                    'registry.k8s.io/kube-scheduler:v1.35.2')]
    everyone = [docker_archive(images / 'c.tar', 'registry.k8s.io/kube-proxy:v1.35.2'),
                docker_archive(images / 'd.tar', 'registry.k8s.io/etcd:3.6.5-0',
                               'registry.k8s.io/pause:3.10.1'),
                docker_archive(images / 'e.tar')]
    (images / 'f.tar').write_text('not an archive')
    off = k8s.artifact_source('v1.35.2', str(tmp_path))
    assert off['images'] == sorted(control_plane + everyone + [str(images / 'f.tar')])
    # An archive with a name workers need, none, or none readable goes to every node.
    assert off['worker_images'] == everyone + [str(images / 'f.tar')]
    assert k8s.artifact_source('v1.35.2', cache_dir='/c')['worker_images'] == []
    # Each archive's images as containerd names them (what a node is checked for).
    assert off['image_names'][str(images / 'b.tar')] == [
        'mirror.local:5000/k8s/etcd:3.6.5-0', 'registry.k8s.io/kube-scheduler:v1.35.2']
    assert off['image_names'][str(images / 'e.tar')] == []


def test_masters_are_given_every_archive_and_workers_not_the_control_planes():
    artifacts = {'images': ['/a/images/etcd.tar', '/a/images/pause.tar'],
                 'worker_images': ['/a/images/pause.tar'],
                 'image_names': {'/a/images/etcd.tar': ['registry.k8s.io/etcd:3.6.8-0'],
                                 '/a/images/pause.tar': ['registry.k8s.io/pause:3.10.2']}}
    etcd, pause = ['registry.k8s.io/etcd:3.6.8-0'], ['registry.k8s.io/pause:3.10.2']
    binaries = {'kubelet': '/a/bin/kubelet', 'crictl': '/a/bin/crictl'}
    got = k8s.node_files(['m', 'w'], ['m'], binaries, artifacts, '/usr/local/bin', '/var/i')
    assert got == [
        {'node': 'm', 'files': [
            {'src': '/a/bin/crictl', 'dest': '/usr/local/bin/crictl', 'mode': '0755'},
            {'src': '/a/bin/kubelet', 'dest': '/usr/local/bin/kubelet', 'mode': '0755'},
            {'src': '/a/images/etcd.tar', 'dest': '/var/i/etcd.tar', 'mode': '0644',
             'images': etcd},
            {'src': '/a/images/pause.tar', 'dest': '/var/i/pause.tar', 'mode': '0644',
             'images': pause}]},
        {'node': 'w', 'files': [
            {'src': '/a/bin/crictl', 'dest': '/usr/local/bin/crictl', 'mode': '0755'},
            {'src': '/a/bin/kubelet', 'dest': '/usr/local/bin/kubelet', 'mode': '0755'},
            {'src': '/a/images/pause.tar', 'dest': '/var/i/pause.tar', 'mode': '0644',
             'images': pause}]}]
    assert k8s.node_files([], ['m'], {}, artifacts, '/b', '/i') == []


def test_a_rolling_upgrades_batch_is_given_only_the_binaries_named():
    got = k8s.binary_files(['m', 'w'], {'kubelet': '/a/v2/bin/kubelet'}, '/usr/local/bin')
    assert got == [
        {'node': node, 'files': [
            {'src': '/a/v2/bin/kubelet', 'dest': '/usr/local/bin/kubelet', 'mode': '0755'}]}
        for node in ('m', 'w')]


def test_a_node_imports_the_archives_pushed_now_and_those_whose_images_it_lacks():
    names = {'/a/x.tar': ['registry.k8s.io/x:1'], '/a/y.tar': ['registry.k8s.io/y:1'],
             '/a/z.tar': []}

    def entry(node, *srcs):
        return {'node': node, 'files': [{'src': s, 'dest': '/i/' + s[3:]} for s in srcs]}
    # kubelet is not an archive: never imported.
    wanted = [entry('m', '/a/kubelet', '/a/x.tar', '/a/y.tar', '/a/z.tar'),
              entry('w', '/a/kubelet', '/a/x.tar', '/a/y.tar', '/a/z.tar')]
    pushed = [entry('m', '/a/kubelet', '/a/y.tar'), entry('w', '/a/kubelet')]
    plan = k8s.node_images(wanted, pushed, names)
    assert plan['m'] == [
        {'archive': '/i/x.tar', 'names': ['registry.k8s.io/x:1'], 'fresh': False},
        {'archive': '/i/y.tar', 'names': ['registry.k8s.io/y:1'], 'fresh': True},
        {'archive': '/i/z.tar', 'names': [], 'fresh': False}]
    assert [i['fresh'] for i in plan['w']] == [False, False, False]
    # What the node imports, given what its containerd has.
    assert k8s_node.archives_to_import(plan['m'], ['registry.k8s.io/x:1']) == ['/i/y.tar']
    assert k8s_node.archives_to_import(
        plan['w'], ['registry.k8s.io/x:1', 'registry.k8s.io/y:1']) == []
    # Pushed before, never imported: containerd lacks x.
    assert k8s_node.archives_to_import(plan['m'], []) == ['/i/x.tar', '/i/y.tar']
    # An archive of unknown names is imported when pushed, only then.
    plan = k8s.node_images(wanted[1:], [entry('w', '/a/z.tar')], names)
    assert k8s_node.archives_to_import(plan['w'], ['registry.k8s.io/x:1',
                                                   'registry.k8s.io/y:1']) == ['/i/z.tar']
    assert k8s.node_images([], [], {}) == {}


def test_image_names_as_containerd_has_them():
    assert k8s.image_name('busybox') == 'docker.io/library/busybox:latest'
    assert k8s.image_name('magnum-test/k8s-standin:1') == 'docker.io/magnum-test/k8s-standin:1'
    assert k8s.image_name('registry.k8s.io/pause:3.10') == 'registry.k8s.io/pause:3.10'
    assert k8s.image_name('localhost/x') == 'localhost/x:latest'
    assert k8s.image_name('mirror.local:5000/a/b:1') == 'mirror.local:5000/a/b:1'
    assert k8s.image_name('docker.io/flannel/flannel@sha256:ab') == \
        'docker.io/flannel/flannel@sha256:ab'


def test_shrink_picks_named_then_emptiest_then_highest():
    nodes = ['k-node-0', 'k-node-1', 'k-node-2', 'k-node-3']
    assert k8s.nodes_to_remove(nodes, 1) == ['k-node-3']
    assert k8s.nodes_to_remove(nodes, 2, pods={'k-node-2': 5, 'k-node-3': 4}) == [
        'k-node-1', 'k-node-0']
    assert k8s.nodes_to_remove(nodes, 2, named=['k-node-2']) == ['k-node-2', 'k-node-3']
    with pytest.raises(Invalid, match='not in the group'):
        k8s.nodes_to_remove(nodes, 1, named=['ghost'])


def test_the_roles_filters_render_the_node_files_as_text():
    """What the kubernetes role writes on the nodes: kubeadm's multi-document YAML and
    containerd's TOML, through the k8s_document filter."""
    import yaml
    from ansible.errors import AnsibleFilterError
    from ansible_collections.openstack.magnum.plugins.filter.kubeadm import FilterModule
    filters = FilterModule().filters()
    settings = filters['k8s_settings']({'labels': {'kube_tag': 'v1.36.1'}}, TEMPLATE)
    node = {'name': 'k-abc-master-0', 'address': '10.0.0.10', 'role': 'master',
            'nodegroup': 'default-master'}
    docs = list(yaml.safe_load_all(filters['k8s_document'](settings, 'init', node=node,
                                                           endpoint='10.0.0.5')))
    assert [d['kind'] for d in docs] == ['InitConfiguration', 'ClusterConfiguration',
                                         'KubeletConfiguration', 'KubeProxyConfiguration']
    assert docs[1]['kubernetesVersion'] == 'v1.36.1'
    assert docs[1]['controlPlaneEndpoint'] == '10.0.0.5:6443'
    worker = dict(node, name='k-abc-node-0', address='10.0.0.11', role='worker',
                  nodegroup='default-worker')
    join = yaml.safe_load(filters['k8s_document'](
        settings, 'join', node=worker, endpoint='10.0.0.5', token='abcdef.0123456789abcdef',
        ca_cert_hash='sha256:00'))
    assert join['kind'] == 'JoinConfiguration' and 'controlPlane' not in join
    assert 'SystemdCgroup = true' in filters['k8s_document'](settings, 'containerd')
    assert filters['k8s_document'](settings, 'resolv', resolv=DOCKER_RESOLV,
                                   fallback_resolv='nameserver 192.0.2.53') == \
        'nameserver 192.0.2.53\noptions ndots:0\n'
    with pytest.raises(AnsibleFilterError, match='certificate key'):
        filters['k8s_document'](settings, 'join', node=node, endpoint='10.0.0.5', token='t',
                                ca_cert_hash='sha256:00')


DOCKER_RESOLV = 'nameserver 127.0.0.11\noptions ndots:0\n'


def test_the_kubelets_resolv_conf_never_names_a_loopback_server():
    """CoreDNS forwards to the kubelet's resolv.conf: a loopback server there (Docker's
    embedded DNS on local nodes, systemd-resolved's stub) is CoreDNS's own loopback, and it
    stops on its loop check. The template's dns_nameserver wins; loopback servers give way
    to the controller's; none left is a clear error."""
    assert k8s.kubelet_config(conf())['resolvConf'] == k8s.RESOLV_CONF
    controller = 'search lab\nnameserver 127.0.0.53\nnameserver 10.255.255.53\n'
    assert k8s.resolv_conf(conf(), DOCKER_RESOLV, controller) == \
        'nameserver 10.255.255.53\noptions ndots:0\n'
    with_dns = k8s.settings({'labels': {}}, dict(TEMPLATE, dns_nameserver='8.8.8.8'))
    assert with_dns['dns_nameserver'] == '8.8.8.8'
    assert k8s.resolv_conf(with_dns, DOCKER_RESOLV, controller).startswith(
        'nameserver 8.8.8.8\n')
    dhcp = 'domain openstacklocal\nsearch openstacklocal\nnameserver 10.0.0.2\n' \
        'nameserver 10.0.0.3\n'
    assert k8s.resolv_conf(conf(), dhcp, controller) == (
        'nameserver 10.0.0.2\nnameserver 10.0.0.3\ndomain openstacklocal\n'
        'search openstacklocal\n')
    with pytest.raises(Invalid, match=r'loopback only \(127.0.0.11\).*dns_nameserver'):
        k8s.resolv_conf(conf(), DOCKER_RESOLV, 'nameserver 127.0.0.53\n')


def test_kubeconfigs_for_bootstrap_and_cluster_info():
    """CA rotation gives kubelets a bootstrap kubeconfig and kube-public the cluster-only
    one: both trust exactly the CA given, at the control-plane endpoint."""
    import base64
    import yaml
    from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
    ca_pem = tls.create_ca('rotated')[0]
    boot = k8s.kubeconfig('10.0.0.5', ca_pem, 'abcdef.0123456789abcdef')
    cluster = boot['clusters'][0]['cluster']
    assert cluster['server'] == 'https://10.0.0.5:6443'
    assert base64.b64decode(cluster['certificate-authority-data']).decode() == ca_pem
    assert boot['users'][0]['user'] == {'token': 'abcdef.0123456789abcdef'}
    assert boot['current-context'] == boot['contexts'][0]['name']
    info = k8s.kubeconfig('10.0.0.5', ca_pem)
    assert info['users'] == [] and info['clusters'] == boot['clusters']
    assert yaml.safe_load(yaml.safe_dump(info)) == info
    with pytest.raises(Invalid, match='bootstrap token'):
        k8s.kubeconfig('10.0.0.5', ca_pem, 'not-a-token')
    with pytest.raises(Invalid, match='CA certificate'):
        k8s.kubeconfig('10.0.0.5', '')


def test_a_shrink_naming_no_node_picks_the_emptiest_from_the_api_objects():
    """Pods of Deployments count; DaemonSet pods, static pods' mirrors and finished
    pods do not; ties go to the highest-numbered node."""
    def node(name):
        return {'metadata': {'name': name}}

    def pod(on, owner='ReplicaSet', phase='Running', mirror=False):
        meta = {'ownerReferences': [{'kind': owner}]}
        if mirror:
            meta['annotations'] = {'kubernetes.io/config.mirror': 'x'}
        return {'metadata': meta, 'spec': {'nodeName': on}, 'status': {'phase': phase}}

    nodes = [node('k-node-0'), node('k-node-1'), node('k-node-2'), node('k-node-3')]
    pods = ([pod('k-node-0')] + [pod('k-node-1')] * 2 + [pod(n, owner='DaemonSet') for n in
                                                         ('k-node-0', 'k-node-2', 'k-node-3')]
            + [pod('k-node-2', phase='Succeeded'), pod('k-node-3', mirror=True),
               pod('k-node-3', owner='Node', phase='Failed'), {'metadata': {}, 'spec': {}}])
    assert k8s.emptiest_nodes(nodes, pods, 1) == ['k-node-3']
    assert k8s.emptiest_nodes(nodes, pods, 2) == ['k-node-3', 'k-node-2']
    assert k8s.emptiest_nodes(nodes, pods, 3) == ['k-node-3', 'k-node-2', 'k-node-0']
    assert k8s.emptiest_nodes(nodes, [], 1) == ['k-node-3']
    assert k8s.emptiest_nodes(nodes, pods, 0) == []


def node(name, ready):
    conditions = [{'type': 'MemoryPressure', 'status': 'False'}]
    if ready is not None:
        conditions.append({'type': 'Ready', 'status': ready})
    return {'metadata': {'name': name}, 'status': {'conditions': conditions}}


def test_health_reads_like_magnums_monitor():
    servers = ['k-master-0', 'k-node-0', 'k-node-1']
    healthy = k8s.health([node(n, 'True') for n in servers], servers, 'ok\n')
    assert healthy == {'status': 'HEALTHY', 'reason': {
        'k-master-0.Ready': 'True', 'k-node-0.Ready': 'True', 'k-node-1.Ready': 'True',
        'api': 'ok'}}
    # a node not Ready, one without a Ready condition yet, a server never registered
    sick = k8s.health([node('k-master-0', 'True'), node('k-node-0', 'False'),
                       node('k-extra', None)], servers, 'ok')
    assert sick['status'] == 'UNHEALTHY'
    assert sick['reason'] == {'k-master-0.Ready': 'True', 'k-node-0.Ready': 'False',
                              'k-extra.Ready': 'Unknown', 'k-node-1.Ready': 'not registered',
                              'api': 'ok'}
    # every node Ready but the API server not ready (or only a master's view)
    degraded = k8s.health([node(n, 'True') for n in servers], servers,
                          'HTTP 500: [-]etcd failed')
    assert degraded['status'] == 'UNHEALTHY'
    assert degraded['reason']['api'] == 'HTTP 500: [-]etcd failed'
    # nobody could list the nodes: Magnum's fallback values
    assert k8s.health(None, servers, 'connection refused') == {
        'status': 'UNKNOWN', 'reason': {'api': 'The cluster is not accessible'}}


def test_containerd_is_debians_until_the_release_needs_its_own(tmp_path):
    assert k8s.containerd_source(conf(kube_tag='v1.36.2'), cache_dir=str(tmp_path)) == \
        {'mode': 'package'}
    new = k8s.containerd_source(conf(kube_tag='v1.37.0'), cache_dir=str(tmp_path), arch='arm64')
    version = k8s.DEFAULT_CONTAINERD_VERSION
    assert new['mode'] == 'tarball' and new['version'] == version
    tarball, runc = new['downloads']
    assert tarball['url'] == ('https://github.com/containerd/containerd/releases/download/'
                              'v%s/containerd-%s-linux-arm64.tar.gz' % (version, version))
    assert tarball['checksum'] == 'sha256:' + tarball['url'] + '.sha256sum'
    assert runc['url'] == ('https://github.com/opencontainers/runc/releases/download/v%s/'
                           'runc.arm64' % k8s.DEFAULT_RUNC_VERSION)
    assert runc['checksum'] == 'sha256:' + runc['url'].rpartition('/')[0] + '/runc.sha256sum'
    assert new['tarball'] == tarball['dest'] and new['runc'] == runc['dest']
    assert tarball['dest'].startswith(str(tmp_path / 'containerd' / version / 'arm64'))


def test_the_containerd_labels_choose_its_release_from_any_source(tmp_path):
    mirrored = k8s.containerd_source(conf(containerd_version='v2.1.4'), cache_dir=str(tmp_path),
                                     containerd_url='http://m.local/c/',
                                     runc_url='http://m.local/r')
    assert [d['url'] for d in mirrored['downloads']] == [
        'http://m.local/c/v2.1.4/containerd-2.1.4-linux-amd64.tar.gz',
        'http://m.local/r/v%s/runc.amd64' % k8s.DEFAULT_RUNC_VERSION]
    sha = 'ab' * 32
    own = k8s.containerd_source(conf(containerd_tarball_url='https://x.local/ctd.tgz',
                                     containerd_tarball_sha256=sha.upper()),
                                cache_dir=str(tmp_path))
    assert own['downloads'][0]['url'] == 'https://x.local/ctd.tgz'
    assert own['downloads'][0]['checksum'] == 'sha256:' + sha
    assert own['tarball'].endswith('/ctd.tgz')
    with pytest.raises(Invalid, match='containerd_tarball_sha256 is not a SHA-256'):
        k8s.containerd_source(conf(containerd_tarball_url='https://x.local/c.tgz',
                                   containerd_tarball_sha256='nope'), cache_dir=str(tmp_path))
    with pytest.raises(Invalid, match="containerd_version 'latest; rm' is not"):
        k8s.containerd_source(conf(containerd_version='latest; rm'), cache_dir=str(tmp_path))


def test_an_offline_containerd_release_is_taken_or_named_missing(tmp_path):
    (tmp_path / 'containerd').mkdir()
    with pytest.raises(Invalid, match=r'no containerd 2\.2\.9 for amd64 .*missing '
                                      r'containerd/containerd-2\.2\.9-linux-amd64\.tar\.gz, '
                                      r'containerd/runc\.amd64'):
        k8s.containerd_source(conf(kube_tag='v1.37.1', containerd_version='2.2.9'),
                              offline_dir=str(tmp_path))
    for name in ('containerd-2.2.9-linux-amd64.tar.gz', 'runc.amd64'):
        (tmp_path / 'containerd' / name).write_text('x')
    found = k8s.containerd_source(conf(kube_tag='v1.37.1', containerd_version='2.2.9'),
                                  offline_dir=str(tmp_path))
    assert found["downloads"] == []
    assert found["runc"] == str(tmp_path / "containerd" / "runc.amd64")
    files = k8s.node_files(['n'], [], {}, {'images': [], 'worker_images': []}, '/b', '/i',
                           found, '/var/c')
    assert files == [{'node': 'n', 'files': [
        {'src': found['tarball'], 'dest': '/var/c/containerd-2.2.9-linux-amd64.tar.gz',
         'mode': '0644'},
        {'src': found['runc'], 'dest': '/usr/local/sbin/runc', 'mode': '0755'}]}]
    text = k8s.containerd_config(dict(conf(), runc_binary=found['runc_binary']))
    assert 'BinaryName = "/usr/local/sbin/runc"' in text
    assert 'BinaryName' not in k8s.containerd_config(conf())


def test_the_roles_component_flags_reach_the_control_plane_unless_a_label_sets_them():
    defaults = yaml.safe_load(ROLE_DEFAULTS.read_text())['kubernetes_component_flags']
    c = dict(conf(kube_tag='v1.36.2',
                  kubescheduler_options='--leader-elect-lease-duration=90s --v=2',
                  kubeapi_options='--etcd-healthcheck-timeout=4s'),
             component_flags=defaults)
    cluster = k8s.kubeadm_init(c, MASTER, '10.0.0.5')[1]

    def flags(part):
        return dict((a['name'], a['value']) for a in part['extraArgs'])
    manager, scheduler = flags(cluster['controllerManager']), flags(cluster['scheduler'])
    assert (manager['leader-elect-lease-duration'], manager['leader-elect-renew-deadline'],
            manager['leader-elect-retry-period']) == ('60s', '40s', '5s')
    # a *_options label's own flag wins, the others still come
    assert scheduler['leader-elect-lease-duration'] == '90s' and scheduler['v'] == '2'
    assert scheduler['leader-elect-renew-deadline'] == '40s'
    assert flags(cluster['apiServer'])['etcd-healthcheck-timeout'] == '4s'
    assert flags(cluster['etcd']['local']) == {'heartbeat-interval': '500',
                                               'election-timeout': '5000'}
    # the older kubeadm API takes them as a mapping
    old = k8s.kubeadm_init(dict(conf(kube_tag='v1.30.0'), component_flags=defaults), MASTER,
                           '10.0.0.5')[1]
    assert old['etcd']['local']['extraArgs']['election-timeout'] == '5000'
    assert old['apiServer']['extraArgs']['etcd-healthcheck-timeout'] == '10s'
    # without the role's setting, Kubernetes' own
    plain = k8s.kubeadm_init(conf(kube_tag='v1.36.2'), MASTER, '10.0.0.5')[1]
    assert 'etcd' not in plain
    assert not [a for a in plain['controllerManager']['extraArgs']
                if a['name'].startswith('leader-elect')]


def test_a_single_masters_controllers_elect_no_leader_where_the_operator_says_so():
    def electing(master_count, single_master_leader_election):
        c = dict(k8s.settings({'labels': {'kubecontroller_options': '--v=2'},
                               'master_count': master_count}, TEMPLATE),
                 single_master_leader_election=single_master_leader_election)
        cluster = k8s.kubeadm_init(c, MASTER, '10.0.0.5')[1]
        return [dict((a['name'], a['value']) for a in cluster[part]['extraArgs']).get(
            'leader-elect') for part in ('controllerManager', 'scheduler')] + [
            addons.leader_election(c)]
    # Kubernetes' own by default; off with one master where the operator says so;
    # always on with several (two instances would both act).
    assert electing(1, True) == [None, None, []]
    assert electing(1, False) == ['false', 'false', [('leader-elect', 'false')]]
    assert electing(3, False) == [None, None, []]


def test_slow_masters_probes_are_patched_over_kubeadms():
    settings = dict(conf(), control_plane_probes={
        'livenessProbe': {'timeoutSeconds': 60, 'failureThreshold': 30}})
    patches = k8s.control_plane_patches(settings)
    assert sorted(patches) == ['etcd+strategic.yaml', 'kube-apiserver+strategic.yaml',
                               'kube-controller-manager+strategic.yaml',
                               'kube-scheduler+strategic.yaml']
    assert patches['kube-apiserver+strategic.yaml'] == {'spec': {'containers': [{
        'name': 'kube-apiserver', 'livenessProbe': {'timeoutSeconds': 60,
                                                    'failureThreshold': 30}}]}}
    node = {'name': 'm0', 'address': '10.0.0.5', 'role': 'master', 'nodegroup': 'default-master'}
    assert k8s.kubeadm_init(settings, node, '10.0.0.5')[0]['patches'] == {
        'directory': k8s.PATCHES_DIR}
    assert k8s.kubeadm_join(settings, dict(node, name='m1'), '10.0.0.5', 't', 'h',
                            'key')['patches'] == {'directory': k8s.PATCHES_DIR}
    assert 'patches' not in k8s.kubeadm_join(settings, dict(node, role='worker'), '10.0.0.5',
                                             't', 'h')
    # a probe kubeadm does not give a pod is not added (it would have no handler)
    ready = dict(settings, control_plane_probes={'readinessProbe': {'periodSeconds': 10}})
    assert k8s.control_plane_patches(ready) == {'kube-apiserver+strategic.yaml': {
        'spec': {'containers': [{'name': 'kube-apiserver',
                                 'readinessProbe': {'periodSeconds': 10}}]}}}
    # kubeadm's own probes unless the role gives some
    plain = conf()
    assert k8s.control_plane_patches(plain) == {}
    assert 'patches' not in k8s.kubeadm_init(plain, node, '10.0.0.5')[0]


def test_an_upgrade_keeps_the_waits_and_patches_init_gave_the_static_pods():
    """kubeadm upgrade with its own defaults re-makes every static pod with another startup
    probe (failureThreshold from controlPlaneComponentHealthCheck: 120 for the role's 20
    minutes, 24 for kubeadm's 4), so an upgrade to the same version restarted etcd and each
    component (on one master the API down meanwhile, and kubeadm's wait for the kubelet
    ran out); its configuration carries init's waits and a master's patches."""
    from ansible_collections.openstack.magnum.plugins.filter.kubeadm import k8s_document
    waits = {'controlPlaneComponentHealthCheck': '20m0s', 'upgradeManifests': '15m0s'}
    probes = {'livenessProbe': {'timeoutSeconds': 60, 'failureThreshold': 30}}
    c = dict(conf(kube_tag='v1.36.2'), kubeadm_timeouts=waits, control_plane_probes=probes)
    init = k8s.kubeadm_init(c, MASTER, '10.0.0.5')[0]
    master = k8s.kubeadm_upgrade(c, MASTER)
    assert master == {'apiVersion': 'kubeadm.k8s.io/v1beta4', 'kind': 'UpgradeConfiguration',
                      'apply': {'kubernetesVersion': 'v1.36.2',
                                'patches': {'directory': k8s.PATCHES_DIR}},
                      'node': {'patches': {'directory': k8s.PATCHES_DIR}},
                      'timeouts': waits}
    assert master['timeouts'] == init['timeouts'] and master['apply']['patches'] == \
        init['patches']
    # a worker has no static pods (nor the patches' directory)
    assert k8s.kubeadm_upgrade(c, WORKER) == {
        'apiVersion': 'kubeadm.k8s.io/v1beta4', 'kind': 'UpgradeConfiguration',
        'apply': {'kubernetesVersion': 'v1.36.2'}, 'timeouts': waits}
    assert yaml.safe_load(k8s_document(c, 'upgrade', node=MASTER)) == master
    # kubeadm's v1beta3 has no UpgradeConfiguration: no file (and no --config)
    assert k8s.kubeadm_upgrade(conf(kube_tag='v1.30.2'), MASTER) is None
    assert k8s_document(conf(kube_tag='v1.30.2'), 'upgrade', node=MASTER) == ''


def test_the_init_document_names_the_clients_address_beside_the_nodes_endpoint():
    """Nodes join at the API's address on the cluster's network; the certificate also
    names the floating IP clients use (the role passes it as sans)."""
    from ansible_collections.openstack.magnum.plugins.filter.kubeadm import k8s_document
    docs = list(yaml.safe_load_all(k8s_document(conf(), 'init', node=MASTER,
                                                endpoint='10.192.3.10',
                                                sans=['172.24.4.7', ''])))
    assert docs[1]['controlPlaneEndpoint'] == '10.192.3.10:6443'
    assert docs[1]['apiServer']['certSANs'] == ['10.192.3.10', '172.24.4.7']


def test_nodes_on_the_hosts_own_disk_evict_nothing_for_its_fullness():
    """The docker provider's nodes share the host's filesystem: the kubelet's default
    thresholds (imagefs 15 %) would read the whole host's and taint every node with
    disk-pressure; a cloud's servers keep Kubernetes' defaults."""
    local = k8s.kubelet_config(k8s.settings({'labels': {}}, TEMPLATE, provider='docker'))
    assert local['evictionHard'] == {'nodefs.available': '0%', 'nodefs.inodesFree': '0%',
                                     'imagefs.available': '0%'}
    for provider in ('openstack', None):
        assert 'evictionHard' not in k8s.kubelet_config(
            k8s.settings({'labels': {}}, TEMPLATE, provider=provider))
