"""TCP ports served at another address: every connection made to ``listen`` is carried,
byte for byte both ways, to ``target``. tests/test_real_guests.py runs it to give the
lab's guests the cloud's APIs, which listen on the host's loopback: the public network's
gateway address (on the host) relays to them, as a real cloud's public endpoints would
answer, without changing the lab's own service-to-service traffic.

    python tcp_relay.py <listen host>:<port>=<target host>:<port> ...
"""

import asyncio
import sys

from engine_relay import carrier


async def relay(listen, target):
    return await asyncio.start_server(carrier(lambda: asyncio.open_connection(*target)),
                                      *listen)


def address(text):
    host, port = text.rsplit(':', 1)
    return host, int(port)


async def main(pairs):
    servers = [await relay(address(listen), address(target))
               for listen, target in (pair.split('=', 1) for pair in pairs)]
    print('relaying', ' '.join(pairs), flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == '__main__':
    asyncio.run(main(sys.argv[1:]))
