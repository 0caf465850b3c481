#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_floating_ips
short_description: Delete the API server floating IPs left of a Cluster API cluster
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - After Cluster API removed a cluster of the C(k8s_capi_helm) driver, the floating IPs
    made for its API server that are attached to no port - the one the driver allocated
    (module M(openstack.magnum.capi_cluster); described
    C(Magnum cluster <uuid> API server (Cluster API))), which Cluster API's OpenStack
    provider (CAPO) never deletes, and one CAPO allocated for a cluster made before that,
    described C(Created by cluster-api-provider-openstack cluster <namespace>-<release>) -
    only CAPO's machine controller deletes those, from the control plane's server that
    has it - a cluster deleted before that server got its address would leave it.
  - An address attached to a port is left alone (it is in use).
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options: {}
notes:
  - Check mode names the addresses it would delete.
'''

EXAMPLES = r'''
- name: Delete the API server floating IPs left of cluster k8s
  openstack.magnum.capi_floating_ips:
    cluster: k8s
    cloud: mycloud
'''

RETURN = r'''
deleted:
  description: The floating IP addresses deleted (would be, in check mode).
  returned: always
  type: list
  elements: str
'''

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import capi
from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)


class CapiFloatingIpsModule(CloudModule):
    argument_spec = dict()

    def act(self, conn, record):
        left = [ip for ip in conn.network.ips(project_id=conn.current_project_id)
                if capi.left_behind(ip.to_dict(computed=False), record)]
        if not self.check_mode:
            for ip in left:
                conn.network.delete_ip(ip, ignore_missing=True)
        self.exit_json(changed=bool(left), deleted=sorted(ip.floating_ip_address for ip in left))


def main():
    CapiFloatingIpsModule()()


if __name__ == '__main__':
    main()
