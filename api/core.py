"""The collection's core, as the API imports it (one import path for every module)."""

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    drivers, errors, failures, fields, healing, jobs, labels, lifecycle, model, secrets, states,
    store, tls)

__all__ = ['drivers', 'errors', 'failures', 'fields', 'healing', 'jobs', 'labels', 'lifecycle',
           'model', 'secrets', 'states', 'store', 'tls']
