"""Limits of what a request may carry, beyond each field's own (module_utils/core/fields.py):
the body's size (Magnum's oslo.middleware sizelimit: 112 KiB, answered 413) and the
shape of its JSON (nesting depth; text that is Unicode)."""

from api.core import errors

MAX_BODY_BYTES = 114688
# No Magnum body nests deeper than a JSON patch of a label (list, op, value): 8 is ample.
MAX_DEPTH = 8


def check_document(data):
    """Magnum's 400 for a document nested deeper than MAX_DEPTH or holding a string
    (key or value) that is not valid Unicode."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise errors.Invalid("Invalid request body: JSON nested deeper than %d levels."
                                 % MAX_DEPTH)
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            _check_text(value)


def _check_text(text):
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        raise errors.Invalid("Invalid request body: a string is not valid Unicode "
                             "(it holds a lone surrogate).")
