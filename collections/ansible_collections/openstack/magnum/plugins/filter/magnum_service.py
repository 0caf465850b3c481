# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# The service role's filters: its processes as the host supervises them.
# Documentation: one YAML file per filter in this folder.

from ansible_collections.openstack.magnum.plugins.module_utils.service import programs
from ansible_collections.openstack.magnum.plugins.plugin_utils.filters import wrap_all


class FilterModule(object):
    def filters(self):
        return wrap_all({
            'magnum_service_systemd_unit': programs.systemd_unit,
            'magnum_service_supervisor_program': programs.supervisor_program,
        })
