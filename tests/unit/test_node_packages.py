"""What a node image must hold for each driver (driver_spec.Driver.node_packages), the check
that refuses an image listing what it holds and lacking some (before any server is made),
and what the cloud_image role records in Glance (DRIVERS.packages_held)."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    driver as kubeadm)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import (
    driver as mesos_driver)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import DRIVERS
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.swarm import (
    driver as swarm)

ROLES = (Path(__file__).resolve().parents[2]
         / 'collections/ansible_collections/openstack/magnum/roles')


def defaults(role):
    return yaml.safe_load((ROLES / role / 'defaults/main.yml').read_text())


def driver(coe):
    return DRIVERS.find(coe, 'vm', 'debian', {})


def test_the_drivers_lists_are_what_their_roles_install():
    assert list(swarm.PACKAGES) == defaults('swarm')['swarm_packages']
    mesos = defaults('mesos')
    assert list(mesos_driver.PACKAGES) == (mesos['mesos_zookeeper_packages']
                                           + mesos['mesos_agent_packages'])
    assert sorted(kubeadm.PACKAGES + ('containerd', 'runc')) == sorted(
        defaults('kubernetes')['kubernetes_packages'])


def test_what_each_driver_needs_on_its_nodes():
    assert driver('swarm').node_packages({}) == ['docker.io', 'python3']
    assert driver('mesos').node_packages({}) == ['docker.io', 'python3', 'zookeeper',
                                                 'zookeeperd']
    kubeadm = driver('kubernetes')
    assert 'containerd' in kubeadm.node_packages({}) and 'runc' in kubeadm.node_packages({})
    # containerd's release tarball replaces Debian's containerd and runc
    for labels in ({'containerd_version': '2.2.0'}, {'kube_tag': 'v1.37.0'}):
        needed = kubeadm.node_packages(labels)
        assert 'containerd' not in needed and 'runc' not in needed and 'socat' in needed
    capi = DRIVERS.find('kubernetes', 'vm', 'ubuntu', {'capi_helm_chart_version': '0.1'})
    assert capi.node_packages({}) == []   # it builds its servers itself


def test_an_image_lacking_packages_is_refused_naming_them_and_the_fixes():
    swarm = driver('swarm')
    with pytest.raises(Invalid) as refused:
        swarm.check_image_packages('img', {'python3', 'vim'}, {'labels': {}})
    message = str(refused.value)
    assert message.startswith('Image img lacks packages the swarm_mode driver needs on its '
                              'nodes: docker.io (')
    assert 'playbooks/cloud_image.yml' in message and 'http_proxy or https_proxy' in message
    with pytest.raises(Invalid, match=r'needs on its nodes: containerd, runc \('):
        driver('kubernetes').check_image_packages(
            'img', set(kubeadm.PACKAGES) | {'python3', 'docker.io'}, {'labels': {}})


def test_what_is_taken():
    swarm = driver('swarm')
    swarm.check_image_packages('img', {'python3', 'docker.io'}, {})
    swarm.check_image_packages('img', None, {})   # lists nothing: taken as it is
    for proxy in ('http_proxy', 'https_proxy'):   # the nodes install through it
        swarm.check_image_packages('img', {'python3'}, {proxy: 'http://proxy:3128'})
    driver('kubernetes').check_image_packages(
        'img', set(kubeadm.PACKAGES) | {'python3'},
        {'labels': {'containerd_version': '2.2.0'}})


def test_what_the_node_image_records():
    installed = ['vim', 'docker.io', 'containerd', 'runc', 'python3', 'zookeeper', 'socat']
    assert DRIVERS.packages_held(installed) == ['containerd', 'docker.io', 'python3', 'runc',
                                                'socat', 'zookeeper']


def test_the_nodes_whose_package_step_installs():
    results = [
        {'item': 'held', 'rc': 0, 'stdout_lines': ['ii ', 'ii ']},
        {'item': 'unknown', 'rc': 1, 'stdout_lines': ['ii ']},   # one unknown to dpkg
        {'item': 'removed', 'rc': 0, 'stdout_lines': ['ii ', 'rc ']},
        {'item': 'unreachable', 'unreachable': True},
    ]
    assert node_steps.nodes_lacking(results) == ['unknown', 'removed', 'unreachable']
    assert node_steps.nodes_lacking([]) == []


def test_the_operators_release_image_choice_is_push_or_require():
    """MAGNUM_K8S_IMAGE_RELEASE (the lab test, test_openstack_provider, walks both through
    Glance): unset is push; anything else is refused naming it."""
    assert kubeadm.image_release({}) == 'push'
    assert kubeadm.image_release({'MAGNUM_K8S_IMAGE_RELEASE': 'require'}) == 'require'
    with pytest.raises(Invalid, match='MAGNUM_K8S_IMAGE_RELEASE=always is not one of push, '
                                      'require'):
        kubeadm.check_image('img', {}, {'labels': {}}, {'MAGNUM_K8S_IMAGE_RELEASE': 'always'})
    # with require, a kube_version with or without its v is the same release
    kubeadm.check_image('img', {'kube_version': '1.36.2'}, {'labels': {'kube_tag': 'v1.36.2'}},
                        {'MAGNUM_K8S_IMAGE_RELEASE': 'require'})
    # ... and nothing else is: a release candidate, a doubled v
    for held in ('v1.36.2-rc.1', 'vv1.36.2', '1.36'):
        with pytest.raises(Invalid, match='holds Kubernetes %s' % held):
            kubeadm.check_image('img', {'kube_version': held},
                                {'labels': {'kube_tag': 'v1.36.2'}},
                                {'MAGNUM_K8S_IMAGE_RELEASE': 'require'})
