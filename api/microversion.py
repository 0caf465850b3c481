"""Microversion negotiation, as Magnum does it (1.1 .. 1.14)."""

from flask import g, request

SERVICE = 'container-infrastructure-management'
ALIASES = (SERVICE, 'container-infrastructure', 'container-infra')
MIN_VERSION = (1, 1)
MAX_VERSION = (1, 14)
HEADER = 'OpenStack-API-Version'


def fmt(version):
    return '%d.%d' % version


class NotAcceptable(Exception):
    """A 406: Magnum's microversion-unsupported body (with the version headers, the
    requested version echoed), or - ``body`` None - the bare 406 pecan answers for a
    header it cannot read or a method the version does not have (no version headers)."""

    def __init__(self, body=None):
        super().__init__('microversion not acceptable')
        self.body = body


def _unsupported():
    """Magnum's HTTPNotAcceptableAPIVersion body: these keys, in this order, no detail."""
    return {'errors': [{
        'max_version': fmt(MAX_VERSION), 'min_version': fmt(MIN_VERSION),
        'code': 'magnum.microversion-unsupported',
        'links': [{'rel': 'help',
                   'href': 'http://docs.openstack.org/api-guide/compute/microversions.html'}],
        'title': 'Requested microversion is unsupported',
    }]}


def parse(header_value):
    """The version asked for, as Magnum's Version.parse_headers reads the header: one
    '<service> <major>.<minor>' (or '<anything> latest'); NotAcceptable otherwise. A
    version out of range is returned: ``check`` refuses it with the headers."""
    if header_value is None:
        return MIN_VERSION
    words = header_value.split()
    if len(words) != 2:
        raise NotAcceptable()
    service, version = words
    if version.lower() == 'latest':
        return MAX_VERSION
    if service not in ALIASES:
        raise NotAcceptable()
    try:
        numbers = tuple(int(part) for part in version.split('.'))
    except ValueError:
        numbers = ()
    if len(numbers) != 2:
        raise NotAcceptable()
    return numbers


def negotiate():
    """before_request hook for /v1: sets ``g.version`` or answers 406."""
    try:
        g.version = parse(request.headers.get(HEADER))
    except NotAcceptable:
        g.version_headers = False
        raise
    if g.version[0] != MIN_VERSION[0] or not MIN_VERSION <= g.version <= MAX_VERSION:
        raise NotAcceptable(_unsupported())
    return None


def add_headers(response):
    if request.path.startswith('/v1') and getattr(g, 'version_headers', True):
        used = getattr(g, 'version', MIN_VERSION)
        response.headers['OpenStack-API-Minimum-Version'] = '%s %s' % (SERVICE, fmt(MIN_VERSION))
        response.headers['OpenStack-API-Maximum-Version'] = '%s %s' % (SERVICE, fmt(MAX_VERSION))
        response.headers[HEADER] = '%s %s' % (SERVICE, fmt(used))
        response.headers['Vary'] = HEADER
    return response


def require(minimum):
    """A method Magnum has only from ``minimum`` on: below it, pecan's bare 406."""
    if g.version < minimum:
        g.version_headers = False
        raise NotAcceptable()
