"""The cloud-config the OpenStack add-ons read: [Global] from the job's cloud (what a
cluster may keep), [LoadBalancer] from its networks and Octavia labels, gcfg quoting."""

import json

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    cloud_config)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

APP_CRED = {'auth_url': 'https://keystone.example.com/v3',
            'application_credential_id': 'c0ffee', 'application_credential_secret': 's"e\\c'}


def test_global_takes_the_clouds_credential_region_and_tls_setting():
    section = dict(cloud_config.global_section('v3applicationcredential', APP_CRED,
                                               region='RegionTwo', verify=False))
    assert section == {'auth-url': 'https://keystone.example.com/v3',
                       'application-credential-id': 'c0ffee',
                       'application-credential-secret': 's"e\\c',
                       'region': 'RegionTwo', 'tls-insecure': 'true'}
    password = dict(cloud_config.global_section('password', {
        'auth_url': 'http://k/v3', 'username': 'u', 'password': 'p', 'project_name': 'p1',
        'user_domain_name': 'Default', 'project_domain_name': 'Default'}))
    assert password['tenant-name'] == 'p1' and password['tenant-domain-name'] == 'Default'
    assert 'tls-insecure' not in password


@pytest.mark.parametrize('auth_type, auth, cacert, message', [
    ('v3token', APP_CRED, None, 'auth type v3token cannot be given to a cluster'),
    ('password', APP_CRED, '/etc/ssl/private-ca.pem', 'CA file'),
    ('password', {'username': 'u'}, None, 'no auth_url'),
])
def test_what_a_cluster_cannot_keep_is_refused_naming_it(auth_type, auth, cacert, message):
    with pytest.raises(Invalid, match=message):
        cloud_config.global_section(auth_type, auth, cacert=cacert)


def test_load_balancers_take_the_networks_and_the_guides_octavia_labels():
    assert cloud_config.load_balancer_section({}, 'ext-id', 'subnet-id') == [
        ('floating-network-id', 'ext-id'), ('subnet-id', 'subnet-id'),
        ('create-monitor', 'true')]
    section = dict(cloud_config.load_balancer_section(
        {'octavia_provider': 'ovn', 'octavia_lb_algorithm': 'SOURCE_IP_PORT',
         'octavia_lb_healthcheck': 'false'}))
    assert section == {'lb-provider': 'ovn', 'lb-method': 'SOURCE_IP_PORT',
                       'create-monitor': 'false'}
    with pytest.raises(Invalid, match='octavia_lb_algorithm must be one of'):
        cloud_config.load_balancer_section({'octavia_lb_algorithm': 'RANDOM'})
    # A cloud without Octavia: the controller is off, whatever the labels say (the cloud
    # controller manager would stop at its start, finding no load-balancer endpoint).
    assert cloud_config.load_balancer_section(
        {'octavia_provider': 'ovn'}, 'ext-id', 'subnet-id', octavia=False) == [
        ('enabled', 'false')]


def test_values_are_quoted_so_any_secret_reads_back_and_line_breaks_are_refused():
    text = cloud_config.render([('Global', cloud_config.global_section(
        'v3applicationcredential', APP_CRED)), ('LoadBalancer', [('subnet-id', 's1')])])
    assert 'application-credential-secret = "s\\"e\\\\c"' in text
    parsed = cloud_config.parse(text)
    assert parsed['Global']['application-credential-secret'] == 's"e\\c'
    assert parsed['LoadBalancer'] == {'subnet-id': 's1'}
    with pytest.raises(Invalid, match='line break'):
        cloud_config.render([('Global', [('password', 'a\nb')])])


def test_helm_values_carry_the_text_at_the_charts_key_and_keep_the_rest():
    values = {'secret': {'name': 'x'}, 'clusterID': 'u'}
    made = json.loads(cloud_config.helm_values(values, ['secret', 'data', 'cloud.conf'], 'T'))
    assert made == {'secret': {'name': 'x', 'data': {'cloud.conf': 'T'}}, 'clusterID': 'u'}
    assert values == {'secret': {'name': 'x'}, 'clusterID': 'u'}
    with pytest.raises(Invalid, match='not a mapping'):
        cloud_config.helm_values({'secret': 'no'}, ['secret', 'data'], 'T')


def test_the_octavia_ingress_controller_reads_the_same_credential_as_yaml():
    sections = [('Global', cloud_config.global_section('password', {
        'auth_url': 'http://k/v3', 'username': 'u', 'password': 'p', 'project_id': 'pid',
        'user_domain_name': 'Default'}, region='R')),
        ('LoadBalancer', cloud_config.load_balancer_section(
            {'octavia_provider': 'amphora'}, 'ext', 'sub'))]
    made = json.loads(cloud_config.ingress_config(sections, 'uuid-1'))
    assert made == {'cluster-name': 'uuid-1',
                    'openstack': {'auth-url': 'http://k/v3', 'username': 'u', 'password': 'p',
                                  'project-id': 'pid', 'user-domain-name': 'Default',
                                  'region': 'R'},
                    'octavia': {'subnet-id': 'sub', 'floating-network-id': 'ext',
                                'provider': 'amphora'}}


def test_clouds_yaml_carries_the_credential_cluster_api_reads():
    text = cloud_config.clouds_yaml(
        'v3applicationcredential', {'auth_url': 'https://ks/v3',
                                    'application_credential_id': 'ac',
                                    'application_credential_secret': 's3cret',
                                    'token': 'never'},
        region='RegionOne', verify=False, interface='internal')
    assert json.loads(text) == {'clouds': {'openstack': {
        'auth': {'auth_url': 'https://ks/v3', 'application_credential_id': 'ac',
                 'application_credential_secret': 's3cret'},
        'auth_type': 'v3applicationcredential', 'identity_api_version': 3,
        'region_name': 'RegionOne', 'interface': 'internal', 'verify': False}}}
    with pytest.raises(Invalid, match='auth type token cannot be given'):
        cloud_config.clouds_yaml('token', {'auth_url': 'https://ks/v3', 'token': 't'})


def test_the_autoscaler_gets_magnums_trust_in_the_keys_its_magnum_provider_reads():
    """The magnum provider's gcfg refuses any key it does not know, and it signs in with a
    password or a trust only."""
    trust = cloud_config.global_section('v3password', {
        'auth_url': 'http://k/v3', 'user_id': 'trustee', 'password': 'pw',
        'trust_id': 't1'}, region='guests', interface='internal')
    text = cloud_config.autoscaler_config([('Global', trust)])
    assert cloud_config.parse(text) == {'Global': {
        'auth-url': 'http://k/v3', 'user-id': 'trustee', 'password': 'pw', 'trust-id': 't1',
        'region': 'guests'}}
    password = cloud_config.global_section('password', {
        'auth_url': 'http://k/v3', 'username': 'u', 'password': 'p', 'project_name': 'p1',
        'user_domain_name': 'Default', 'project_domain_name': 'Default'})
    assert cloud_config.parse(cloud_config.autoscaler_config([('Global', password)]))[
        'Global']['domain-name'] == 'Default'
    assert set(cloud_config.parse(cloud_config.autoscaler_config([('Global', password)]))[
        'Global']) <= set(cloud_config.AUTOSCALER_KEYS)
    with pytest.raises(Invalid, match='cannot sign in with an application credential'):
        cloud_config.autoscaler_config([('Global', cloud_config.global_section(
            'v3applicationcredential', APP_CRED))])
    with pytest.raises(Invalid, match='one domain for the user and the project'):
        cloud_config.autoscaler_config([('Global', cloud_config.global_section('password', {
            'auth_url': 'http://k/v3', 'username': 'u', 'password': 'p',
            'project_name': 'p1', 'user_domain_name': 'A', 'project_domain_name': 'B'}))])
