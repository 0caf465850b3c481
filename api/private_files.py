"""Files only this service's user may read (secrets handed to jobs): the collection's."""

from ansible_collections.openstack.magnum.plugins.module_utils.private_files import write_private

__all__ = ['write_private']
