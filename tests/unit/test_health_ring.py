"""Health rounds spread over the live conductors (api/health_ring.py)."""

import uuid

from api.health_ring import Ring

CLUSTERS = [str(uuid.UUID(int=i)) for i in range(5000)]


def shares(members):
    rings = dict((m, Ring(members, m)) for m in members)
    return dict((m, set(c for c in CLUSTERS if rings[m].is_mine(c))) for m in members)


def test_each_cluster_is_one_conductors_and_a_leaver_moves_only_its_share():
    three = shares([1, 2, 3])
    # every cluster polled once: by exactly one of the three
    assert sum(len(s) for s in three.values()) == len(CLUSTERS)
    assert set().union(*three.values()) == set(CLUSTERS)
    sizes = sorted(len(s) for s in three.values())
    assert sizes[-1] / sizes[0] < 1.1, sizes            # even shares
    two = shares([1, 3])
    assert three[1] <= two[1] and three[3] <= two[3]    # 2 left: only its share moved
    assert two[1] | two[3] == set(CLUSTERS)
    four = shares([1, 2, 3, 4])                          # 4 joined: it took, no one swapped
    assert all(four[m] <= three[m] for m in (1, 2, 3))


def test_a_conductor_whose_own_beat_is_late_still_polls_its_share():
    late = Ring([1, 2], 3)   # 3 is not among the live ones it read yet
    assert any(late.is_mine(c) for c in CLUSTERS[:200])
    assert Ring([], 7).is_mine(CLUSTERS[0])
