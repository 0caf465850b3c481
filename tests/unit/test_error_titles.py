"""An error's title, the part `openstack coe` shows: its first whole sentence."""

import pytest

from api.errors import title_of


@pytest.mark.parametrize('detail, title', [
    # a full stop inside a value does not end the sentence
    ("Label flannel_network_cidr must be a CIDR, not '10.0.0.0/33'.",
     "Label flannel_network_cidr must be a CIDR, not '10.0.0.0/33'"),
    ("nodes_to_remove names nodes that are not in the node group default-worker: x "
     "(its nodes: k-node-0, k-node-1).",
     "nodes_to_remove names nodes that are not in the node group default-worker: x "
     "(its nodes: k-node-0, k-node-1)"),
    # Magnum's own messages are cut where Magnum cuts them
    ("Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int",
     "Invalid input for field/attribute limit"),
    ("Cluster nope could not be found.", "Cluster nope could not be found"),
    ("Request is not in valid JSON format", "Request is not in valid JSON format"),
    ('', ''),
])
def test_the_title_is_the_first_sentence(detail, title):
    assert title_of(detail) == title
