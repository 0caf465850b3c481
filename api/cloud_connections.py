"""openstacksdk connections kept across requests, for the checks Magnum makes against the
cloud at request time (templates, clusters, credentials).

A fresh connection per request logs in (a password, or the caller's token checked and
scoped) and discovers every service's versions before its first lookup: seconds per
request. Here there is one connection per caller token, kept until the token expires (as
keystonemiddleware reports it; else ``ttl``), and one for the provider's own cloud. A
connection is shared by the request threads (keystoneauth's session locks its auth).
"""

import hashlib
import threading
import time
from datetime import datetime, timezone

DEFAULT_TTL = 300.0     # seconds a connection lives when its token's expiry is unknown
MARGIN = 30.0           # a token this close to its expiry is not used again
MAX_ENTRIES = 512


def token_expiry(token_info):
    """The epoch seconds at which keystonemiddleware's ``keystone.token_info`` expires,
    or None."""
    try:
        text = (token_info or {}).get('token', {}).get('expires_at')
        stamp = datetime.fromisoformat(text.replace('Z', '+00:00'))
    except (AttributeError, TypeError, ValueError):
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.timestamp()


class Connections(object):

    def __init__(self, ttl=DEFAULT_TTL, max_entries=MAX_ENTRIES, clock=time.time):
        self.ttl, self.max_entries, self.clock = ttl, max_entries, clock
        self._entries = {}          # key -> (connection, expires at)
        self._lock = threading.Lock()
        self.made = 0               # connections made (for tests and benchmarks)

    @staticmethod
    def key(*parts):
        """A cache key that keeps no token in memory as it is."""
        return hashlib.sha256('\0'.join(str(p) for p in parts).encode('utf-8')).hexdigest()

    def get(self, key, make, expires_at=None):
        """The connection kept for ``key``, else ``make()``'s, kept until ``expires_at``
        (epoch seconds; default now + ttl)."""
        now = self.clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[1] - MARGIN > now:
                return entry[0]
        connection = make()
        with self._lock:
            self.made += 1
            if len(self._entries) >= self.max_entries:
                self._drop_expired(now)
            if len(self._entries) >= self.max_entries:   # still full: the oldest go
                for old in sorted(self._entries, key=lambda k: self._entries[k][1])[
                        :len(self._entries) - self.max_entries + 1]:
                    del self._entries[old]
            self._entries[key] = (connection, expires_at or now + self.ttl)
        return connection

    def _drop_expired(self, now):
        for key in [k for k, (_, expires) in self._entries.items() if expires - MARGIN <= now]:
            del self._entries[key]
