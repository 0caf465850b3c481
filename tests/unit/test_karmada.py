"""module_utils/karmada: a federation's properties as Karmada's settings, the chart's
values, the names and objects of a join, Karmada's member state."""

import base64

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.federation import karmada
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

CLUSTER = {'uuid': '0e2c8a5c-9d6a-4c5b-8e8f-1234567890ab', 'name': 'My_Cluster.1',
           'api_address': 'https://10.0.0.5:6443', 'master_addresses': ['10.0.0.5']}


def test_settings_default_and_validated():
    assert karmada.settings({}) == {'dns': 'cluster.local', 'karmada_version': '1.16.0',
                                    'apiserver_nodeport': 32443}
    found = karmada.settings({'dns': 'example.internal', 'karmada_version': 'v1.15.2',
                              'apiserver_nodeport': '30001', 'owner': 'anything $(at) all'})
    assert found == {'dns': 'example.internal', 'karmada_version': '1.15.2',
                     'apiserver_nodeport': 30001}


@pytest.mark.parametrize('properties, message', [
    ({'dns': 'Example..local'}, "dns='Example..local' is not valid"),
    ({'dns': 'a.b;rm -rf /'}, 'is not valid'),
    ({'karmada_version': 'latest'}, "karmada_version='latest' is not valid"),
    ({'apiserver_nodeport': '80; x'}, 'is not valid'),
    ({'apiserver_nodeport': '70000'}, 'apiserver_nodeport=70000 is not a port'),
])
def test_bad_settings_are_refused_naming_them(properties, message):
    with pytest.raises(Invalid, match=message.replace('(', r'\(')):
        karmada.settings(properties)


def test_chart_values_give_the_control_plane_its_certificates_and_node_port():
    certs = dict((k, k.upper()) for k in ('ca', 'ca_key', 'crt', 'key', 'front_proxy_ca',
                                          'front_proxy_crt', 'front_proxy_key'))
    values = karmada.chart_values(karmada.settings({'apiserver_nodeport': '30010'}), certs,
                                  'registry.example/mirror/')
    assert values['installMode'] == 'host' and values['clusterDomain'] == 'cluster.local'
    assert values['karmadaImageVersion'] == 'v1.16.0'
    # The chart's components take their tags from their own values (a YAML anchor in
    # the chart's values.yaml, resolved before any value given is merged).
    for component in ('controllerManager', 'scheduler', 'webhook', 'aggregatedApiServer'):
        assert values[component] == {'image': {'tag': 'v1.16.0'}}, component
    assert values['certs'] == {'mode': 'custom', 'custom': {
        'caCrt': 'CA', 'caKey': 'CA_KEY', 'crt': 'CRT', 'key': 'KEY',
        'frontProxyCaCrt': 'FRONT_PROXY_CA', 'frontProxyCrt': 'FRONT_PROXY_CRT',
        'frontProxyKey': 'FRONT_PROXY_KEY'}}
    assert values['apiServer'] == {'serviceType': 'NodePort', 'nodePort': 30010}
    assert values['global'] == {'imageRegistry': 'registry.example/mirror'}
    assert 'global' not in karmada.chart_values(karmada.settings({}), certs)


def test_the_control_plane_is_reached_through_the_hosts_first_master():
    found = karmada.settings({})
    assert karmada.endpoint(CLUSTER, found) == 'https://10.0.0.5:32443'
    assert karmada.endpoint(dict(CLUSTER, master_addresses=['fd00::5']), found) == \
        'https://[fd00::5]:32443'
    with pytest.raises(Invalid, match='has no master address'):
        karmada.endpoint(dict(CLUSTER, master_addresses=[]), found)
    hosts = karmada.apiserver_hosts(found, ['10.0.0.5'])
    assert 'karmada-apiserver.karmada-system.svc.cluster.local' in hosts
    assert hosts[-1] == '10.0.0.5'


def test_chart_source_offline_mirror_or_repository(tmp_path):
    (tmp_path / 'charts').mkdir()
    with pytest.raises(Invalid, match="lacks Karmada's chart: charts/karmada-1.16.0.tgz"):
        karmada.chart_source('1.16.0', str(tmp_path))
    (tmp_path / 'charts' / 'karmada-1.16.0.tgz').write_text('x')
    assert karmada.chart_source('1.16.0', str(tmp_path)) == {
        'archive': str(tmp_path / 'charts' / 'karmada-1.16.0.tgz')}
    cache = str(tmp_path / 'cache')
    assert karmada.chart_source('1.16.0', charts_url='http://m/c/', cache_dir=cache) == {
        'archive': cache + '/charts/karmada-1.16.0.tgz', 'url': 'http://m/c/karmada-1.16.0.tgz'}
    assert karmada.chart_source('1.16.0', cache_dir=cache)['repo'] == karmada.CHART['repo']


def test_member_names_are_dns_labels_unique_in_the_federation():
    assert karmada.member_name(CLUSTER) == 'my-cluster-1'
    assert karmada.member_name(CLUSTER, taken=['my-cluster-1']) == 'my-cluster-1-0e2c8a5c'
    assert karmada.member_name({'uuid': CLUSTER['uuid'], 'name': '---'}) == 'cluster'
    assert len(karmada.member_name({'uuid': CLUSTER['uuid'], 'name': 'x' * 300},
                                   taken=['x' * 48])) <= 48


def test_a_join_gives_karmada_a_token_of_its_own_never_an_admin_certificate():
    fed = '3e8d4c36-5c1b-4c9f-9a36-2b1f2b3d2c11'
    made = karmada.member_objects(fed, CLUSTER)
    assert [o['kind'] for o in made] == ['Namespace', 'ServiceAccount', 'Secret',
                                         'ClusterRole', 'ClusterRoleBinding']
    assert made[2]['type'] == 'kubernetes.io/service-account-token'
    assert made[4]['subjects'] == [{'kind': 'ServiceAccount', 'name': 'magnum-federation-3e8d4c36',
                                    'namespace': 'karmada-cluster'}]
    registered = karmada.karmada_objects(fed, CLUSTER, 'm', 'tok', 'CA PEM')
    secret, cluster = registered[1], registered[2]
    assert sorted(secret['data']) == ['caBundle', 'token']
    assert base64.b64decode(secret['data']['token']) == b'tok'
    assert cluster['spec'] == {'id': CLUSTER['uuid'], 'syncMode': 'Push',
                               'apiEndpoint': CLUSTER['api_address'],
                               'secretRef': {'namespace': 'karmada-cluster', 'name': 'm'}}
    assert cluster['metadata']['labels'] == {karmada.LABEL_FEDERATION: fed,
                                             karmada.LABEL_CLUSTER: CLUSTER['uuid']}


def test_member_state_from_the_ready_condition():
    assert karmada.member_state(None) == ('joining', 'Karmada has not reported on it yet')
    assert karmada.member_state({'status': {'conditions': [
        {'type': 'Ready', 'status': 'True'}]}}) == ('ready', None)
    assert karmada.member_state({'status': {'conditions': [
        {'type': 'Ready', 'status': 'False', 'reason': 'ClusterNotReachable',
         'message': 'dial tcp: refused'}]}}) == ('joining', 'dial tcp: refused')
