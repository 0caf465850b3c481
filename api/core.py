"""The collection's core, as the API imports it (one import path for every module), and
its drivers (``drivers``: the registry's, which importing it hands to the core)."""

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    errors, failures, fields, health, healing, jobs, labels, lifecycle, model,
    operations, secrets, states, store, tls)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.registry import (
    DRIVERS as drivers)
from ansible_collections.openstack.magnum.plugins.module_utils.federation import federations
from ansible_collections.openstack.magnum.plugins.module_utils.providers import (
    checks as provider_checks, registry as providers)

__all__ = ['drivers', 'errors', 'failures', 'federations', 'fields', 'health', 'healing', 'jobs',
           'labels', 'lifecycle', 'model', 'operations', 'provider_checks', 'providers', 'secrets',
           'states', 'store', 'tls']
