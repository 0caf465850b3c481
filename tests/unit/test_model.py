import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import model, states
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import (
    ClusterTypeNotSupported, Conflict, Invalid)

BASE = {'coe': 'kubernetes', 'image_id': 'debian-12', 'external_network_id': 'public'}


def template(**extra):
    return model.build_template(dict(BASE, **extra), project_id='p')


def test_template_defaults():
    tpl = template()
    assert tpl['network_driver'] == 'flannel'
    assert tpl['docker_storage_driver'] == 'devicemapper'
    # what Magnum leaves null stays null: the flavor's default applies where servers are
    # made, the cloud's own DNS serves when none is named
    assert tpl['server_type'] == 'vm' and tpl['dns_nameserver'] is None
    assert tpl['flavor_id'] is None and tpl['master_flavor_id'] is None
    assert tpl['floating_ip_enabled'] is True and tpl['tls_disabled'] is False
    assert tpl['cluster_distro'] == 'debian' and tpl['driver'] == 'k8s_kubeadm'
    assert tpl['name'].endswith('-model')
    swarm = model.build_template(dict(BASE, coe='swarm'))
    assert swarm['network_driver'] == 'docker'
    mesos = model.build_template(dict(BASE, coe='mesos'))
    assert mesos['docker_storage_driver'] == 'devicemapper'
    # the client's default (overlay2) is the agents' Docker's
    assert model.build_template(dict(BASE, coe='mesos', docker_storage_driver='overlay2'))[
        'docker_storage_driver'] == 'overlay2'


@pytest.mark.parametrize('missing, message', [
    ('coe', 'Requested COE type Unset is not supported'),
    ('image_id', "image_id. Value: 'None'. Mandatory field missing")])
def test_template_mandatory_fields(missing, message):
    data = dict(BASE)
    del data[missing]
    with pytest.raises(Invalid, match=message):
        model.build_template(data)


def test_a_template_may_name_no_external_network_and_cannot_lose_the_one_it_names():
    # optional as in Magnum 23 (the cloud's only external network serves then)
    data = dict(BASE)
    del data['external_network_id']
    assert model.build_template(data)['external_network_id'] is None
    tpl = template()
    with pytest.raises(Invalid, match='Attribute external_network_id can not be removed'):
        model.update_template(tpl, dict(tpl, external_network_id=None), in_use=False)


def test_the_templates_own_fields_are_checked_before_its_image_is_looked_up():
    # Magnum's order: server type, network and volume drivers, volume size, then Glance
    looked_up = []

    def glance(image):
        looked_up.append(image)
        return 'debian'
    for bad in ({'server_type': 'mainframe'}, {'network_driver': 'weave'},
                {'volume_driver': 'nfs'}, {'docker_volume_size': 0}):
        with pytest.raises(Invalid):
            model.build_template(dict(BASE, **bad), image_catalog=glance)
    assert looked_up == []
    assert model.build_template(BASE, image_catalog=glance)['cluster_distro'] == 'debian'
    assert looked_up == [BASE['image_id']]


def test_a_servers_flavor_is_its_groups_else_its_clusters_else_the_default():
    from ansible_collections.openstack.magnum.plugins.module_utils.core import fields
    assert fields.flavor_of(None, '', 'm1.large') == 'm1.large'
    assert fields.flavor_of('gpu', 'm1.large') == 'gpu'
    assert fields.flavor_of(None, None) == fields.DEFAULT_FLAVOR == 'm1.small'


@pytest.mark.parametrize('extra,message', [
    ({'coe': 'swarm', 'network_driver': 'calico'}, 'Network driver type calico'),
    ({'network_driver': 'Flannel'}, 'Network driver type Flannel is not supported, expecting '
                                    'a flannel/calico/cilium/unspecified network driver.'),
    # Magnum 23 takes cilium; the kubeadm driver cannot deploy it: Magnum's "not allowed"
    ({'network_driver': 'cilium'}, 'Network driver type cilium is not allowed, expecting a '
                                   'flannel/calico/unspecified network driver.'),
    ({'volume_driver': 'rexray'}, 'Volume driver type rexray'),
    ({'coe': 'mesos', 'docker_storage_driver': 'btrfs'}, 'Docker storage driver type btrfs'),
    ({'docker_volume_size': 2}, 'minimum value 3GB for devicemapper'),
    ({'docker_volume_size': 0, 'docker_storage_driver': 'overlay2'}, 'greater or equal to 1'),
    ({'coe': 'dcos'}, 'Value should be one of'),
    ({'server_type': 'lpar'}, 'server_type'),
    ({'apiserver_port': 80}, 'apiserver_port'),
    ({'docker_volume_size': 'big'}, "invalid literal for int\\(\\) with base 10: 'big'"),
    ({'bogus_field': 1}, 'Unknown attribute'),
])
def test_template_validation(extra, message):
    with pytest.raises(Invalid, match=message):
        template(**extra)


def test_overlay_accepts_one_gb():
    assert template(docker_volume_size=1, docker_storage_driver='overlay2')[
        'docker_volume_size'] == 1


def test_unsupported_triple_is_magnums_400():
    with pytest.raises(ClusterTypeNotSupported) as err:
        template(image_id='fedora-atomic-latest')
    assert str(err.value) == 'Cluster type (vm, fedora-atomic, kubernetes) not supported.'
    assert err.value.code == 400
    with pytest.raises(Invalid, match="doesn't contain os_distro"):
        template(image_id='mystery-image')


def test_image_catalog_overrides_prefixes():
    tpl = model.build_template(dict(BASE, image_id='golden'), image_catalog={'golden': 'ubuntu'})
    assert tpl['cluster_distro'] == 'ubuntu'


def test_template_in_use_only_name_public_hidden():
    tpl = template()
    renamed = model.update_template(tpl, dict(tpl, name='x', public=True), in_use=True)
    assert renamed['name'] == 'x' and renamed['public'] is True
    with pytest.raises(Invalid, match='referenced by one or multiple clusters'):
        model.update_template(tpl, dict(tpl, flavor_id='m1.large'), in_use=True)
    assert model.update_template(tpl, dict(tpl, flavor_id='m1.large'),
                                 in_use=False)['flavor_id'] == 'm1.large'
    with pytest.raises(Invalid, match='can not be removed'):
        model.update_template(tpl, dict(tpl, coe=None), in_use=False)


def cluster(tpl=None, **data):
    tpl = tpl or template(keypair_id='tplkey')
    data.setdefault('cluster_template_id', tpl['uuid'])
    return model.build_cluster(data, tpl, project_id='p')


def test_cluster_inherits_from_template():
    tpl = template(keypair_id='tplkey', labels={'kube_tag': 'v1.30.0'}, docker_volume_size=5)
    record, groups = cluster(tpl)
    assert record['keypair'] == 'tplkey' and record['docker_volume_size'] == 5
    assert record['labels'] == {'kube_tag': 'v1.30.0'}
    assert record['node_count'] == 1 and record['master_count'] == 1
    assert record['create_timeout'] == 60 and record['status'] == states.CREATE_IN_PROGRESS
    assert record['name'].endswith('-cluster')
    assert [(g['name'], g['role'], g['node_count']) for g in groups] == [
        ('default-master', 'master', 1), ('default-worker', 'worker', 1)]


def test_keypair_fallback_and_error():
    assert cluster(keypair='mine')[0]['keypair'] == 'mine'
    with pytest.raises(Invalid, match='Keypair not specified'):
        model.build_cluster({'cluster_template_id': 'x'}, template(), project_id='p')


@pytest.mark.parametrize('data,message', [
    ({'create_timeout': 0}, 'create_timeout'),
    ({'create_timeout': -5}, 'create_timeout'),
    ({'name': '1bad'}, 'Value should match the pattern'),
    ({'name': 'a' * 243}, 'maximum character requirement of 242'),
    ({'node_count': -1}, 'node_count'),
    ({'master_count': 0}, 'master_count'),
    ({'master_count': 3}, 'master_lb_enabled'),
    ({'labels': 'flannel_backend=gre'}, 'flannel_backend'),
    ({'status': 'CREATE_COMPLETE'}, 'Unknown attribute'),
])
def test_cluster_validation(data, message):
    with pytest.raises(Invalid, match=message):
        cluster(**data)


def test_master_count_with_lb():
    assert cluster(master_count=3, master_lb_enabled=True)[0]['master_count'] == 3


def test_cluster_update_whitelist():
    record, _groups = cluster()
    updated, changed = model.update_cluster(record, dict(record, node_count=4))
    assert updated['node_count'] == 4 and changed == ['node_count']
    for field, value in (('master_count', 3), ('name', 'x'), ('discovery_url', 'http://x')):
        with pytest.raises(Invalid, match='not supported'):
            model.update_cluster(record, dict(record, **{field: value}))
    reset, _ = model.update_cluster(dict(record, node_count=5), dict(record, node_count=None))
    assert reset['node_count'] == 1


def test_nodegroup_rules():
    tpl = template(keypair_id='k')
    record, _ = cluster(tpl, flavor_id='m1.medium')
    group = model.build_nodegroup({'name': 'ng'}, record, tpl)
    assert group['role'] == 'worker' and group['flavor_id'] == 'm1.medium'
    with pytest.raises(Invalid, match='master'):
        model.build_nodegroup({'name': 'ng', 'role': 'master'}, record, tpl)
    with pytest.raises(Invalid, match='effect'):
        model.build_nodegroup({'name': 'ng', 'node_taints': [{'key': 'a', 'effect': 'Never'}]},
                              record, tpl)
    # a node group's bounds: one rule, Magnum's words and its 409 (NodeGroupInvalidInput);
    # a max_node_count of 0 is none, as in Magnum
    for given, refusal in (
            ({'min_node_count': 3, 'max_node_count': 2}, 'max_node_count for ng is invalid '
             '(min_node_count (3) should be less or equal to max_node_count (2)).'),
            ({'node_count': 4, 'max_node_count': 3}, 'max_node_count for ng is invalid '
             '(node_count (4) should be less or equal to max_node_count (3)).'),
            ({'node_count': 1, 'min_node_count': 2}, 'min_node_count for ng is invalid '
             '(min_node_count (2) should be less or equal to node_count (1)).')):
        with pytest.raises(Conflict) as refused:
            model.build_nodegroup(dict(given, name='ng'), record, tpl)
        assert str(refused.value) == refusal
    assert model.build_nodegroup({'name': 'ng', 'node_count': 2, 'max_node_count': 0},
                                 record, tpl)['max_node_count'] == 0
    with pytest.raises(Invalid, match='default nodegroup'):
        model.check_nodegroup_delete({'is_default': True})


def test_upgrade_refuses_downgrade():
    old = template(labels={'kube_tag': 'v1.30.2'})
    new = template(labels={'kube_tag': 'v1.29.0'})
    with pytest.raises(Invalid, match='Downgrading'):
        model.check_upgrade({}, old, new, 1)
    model.check_upgrade({}, old, template(labels={'kube_tag': 'v1.31.0'}), 1)
    with pytest.raises(Invalid, match='max_batch_size'):
        model.check_upgrade({}, old, old, 0)


def test_upgrade_to_another_image_needs_a_driver_that_rebuilds_nodes():
    # Kubernetes rebuilds its nodes one at a time on the new image; swarm mode cannot.
    model.check_upgrade({}, template(), template(image_id='debian-12-r2'), 1)
    with pytest.raises(Invalid, match=r'another image \(debian-12 -> debian-12-r2\) is not '
                                      r'supported by driver swarm_mode'):
        model.check_upgrade({}, template(coe='swarm'),
                            template(coe='swarm', image_id='debian-12-r2'), 1)
    model.check_upgrade({}, template(coe='swarm'), template(coe='swarm'), 1)


def test_federation_member_cannot_be_deleted():
    with pytest.raises(Conflict, match='unjoin'):
        model.check_member_delete({'uuid': 'c1', 'name': 'c'},
                                  [{'name': 'f', 'member_ids': ['c1']}])


def test_swarm_mode_refuses_legacy_options_it_cannot_honour():
    assert template(coe='swarm', labels={'swarm_strategy': 'spread'})['driver'] == 'swarm_mode'
    with pytest.raises(Invalid, match='swarm_strategy=binpack is not supported.*spreads'):
        template(coe='swarm', labels={'swarm_strategy': 'binpack'})
    with pytest.raises(Invalid, match='registry_enabled is not supported'):
        template(coe='swarm', registry_enabled=True)
    tpl = template(coe='swarm', keypair_id='kp')
    with pytest.raises(Invalid, match=r'swarm_strategy=random .*\(driver swarm_mode\)'):
        model.build_cluster({'name': 'c', 'labels': {'swarm_strategy': 'random'},
                             'cluster_template_id': tpl['uuid'],
                             'merge_labels': True}, tpl, project_id='p')
    # Kubernetes has no such refusals: its registry option stays recorded.
    assert template(registry_enabled=True)['registry_enabled'] is True
