"""Which conductor polls which cluster's health: a consistent hash ring over the live
conductors (tooz's, as Ironic spreads its nodes over conductors). Each cluster is one
conductor's; a conductor that joins or leaves moves only its own share."""

from tooz import hashring


class Ring:
    def __init__(self, members, own):
        """``members``: the live conductors' service ids; ``own``: this conductor's (a
        member even when its own heartbeat is late)."""
        self.own = str(own)
        self._ring = hashring.HashRing(sorted(set(str(m) for m in members) | {self.own}))

    def owner(self, cluster_uuid):
        return next(iter(self._ring.get_nodes(cluster_uuid.encode('utf-8'))))

    def is_mine(self, cluster_uuid):
        return self.owner(cluster_uuid) == self.own
