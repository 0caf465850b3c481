import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


def test_parse_cli_forms():
    assert labels.parse('a=1,b=2;c=3') == {'a': '1', 'b': '2', 'c': '3'}
    assert labels.parse(['a=1', 'b=x=y']) == {'a': '1', 'b': 'x=y'}
    assert labels.parse({'flag': True, 'n': 3}) == {'flag': 'true', 'n': '3'}
    assert labels.parse(None) == {}


def test_parse_keeps_cidr_lists_together():
    parsed = labels.parse('master_lb_allowed_cidrs=10.0.0.0/24,192.168.0.0/16,kube_tag=v1.30.0')
    assert parsed == {'master_lb_allowed_cidrs': '10.0.0.0/24,192.168.0.0/16',
                      'kube_tag': 'v1.30.0'}


def test_parse_aliases_from_the_guide():
    assert labels.parse('rexray-preempt=true') == {'rexray_preempt': 'true'}


@pytest.mark.parametrize('bad', ['novalue', 'a b=c'])
def test_parse_rejects_malformed(bad):
    with pytest.raises(Invalid):
        labels.parse(bad)


@pytest.mark.parametrize('given', [
    {'flannel_backend': 'gre'},
    {'cgroup_driver': 'none'},
    {'flannel_network_cidr': '10.0.0.0/33'},
    {'boot_volume_size': '-1'},
    {'monitoring_enabled': 'maybe'},
    {'master_lb_allowed_cidrs': '10.0.0.0/24,nope'},
    {'mesos_slave_image_providers': 'rkt'},
    {'swarm_strategy': 'random-ish'},
    {'etcd_blockdevice_type': 'tmpfs'},
])
def test_known_label_values_are_checked(given):
    with pytest.raises(Invalid):
        labels.validate(given)


def test_unknown_labels_pass_untouched():
    assert labels.validate({'my_own_label': 'anything'}) == {'my_own_label': 'anything'}


@pytest.mark.parametrize('given,kwargs,message', [
    ({'cloud_provider_enabled': 'true'}, {}, 'cluster_user_trust'),
    ({'cinder_csi_enabled': 'true'}, {'volume_driver': None}, 'volume_driver=cinder'),
    ({'prometheus_adapter_enabled': 'true'}, {}, 'monitoring_enabled'),
    ({'helm_client_tag': 'v2.16.7', 'monitoring_enabled': 'true'}, {}, 'tiller_enabled'),
    ({'helm_client_tag': 'v2.16.7', 'tiller_enabled': 'true', 'tiller_tag': 'v2.12.3'}, {},
     'tiller_tag'),
    ({'kube_tag': 'v1.9.0'}, {'network_driver': 'calico'}, 'v1.9.3'),
    ({'kube_tag': 'v1.18.2'}, {'cluster_distro': 'fedora-atomic'}, 'use_podman'),
    ({'use_podman': 'false'}, {'cluster_distro': 'fedora-coreos'}, 'use_podman=true'),
    ({}, {'cluster_distro': 'fedora-coreos', 'docker_storage_driver': 'devicemapper'},
     'devicemapper'),
    ({'min_node_count': '5', 'max_node_count': '2'}, {}, 'max_node_count'),
    ({'kube_tag': 'latest'}, {}, 'vX.Y.Z'),
])
def test_interdependencies(given, kwargs, message):
    with pytest.raises(Invalid, match=message):
        labels.validate(given, coe='kubernetes', **kwargs)
    # The rules are the Kubernetes driver's: another COE's clusters do not read these
    # labels, only their values are checked.
    labels.validate(given, coe='swarm', **kwargs)


def test_interdependencies_satisfied():
    labels.validate({'cinder_csi_enabled': 'true', 'cloud_provider_enabled': 'true'},
                    coe='kubernetes', volume_driver='cinder', cluster_user_trust=True)
    labels.validate({'prometheus_adapter_enabled': 'true', 'monitoring_enabled': 'true'},
                    coe='kubernetes')
    labels.validate({'kube_tag': 'v1.18.2', 'use_podman': 'true'}, coe='kubernetes',
                    cluster_distro='fedora-atomic')
    labels.validate({'kube_tag': 'v1.30.0'}, coe='kubernetes', network_driver='calico')


def test_merge():
    base = {'a': '1', 'b': '2'}
    assert labels.merge(base, None, False)[0] == base
    effective, overridden, added, skipped = labels.merge(base, {'b': '3', 'c': '4'}, True)
    assert effective == {'a': '1', 'b': '3', 'c': '4'}
    assert (overridden, added, skipped) == ({'b': '3'}, {'c': '4'}, {})
    effective, overridden, added, skipped = labels.merge(base, {'c': '4'}, False)
    assert effective == {'c': '4'} and skipped == base and added == {'c': '4'}


def test_master_lb_allowed_cidrs_let_the_clusters_own_subnet_in():
    # Unset or empty: the load balancer is open to everyone.
    assert labels.master_lb_allowed_cidrs({}, '10.0.0.0/24') == []
    assert labels.master_lb_allowed_cidrs({'master_lb_allowed_cidrs': ' , '}, '10.0.0.0/24') == []
    # Set: its CIDRs, then the nodes' subnet (as Magnum adds it), each once, canonical.
    assert labels.master_lb_allowed_cidrs(
        {'master_lb_allowed_cidrs': '192.168.1.7/16, 203.0.113.0/24'}, '10.0.0.0/24') == \
        ['192.168.0.0/16', '203.0.113.0/24', '10.0.0.0/24']
    assert labels.master_lb_allowed_cidrs(
        {'master_lb_allowed_cidrs': '10.0.0.0/24,192.0.2.0/24'}, '10.0.0.0/24') == \
        ['10.0.0.0/24', '192.0.2.0/24']
    with pytest.raises(Invalid, match="must be a CIDR, not 'nope'"):
        labels.master_lb_allowed_cidrs({'master_lb_allowed_cidrs': 'nope'}, '10.0.0.0/24')


def test_a_field_and_a_label_read_a_boolean_in_the_same_words():
    from ansible_collections.openstack.magnum.plugins.module_utils.core import fields
    for word in labels.TRUE_WORDS + tuple(w.upper() for w in labels.TRUE_WORDS):
        assert fields.coerce(fields.CLUSTER_TEMPLATE, 'public', word) is True
        assert labels.to_bool(word) is True
        labels.validate({'monitoring_enabled': word})
    for word in labels.FALSE_WORDS:
        assert fields.coerce(fields.CLUSTER_TEMPLATE, 'public', word) is False
        assert labels.to_bool(word, default=True) is False
        labels.validate({'monitoring_enabled': word})
    with pytest.raises(Invalid, match='Label monitoring_enabled must be true or false'):
        labels.validate({'monitoring_enabled': 'perhaps'})
