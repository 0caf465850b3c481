"""A request's body, read as Magnum (wsme) reads one: JSON documents, JSON patches, the
JSON object of a create or an action, with Magnum's 400 and 415 for anything else."""

import json
import urllib.parse

from flask import request

from api import limits
from api.core import errors as errors_mod


def json_document(argument=None):
    """The request's JSON document of any kind, read as Magnum (wsme) reads a body: a
    JSON content type (415 for another; form arguments are unknown arguments), a body
    at all (``argument`` is its name in Magnum's controller), valid JSON, nested no
    deeper than any Magnum body and holding only Unicode text (no lone surrogate)."""
    mimetype = request.mimetype or ''
    raw = request.get_data(cache=True)
    if mimetype in ('', 'application/x-www-form-urlencoded'):
        form = urllib.parse.parse_qsl(raw.decode('utf-8', 'replace'), keep_blank_values=True)
        if form:
            raise errors_mod.Invalid('Unknown argument: "%s"' % form[0][0])
    elif mimetype != 'application/json' and not mimetype.endswith('+json'):
        raise errors_mod.MagnumError('Unknown mimetype: %s' % mimetype, code=415)
    if not raw.strip():
        raise errors_mod.Invalid('Missing argument: "%s"' % argument if argument else
                                 "Invalid request body: a JSON document is expected.")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise errors_mod.Invalid("Request is not in valid JSON format")
    limits.check_document(data)
    return data


def json_patch(internal=(), non_removable=()):
    """The request's JSON patch, checked as Magnum checks it before it looks the record
    up (Magnum's 400 naming what is wrong): ``internal`` and ``non_removable`` are the
    paths Magnum's patch type of the resource refuses then."""
    from api import jsonpatch
    patch = json_document()
    jsonpatch.validate(patch, internal, non_removable)
    return patch


def body(argument=None):
    """The JSON object of a create or an action, or Magnum's 400."""
    data = json_document(argument)
    if not isinstance(data, dict):
        raise errors_mod.Invalid("Invalid request body: a JSON object is expected, not %s."
                                 % _JSON_KINDS.get(type(data), 'that'))
    return data


_JSON_KINDS = {list: 'a list', str: 'a string', bool: 'a boolean', int: 'a number',
               float: 'a number'}
