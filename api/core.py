"""The collection's core, as the API imports it (one import path for every module)."""

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    drivers, errors, failures, fields, health, healing, jobs, labels, lifecycle, model,
    operations, secrets, states, store, tls)
from ansible_collections.openstack.magnum.plugins.module_utils.federation import federations
from ansible_collections.openstack.magnum.plugins.module_utils.providers import (
    checks as provider_checks, registry as providers)

__all__ = ['drivers', 'errors', 'failures', 'federations', 'fields', 'health', 'healing', 'jobs',
           'labels', 'lifecycle', 'model', 'operations', 'provider_checks', 'providers', 'secrets',
           'states', 'store', 'tls']
