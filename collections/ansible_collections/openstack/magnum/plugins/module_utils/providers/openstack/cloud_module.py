# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CloudModule: the base of the modules that act on a cluster's resources on an
OpenStack cloud (doc fragment ``openstack.magnum.cloud``).

It adds the ``cluster`` and ``cloud`` options, loads the cluster's record, connects
to the cloud (openstacksdk) and calls ``act(conn, record)``; the cloud's errors end
the module with ``OpenStack: <message>``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.openstack.magnum.plugins.module_utils.core import lifecycle
from ansible_collections.openstack.magnum.plugins.module_utils.base import MagnumModule

try:
    import openstack
    HAS_SDK = True
    SDK_ERROR = None
except ImportError:
    HAS_SDK = False
    SDK_ERROR = traceback.format_exc()

CLOUD_ARGS = dict(
    cluster=dict(type='str', required=True),
    cloud=dict(type='str'),
)


class CloudModule(MagnumModule):
    """Subclasses set ``argument_spec`` (their own options) and write ``act()``."""

    def __init__(self, controller_run=None):
        spec = dict(CLOUD_ARGS)
        spec.update(self.argument_spec)
        self.argument_spec = spec
        super(CloudModule, self).__init__(controller_run)

    def run(self):
        if not HAS_SDK:
            self.fail_json(msg=missing_required_lib('openstacksdk'), exception=SDK_ERROR)
        record = lifecycle.get_cluster(self.store, self.params['cluster'], self.scope)
        conn = None
        try:
            conn = openstack.connect(cloud=self.params['cloud'] or os.environ.get('OS_CLOUD'))
            self.act(conn, record)
        except openstack.exceptions.SDKException as exc:
            self.fail_json(msg='OpenStack: %s' % exc)
        finally:
            # Closed here, not at exit: a run inside the controller's worker
            # (in_controller) ends without exit handlers, and close() is what keeps the
            # login in the auth cache for the job's next module.
            if conn is not None:
                conn.close()

    def act(self, conn, record):
        raise NotImplementedError()
