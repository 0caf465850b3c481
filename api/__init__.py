"""Thin Magnum v1-compatible REST API over the openstack.magnum collection."""
