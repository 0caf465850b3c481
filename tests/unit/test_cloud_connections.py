"""api/cloud_connections.py: connections kept per key until their token expires."""

from api.cloud_connections import MARGIN, Connections, token_expiry


class Clock:
    now = 1000.0

    def __call__(self):
        return self.now


def test_a_connection_is_kept_until_its_expiry_then_made_again():
    clock = Clock()
    cache = Connections(ttl=300, clock=clock)
    made = []

    def make():
        made.append(object())
        return made[-1]

    key = cache.key('caller', 'token-a', 'p1')
    first = cache.get(key, make)
    assert cache.get(key, make) is first and len(made) == 1
    assert cache.get(cache.key('caller', 'token-b', 'p1'), make) is not first   # per token
    clock.now += 300 - MARGIN + 1
    assert cache.get(key, make) is not first and len(made) == 3
    # an expiry given (the token's) wins over the ttl
    other = cache.key('caller', 'token-c', 'p1')
    cache.get(other, make, expires_at=clock.now + 60)
    clock.now += 60 - MARGIN + 1
    cache.get(other, make)
    assert len(made) == 5 and cache.made == 5


def test_keys_keep_no_token_and_the_cache_stays_bounded():
    cache = Connections(max_entries=3, clock=Clock())
    assert 'secret-token' not in cache.key('caller', 'secret-token', 'p')
    for i in range(10):
        cache.get(cache.key(i), object, expires_at=2000.0 + i)
    assert len(cache._entries) == 3
    assert set(cache._entries) == {cache.key(i) for i in (7, 8, 9)}


def test_the_token_expiry_as_keystonemiddleware_reports_it():
    assert token_expiry({'token': {'expires_at': '2026-11-25T23:00:00.000000Z'}}) == \
        1795647600.0
    assert token_expiry({'token': {}}) is None and token_expiry(None) is None
    assert token_expiry({'token': {'expires_at': 'soon'}}) is None
