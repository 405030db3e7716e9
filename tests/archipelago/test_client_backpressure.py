"""The asyncio client delivers every event: it yields between frames and, when
its event queue is full, stops reading the socket (backpressure) instead of
dropping. Against testing.Room over real websockets; the room's side of the
connection is written to with websockets' ``broadcast`` (no waiting for the
client), so a whole burst is on its way before the application reads anything.

Issue 30: against the real server, 5,000 Say in 50 frames while the process
was busy for 2 s reached the application as 1,024 events (3,976 dropped).
CommonClient (``CommonClient.py``, ``server_loop``: ``async for data in
ctx.server.socket`` then ``await process_server_cmd`` for each command) and
archipelago.js handle every command as it comes and lose none."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest
from websockets.asyncio.server import ServerConnection, broadcast

from gamecodec.archipelago import aio
from gamecodec.archipelago import session as S
from gamecodec.archipelago.testing import Room
from gamecodec.sessions import Event
from tests.archipelago.rooms import make_room
from tests.archipelago.ws_proxy import PingDroppingProxy

PER_FRAME = 100


def run(test: Callable[[Room], Awaitable[None]], timeout: float = 30.0) -> None:
    async def main() -> None:
        async with asyncio.timeout(timeout), make_room() as room:
            await test(room)

    asyncio.run(main())


def server_side(room: Room) -> ServerConnection:
    """The room's end of the one logged-in connection."""
    (socket,) = [c.socket for c in room.clients if c.auth]
    return socket


def push_lines(socket: ServerConnection, first: int, count: int) -> None:
    """Write PrintJSON lines ``first`` .. ``first + count - 1`` (their number
    as text), ``PER_FRAME`` to a frame, without waiting for the client."""
    for start in range(first, first + count, PER_FRAME):
        end = min(start + PER_FRAME, first + count)
        frame = [{"cmd": "PrintJSON", "data": [{"text": str(n)}]} for n in range(start, end)]
        broadcast([socket], json.dumps(frame))


def line_of(event: Event) -> int | None:
    """The number a pushed line carries (None for any other event)."""
    if isinstance(event, S.MessageReceived) and event.text.isdigit():
        return int(event.text)
    return None


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run until ``condition`` holds (the test's timeout bounds it)."""
    while not condition():
        await asyncio.sleep(0)


def test_a_burst_of_20000_events_reaches_a_slow_consumer_whole_and_in_order() -> None:
    """Before: the read loop handled every buffered frame without letting the
    consumer run and dropped the oldest past max_events (256 here): most of
    the burst was lost. Now the queue stops at max_events plus one frame and
    the rest waits in the socket."""

    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", max_events=256)
        burst_written = asyncio.Event()
        push_lines(server_side(room), 0, 20_000)
        burst_written.set()
        await burst_written.wait()  # the application is busy while the burst arrives
        await until(lambda: client.reading_paused)
        assert 256 <= client.pending_events < 256 + PER_FRAME
        seen: list[int] = []
        peak = 0
        async for event in client:
            peak = max(peak, client.pending_events)
            number = line_of(event)
            if number is not None:
                seen.append(number)
                if number == 19_999:
                    break
            await asyncio.sleep(0)  # a slow consumer: one event per turn of the loop
        assert seen == list(range(20_000))
        assert client.events_dropped == 0
        assert peak < 256 + PER_FRAME  # the reading stopped: the rest waited in the socket
        await client.close()

    run(play)


def test_a_counting_consumer_runs_between_frames() -> None:
    """The yield alone, with dropping chosen: a consumer task that only counts
    takes each frame's events before the next frame is read, so a queue of
    one frame's size loses nothing. Before, recv() returned the buffered
    frames one after another without suspending and the consumer never ran:
    the queue kept only the newest 100."""

    async def play(room: Room) -> None:
        client = await aio.connect(
            room.url, name="JSPlayer", game="Clique", max_events=PER_FRAME, on_full="drop_oldest"
        )
        counted: list[int] = []

        async def count() -> None:
            async for event in client:
                number = line_of(event)
                if number is not None:
                    counted.append(number)
                    if number == 19_999:
                        return

        counter = asyncio.create_task(count())
        await until(lambda: client.pending_events == 0)  # the login's events taken
        push_lines(server_side(room), 0, 20_000)
        await counter
        assert counted == list(range(20_000)) and client.events_dropped == 0
        await client.close()

    run(play)


def test_a_reply_behind_a_full_queue_still_comes() -> None:
    """A request awaited while the queue is full and nothing reads events: the
    client reads on while a request waits for its reply, holding every event
    (none dropped), so the reply behind 2,000 queued events answers it."""

    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", max_events=64)
        push_lines(server_side(room), 0, 2_000)
        await until(lambda: client.reading_paused)
        before = client.pending_events
        assert await client.get(["_read_race_mode"]) == {"_read_race_mode": 0}
        scouted = await client.scout([1001])
        assert [(i.item, i.location) for i in scouted] == [(3, 1001)]
        # everything in front of the replies was read and kept
        assert before < 64 + PER_FRAME and client.pending_events >= 2_000
        assert client.events_dropped == 0
        seen: list[int] = []
        while len(seen) < 2_000:
            number = line_of(await client.next_event())
            if number is not None:
                seen.append(number)
        assert seen == list(range(2_000))
        await client.close()

    run(play)


def test_wait_for_reads_its_way_through_a_full_queue() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", max_events=64)
        socket = server_side(room)
        push_lines(socket, 0, 1_000)
        broadcast([socket], json.dumps([{"cmd": "Bounced", "data": {"n": 1}}]))
        await until(lambda: client.reading_paused)
        bounced = await client.wait_for(S.BounceReceived, timeout=20.0)
        assert bounced.bounced.data == {"n": 1}
        assert client.events_dropped == 0
        await client.close()

    run(play)


def test_dropping_is_an_explicit_choice() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(
            room.url, name="JSPlayer", game="Clique", max_events=64, on_full="drop_oldest"
        )
        assert client.on_full == "drop_oldest"
        push_lines(server_side(room), 0, 1_000)
        with pytest.warns(RuntimeWarning, match="events dropped"):
            await until(lambda: client.events_dropped >= 1_000 - 64)
        assert not client.reading_paused and client.pending_events == 64
        numbers = [line_of(await client.next_event()) for _ in range(64)]
        assert numbers == list(range(1_000 - 64, 1_000))  # the newest kept
        await client.close()

    run(play)


def test_on_full_is_checked() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="on_full"):
            aio.Client("ws://127.0.0.1:1", {"name": "A", "game": None}, on_full="drop")

    asyncio.run(main())


def test_a_relogin_goes_through_a_full_queue() -> None:
    """The handshake's events are queued like any other: a re-login is read
    to its end however full the queue is (else it would time out and start
    again for ever while the application is slow)."""

    async def play(room: Room) -> None:
        client = await aio.connect(
            room.url,
            name="JSPlayer",
            game="Clique",
            max_events=50,
            initial_backoff=0.01,
            backoff_jitter=0.0,
        )
        socket = server_side(room)
        push_lines(socket, 0, PER_FRAME)
        await socket.close(4000, "maintenance")
        await until(lambda: client.reading_paused)
        taken = []
        while client.pending_events >= 50:  # just enough room for the next frame
            taken.append(await client.next_event())
        await until(lambda: client.state is not aio.ClientState.LOGGED_IN)
        await client.wait_logged_in(timeout=10.0)
        assert client.pending_events >= 50 and client.reconnects == 1
        events = taken + [await client.next_event() for _ in range(client.pending_events)]
        numbers = [n for n in map(line_of, events) if n is not None]
        assert numbers == list(range(PER_FRAME))
        kinds = [type(e) for e in events]
        lost = kinds.index(aio.ConnectionLost)
        assert events[lost] == aio.ConnectionLost(4000, "maintenance", reconnecting=True)
        assert S.LoggedIn in kinds[lost:]
        assert client.events_dropped == 0
        await client.close()

    run(play)


class ShiftedClock:
    """The loop's clock plus ``offset`` (to make silence without waiting)."""

    def __init__(self) -> None:
        self.offset = 0.0
        self.loop = asyncio.get_running_loop()

    def __call__(self) -> float:
        return self.loop.time() + self.offset


def test_a_paused_client_does_not_time_its_server_out() -> None:
    """While the client itself stops reading, no pong can reach it: that
    silence is ours, and keepalive_timeout must not end the connection."""

    async def play(room: Room) -> None:
        port = int(room.url.rsplit(":", 1)[1])
        async with PingDroppingProxy(port) as proxy:
            clock = ShiftedClock()
            client = aio.Client(
                proxy.url,
                {"name": "JSPlayer", "game": "Clique"},
                keepalive=0.01,
                keepalive_timeout=30.0,
                max_events=20,
                reconnect=False,
                clock=clock,
            )
            await client.start()
            push_lines(server_side(room), 0, 500)
            await until(lambda: client.reading_paused)
            clock.offset = 1_000.0  # far past keepalive_timeout, as if paused that long
            pings = len(proxy.pings_dropped)
            await until(lambda: len(proxy.pings_dropped) >= pings + 5)
            assert client.state is aio.ClientState.LOGGED_IN and client.reading_paused
            taken = [line_of(await client.next_event()) for _ in range(30)]
            assert [n for n in taken if n is not None] and client.state is aio.ClientState.LOGGED_IN
            await client.close()

    run(play)


def test_close_while_paused_reads_on_to_the_close_frame() -> None:
    """The server's answer to our close frame is behind the frames we have
    not read: a paused client that kept still would never see it, and
    websockets would cut the connection after its close_timeout (10 s) with
    no close frame (1006). The client reads on while closing; the events
    queued by then are still delivered after close(), in order and without a
    gap (the frames still on their way when the handshake ends are not)."""

    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", max_events=64)
        push_lines(server_side(room), 0, 5_000)
        await until(lambda: client.reading_paused)
        queued = len([e for e in client._events if line_of(e) is not None])
        socket = client._socket
        assert socket is not None
        await client.close()
        assert socket.close_code == 1000  # the server's close frame came: a clean close
        numbers = [n for n in [line_of(event) async for event in client] if n is not None]
        assert numbers == list(range(len(numbers))) and len(numbers) >= queued

    run(play)
