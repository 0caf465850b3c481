"""api/jsonpatch: Magnum's JSON-patch rules, and RFC 6902's operations on a list
attribute's items (a federation's join and unjoin)."""

import pytest

from api import jsonpatch
from api.core import errors

DOC = {'member_ids': ['a', 'b'], 'properties': {'dns': 'cluster.local'}, 'name': 'f'}


def test_list_items_are_appended_inserted_replaced_and_removed_by_index():
    def apply(*ops):
        return jsonpatch.apply(DOC, list(ops))['member_ids']
    assert apply({'op': 'add', 'path': '/member_ids/-', 'value': 'c'}) == ['a', 'b', 'c']
    assert apply({'op': 'add', 'path': '/member_ids/0', 'value': 'c'}) == ['c', 'a', 'b']
    assert apply({'op': 'add', 'path': '/member_ids/2', 'value': 'c'}) == ['a', 'b', 'c']
    assert apply({'op': 'replace', 'path': '/member_ids/1', 'value': 'c'}) == ['a', 'c']
    assert apply({'op': 'remove', 'path': '/member_ids/1'},
                 {'op': 'remove', 'path': '/member_ids/0'}) == []
    assert DOC['member_ids'] == ['a', 'b']   # the record itself is never changed


@pytest.mark.parametrize('op', [
    {'op': 'remove', 'path': '/member_ids/2'},
    {'op': 'replace', 'path': '/member_ids/2', 'value': 'c'},
    {'op': 'add', 'path': '/member_ids/3', 'value': 'c'},
    {'op': 'remove', 'path': '/member_ids/-'},
    {'op': 'remove', 'path': '/member_ids/x'},
])
def test_an_item_that_is_not_there_is_a_patch_error(op):
    with pytest.raises(errors.PatchError, match='does not exist'):
        jsonpatch.apply(DOC, [op])


def test_dict_attributes_and_the_root_keep_magnums_rules():
    patched = jsonpatch.apply(DOC, [{'op': 'add', 'path': '/properties/zone', 'value': 'a'},
                                    {'op': 'remove', 'path': '/properties/dns'}])
    assert patched['properties'] == {'zone': 'a'}
    with pytest.raises(errors.PatchError, match="please use 'replace'"):
        jsonpatch.apply(DOC, [{'op': 'add', 'path': '/name', 'value': 'g'}])
    with pytest.raises(errors.PatchError, match='not allowed'):
        jsonpatch.apply(DOC, [{'op': 'add', 'path': '/other', 'value': 'g'}])
