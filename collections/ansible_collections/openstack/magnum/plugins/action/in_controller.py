# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of the collection's modules (meta/runtime.yml routes each one here).

The modules work on the store, and the store is the controller's: on a local
connection, the module's class runs in this worker process (module_utils/base.py,
ControllerRun) instead of a Python of its own that unpacks the module and imports the
store again — most of a bookkeeping task's cost. Anything else — another host, become,
a task environment, async — runs the module as Ansible always does.

The store a module works on is its ``db_url`` option, else the play's variable
``magnum_db_url`` (an extra var, as an AWX credential of type "OpenStack Magnum" injects
it; awx/README.md), else E(MAGNUM_DB_URL), else the default file (module_utils/core/store.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
import importlib
import traceback

from ansible.plugins.action import ActionBase

from ansible_collections.openstack.magnum.plugins.module_utils.base import (
    ControllerRun, Exited, MagnumModule)

MODULES = 'ansible_collections.openstack.magnum.plugins.modules.'
STORE_VAR = 'magnum_db_url'


def module_class(name):
    """The MagnumModule subclass the module file ``name`` defines."""
    module = importlib.import_module(MODULES + name)
    found = [value for value in vars(module).values()
             if isinstance(value, type) and issubclass(value, MagnumModule)
             and value.__module__ == module.__name__]
    if len(found) != 1:
        raise ValueError('module %s defines %d module classes' % (name, len(found)))
    return found[0]


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def _runs_here(self):
        return (self._connection.transport in ('local', 'ansible.builtin.local')
                and not self._play_context.become
                and not any(self._task.environment or ())   # [{}] when none is set
                and not self._task.async_val)

    def _module_args(self, task_vars):
        """The task's arguments, with the store from ``magnum_db_url`` unless it names one."""
        args = dict(self._task.args)
        url = (task_vars or {}).get(STORE_VAR)
        if url and not args.get('db_url'):
            args['db_url'] = str(self._templar.template(url))
        return args

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        fqcn = self._task.resolved_action or self._task.action
        args = self._module_args(task_vars)
        if not self._runs_here():
            result.update(self._execute_module(module_name=fqcn, module_args=args,
                                               task_vars=task_vars))
            return result
        name = fqcn.rsplit('.', 1)[-1]
        check_mode = bool(self._task.check_mode)
        run = functools.partial(ControllerRun, fqcn, args, check_mode)
        try:
            module_class(name)(run)()
        except Exited as end:
            result.update(end.result)
        except (Exception, SystemExit) as exc:   # a crash: as Ansible reports a module's
            result.update(failed=True, msg='MODULE FAILURE: %s: %s' % (type(exc).__name__, exc),
                          exception=traceback.format_exc())
        else:
            result.update(failed=True, msg='Module %s ended without a result.' % fqcn)
        result.setdefault('changed', False)
        return result
