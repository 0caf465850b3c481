"""Magnum's error body for every failure, and the handlers that produce it."""

import logging

from flask import g, jsonify
from werkzeug.exceptions import HTTPException

from api.core import errors
from api.microversion import NotAcceptable

LOG = logging.getLogger(__name__)
# Magnum's (oslo's) words for a server error; nothing of what went wrong inside.
INTERNAL_ERROR = ('The server has either erred or is incapable of performing the requested '
                  'operation.')


def body(status, detail):
    title = detail.split('.')[0] if detail else ''
    return {'errors': [{'request_id': '', 'code': 'client' if status < 500 else 'server',
                        'status': status, 'title': title, 'detail': detail, 'links': []}]}


def respond(status, detail):
    resp = jsonify(body(status, detail))
    resp.status_code = status
    return resp


def bare(status):
    """The body pecan's own aborts get from Magnum's error middleware: no words at all
    (an unknown path, a method the path has not, a version header it cannot read)."""
    return {'errors': [{'request_id': '', 'code': '', 'status': status, 'title': '',
                        'detail': '', 'links': []}]}


def register(app):
    @app.errorhandler(errors.MagnumError)
    def magnum_error(exc):
        return respond(exc.code, str(exc))

    @app.errorhandler(NotAcceptable)
    def not_acceptable(exc):
        resp = jsonify(exc.body or bare(406))
        resp.status_code = 406
        return resp

    @app.errorhandler(HTTPException)
    def http_error(exc):
        if exc.code in (404, 405):   # routing's: Magnum (pecan) answers these bare
            g.version_headers = False
            resp = jsonify(bare(exc.code))
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
