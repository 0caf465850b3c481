"""JSON-patch updates as Magnum applies them (api/utils.py apply_jsonpatch)."""

import copy
import re

from api.core import errors, fields

PATH_RE = re.compile(r'^(/[\w-]+)+$')
INTERNAL = ('/uuid', '/id', '/links', '/created_at', '/updated_at', '/project_id',
            '/user_id')


def _wrong(field, value, why):
    return errors.PatchError("Invalid input for field/attribute %s. Value: '%s'. %s"
                             % (field, value, why))


def validate(patch, internal=(), non_removable=()):
    """Magnum's checks of a JSON patch, made before the record is looked up: a list
    (wsme), each operation's path and op (JsonPatchType), then internal attributes and
    values (JsonPatchType.validate). An empty list changes nothing."""
    if not isinstance(patch, list):
        raise _wrong('patch', patch, 'Value not a valid list: %s' % (patch,))
    for op in patch:
        if not isinstance(op, dict):
            raise errors.PatchError("Invalid patch operation: %s is not an object." % (op,))
        path = op.get('path')
        if path is not None and not (isinstance(path, str) and PATH_RE.match(path)):
            raise _wrong('path', path, 'Value should match the pattern %s' % PATH_RE.pattern)
        if op.get('op') is not None and op['op'] not in ('add', 'replace', 'remove'):
            raise _wrong('op', op['op'], 'Value should be one of: add, replace, remove')
        for field in ('path', 'op'):
            if op.get(field) is None:
                raise _wrong(field, None, 'Mandatory field missing.')
    for op in patch:
        if op['path'] in INTERNAL + tuple(internal):
            raise errors.PatchError("'%s' is an internal attribute and can not be updated"
                                    % op['path'])
        if op['path'] in non_removable and op['op'] == 'remove':
            raise errors.PatchError("'%s' is a mandatory attribute and can not be removed"
                                    % op['path'])
        if op['op'] != 'remove' and op.get('value') is None:
            raise errors.PatchError("'add' and 'replace' operations needs value")


def apply(doc, patch, internal=(), defaults=None):
    """Apply ``patch`` to a copy of ``doc``; removed root attributes get their default."""
    validate(patch, internal)
    doc = copy.deepcopy(doc)
    for op in patch:
        parts = op['path'].lstrip('/').split('/')
        root = parts[0]
        if root not in doc:
            if op['op'] == 'add' and len(parts) == 1:
                raise errors.PatchError("Adding a new attribute %s to the root of the "
                                        "resource is not allowed." % op['path'])
            raise errors.PatchError("Can't apply patch: attribute %s does not exist."
                                    % op['path'])
        if len(parts) == 1:
            if op['op'] == 'add' and doc[root] is not None:
                raise errors.PatchError("The attribute %s has existed, please use "
                                        "'replace' operation instead." % op['path'])
            if op['op'] == 'remove':
                doc[root] = copy.deepcopy((defaults or {}).get(root))
            else:
                doc[root] = op['value']
            continue
        target = doc[root]
        if isinstance(target, str):
            raise errors.PatchError("Can't apply patch on %s." % op['path'])
        target = copy.deepcopy(target) if target is not None else {}
        doc[root] = target
        for key in parts[1:-1]:
            if not isinstance(target, dict) or key not in target:
                raise errors.PatchError("Can't apply patch: %s does not exist." % op['path'])
            target = target[key]
        leaf = parts[-1]
        if isinstance(target, list) and len(parts) == 2:
            _apply_to_list(target, leaf, op)
            continue
        if not isinstance(target, dict):
            raise errors.PatchError("Can't apply patch on %s." % op['path'])
        if op['op'] == 'remove':
            if leaf not in target:
                raise errors.PatchError("Can't remove %s: it does not exist." % op['path'])
            del target[leaf]
        elif op['op'] == 'replace' and leaf not in target:
            raise errors.PatchError("Can't replace %s: it does not exist." % op['path'])
        else:
            target[leaf] = op['value']
    return doc


def _apply_to_list(target, leaf, op):
    """An operation on an item of a list attribute, as RFC 6902 (the jsonpatch library
    Magnum uses) has it: ``-`` appends, an index inserts, replaces or removes."""
    if leaf == '-' and op['op'] == 'add':
        target.append(op['value'])
        return
    if not leaf.isdigit() or int(leaf) > len(target) - (op['op'] != 'add'):
        raise errors.PatchError("Can't apply patch: %s does not exist." % op['path'])
    index = int(leaf)
    if op['op'] == 'add':
        target.insert(index, op['value'])
    elif op['op'] == 'replace':
        target[index] = op['value']
    else:
        del target[index]


def apply_to(table, record, patch, internal=()):
    """``patch`` applied to the API view of a stored ``record`` of field table
    ``table`` ('remove' restores the field's default)."""
    return apply(fields.project(table, record), patch, internal, fields.defaults(table))
