"""One blueprint per resource of Magnum's v1 API."""

from api.core import errors


def collection_needs_ident(bp, ident_name, methods=('DELETE', 'PATCH')):
    """What Magnum (pecan's RestController) answers a method of one record sent to the
    collection: a 400 naming the identifier argument it lacks."""
    def refuse(**_ignored):
        raise errors.Invalid('Missing argument: "%s"' % ident_name)
    for rule in ('', '/'):
        bp.add_url_rule(rule, 'collection_needs_ident', refuse, methods=list(methods))
