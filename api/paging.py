"""limit / marker / sort_key / sort_dir and the ``next`` link (Magnum's collection)."""

import uuid

from flask import current_app, request

from api.core import errors


def _uuid_like(text):
    """oslo's is_uuid_like, which Magnum's marker type takes: any spelling of a UUID."""
    cleaned = text.lower().replace('urn:', '').replace('uuid:', '').strip('{}').replace(
        '-', '')
    try:
        return uuid.UUID(text).hex == cleaned
    except (TypeError, ValueError, AttributeError):
        return False


def params(default_sort_key='id', uuid_marker=True):
    max_limit = current_app.config['SETTINGS'].max_limit
    limit = request.args.get('limit')
    if limit is not None:
        try:
            limit = int(limit)
        except ValueError:
            raise errors.Invalid("Invalid input for field/attribute limit. Value: '%s'. "
                                 "unable to convert to int. Error: invalid literal for int() "
                                 "with base 10: %r" % (limit, limit))
        if limit <= 0:
            raise errors.Invalid("Limit must be positive")
        limit = min(limit, max_limit)
    else:
        limit = max_limit
    sort_dir = request.args.get('sort_dir', 'asc')  # the store checks it
    marker = request.args.get('marker')
    if marker and uuid_marker and not _uuid_like(marker):
        raise errors.Invalid("Invalid input for field/attribute marker. Value: '%s'. unable "
                             "to convert to uuid. Error: Expected a uuid but received %s."
                             % (marker, marker))
    return {'limit': limit, 'marker': marker,
            'sort_key': request.args.get('sort_key', default_sort_key), 'sort_dir': sort_dir}


def next_link(resource, items, page, marker_key='uuid', extra=None):
    """The ``next`` URL when the page is full, else None."""
    if not items or len(items) < page['limit']:
        return None
    args = dict(extra or {})
    args.update(sort_key=page['sort_key'], sort_dir=page['sort_dir'])
    query = ''.join('%s=%s&' % item for item in args.items())
    return '%sv1/%s?%slimit=%d&marker=%s' % (request.host_url, resource, query,
                                             page['limit'], items[-1][marker_key])


def listing(store, kind, collection, view, scope=None, where=None, path=None, extra=None,
            columns=None):
    """A Magnum collection response: one page of ``kind`` rendered by ``view``,
    under the key ``collection``, with ``next`` when the page is full. ``columns``: the
    fields ``view`` shows, the only ones read."""
    from flask import jsonify
    page = params()
    records = store.page(kind, scope=scope, where=where, limit=page['limit'],
                         marker=page['marker'], sort_key=page['sort_key'],
                         sort_dir=page['sort_dir'], columns=columns)
    data = {collection: [view(r) for r in records]}
    nxt = next_link(path or collection, records, page, extra=extra)
    if nxt:
        data['next'] = nxt
    return jsonify(data)
