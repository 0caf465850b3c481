"""A release image's plan (k8s_node.image_plan): what the kubeadm driver's node setup
writes on every node, baked in, so that kubeadm runs on a server booted from it with
nothing done on it (Cluster API's bootstrap)."""
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    k8s_config, k8s_node)

TARBALL = {'mode': 'tarball', 'version': '2.1.4', 'tarball': '/cache/containerd-2.1.4.tgz',
           'runc': '/cache/runc.amd64', 'prefix': k8s_config.CONTAINERD_PREFIX,
           'runc_binary': k8s_config.RUNC_BINARY, 'downloads': []}


def settings(tag):
    return k8s_config.settings({'labels': {'kube_tag': tag}}, {})


def test_a_release_image_holds_what_node_setup_writes_and_its_containerd():
    conf = settings('v1.36.2')
    plan = k8s_node.image_plan(conf, '/usr/local/bin', TARBALL)
    files = dict((f['dest'], f['content']) for f in plan['files'])
    # the same text node setup writes (NodeSetup: it then finds nothing to change)
    assert files[k8s_node.KUBELET_UNIT] == k8s_node.kubelet_unit('/usr/local/bin')
    assert files[k8s_node.KUBEADM_DROPIN] == k8s_node.kubeadm_dropin('/usr/local/bin')
    assert files[k8s_node.SYSCTL_FILE] == k8s_node.SYSCTL
    assert files[k8s_node.CONTAINERD_UNIT] == k8s_node.containerd_unit(TARBALL)
    assert files[k8s_node.CONTAINERD_CONFIG] == k8s_config.containerd_config(
        dict(conf, runc_binary=k8s_config.RUNC_BINARY))
    assert 'br_netfilter' in files[k8s_node.MODULES_FILE].split()
    assert plan['unpack'] == [{'src': TARBALL['tarball'], 'dest': '/usr/local'}]
    assert plan['copies'] == [{'src': TARBALL['runc'], 'dest': '/usr/local/sbin/runc',
                               'mode': '0755'}]
    assert plan['trees'] == [{'src': '/usr/lib/cni', 'dest': '/opt/cni/bin'}]
    assert plan['enable'] == ['kubelet.service', 'containerd.service']
    assert plan['disable'] == ['docker.service', 'docker.socket']


def test_a_release_of_debians_containerd_is_given_no_other():
    conf = settings('v1.30.2')
    plan = k8s_node.image_plan(conf, '/usr/local/bin', k8s_config.containerd_source(conf))
    files = dict((f['dest'], f['content']) for f in plan['files'])
    assert k8s_node.CONTAINERD_UNIT not in files and plan['unpack'] == plan['copies'] == []
    assert files[k8s_node.CONTAINERD_CONFIG] == k8s_config.containerd_config(conf)
