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
    requested version echoed), or - ``body`` None - the 406 pecan answers for a header
    it cannot read or a method the version does not have (no version headers). ``detail``:
    Magnum's words, which its answer carries when the client accepts JSON."""

    def __init__(self, detail, body=None):
        super().__init__(detail)
        self.detail = detail
        self.body = body


def named(version):
    """A version as Magnum's headers and messages name it: '<service> <major>.<minor>'."""
    return '%s %s' % (SERVICE, fmt(version))


RANGE = '[%s, %s]' % (named(MIN_VERSION), named(MAX_VERSION))


def _unsupported(version):
    """Magnum's HTTPNotAcceptableAPIVersion body: these keys, in this order; the
    ``description`` is added when the client accepts JSON (api.errors)."""
    if version[0] != MIN_VERSION[0]:
        detail = ("Mutually exclusive versions requested. Version %s requested but not "
                  "supported by this service.The supported version range is: %s."
                  % (fmt(version), RANGE))
    else:
        detail = ("Version %s was requested but the minor version is not supported by "
                  "this service. The supported version range is: %s." % (fmt(version), RANGE))
    return NotAcceptable(detail, {'errors': [{
        'max_version': fmt(MAX_VERSION), 'min_version': fmt(MIN_VERSION),
        'code': 'magnum.microversion-unsupported',
        'links': [{'rel': 'help',
                   'href': 'http://docs.openstack.org/api-guide/compute/microversions.html'}],
        'title': 'Requested microversion is unsupported',
    }]})


BAD_SERVICE = "Invalid service type for %s header" % HEADER


def parse(header_value):
    """The version asked for, as Magnum's Version.parse_headers reads the header: one
    '<service> <major>.<minor>' (or '<anything> latest'); NotAcceptable otherwise. A
    version out of range is returned: ``check`` refuses it with the headers."""
    if header_value is None:
        return MIN_VERSION
    words = header_value.split()
    if len(words) != 2:
        raise NotAcceptable(BAD_SERVICE)
    service, version = words
    if version.lower() == 'latest':
        return MAX_VERSION
    if service not in ALIASES:
        raise NotAcceptable(BAD_SERVICE)
    try:
        numbers = tuple(int(part) for part in version.split('.'))
    except ValueError:
        numbers = ()
    if len(numbers) != 2:
        raise NotAcceptable("Invalid value for %s header" % HEADER)
    return numbers


def negotiate():
    """before_request hook for /v1: sets ``g.version`` or answers 406."""
    try:
        g.version = parse(request.headers.get(HEADER))
    except NotAcceptable:
        g.version_headers = False
        raise
    if g.version[0] != MIN_VERSION[0] or not MIN_VERSION <= g.version <= MAX_VERSION:
        raise _unsupported(g.version)
    return None


def add_headers(response):
    if request.path.startswith('/v1') and getattr(g, 'version_headers', True):
        used = getattr(g, 'version', MIN_VERSION)
        response.headers['OpenStack-API-Minimum-Version'] = named(MIN_VERSION)
        response.headers['OpenStack-API-Maximum-Version'] = named(MAX_VERSION)
        response.headers[HEADER] = named(used)
        response.headers['Vary'] = HEADER
    return response


def require(minimum, api):
    """A method Magnum has only from ``minimum`` on: below it, pecan's 406 naming the
    method (``api``: Magnum's controller method, get_all, resize, ...)."""
    if g.version < minimum:
        g.version_headers = False
        raise NotAcceptable("Version %s was requested but the requested API %s is not "
                            "supported for this version." % (fmt(g.version), api))
