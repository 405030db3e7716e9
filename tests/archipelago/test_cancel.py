"""Requests whose caller went away: dropped at once, their replies consumed.

The asyncio client against testing.Room over real websockets, and the Sans-IO
session on its own."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago import commands as C
from gamecodec.archipelago import session as S
from gamecodec.archipelago.frames import encode
from gamecodec.archipelago.testing import Room
from gamecodec.sessions import Event, Traffic
from tests.archipelago.rooms import make_room
from tests.archipelago.test_session import logged_in, sent
from tests.archipelago.ws_proxy import PingDroppingProxy

UNHANDLED = ("never retrieved", "destroyed but it is pending")


def run(test: Callable[[Room], Awaitable[None]]) -> None:
    """Run ``test`` against a room; fail on anything the loop reports as
    unhandled (a future whose exception nobody retrieved, a pending task
    destroyed)."""
    reports: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reports.append(str(context["message"])))
        async with asyncio.timeout(30), make_room() as room:
            await test(room)
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(main())
    gc.collect()
    assert not [r for r in reports if any(text in r for text in UNHANDLED)], reports


class Canceller:
    """A tap that cancels a task the moment its request's frame went out: the
    server has it, and its reply is certainly still to come."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.command = ""

    def __call__(self, traffic: Traffic) -> None:
        if self.task is None or traffic.direction != "out":
            return
        if any(c.get("cmd") == self.command for c in json.loads(traffic.data)):
            self.task.cancel()
            self.task = None

    async def cancel(self, command: str, call: Coroutine[Any, Any, Any]) -> None:
        """Start ``call``, cancel it once its ``command`` is sent, wait for it."""
        self.command = command
        task = asyncio.ensure_future(call)
        self.task = task
        with pytest.raises(asyncio.CancelledError):
            await task


async def later_events(client: aio.Client) -> list[Event]:
    """The events queued for the application, taken until none comes for 0.2 s."""
    events = []
    while True:
        try:
            events.append(await client.next_event(timeout=0.2))
        except TimeoutError:
            return events


def replies(events: list[Event]) -> list[Event]:
    """The events that are replies to requests (or late replies)."""
    return [
        e
        for e in events
        if isinstance(e, (S.StorageRead, S.StorageChanged, S.LocationsScouted))
        or (isinstance(e, S.CommandReceived) and isinstance(e.command, C.LocationInfo))
    ]


def test_a_cancelled_request_is_dropped_at_once() -> None:
    """Cancelled after its frame went out, a Get, a Set and a scout are no
    longer pending, in the client or in its session, and set no timer (before,
    each stayed until its reply, its timeout or a reconnect)."""

    async def play(room: Room) -> None:
        canceller = Canceller()
        client = await aio.connect(
            room.url, name="JSPlayer", game="Clique", request_timeout=60.0, tap=canceller
        )
        for command, call in (
            ("Get", client.get(["counter"])),
            ("Set", client.set("counter", [("add", 1)], default=0)),
            ("LocationScouts", client.scout([1001])),
        ):
            await canceller.cancel(command, call)
            assert client.session.next_deadline() is None  # no request left to time out
            assert (client.pending_requests, client.session.pending_requests) == (0, 0)
        await client.close()

    run(play)


def test_the_reply_of_a_cancelled_request_answers_no_later_one() -> None:
    """The reply of a cancelled Get, Set or scout comes, is consumed without
    an event, and the next request of its kind (same key, same locations)
    gets its own reply: a scout's, which carries no id, by its place in line
    (before, each late reply was queued as an event for the application)."""

    async def play(room: Room) -> None:
        canceller = Canceller()
        client = await aio.connect(
            room.url, name="JSPlayer", game="Clique", request_timeout=None, tap=canceller
        )
        await client.set("counter", [("replace", 1)], default=0)
        await later_events(client)  # the login's events

        await canceller.cancel("Get", client.get(["counter"]))
        await client.set("counter", [("replace", 2)])
        assert await client.get(["counter"]) == {"counter": 2}

        await canceller.cancel("Set", client.set("counter", [("add", 10)]))
        changed = await client.set("counter", [("add", 100)])
        assert (changed.original_value, changed.value) == (12, 112)
        assert changed.request_id is not None

        await canceller.cancel("LocationScouts", client.scout([1002]))
        scouted = await client.scout([1003])
        assert [(i.location, i.item) for i in scouted] == [(1003, 502)]
        await canceller.cancel("LocationScouts", client.scout([1002]))
        scouted = await client.scout([1002])  # the same location: its own reply
        assert [(i.location, i.item) for i in scouted] == [(1002, 501)]

        assert replies(await later_events(client)) == []
        assert (client.pending_requests, client.session.pending_requests) == (0, 0)
        await client.close()

    run(play)


def test_a_scout_cancelled_before_it_went_out_keeps_its_place() -> None:
    """Cancelled at once, before its frame was written, a scout's frame still
    goes out whole (the sending is shielded), so its place in the line of
    scouts is right: its reply is consumed and the next scout gets its own."""

    async def play(room: Room) -> None:
        sent: list[str] = []

        def tap(traffic: Traffic) -> None:
            if traffic.direction == "out":
                sent.extend(c["cmd"] for c in json.loads(traffic.data))

        client = await aio.connect(
            room.url, name="JSPlayer", game="Clique", request_timeout=None, tap=tap
        )
        await later_events(client)
        for _ in range(3):
            early = asyncio.ensure_future(client.scout([1002]))
            await asyncio.sleep(0)
            early.cancel()
            with pytest.raises(asyncio.CancelledError):
                await early
        scouted = await client.scout([1003])
        assert [(i.location, i.item) for i in scouted] == [(1003, 502)]
        assert sent.count("LocationScouts") == 4
        assert replies(await later_events(client)) == []
        assert (client.pending_requests, client.session.pending_requests) == (0, 0)
        await client.close()

    run(play)


@contextlib.asynccontextmanager
async def unanswered_client(room: Room) -> AsyncIterator[aio.Client]:
    """A logged-in client (request_timeout=None) whose requests the room no longer
    hears until the block ends; then the room hears the close handshake."""
    proxy = PingDroppingProxy(int(room.url.rsplit(":", 1)[1]))
    async with proxy:
        client = await aio.connect(proxy.url, name="JSPlayer", game="Clique", request_timeout=None)
        proxy.deaf = True
        try:
            yield client
        finally:
            proxy.deaf = False
            await client.close()


def test_a_request_timed_out_by_its_caller_is_dropped() -> None:
    """``asyncio.timeout`` around a request the server does not answer yet
    (request_timeout=None): the request is gone at once."""

    async def play(room: Room) -> None:
        async with unanswered_client(room) as client:
            for call in (client.get(["counter"]), client.scout([1001])):
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.05):
                        await call
                assert client.session.pending_requests == 0
                assert client.pending_requests == 0

    run(play)


async def cancel_many(client: aio.Client, rounds: int) -> None:
    """``rounds`` times 100 Gets, Sets and scouts each, cancelled while unanswered."""
    for _ in range(rounds):
        calls: list[Coroutine[Any, Any, Any]] = []
        for n in range(100):
            calls += [
                client.get([f"key{n % 7}"]),
                client.set(f"key{n % 7}", [("add", 1)]),
                client.scout([1001]),
            ]
        tasks = [asyncio.ensure_future(call) for call in calls]
        await asyncio.sleep(0.005)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_thousands_of_cancelled_requests_take_no_memory() -> None:
    """With request_timeout=None and a server that answers nothing, 3,600
    cancelled requests leave none pending, and memory stays where the 3,600
    before them left it (what is remembered for their replies is bounded;
    before, every one stayed pending for good: about 1 MB more per 3,000)."""

    async def play(room: Room) -> None:
        async with unanswered_client(room) as client:
            tracemalloc.start()
            try:
                await cancel_many(client, 12)  # fills what is remembered for late replies
                gc.collect()
                before = tracemalloc.get_traced_memory()[0]
                await cancel_many(client, 12)
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            # set and dict tables reach their bounded size meanwhile (~200 KB)
            assert grown < 300_000, grown
            assert (client.pending_requests, client.session.pending_requests) == (0, 0)

    run(play)


# ------------------------------------------------------------------ the session


def test_session_cancel_keeps_a_scouts_place_and_eats_its_reply() -> None:
    session = logged_in(request_timeout=5.0)
    first = session.scout_locations([1001], 0.0)
    second = session.scout_locations([1001], 0.0)
    get = session.get(["k"], 0.0)
    set_ = session.set("k", [("add", 1)], 0.0)
    sent(session)
    assert session.pending_requests == 4
    assert [session.cancel(r) for r in (first, get, set_)] == [True, True, True]
    assert session.cancel(first) is False  # once
    assert session.pending_requests == 1
    item = C.Item(7, 1001, 1, 0)
    assert session.receive_frame(encode([C.LocationInfo([item])]), 1.0) == []
    retrieved = C.Retrieved({"k": 1})
    retrieved.set_extra({"request_id": get})
    reply = C.SetReply("k", value=1, original_value=0)
    reply.set_extra({"request_id": set_})
    assert session.receive_frame(encode([retrieved, reply]), 1.0) == []
    assert session.receive_frame(encode([C.LocationInfo([item])]), 1.0) == [
        S.LocationsScouted(second, [item])
    ]
    assert session.next_deadline() is None and session.handle_timeout(100.0) == []
    # a reply that comes twice is reported the second time: only one is eaten
    assert [type(e) for e in session.receive_frame(encode([retrieved]), 1.0)] == [S.StorageRead]


def test_session_cancel_eats_a_refusal_and_is_bounded() -> None:
    """A cancelled Set's refusal is eaten too; past MAX_CANCELLED (Gets) and
    MAX_LATE_SCOUTS (scouts) the oldest cancelled requests are forgotten:
    their replies are reported as replies to no request, as late ones are."""
    session = logged_in(request_timeout=None)
    refused = session.set("_read_x", [("add", 1)], 0.0)
    assert refused is not None and session.cancel(refused)
    invalid = C.InvalidPacket("arguments", "Set", original_cmd="Set")
    assert session.receive_frame(encode([invalid]), 1.0) == []
    extra = 5
    gets = [session.get(["k"], 0.0) for _ in range(S.MAX_CANCELLED + extra)]
    for _ in range(S.MAX_LATE_SCOUTS + extra):
        session.cancel(session.scout_locations([1001], 0.0))
    assert all(session.cancel(g) for g in gets) and session.pending_requests == 0
    fresh = session.scout_locations([1001], 0.0)
    for n, request_id in enumerate(gets):
        retrieved = C.Retrieved({"k": 1})
        retrieved.set_extra({"request_id": request_id})
        expected = [S.StorageRead(None, {"k": 1})] if n < extra else []
        assert session.receive_frame(encode([retrieved]), 1.0) == expected
    info = encode([C.LocationInfo([C.Item(1, 1001, 1)])])
    for n in range(S.MAX_LATE_SCOUTS + extra):  # the forgotten ones' replies come first
        expected = [S.CommandReceived(C.LocationInfo([C.Item(1, 1001, 1)]))] if n < extra else []
        assert session.receive_frame(info, 1.0) == expected
    assert session.receive_frame(info, 1.0) == [S.LocationsScouted(fresh, [C.Item(1, 1001, 1)])]


def test_close_leaves_no_send_pending() -> None:
    """A send whose caller was cancelled is finished by close(): none is left
    pending for the loop to destroy (with ``run_until_complete(close())`` and
    ``loop.close()``, "Task was destroyed but it is pending")."""

    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique")
        socket = client._socket
        assert socket is not None
        send = socket.send

        async def slow_send(frame: Any) -> None:
            await asyncio.sleep(0.5)  # a peer that reads slowly
            await send(frame)

        socket.send = slow_send  # type: ignore[method-assign]
        task = asyncio.ensure_future(client.get(["counter"]))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client._sending  # its frame is still going out
        waiting = asyncio.ensure_future(client.get(["counter"]))  # its caller stays
        await asyncio.sleep(0.01)
        await client.close()
        assert not client._sending
        with pytest.raises(aio.NotConnectedError):  # not CancelledError: nobody cancelled it
            await waiting
        others = asyncio.all_tasks() - {asyncio.current_task()}
        assert [t for t in others if "_send_frames" in repr(t)] == []

    run(play)


def test_a_cancelled_set_still_tells_a_watcher_of_its_key() -> None:
    """A watched key (SetNotify) is told of every change: the server sends the
    Set's reply once, to its sender, so a cancelled Set's reply is the only
    notice of the change; it becomes a StorageChanged event with no request id,
    as another client's change does."""
    session = logged_in()
    session.set_notify(["counter"])
    request_id = session.set("counter", [("add", 1)], 0.0, default=0)
    assert request_id is not None
    session.frames_to_send()
    assert session.cancel(request_id)
    reply = {
        "cmd": "SetReply",
        "key": "counter",
        "value": 1,
        "original_value": 0,
        "slot": 1,
        "request_id": request_id,
    }
    (event,) = session.receive_frame(encode([reply]), 1.0)
    assert isinstance(event, S.StorageChanged)
    assert (event.request_id, event.key, event.value) == (None, "counter", 1)
    # not watched: consumed without an event
    other = session.set("other", [("add", 1)], 2.0, default=0)
    assert other is not None and session.cancel(other)
    reply |= {"key": "other", "request_id": other}
    assert session.receive_frame(encode([reply]), 3.0) == []


def test_many_cancelled_scouts_never_answer_a_later_one() -> None:
    """The server answers every scout, in order. With more cancelled scouts
    in flight than MAX_LATE_SCOUTS, the forgotten ones' replies (which still
    come) are reported as replies to no request, and a later scout gets its
    own reply, not the reply of a cancelled one (before, forgetting removed
    the oldest from the line, so each reply went to the scout behind)."""
    session = logged_in(request_timeout=None)
    extra = 5
    for _ in range(S.MAX_LATE_SCOUTS + extra):
        assert session.cancel(session.scout_locations([1001], 0.0))
    fresh = session.scout_locations([1002], 0.0)
    old = encode([C.LocationInfo([C.Item(1, 1001, 1)])])
    events = []
    for _ in range(S.MAX_LATE_SCOUTS + extra):
        events += session.receive_frame(old, 1.0)
    assert [type(e) for e in events] == [S.CommandReceived] * extra
    new = encode([C.LocationInfo([C.Item(1, 1002, 1)])])
    assert session.receive_frame(new, 1.0) == [S.LocationsScouted(fresh, [C.Item(1, 1002, 1)])]
    assert session.pending_requests == 0
