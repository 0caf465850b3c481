"""A Docker engine's socket served at another path: every connection made to ``listen`` is
carried, byte for byte both ways (hijacked streams, half-closes included), to the engine
at ``engine``. tests/test_quickstart.py starts it as the `dockerd` of a machine that had
none: the machine's only engine is this host's, and killing the relay stops it for that
machine alone.

    python engine_relay.py <listen socket path> <engine socket path>
"""

import asyncio
import os
import sys


async def pump(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


def carrier(open_target):
    """A connection handler carrying each client to what ``open_target()`` (a coroutine
    giving a reader and a writer) opens; a client whose target cannot be opened is closed."""
    async def carry(client_reader, client_writer):
        try:
            target_reader, target_writer = await open_target()
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, target_writer), pump(target_reader, client_writer))
        target_writer.close()
        client_writer.close()
    return carry


async def serve(listen, engine):
    carry = carrier(lambda: asyncio.open_unix_connection(engine))

    if os.path.exists(listen):
        os.unlink(listen)
    server = await asyncio.start_unix_server(carry, listen)
    os.chmod(listen, 0o660)
    print('API listen on %s (relayed to %s)' % (listen, engine), flush=True)
    async with server:
        await server.serve_forever()


if __name__ == '__main__':
    asyncio.run(serve(sys.argv[1], sys.argv[2]))
