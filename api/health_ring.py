"""Which conductor polls which cluster's health: a consistent hash ring over the live
conductors (tooz's, as Ironic spreads its nodes over conductors). Each cluster is one
conductor's; a conductor that joins or leaves moves only its own share."""

from tooz import hashring


PARTITIONS = 2 ** 10  # points per conductor on the ring: 5 000 clusters over 3 within 2 %


class Ring:
    def __init__(self, members, own=None):
        """``members``: the live conductors' service ids; ``own``: this conductor's (a
        member even when its own heartbeat is late)."""
        self.own = None if own is None else str(own)
        nodes = set(str(m) for m in members) | ({self.own} if self.own else set())
        self._ring = hashring.HashRing(sorted(nodes), partitions=PARTITIONS)

    def owner(self, cluster_uuid):
        return next(iter(self._ring.get_nodes(cluster_uuid.encode('utf-8'))))

    def is_mine(self, cluster_uuid):
        return self.owner(cluster_uuid) == self.own
