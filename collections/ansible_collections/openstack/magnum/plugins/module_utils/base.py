# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MagnumModule: the base class every module of the collection shares.

It adds the store options, opens the store, runs ``run()`` and turns core
errors into ``fail_json`` with the message and Magnum's status code.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.openstack.magnum.plugins.module_utils import lifecycle, store
from ansible_collections.openstack.magnum.plugins.module_utils.errors import MagnumError

STORE_ARGS = dict(
    db_url=dict(type='str', no_log=False),
    project_id=dict(type='str'),
    user_id=dict(type='str'),
)


class MagnumModule(object):
    """Subclasses set ``argument_spec`` (and ``module_kwargs``) and write ``run()``."""

    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        spec = dict(STORE_ARGS)
        spec.update(self.argument_spec)
        kwargs = dict(supports_check_mode=True)
        kwargs.update(self.module_kwargs)
        self.ansible = AnsibleModule(argument_spec=spec, **kwargs)
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
            project = self.params['project_id'] or os.environ.get('MAGNUM_PROJECT_ID') or \
                lifecycle.DEFAULT_PROJECT
            # Modules have direct store access: they look records up in every
            # project; project_id owns what they create.
            self.scope = lifecycle.Scope(project_id=project, user_id=self.params['user_id'],
                                         is_admin=True)
            self.run()
        except MagnumError as exc:
            self.ansible.fail_json(msg=str(exc), status_code=exc.code)

    def run(self):
        raise NotImplementedError()

    def exit_json(self, **kwargs):
        self.ansible.exit_json(**kwargs)

    def fail_json(self, **kwargs):
        self.ansible.fail_json(**kwargs)

    def given(self, names):
        """The options among ``names`` the user set (not None)."""
        return dict((k, self.params[k]) for k in names if self.params.get(k) is not None)
