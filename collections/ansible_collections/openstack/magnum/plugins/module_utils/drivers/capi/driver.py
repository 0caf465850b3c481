# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes through Cluster API (role capi_helm; docs "Clusters through Cluster API"):
its entry in the registry. A template with the capi_helm_chart_version label, as
magnum-capi-helm's templates have, picks it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core.driver_spec import Driver
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi

DRIVER = Driver(
    'k8s_capi_helm', 'kubernetes', ('ubuntu', 'flatcar', 'debian'), ('capi_helm',),
    server_types=('vm',), chosen_by_label='capi_helm_chart_version', own_infrastructure=True,
    own_labels=capi.OWN_LABELS,
    cannot={'ca_rotate': "Rotating the CA of a Cluster API cluster is not supported: Cluster "
                         "API's control plane keeps the CA it was given for the cluster's "
                         "life"})
