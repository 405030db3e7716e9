"""What the asyncio client tells the application when its connection goes: a
:class:`aio.ConnectionLost` with the close code and reason, ``reconnects``
counting outages (not connection attempts), ``connected`` cleared while no
login holds. Against testing.Room over real websockets."""

from __future__ import annotations

import asyncio

from gamecodec.archipelago import aio
from gamecodec.archipelago import session as S
from gamecodec.sessions import Event
from tests.archipelago.rooms import make_room


async def next_of(client: aio.Client, kind: type[Event]) -> Event:
    """The next event of type ``kind`` (the ones before it are skipped)."""
    event = await client.wait_for(kind, timeout=10.0)
    assert isinstance(event, kind)
    return event


def test_one_server_restart_is_one_reconnect_however_many_attempts_failed() -> None:
    """Before, every failed attempt counted: one restart of the real server
    gave reconnects == 4. The room goes away, the client tries again and
    again (refused), the room comes back on its port: one outage."""

    async def main() -> None:
        room = make_room()
        await room.start()
        port = int(room.url.rsplit(":", 1)[1])
        client = await aio.connect(
            room.url,
            name="JSPlayer",
            game="Clique",
            initial_backoff=0.01,
            max_backoff=0.02,
            backoff_jitter=0.0,
        )
        assert client.connected is not None
        await room.stop()  # closes every connection with 1001 (going away)
        lost = await next_of(client, aio.ConnectionLost)
        assert lost == aio.ConnectionLost(1001, "", reconnecting=True)
        while client.reconnect_attempts < 4:
            await asyncio.sleep(0.01)
        assert client.state is aio.ClientState.RECONNECTING
        assert client.connected is None  # before: the lost login's Connected
        assert client.reconnects == 1
        again = make_room(port=port)
        await again.start()
        login = await client.wait_logged_in(timeout=10.0)
        assert client.connected is login and login.slot == 1
        assert client.reconnects == 1 and client.reconnect_attempts >= 4
        # a second outage counts once more
        for other in list(again.clients):
            await other.socket.close(4001, "kicked")
        assert await next_of(client, aio.ConnectionLost) == aio.ConnectionLost(
            4001, "kicked", reconnecting=True
        )
        await next_of(client, S.LoggedIn)
        assert client.reconnects == 2
        await client.close()
        assert client.connected is None
        await again.stop()

    asyncio.run(asyncio.wait_for(main(), 30.0))


def test_without_reconnect_the_last_event_is_connection_lost() -> None:
    async def main() -> None:
        async with make_room() as room:
            client = await aio.connect(room.url, name="JSPlayer", game="Clique", reconnect=False)
            for other in list(room.clients):
                await other.socket.close(4002, "room closed")
            events = [event async for event in client]
            assert events[-1] == aio.ConnectionLost(4002, "room closed", reconnecting=False)
            assert client.state is aio.ClientState.CLOSED and client.connected is None
            assert client.reconnects == 0 and client.reconnect_attempts == 0
            await client.close()

    asyncio.run(asyncio.wait_for(main(), 30.0))


def test_a_connection_cut_without_a_close_frame_is_1006() -> None:
    async def main() -> None:
        async with make_room() as room:
            client = await aio.connect(room.url, name="JSPlayer", game="Clique", reconnect=False)
            for other in list(room.clients):
                other.socket.transport.abort()
            lost = await next_of(client, aio.ConnectionLost)
            assert lost == aio.ConnectionLost(1006, "", reconnecting=False)
            await client.close()

    asyncio.run(asyncio.wait_for(main(), 30.0))


def test_an_application_close_is_no_connection_lost() -> None:
    async def main() -> None:
        async with make_room() as room:
            client = await aio.connect(room.url, name="JSPlayer", game="Clique")
            await client.close()
            events = [event async for event in client]
            assert not [e for e in events if isinstance(e, aio.ConnectionLost)]
            assert client.reconnects == 0

    asyncio.run(asyncio.wait_for(main(), 30.0))
