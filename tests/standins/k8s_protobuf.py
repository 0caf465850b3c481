"""Just enough of Kubernetes' protobuf encoding for the stand-in API server
(tests/standins/k8s_standin.py) to read what client-go sends that way: Helm stores its releases
as Secrets and client-go posts core objects as protobuf (the ``k8s\\x00`` envelope
around a ``runtime.Unknown``), which has no JSON fallback. Only Secrets and ConfigMaps
are decoded: their ObjectMeta (name, generateName, namespace, resourceVersion, labels,
annotations), data, stringData and type."""

import base64

MAGIC = b'k8s\x00'


def _varint(data, pos):
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7f) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def fields(data):
    """[(field number, value)] of a message: bytes for length-delimited fields, ints
    for varints; fixed-width fields skipped."""
    found, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 1:
            value, pos = None, pos + 8
        elif wire == 5:
            value, pos = None, pos + 4
        else:
            raise ValueError('unsupported protobuf wire type %d' % wire)
        found.append((number, value))
    return found


def _map_entry(data):
    entry = dict(fields(data))
    return entry.get(1, b'').decode(), entry.get(2, b'')


def _meta(data):
    meta, labels, annotations = {}, {}, {}
    for number, value in fields(data):
        if number in (1, 2, 3, 6):
            meta[{1: 'name', 2: 'generateName', 3: 'namespace', 6: 'resourceVersion'}[number]] \
                = value.decode()
        elif number == 11:
            key, text = _map_entry(value)
            labels[key] = text.decode()
        elif number == 12:
            key, text = _map_entry(value)
            annotations[key] = text.decode()
    if labels:
        meta['labels'] = labels
    if annotations:
        meta['annotations'] = annotations
    return meta


def decode(body):
    """The object (as its JSON form) of a protobuf request body."""
    if not body.startswith(MAGIC):
        raise ValueError('not a Kubernetes protobuf body')
    unknown = dict(fields(body[len(MAGIC):]))
    type_meta = dict(fields(unknown.get(1, b'')))
    api_version = type_meta.get(1, b'').decode()
    kind = type_meta.get(2, b'').decode()
    if kind not in ('Secret', 'ConfigMap'):
        raise ValueError('the stand-in decodes Secrets and ConfigMaps only, not %s' % kind)
    obj = {'apiVersion': api_version, 'kind': kind, 'metadata': {}}
    for number, value in fields(unknown.get(2, b'')):
        if number == 1:
            obj['metadata'] = _meta(value)
        elif number == 2:   # Secret.data, ConfigMap.data (string values)
            key, raw = _map_entry(value)
            obj.setdefault('data', {})[key] = base64.b64encode(raw).decode() \
                if kind == 'Secret' else raw.decode()
        elif number == 3 and kind == 'Secret':
            obj['type'] = value.decode()
        elif number == 4 and kind == 'Secret':
            key, raw = _map_entry(value)
            obj.setdefault('stringData', {})[key] = raw.decode()
        elif number == 3 and kind == 'ConfigMap':   # binaryData
            key, raw = _map_entry(value)
            obj.setdefault('binaryData', {})[key] = base64.b64encode(raw).decode()
    return obj
