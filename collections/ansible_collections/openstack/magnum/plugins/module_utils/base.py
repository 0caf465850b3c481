# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MagnumModule: the base class every module of the collection shares.

It adds the store options, opens the store, runs ``run()`` and turns core
errors into ``fail_json`` with the message and Magnum's status code.

A module runs either as every Ansible module does (AnsibleModule, in a process of its
own) or, from the action plugin ``openstack.magnum.in_controller``, inside the
controller's worker process (ControllerRun: the same options validation, check mode,
exit and fail), which spares each run an interpreter and the store's imports.

Importing it hands the core the collection's drivers (module_utils/drivers/registry.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.errors import UnsupportedError

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    fields, labels, lifecycle, store)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import MagnumError
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import DRIVERS

STORE_ARGS = dict(
    db_url=dict(type='str', no_log=False),
    project_id=dict(type='str'),
    user_id=dict(type='str'),
)


class Exited(BaseException):
    """The end of a ControllerRun: ``result`` is what exit_json or fail_json was given.
    (A BaseException, as AnsibleModule's SystemExit: a module's ``except Exception``
    does not stop it.)"""

    def __init__(self, result):
        super(Exited, self).__init__(result.get('msg', ''))
        self.result = result


class ControllerRun(object):
    """What a MagnumModule uses of AnsibleModule, for a run inside the controller: the
    options validated against the module's specification (AnsibleModule's validator and
    messages), check mode, and exit_json / fail_json raising Exited with the result,
    no_log values masked."""

    def __init__(self, name, args, check_mode, argument_spec, **kwargs):
        self.check_mode = check_mode
        validator = ModuleArgumentSpecValidator(
            argument_spec, kwargs.get('mutually_exclusive'), kwargs.get('required_together'),
            kwargs.get('required_one_of'), kwargs.get('required_if'), kwargs.get('required_by'))
        validated = validator.validate(args)
        self.params = validated.validated_parameters
        self._no_log_values = validated._no_log_values
        if validated.error_messages:
            msg = validated.errors.msg
            if isinstance(validated.errors[0], UnsupportedError):
                msg = 'Unsupported parameters for (%s) module: %s' % (name, msg)
            self.fail_json(msg=msg)

    def exit_json(self, **result):
        raise Exited(remove_values(result, self._no_log_values))

    def fail_json(self, msg, **result):
        result.update(failed=True, msg=msg)
        raise Exited(remove_values(result, self._no_log_values))


class MagnumModule(object):
    """Subclasses set ``argument_spec`` (and ``module_kwargs``) and write ``run()``.

    ``controller_run``, when given, is a function of (argument_spec, **module_kwargs)
    returning the ControllerRun to use in place of AnsibleModule."""

    argument_spec = {}
    module_kwargs = {}
    # The collection's drivers, which importing the registry handed to the core.
    drivers = DRIVERS

    def __init__(self, controller_run=None):
        spec = dict(STORE_ARGS)
        spec.update(self.argument_spec)
        kwargs = dict(supports_check_mode=True)
        kwargs.update(self.module_kwargs)
        if controller_run is None:
            self.ansible = AnsibleModule(argument_spec=spec, **kwargs)
        else:
            kwargs.pop('supports_check_mode')   # every module here supports it
            self.ansible = controller_run(spec, **kwargs)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        self.store = None
        self.scope = None

    def __call__(self):
        if not store.HAS_SQLALCHEMY:
            self.ansible.fail_json(msg=missing_required_lib('SQLAlchemy'),
                                   exception=str(store.SQLALCHEMY_IMPORT_ERROR))
        try:
            self.store = store.Store(self.params['db_url'] or store.default_url())
            self.scope = self.scope_of(self.params['project_id'])
            self.run()
        except MagnumError as exc:
            self.ansible.fail_json(msg=str(exc), status_code=exc.code)

    def run(self):
        raise NotImplementedError()

    def scope_of(self, project_id=None):
        """Modules have direct store access: they look records up in every project;
        ``project_id`` (else MAGNUM_PROJECT_ID, else the default project) owns what they
        create."""
        project = project_id or os.environ.get('MAGNUM_PROJECT_ID') or \
            lifecycle.DEFAULT_PROJECT
        return lifecycle.Scope(project_id=project, user_id=self.params['user_id'],
                               is_admin=True)

    def owner_scope(self, data):
        """The scope a record described by ``data`` is made in: the project_id it names
        (taken out of it) unless the module's own project_id option is set."""
        owner = data.pop('project_id', None)
        return self.scope_of(owner) if owner and not self.params['project_id'] else self.scope

    @property
    def core_settings(self):
        """The service settings the core's validation takes: cluster_user_trust (which
        lets templates and clusters turn cloud_provider_enabled on) from
        MAGNUM_CLUSTER_USER_TRUST, as the API's --cluster-user-trust; the provider
        (MAGNUM_PROVIDER), whose images a template must name."""
        return {'cluster_user_trust': labels.to_bool(
            os.environ.get('MAGNUM_CLUSTER_USER_TRUST'), False),
            'provider': os.environ.get('MAGNUM_PROVIDER', 'docker')}

    def exit_json(self, **kwargs):
        self.ansible.exit_json(**kwargs)

    def fail_json(self, **kwargs):
        self.ansible.fail_json(**kwargs)

    def given(self, names):
        """The options among ``names`` the user set (not None)."""
        return fields.given_in(self.params, names)
