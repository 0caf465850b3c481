"""Magnum's error body for every failure, and the handlers that produce it."""

import logging

from flask import jsonify
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


def register(app):
    @app.errorhandler(errors.MagnumError)
    def magnum_error(exc):
        return respond(exc.code, str(exc))

    @app.errorhandler(NotAcceptable)
    def not_acceptable(exc):
        resp = jsonify(exc.body or body(406, 'Not Acceptable.'))
        resp.status_code = 406
        return resp

    @app.errorhandler(HTTPException)
    def http_error(exc):
        return respond(exc.code, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected(_exc):
        # The log has the exception; the caller learns nothing of the internals.
        LOG.exception('unexpected error')
        return respond(500, INTERNAL_ERROR)
