"""Magnum's error body for every failure, and the handlers that produce it."""

import logging
import re

from flask import g, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from api.core import errors
from api.microversion import NotAcceptable

LOG = logging.getLogger(__name__)
# Magnum's (oslo's) words for a server error; nothing of what went wrong inside.
INTERNAL_ERROR = ('The server has either erred or is incapable of performing the requested '
                  'operation.')


def title_of(detail):
    """The first sentence of ``detail``: up to a full stop that ends a sentence (followed by
    a space or the end), not one inside a value - an address, a version, a file name. The
    `openstack coe` client shows the title alone. Magnum cuts at the first '.', the same
    place for each of its own messages."""
    return re.split(r'\.(?:\s|$)', detail, maxsplit=1)[0] if detail else ''


def body(status, detail):
    title = title_of(detail)
    return {'errors': [{'request_id': '', 'code': 'client' if status < 500 else 'server',
                        'status': status, 'title': title, 'detail': detail, 'links': []}]}


def respond(status, detail):
    resp = jsonify(body(status, detail))
    resp.status_code = status
    return resp


def wants_json():
    """Whether pecan/webob would render its own error as JSON: ``application/json``
    preferred to ``text/html`` by the Accept header (python-magnumclient and
    openstacksdk send it; curl's ``*/*`` gets HTML, which Magnum's middleware cannot
    read, hence an answer without words)."""
    accept = request.accept_mimetypes
    return accept.quality('application/json') > accept.quality('text/html')


def framework(status, detail=''):
    """The body of an error raised by Magnum's framework rather than its code (an unknown
    path, a method the path has not, a version header it cannot read or a method the
    version has not): the HTTP title and the words when the client accepts JSON, none
    otherwise."""
    words = wants_json()
    return {'errors': [{'request_id': '', 'code': '', 'status': status,
                        'title': HTTP_STATUS_CODES[status] if words else '',
                        'detail': detail if words else '', 'links': []}]}


def unsupported_version(exc):
    """Magnum's microversion-unsupported body; it carries the words as ``description``
    when the client accepts JSON."""
    error = dict(exc.body['errors'][0])
    if wants_json():
        error = dict([('code', error['code']), ('title', error['title']),
                      ('description', exc.detail)], **error)
    return {'errors': [error]}


def register(app):
    @app.errorhandler(errors.MagnumError)
    def magnum_error(exc):
        return respond(exc.code, str(exc))

    @app.errorhandler(NotAcceptable)
    def not_acceptable(exc):
        resp = jsonify(unsupported_version(exc) if exc.body else framework(406, exc.detail))
        resp.status_code = 406
        return resp

    @app.errorhandler(HTTPException)
    def http_error(exc):
        if exc.code in (404, 405):   # routing's: Magnum (pecan) answers these bare
            g.version_headers = False
            resp = jsonify(framework(exc.code))
            resp.status_code = exc.code
            if exc.code == 405 and getattr(exc, 'valid_methods', None):
                resp.headers['Allow'] = ', '.join(sorted(exc.valid_methods))
            return resp
        return respond(exc.code, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected(_exc):
        # The log has the exception; the caller learns nothing of the internals.
        LOG.exception('unexpected error')
        return respond(500, INTERNAL_ERROR)
