"""The federation spec's `openstack coe federation` commands, an openstackclient plugin
(entry points in python-magnumclient's command group, pyproject.toml)."""
