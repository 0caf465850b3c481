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


async def serve(listen, engine):
    async def carry(client_reader, client_writer):
        try:
            engine_reader, engine_writer = await asyncio.open_unix_connection(engine)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, engine_writer), pump(engine_reader, client_writer))
        engine_writer.close()
        client_writer.close()

    if os.path.exists(listen):
        os.unlink(listen)
    server = await asyncio.start_unix_server(carry, listen)
    os.chmod(listen, 0o660)
    print('API listen on %s (relayed to %s)' % (listen, engine), flush=True)
    async with server:
        await server.serve_forever()


if __name__ == '__main__':
    asyncio.run(serve(sys.argv[1], sys.argv[2]))
