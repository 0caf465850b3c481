# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  db_url:
    description:
      - SQLAlchemy URL of the state store shared with the API, for example
        C(sqlite:////var/lib/magnum/magnum.sqlite) or C(postgresql://user:pw@host/magnum).
      - Defaults to the play's variable C(magnum_db_url) (an extra var, as AWX credentials
        of type C(OpenStack Magnum) inject it), else the E(MAGNUM_DB_URL) environment
        variable, else the content of the file E(MAGNUM_DB_URL_FILE) names (how the API
        hands its jobs a URL that may hold a password), else a SQLite file under the user's data directory
        (C(~/.local/share/openstack-magnum/magnum.sqlite)).
    type: str
  project_id:
    description:
      - Project that owns the records the module creates.
      - Defaults to E(MAGNUM_PROJECT_ID), else C(default) (the API's default noauth project).
      - Lookups by name or UUID see every project, as an operator's tool does.
    type: str
  user_id:
    description:
      - User recorded as the creator of new records.
    type: str
requirements:
  - python >= 3.9
  - SQLAlchemy >= 2.0
notes:
  - The module reads and writes the same store as the C(magnum-ansible-api) REST API, so a
    record written here is visible through C(openstack coe ...) and the other way round.
  - Validation, defaults and state transitions come from the collection's core, the same
    code the API uses. Labels that hand the cluster an OpenStack credential
    (C(cloud_provider_enabled)) are accepted only with E(MAGNUM_CLUSTER_USER_TRUST=true),
    as the API's C(--cluster-user-trust) (Magnum's C(cluster_user_trust)).
  - CA private keys and cluster credentials in the store are sealed with the Fernet keys of
    the file named by the E(MAGNUM_SECRET_KEY_FILE) environment variable when it is set
    (the API sets it for its jobs); the first key seals, every key unseals.
'''
