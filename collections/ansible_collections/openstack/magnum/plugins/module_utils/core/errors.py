# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors of the core, each carrying the HTTP status Magnum gives it.

The API turns them into Magnum's error body; modules turn them into fail_json.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class MagnumError(Exception):
    """Base error. ``code`` is the HTTP status Magnum answers with."""

    code = 500

    def __init__(self, message, code=None):
        super(MagnumError, self).__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message


class Invalid(MagnumError):
    code = 400


def wrong(field, value, why):
    """wsme's words for a field's bad value (Magnum's): the value as str, quoted."""
    return Invalid("Invalid input for field/attribute %s. Value: '%s'. %s" % (field, value, why))


class NotSupported(Invalid):
    pass


class PatchError(Invalid):
    pass


class ClusterTypeNotSupported(Invalid):
    def __init__(self, server_type, os_distro, coe):
        super(ClusterTypeNotSupported, self).__init__(
            "Cluster type (%s, %s, %s) not supported." % (server_type, os_distro, coe))


class NotFound(MagnumError):
    code = 404


class NotAuthorized(MagnumError):
    code = 403


class ResourceLimitExceeded(NotAuthorized):
    pass


class Conflict(MagnumError):
    code = 409


class OperationNotAllowed(Conflict):
    """An operation asked for while the resource's status forbids it."""


class StaleRecord(Conflict):
    """A compare-and-set update found the record changed since it was read."""
