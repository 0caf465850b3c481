"""The query arguments a v1 call takes. Any other is refused before the call does anything,
as Magnum's WSME refuses it: 400 ``Unknown argument: "foo"`` (``?all_tenants=1`` on a
cluster list included: a silently ignored argument reads as a filter that was applied)."""

import functools

from flask import request

from api.core import errors

PAGE = ('marker', 'limit', 'sort_key', 'sort_dir')


def takes(*names):
    """Decorate a view that reads only the query arguments ``names``."""
    def wrap(view):
        @functools.wraps(view)
        def checked(*args, **kwargs):
            unknown = sorted(set(request.args) - set(names))
            if unknown:
                raise errors.Invalid('Unknown argument: "%s"' % ', '.join(unknown))
            return view(*args, **kwargs)
        return checked
    return wrap
