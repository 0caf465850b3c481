# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes driver on kubeadm (role kubernetes): its entry in the registry, what it
refuses and what its nodes install."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as labels_mod
from ansible_collections.openstack.magnum.plugins.module_utils.core import node_values
from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import (
    Driver, coe_facts)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    addons, health, k8s_config, k8s_labels)

# The network drivers it deploys (Magnum's API also takes cilium).
NETWORK_DRIVERS = ('flannel', 'calico')
# What roles/kubernetes installs from Debian (its kubernetes_packages; a unit test keeps
# them equal), containerd and runc aside.
PACKAGES = ('containernetworking-plugins', 'conntrack', 'iptables', 'socat', 'ethtool',
            'ebtables')


def refuses(template, labels):
    """The add-ons the user guide's labels name that this driver does not deploy yet
    (addons.NOT_DEPLOYED): refused together, never silently ignored."""
    found = addons.not_deployed(labels)
    if found:
        return ("The Kubernetes driver does not deploy these add-ons yet: %s. Unset them (or "
                "set them false) - docs, \"Kubernetes add-ons\", lists what it deploys"
                % ', '.join(found))
    network = template.get('network_driver')
    if network not in (None, '') and network not in NETWORK_DRIVERS:
        # Magnum's words for a network driver its configuration does not allow
        raise Invalid("Network driver type %s is not allowed, expecting a %s network driver."
                      % (network, '/'.join(NETWORK_DRIVERS + ('unspecified',))))
    # Every node registers with its zone as a Kubernetes label (topology.kubernetes.io/zone).
    node_values.check_k8s_label_value('Label availability_zone', labels.get('availability_zone'))
    if labels.get('cert_manager_api') not in (None, '') and \
            not labels_mod.to_bool(labels['cert_manager_api']):
        # Magnum's cert_manager_api=true gave the controller manager the cluster CA to sign
        # CertificateSigningRequests; kubeadm always does (kubelets join by TLS bootstrap).
        return ("Label cert_manager_api=%s cannot be honoured: the controller manager signs "
                "certificate signing requests with the cluster's CA on every kubeadm cluster "
                "(nodes join through it); leave the label unset or true"
                % labels['cert_manager_api'])
    return None


# The operator's choice for a template whose node image is not a release image of its
# kube_tag (the cloud_image role's cloud_image_kube_tag, Glance property kube_version):
# "push" (the nodes are given the release at create; the job's log says what and why) or
# "require" (refused with a 400 before any server is made).
IMAGE_RELEASE_ENV = 'MAGNUM_K8S_IMAGE_RELEASE'
IMAGE_RELEASE_CHOICES = ('push', 'require')


def image_release(environ=None):
    """The operator's choice (IMAGE_RELEASE_ENV), ``push`` when unset."""
    value = (environ if environ is not None else os.environ).get(IMAGE_RELEASE_ENV) or 'push'
    if value not in IMAGE_RELEASE_CHOICES:
        raise Invalid("%s=%s is not one of %s: ask the operator to set it right."
                      % (IMAGE_RELEASE_ENV, value, ', '.join(IMAGE_RELEASE_CHOICES)))
    return value


def check_image(image, properties, template, environ=None):
    """With ``require``: the image must hold the template's kube_tag (its Glance property
    kube_version, which the cloud_image role's release images carry)."""
    if image_release(environ) != 'require':
        return
    wanted = (template.get('labels') or {}).get('kube_tag') or k8s_config.DEFAULT_KUBE_TAG
    held = str(properties.get('kube_version') or '')

    def tag(version):  # a release with or without its v (kube_version 1.36.2 is v1.36.2)
        version = str(version)
        return version if version.startswith('v') else 'v' + version
    if held and tag(held) == tag(wanted):
        return
    build = ("Upload the release's image (ansible-playbook playbooks/cloud_image.yml -e "
             "cloud_image_kube_tag=%s) and name it in the template" % wanted)
    if not held:
        raise Invalid("Image %s holds no Kubernetes release (it has no Glance property "
                      "kube_version) and this cloud takes release images only "
                      "(%s=require). %s." % (image, IMAGE_RELEASE_ENV, build))
    raise Invalid("Image %s holds Kubernetes %s (its Glance property kube_version), not the "
                  "template's kube_tag %s, and this cloud takes release images only (%s="
                  "require). %s, or set kube_tag=%s."
                  % (image, held, wanted, IMAGE_RELEASE_ENV, build, held))


def packages(labels):
    """roles/kubernetes' kubernetes_packages: containerd and runc are Debian's unless the
    labels (or a release from 1.37) take containerd's release tarball."""
    tarball = labels.get('containerd_version') or labels.get('containerd_tarball_url') or \
        k8s_config.parse_version(labels.get('kube_tag') or k8s_config.DEFAULT_KUBE_TAG)[:2] \
        >= k8s_config.CONTAINERD_TARBALL_FROM
    return PACKAGES + (() if tarball else ('containerd', 'runc'))


# Magnum 23's list: what its API takes for Kubernetes templates; each driver of the COE
# refuses what it cannot deploy (this one cilium), in Magnum's words for a driver not
# allowed. Volume driver 'unspecified' is Magnum 23's for none.
FACTS = coe_facts(('flannel', 'calico', 'cilium'), 'flannel', ('cinder', 'unspecified'), 6443,
                  labels=k8s_labels.LABELS, check_labels=k8s_labels.check)

DRIVER = Driver('k8s_kubeadm', 'kubernetes', ('debian', 'ubuntu'), ('kubernetes',), facts=FACTS,
                picks_nodes_to_remove=True, rebuilds_nodes=True, refuse=refuses,
                packages=packages, preflight=True, image_check=check_image,
                health_reader=health.read)
