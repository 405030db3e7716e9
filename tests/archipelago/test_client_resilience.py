"""The asyncio client on a busy or flaky server: keepalive, refused requests,
NaN values, tags across reconnects, reconnect state, bounded events. Against
testing.Room over real websockets."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import random
import string
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago import session as S
from gamecodec.archipelago.testing import Room
from tests.archipelago.rooms import make_room
from tests.archipelago.threaded_room import ThreadedRoom
from tests.archipelago.ws_proxy import PingDroppingProxy


def run(test: Callable[[Room], Awaitable[None]], timeout: float = 20.0, **options: Any) -> None:
    async def main() -> None:
        async with asyncio.timeout(timeout), make_room(**options) as room:
            await test(room)

    asyncio.run(main())


def _never_retrieved(loop: asyncio.AbstractEventLoop) -> list[str]:
    """Collect what the loop reports as unhandled (orphaned futures)."""
    reports: list[str] = []
    loop.set_exception_handler(lambda _loop, context: reports.append(str(context["message"])))
    return reports


# ------------------------------------------------------------------ 1. keepalive


def test_no_pings_by_default_as_the_reference_client() -> None:
    """Before, websockets' defaults pinged every 20 s and closed after 20 s
    without a pong: a server busy for longer lost every client at once."""

    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique")
        assert client._socket is not None and client._socket.ping_interval is None
        assert client._socket.ping_timeout is None
        await client.close()

    run(play)


def test_a_stalled_server_keeps_its_clients() -> None:
    """The room's loop blocked for 2.5 s while the client pings every 0.2 s
    (no timeout): nothing answers, and the client stays connected."""
    with ThreadedRoom(make_room()) as served:

        async def main() -> None:
            client = await aio.connect(
                served.url, name="JSPlayer", game="Clique", keepalive=0.2, reconnect=False
            )
            served.stall(2.5)
            await client.check_locations([1001])  # queued in the socket meanwhile
            items = await client.wait_for(S.ItemsReceived, timeout=10.0)
            assert [i.item for i in items.items] == [3]
            assert client.state is aio.ClientState.LOGGED_IN and client.reconnects == 0
            await client.close()

        asyncio.run(main())


def test_keepalive_timeout_does_not_trip_while_data_arrives() -> None:
    """A proxy drops our pings, so no pong ever comes; the server keeps
    sending (chat echoes every 0.1 s). With a 1.5 s keepalive timeout the
    connection lives on for 3 s: only silence counts (websockets' ping_timeout
    would have closed it after 1.5 s)."""

    async def play(room: Room) -> None:
        port = int(room.url.rsplit(":", 1)[1])
        async with PingDroppingProxy(port) as proxy:
            client = await aio.connect(
                proxy.url,
                name="JSPlayer",
                game="Clique",
                keepalive=0.1,
                keepalive_timeout=1.5,
                reconnect=False,
            )
            for n in range(30):
                await client.say(f"tick {n}")
                await asyncio.sleep(0.1)
            assert len(proxy.pings_dropped) >= 15
            assert client.state is aio.ClientState.LOGGED_IN and client.reconnects == 0
            while (await client.wait_for(S.MessageReceived)).text != "JSPlayer: tick 29":
                pass
            await client.close()

    run(play)


def test_keepalive_timeout_ends_a_silent_connection_and_reconnects() -> None:
    with ThreadedRoom(make_room()) as served:

        async def main() -> None:
            client = await aio.connect(
                served.url,
                name="JSPlayer",
                game="Clique",
                keepalive=0.1,
                keepalive_timeout=0.5,
                initial_backoff=0.05,
            )
            served.stall(3.0)
            await asyncio.sleep(1.5)
            assert client.state is aio.ClientState.RECONNECTING
            await client.wait_logged_in(timeout=10.0)
            assert client.reconnects == 1
            await client.close()

        asyncio.run(main())


def test_the_reconnect_backoff_has_jitter() -> None:
    async def main() -> None:
        client = aio.Client("ws://127.0.0.1:1", {"name": "A", "game": None}, max_backoff=8.0)
        for attempt, full in [(0, 0.5), (1, 1.0), (3, 4.0), (10, 8.0)]:
            delays = [client.backoff(attempt) for _ in range(50)]
            assert all(full * 0.5 <= d <= full for d in delays)
            assert len(set(delays)) > 40
        steady = aio.Client("ws://127.0.0.1:1", {"name": "A", "game": None}, backoff_jitter=0.0)
        assert steady.backoff(2) == 2.0
        for bad in ({"backoff_jitter": 1.5}, {"keepalive_timeout": 5.0}, {"max_events": 0}):
            with pytest.raises(ValueError):
                aio.Client("ws://127.0.0.1:1", {"name": "A", "game": None}, **bad)

    asyncio.run(main())


def test_clients_dropped_together_come_back_spread_out() -> None:
    async def play(room: Room) -> None:
        clients = [
            await aio.connect(room.url, name="JSPlayer", game="Clique", initial_backoff=0.4)
            for _ in range(8)
        ]
        loop = asyncio.get_running_loop()
        for other in list(room.clients):
            await other.socket.close()
        dropped = loop.time()
        while any(c.state is aio.ClientState.LOGGED_IN for c in clients):
            await asyncio.sleep(0.001)

        async def back_after(client: aio.Client) -> float:
            await client.wait_logged_in(timeout=10.0)
            return loop.time() - dropped

        back = await asyncio.gather(*(back_after(c) for c in clients))
        assert min(back) >= 0.15  # half the backoff at least
        assert max(back) - min(back) > 0.02  # without jitter all within a few ms
        for client in clients:
            await client.close()

    run(play)


# ------------------------------------------------------------------ 2. refused Set


def test_a_refused_set_fails_at_once() -> None:
    """The server answers a Set of a read-only key with an InvalidPacket;
    before, set() waited the whole request timeout (30 s)."""

    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", request_timeout=300.0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(aio.RequestRefusedError, match="refused Set") as info:
            await client.set("_read_race_mode", [("replace", 1)])
        assert loop.time() - started < 60.0  # not the request timeout
        assert info.value.kind == "Set"
        # a later Set is matched to its own reply, not to the refusal
        changed = await client.set("counter", [("add", 3)], default=1)
        assert changed.value == 4
        await client.close()

    run(play, timeout=120.0)


def test_refusals_are_matched_to_the_refused_set() -> None:
    session = S.ClientSession("A", "Clique")
    session.receive_frame(
        '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],'
        '"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]',
        0.0,
    )
    session.receive_frame(
        '[{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[],'
        '"checked_locations":[]}]',
        0.0,
    )
    good = session.set("counter", [("add", 1)], 0.0)
    quiet = session.set("_read_x", [("add", 1)], 0.0, want_reply=False)
    bad = session.set("_read_y", [("add", 1)], 0.0)
    assert quiet is None
    invalid = '[{"cmd":"InvalidPacket","type":"arguments","text":"Set","original_cmd":"Set"}]'
    assert [type(e) for e in session.receive_frame(invalid, 0.0)] == [S.CommandReceived]
    (refused,) = session.receive_frame(invalid, 0.0)
    assert isinstance(refused, S.RequestRefused) and refused.request_id == bad
    assert session.next_deadline() == 30.0  # the good Set still waits for its reply
    assert good is not None


# ------------------------------------------------------------------ 3. NaN, Infinity


def test_nan_and_infinity_travel_and_fire_their_events() -> None:
    """Before, a frame holding NaN was passed through untyped: get() timed out
    and no StorageChanged / DeathLinkReceived / BounceReceived fired."""

    async def play(room: Room) -> None:
        js = await aio.connect(
            room.url, name="JSPlayer", game="Clique", death_link=True, request_timeout=3.0
        )
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest", death_link=True)
        await buddy.set_notify(["speed"])
        changed = await js.set("speed", [("replace", math.inf)])
        assert changed.value == math.inf
        notice = await buddy.wait_for(S.StorageChanged)
        assert notice.value == math.inf and notice.request_id is None
        await js.set("speed", [("replace", math.nan)])
        got = await js.get(["speed"])
        assert math.isnan(got["speed"])
        await js.death_link("fell", now=math.nan)
        death = await buddy.wait_for(S.DeathLinkReceived)
        assert math.isnan(death.time) and death.cause == "fell"
        await js.bounce({"ratio": -math.inf}, slots=[2])
        bounced = await buddy.wait_for(S.BounceReceived)
        assert bounced.bounced.data == {"ratio": -math.inf}
        sent = [f for d, f in room.frames if d == "c2s" and "speed" in f]
        assert any('"value":Infinity' in f for f in sent)
        assert any('"value":NaN' in f for f in sent)
        await js.close()
        await buddy.close()

    run(play)


# ------------------------------------------------------------------ 4. tags


def test_tags_changed_at_run_time_switch_death_link_and_survive_a_reconnect() -> None:
    async def play(room: Room) -> None:
        js = await aio.connect(room.url, name="JSPlayer", game="Clique", initial_backoff=0.05)
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest", death_link=True)
        await js.update_tags(["AP", "DeathLink"])
        assert js.session.death_link_enabled
        await js.get(["x"])  # its reply: the room has read the ConnectUpdate
        await buddy.death_link("one")
        assert (await js.wait_for(S.DeathLinkReceived)).cause == "one"
        # the server drops us: the new login carries the tags set at run time
        for client in [c for c in room.clients if c.slot == 1]:
            await client.socket.close()
        await js.wait_for(S.LoggedIn)
        connects = [f for d, f in room.frames if d == "c2s" and '"cmd":"Connect"' in f]
        assert '"DeathLink"' in connects[-1]
        await buddy.death_link("two")
        assert (await js.wait_for(S.DeathLinkReceived)).cause == "two"
        await js.set_death_link(False)
        assert js.tags == ["AP"] and not js.session.death_link_enabled
        await js.get(["x"])
        await buddy.death_link("three")
        await buddy.say("after")
        events = []
        while not any(isinstance(e, S.MessageReceived) and "after" in e.text for e in events):
            events.append(await js.next_event(timeout=5.0))
        assert not any(isinstance(e, S.DeathLinkReceived) for e in events)
        await js.close()
        await buddy.close()

    run(play)


def test_removing_the_tag_stops_reports_even_if_bounces_still_arrive() -> None:
    session = S.ClientSession("A", "Clique", death_link_enabled=True)
    session.state = S.State.CONNECTED
    death = '[{"cmd":"Bounced","tags":["DeathLink"],"data":{"time":1.0,"source":"b"}}]'
    assert isinstance(session.receive_frame(death, 0.0)[0], S.DeathLinkReceived)
    session.update_tags(["AP"])
    assert isinstance(session.receive_frame(death, 0.0)[0], S.BounceReceived)
    session.update_tags(["AP", "DeathLink"])
    assert isinstance(session.receive_frame(death, 0.0)[0], S.DeathLinkReceived)


# ------------------------------------------------------------------ 5. reconnect state


def test_watched_keys_are_watched_again_after_a_reconnect() -> None:
    """The server forgets a connection's SetNotify keys; before, a bot that
    reconnected heard of no more changes."""

    async def play(room: Room) -> None:
        js = await aio.connect(room.url, name="JSPlayer", game="Clique")
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest", initial_backoff=0.05)
        await buddy.set_notify(["counter"])
        for client in [c for c in room.clients if c.slot == 2]:
            await client.socket.close()
        await buddy.wait_for(S.LoggedIn)  # the first login's
        await buddy.wait_for(S.LoggedIn)  # the new one's
        await buddy.say("back")  # its echo: the room has read our SetNotify
        while "back" not in (await buddy.wait_for(S.MessageReceived)).text:
            pass
        await js.set("counter", [("replace", 9)])
        notice = await buddy.wait_for(S.StorageChanged)
        assert (notice.key, notice.value, notice.request_id) == ("counter", 9, None)
        assert buddy.watched == {"counter"}
        await js.close()
        await buddy.close()

    run(play)


def test_reconnect_state_one_error_and_logged_in_again() -> None:
    """Before, a reconnecting client still said it was connected, and calls
    failed with ConnectionError, then LocalProtocolError."""

    async def play(room: Room) -> None:
        loop = asyncio.get_running_loop()
        reports = _never_retrieved(loop)
        port = int(room.url.rsplit(":", 1)[1])
        proxy = PingDroppingProxy(port)
        await proxy.__aenter__()
        client = await aio.connect(
            proxy.url,
            name="JSPlayer",
            game="Clique",
            initial_backoff=1.0,
            backoff_jitter=0.0,
            request_timeout=None,
        )
        assert client.state is aio.ClientState.LOGGED_IN
        proxy.deaf = True  # the room hears nothing more: these requests wait
        pending = asyncio.ensure_future(client.scout([1001]))
        abandoned = asyncio.ensure_future(client.get(["x"]))
        await asyncio.sleep(0.1)
        abandoned.cancel()
        proxy.deaf = False
        proxy.cut()
        with pytest.raises(aio.NotConnectedError):
            await pending
        assert client.state is aio.ClientState.RECONNECTING
        for call in (client.get(["x"]), client.say("hi"), client.check_locations([1001])):
            with pytest.raises(aio.NotConnectedError):
                await call
        connected = await client.wait_logged_in(timeout=10.0)
        assert connected.slot == 1 and client.state is aio.ClientState.LOGGED_IN
        # the check made while disconnected was remembered and sent with the new login
        await client.wait_for(S.ItemsReceived)
        assert [i.item for i in client.items] == [3]
        await client.close()
        assert client.state is aio.ClientState.CLOSED
        with pytest.raises(aio.NotConnectedError):
            await client.wait_logged_in()
        await proxy.__aexit__()
        gc.collect()
        await asyncio.sleep(0)
        assert not [r for r in reports if "never retrieved" in r]

    run(play)


def test_calls_can_wait_for_the_new_login() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(
            room.url,
            name="JSPlayer",
            game="Clique",
            initial_backoff=0.3,
            queue_while_reconnecting=True,
        )
        for other in list(room.clients):
            await other.socket.close()
        while client.state is aio.ClientState.LOGGED_IN:
            await asyncio.sleep(0.01)
        await client.say("queued")  # waits for the re-login, then goes out
        assert client.state is aio.ClientState.LOGGED_IN
        while "queued" not in (await client.wait_for(S.MessageReceived)).text:
            pass
        await client.close()

    run(play)


def test_no_orphaned_futures() -> None:
    """A request made while the connection is down, a refused login and a
    login cancelled from outside must leave no future whose exception nobody
    retrieves (before, the request's future stayed registered and was failed
    later: "Future exception was never retrieved")."""

    async def play(room: Room) -> None:
        reports = _never_retrieved(asyncio.get_running_loop())
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", initial_backoff=0.5)
        for other in list(room.clients):
            await other.socket.close()
        while client._socket is not None:
            await asyncio.sleep(0.001)
        with pytest.raises(ConnectionError):
            await client.get(["x"])
        with pytest.raises(ConnectionError):
            await client.scout([1001])
        await client.close()
        with pytest.raises(aio.LoginRefusedError):
            await aio.connect(room.url, name="Nobody", game="Clique")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.001):
                await aio.connect(room.url, name="JSPlayer", game="Clique")
        await asyncio.sleep(0.2)
        gc.collect()
        await asyncio.sleep(0)
        assert not [r for r in reports if "never retrieved" in r]

    run(play)


# ------------------------------------------------------------------ 7. bounded events


def test_the_event_queue_is_bounded() -> None:
    """Before, every event was kept while the application read none. Dropping
    is the explicit choice (``on_full="drop_oldest"``); the default stops
    reading instead (test_client_backpressure.py)."""

    async def play(room: Room) -> None:
        reader = await aio.connect(
            room.url, name="JSPlayer", game="Clique", max_events=50, on_full="drop_oldest"
        )
        talker = await aio.connect(room.url, name="PyBuddy", game="Quest")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n in range(200):
                await talker.say(f"line {n}")
            await talker.say("last")
            while not reader._events or "last" not in getattr(reader._events[-1], "text", ""):
                await asyncio.sleep(0.05)
        assert len(reader._events) == 50
        assert reader.events_dropped >= 150
        assert any("events dropped" in str(w.message) for w in caught)
        assert all(issubclass(w.category, RuntimeWarning) for w in caught)
        assert len(caught) <= 9  # one warning at 1, 2, 4, ... drops
        assert aio.MAX_EVENTS == 1024
        await reader.close()
        await talker.close()

    run(play)


def _logged_in_session() -> S.ClientSession:
    session = S.ClientSession("A", "Clique")
    session.receive_frame(
        '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],'
        '"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]',
        0.0,
    )
    session.receive_frame(
        '[{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[],'
        '"checked_locations":[]}]',
        0.0,
    )
    return session


def test_a_refused_raw_set_or_get_does_not_fail_another_request() -> None:
    """A Set or Get sent with send() that the reference refuses (no operations
    list; keys not a list) is answered by an InvalidPacket: it must not fail
    the typed request waiting beside it, whose own reply is still to come."""
    session = _logged_in_session()
    session.send({"cmd": "Set", "key": "counter", "operations": "add"})
    session.send({"cmd": "Get", "keys": "counter"})
    pending_set = session.set("counter", [("add", 1)], 0.0)
    pending_get = session.get(["counter"], 0.0)
    for kind, text in (("Set", "Set"), ("Get", "Retrieve")):
        invalid = (
            f'[{{"cmd":"InvalidPacket","type":"arguments","text":"{text}",'
            f'"original_cmd":"{kind}"}}]'
        )
        assert [type(e) for e in session.receive_frame(invalid, 0.0)] == [S.CommandReceived]
    reply = (
        f'[{{"cmd":"SetReply","key":"counter","value":1,"original_value":0,"slot":1,'
        f'"request_id":{pending_set}}},'
        f'{{"cmd":"Retrieved","keys":{{"counter":1}},"request_id":{pending_get}}}]'
    )
    changed, read = session.receive_frame(reply, 0.0)
    assert isinstance(changed, S.StorageChanged) and changed.request_id == pending_set
    assert isinstance(read, S.StorageRead) and read.request_id == pending_get


def test_a_raw_scout_reply_does_not_answer_a_typed_scout() -> None:
    """LocationInfo carries no id: replies come in the order the scouts went
    out, the ones sent with send() too."""
    session = _logged_in_session()
    session.send({"cmd": "LocationScouts", "locations": [1]})
    typed = session.scout_locations([2], 0.0)
    first = (
        '[{"cmd":"LocationInfo","locations":[{"item":5,"location":1,"player":1,"flags":0,'
        '"class":"NetworkItem"}]}]'
    )
    second = first.replace('"location":1', '"location":2')
    assert [type(e) for e in session.receive_frame(first, 0.0)] == [S.CommandReceived]
    (scouted,) = session.receive_frame(second, 0.0)
    assert isinstance(scouted, S.LocationsScouted) and scouted.request_id == typed
    assert scouted.locations[0].location == 2


def test_the_backoff_grows_while_logins_fail() -> None:
    """A server that takes the websocket but never completes the login (still
    starting up, overloaded): each attempt must wait longer than the last, and
    a timed-out login is dropped at once (no close handshake with it).
    Before, the backoff started over whenever the websocket opened, so every
    client came back every ``connect_timeout + initial_backoff``."""

    async def play(room: Room) -> None:
        port = int(room.url.rsplit(":", 1)[1])
        async with PingDroppingProxy(port) as proxy:
            client = await aio.connect(
                proxy.url,
                name="JSPlayer",
                game="Clique",
                connect_timeout=0.2,
                initial_backoff=0.1,
                backoff_jitter=0.0,
            )
            proxy.deaf = True  # the room answers the handshake, never a login
            proxy.cut()
            await asyncio.sleep(3.0)
            # waits 0.1, 0.2, 0.4, 0.8, 1.6 s (+ 0.2 s each login): 4 attempts by then;
            # starting over each time made about 10, and a close handshake with
            # the silent server after each timed-out login (10 s) made 1
            assert 2 <= client.reconnect_attempts <= 5
            assert client.reconnects == 1  # all of them one outage
            assert client.state is aio.ClientState.RECONNECTING
            proxy.deaf = False
            await client.wait_logged_in(timeout=10.0)
            await client.close()

    run(play)


def test_keepalive_timeout_fires_while_our_sends_are_stuck() -> None:
    """A stalled server reads nothing: once the socket buffers are full every
    send waits. The keepalive must still see the silence (before, its ping
    waited for the full buffer like any send, and the timeout never came)."""
    with ThreadedRoom(make_room()) as served:

        async def main() -> None:
            client = await aio.connect(
                served.url,
                name="JSPlayer",
                game="Clique",
                keepalive=0.1,
                keepalive_timeout=0.5,
                initial_backoff=60.0,
                backoff_jitter=0.0,
            )
            served.stall(5.0)
            rng = random.Random(5)
            noise = "".join(rng.choices(string.ascii_letters, k=200_000))  # deflates little

            async def flood() -> None:
                with contextlib.suppress(ConnectionError):
                    while True:
                        await client.say(noise)

            flooding = asyncio.create_task(flood())
            async with asyncio.timeout(4.0):
                while client.state is aio.ClientState.LOGGED_IN:
                    await asyncio.sleep(0.05)
            assert client.state is aio.ClientState.RECONNECTING
            flooding.cancel()
            await client.close()

        asyncio.run(main())
