# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The Mesos driver's filters. Documentation: one YAML file per filter in this folder.

from ansible_collections.openstack.magnum.plugins.module_utils.drivers.mesos import mesos_config
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


class FilterModule(object):
    def filters(self):
        return wrap_all({
            'mesos_settings': mesos_config.settings,
            'mesos_artifacts': mesos_config.artifact_source,
            'mesos_flag_files': mesos_config.flag_files,
            'mesos_health': mesos_config.health,
            'mesos_maintenance': mesos_config.maintenance,
            'mesos_mirror_files': mesos_config.mirror_files,
            'mesos_node_files': mesos_config.node_files,
            'mesos_running_tasks': mesos_config.running_tasks,
        })
