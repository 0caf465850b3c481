"""JSON-patch updates as Magnum applies them (api/utils.py apply_jsonpatch)."""

import copy
import re

from api.core import errors, fields

PATH_RE = re.compile(r'^(/[\w-]+)+$')
INTERNAL = ('/uuid', '/id', '/links', '/created_at', '/updated_at', '/project_id',
            '/user_id')


def validate(patch, internal=()):
    if not isinstance(patch, list) or not patch:
        raise errors.PatchError("Invalid patch: expected a non-empty list of operations.")
    for op in patch:
        if not isinstance(op, dict):
            raise errors.PatchError("Invalid patch operation %r." % (op,))
        if op.get('op') not in ('add', 'replace', 'remove'):
            raise errors.PatchError("Invalid input for field/attribute op. Value: %r. "
                                    "Value should be one of: add, replace, remove"
                                    % op.get('op'))
        path = op.get('path')
        if not isinstance(path, str) or not PATH_RE.match(path):
            raise errors.PatchError("Invalid input for field/attribute path. Value: %r. "
                                    "Invalid path" % (path,))
        if path in INTERNAL + tuple(internal):
            raise errors.PatchError("'%s' is an internal attribute and can not be updated"
                                    % path)
        if op['op'] in ('add', 'replace') and 'value' not in op:
            raise errors.PatchError("'add' and 'replace' operations need a value")


def apply(doc, patch, internal=(), defaults=None):
    """Apply ``patch`` to a copy of ``doc``; removed root attributes get their default."""
    validate(patch, internal)
    doc = copy.deepcopy(doc)
    for op in patch:
        parts = op['path'].lstrip('/').split('/')
        root = parts[0]
        if root not in doc:
            if op['op'] == 'add' and len(parts) == 1:
                raise errors.PatchError("Adding a new attribute (%s) to the root of the "
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
