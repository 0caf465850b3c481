"""Microversion negotiation, as Magnum does it (1.1 .. 1.14)."""

import re

from flask import g, jsonify, request

SERVICE = 'container-infrastructure-management'
ALIASES = (SERVICE, 'container-infrastructure', 'container-infra')
MIN_VERSION = (1, 1)
MAX_VERSION = (1, 14)
HEADER = 'OpenStack-API-Version'
_VERSION_RE = re.compile(r'^(\d+)\.(\d+)$')


def fmt(version):
    return '%d.%d' % version


class NotAcceptable(Exception):
    def __init__(self, body=None):
        super().__init__('microversion not acceptable')
        self.body = body


def _unsupported():
    return {'errors': [{
        'request_id': '', 'code': 'magnum.microversion-unsupported', 'status': 406,
        'title': 'Requested microversion is unsupported',
        'detail': 'Version %s was requested but the minor version is not supported by this '
                  'service. The supported version range is: [%s, %s].'
                  % (request.headers.get(HEADER, ''), fmt(MIN_VERSION), fmt(MAX_VERSION)),
        'max_version': fmt(MAX_VERSION), 'min_version': fmt(MIN_VERSION),
        'links': [{'rel': 'help',
                   'href': 'http://docs.openstack.org/api-guide/compute/microversions.html'}],
    }]}


def parse(header_value):
    """The version asked for in the header; raise NotAcceptable on bad input."""
    if not header_value:
        return MIN_VERSION
    chosen = None
    for part in header_value.split(','):
        words = part.strip().split()
        if not words:
            continue
        if len(words) != 2:
            raise NotAcceptable()
        svc, version = words[0].lower(), words[1].lower()
        if svc not in ALIASES:
            continue
        chosen = version
    if chosen is None:
        return MIN_VERSION
    if chosen == 'latest':
        return MAX_VERSION
    match = _VERSION_RE.match(chosen)
    if not match:
        raise NotAcceptable()
    version = (int(match.group(1)), int(match.group(2)))
    if version[0] != 1 or not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptable(_unsupported())
    return version


def negotiate():
    """before_request hook for /v1: sets ``g.version`` or answers 406."""
    try:
        g.version = parse(request.headers.get(HEADER))
    except NotAcceptable as exc:
        g.version = MAX_VERSION
        resp = jsonify(exc.body or {'errors': [{
            'request_id': '', 'code': 'client', 'status': 406, 'title': 'Not Acceptable',
            'detail': 'Invalid %s header: %r' % (HEADER, request.headers.get(HEADER)),
            'links': []}]})
        resp.status_code = 406
        return resp
    return None


def add_headers(response):
    if request.path.startswith('/v1'):
        used = getattr(g, 'version', MIN_VERSION)
        response.headers['OpenStack-API-Minimum-Version'] = '%s %s' % (SERVICE, fmt(MIN_VERSION))
        response.headers['OpenStack-API-Maximum-Version'] = '%s %s' % (SERVICE, fmt(MAX_VERSION))
        response.headers[HEADER] = '%s %s' % (SERVICE, fmt(used))
        response.headers['Vary'] = HEADER
    return response


def require(minimum, what=None):
    """Refuse a request below ``minimum`` the way Magnum does (406)."""
    if g.version < minimum:
        raise NotAcceptable(_unsupported_for(minimum, what))


def _unsupported_for(minimum, what):
    body = _unsupported()
    body['errors'][0]['detail'] = '%s requires microversion %s or later (requested %s).' % (
        what or request.path, fmt(minimum), fmt(g.version))
    return body
