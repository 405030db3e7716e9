"""ClientPolicy, the client's life across sessions, driven without sockets or a clock:
reconnect deadlines, what a re-login replays, keepalive silence, options."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago import commands as C
from gamecodec.archipelago.frames import encode
from gamecodec.archipelago.policy import ClientOptions, ClientPolicy, ClientState, ConnectionLost
from gamecodec.archipelago.session import LoggedIn

GAME = C.GameData({"Cake": 3}, {"Lamp": 1003}, "abc123")
V = C.VersionInfo(0, 6, 8)


def policy(random_source: Any = None, **options: Any) -> ClientPolicy:
    session_options: dict[str, Any] = {
        "name": "JS",
        "game": "Clique",
        "data_packages": {"abc123": GAME},
    }
    return ClientPolicy(session_options, ClientOptions(**options), random_source=random_source)


def connected(checked: list[int]) -> C.Connected:
    return C.Connected(
        team=0,
        slot=1,
        players=[C.Player(0, 1, "JS", "JS")],
        missing_locations=[1001, 1002, 1003],
        checked_locations=checked,
        slot_info={"1": C.Slot("JS", "Clique", 1)},
        hint_points=0,
    )


def log_in(p: ClientPolicy, checked: list[int]) -> list[dict[str, Any]]:
    """Run the current session's handshake and hand the login to the policy;
    the commands sent after the Connect (the replay)."""
    session = p.session
    room = C.RoomInfo(False, ["Clique"], ["AP"], V, datapackage_checksums={"Clique": "abc123"})
    session.receive_frame(encode([room]), 0.0)
    session.frames_to_send()  # the Connect
    (event,) = session.receive_frame(encode([connected(checked)]), 0.0)
    assert isinstance(event, LoggedIn)
    p.logged_in(event.connected)
    return [c for frame in session.frames_to_send() for c in json.loads(frame)]


def test_reconnect_deadlines_back_off_exponentially_with_the_injected_jitter() -> None:
    draws = iter([0.0, 1.0, 0.5, 0.0, 0.0])
    p = policy(draws.__next__, initial_backoff=1.0, max_backoff=3.0, backoff_jitter=0.5)
    # attempt 0, 1, 2 (capped at 3), 3 (capped): full wait less jitter * draw of it
    assert [p.retry_at(100.0) for _ in range(4)] == [101.0, 101.0, 102.25, 103.0]
    assert p.state is ClientState.RECONNECTING and p.attempts == 4
    p.new_session()
    log_in(p, [])
    assert p.state is ClientState.LOGGED_IN
    assert p.retry_at(200.0) == 201.0  # the exponent starts over after a login
    assert p.attempts == 5  # the count does not


def test_a_seeded_source_replays_the_same_backoffs() -> None:
    runs = [policy(random.Random(7).random, max_backoff=8.0) for _ in range(2)]
    first, second = ([p.backoff(a) for a in range(6)] for p in runs)
    assert first == second
    for attempt, delay in enumerate(first):
        full = min(8.0, 0.5 * 2**attempt)
        assert full * 0.5 <= delay <= full
    assert policy(backoff_jitter=0.0).backoff(2) == 2.0


def test_outages_count_lost_logins_not_attempts() -> None:
    p = policy()
    assert p.state is ClientState.CONNECTING and p.outages == 0
    lost = p.lost(1011, "going away", reconnecting=True)
    assert lost == ConnectionLost(1011, "going away", True)
    assert p.state is ClientState.RECONNECTING and p.outages == 1
    p.retry_at(0.0)
    p.retry_at(1.0)
    assert p.outages == 1 and p.attempts == 2
    assert p.lost(1006, "", reconnecting=False) == ConnectionLost(1006, "", False)
    assert p.state is ClientState.CLOSED and p.outages == 1
    p.close()
    assert p.state is ClientState.CLOSED


def test_whether_an_ended_connection_is_an_outage_and_is_retried() -> None:
    p = policy()
    log_in(p, [])
    assert p.connection_ended(1001, "bye", recoverable=True) == (
        ConnectionLost(1001, "bye", True),
        True,
    )
    assert p.outages == 1 and p.state is ClientState.RECONNECTING
    # a re-login that did not come through: retried, no new outage, no event
    assert p.connection_ended(1006, "", recoverable=True) == (None, True)
    assert p.outages == 1
    p.new_session()
    log_in(p, [])
    # a protocol error ends it for good
    assert p.connection_ended(1006, "", recoverable=False) == (
        ConnectionLost(1006, "", False),
        False,
    )
    assert p.state is ClientState.CLOSED and p.outages == 1
    once = policy(reconnect=False)
    log_in(once, [])
    assert once.connection_ended(1000, "", recoverable=True) == (
        ConnectionLost(1000, "", False),
        False,
    )
    assert once.outages == 0


def test_a_relogin_replays_the_checks_the_server_lacks_and_the_watched_keys() -> None:
    p = policy()
    assert log_in(p, []) == []  # nothing to replay on the first login
    p.check_locations([1003, 1001, 1002])
    p.watch(["b", "a"])
    assert p.replay(connected([1002])) == ([1001, 1003], ["a", "b"])
    p.new_session()
    assert log_in(p, [1002]) == [
        {"cmd": "LocationChecks", "locations": [1001, 1003]},
        {"cmd": "SetNotify", "keys": ["a", "b"]},
    ]
    p.new_session()
    assert log_in(p, [1001, 1002, 1003]) == [{"cmd": "SetNotify", "keys": ["a", "b"]}]


def test_tags_kept_go_into_every_later_connect_and_one_cache_is_shared() -> None:
    p = policy()
    log_in(p, [])
    p.session.set_death_link(True)
    p.keep_tags()
    cache = p.session.data_packages
    session = p.new_session()
    assert session is p.session and session.data_packages is cache
    assert session.tags == ["AP", "DeathLink"] and session.death_link_enabled


def test_keepalive_silence_counts_only_while_reading() -> None:
    p = policy(keepalive=1.0, keepalive_timeout=5.0)
    p.heard(10.0)
    assert not p.keepalive_expired(15.0, reading=True)
    assert p.keepalive_expired(15.5, reading=True)
    assert not p.keepalive_expired(15.5, reading=False)  # paused: the silence is ours
    p.heard(15.5)
    assert not p.keepalive_expired(20.0, reading=True)
    assert not policy(keepalive=1.0).keepalive_expired(1e9, reading=True)


def test_the_login_deadline_follows_connect_timeout() -> None:
    assert policy(connect_timeout=3.0).login_deadline(10.0) == 13.0
    assert policy(connect_timeout=None).login_deadline(10.0) is None


@pytest.mark.parametrize(
    "bad",
    [
        {"backoff_jitter": 1.5},
        {"backoff_jitter": -0.1},
        {"keepalive_timeout": 5.0},
        {"max_events": 0},
        {"on_full": "drop"},
    ],
)
def test_options_are_checked_once_where_they_are_declared(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ClientOptions(**bad)


def test_the_clients_option_attributes_read_and_write_its_one_options() -> None:
    """aio.Client's reconnect, max_events, ... attributes are its ClientOptions'
    (no socket: a Client is made, not started)."""

    async def main() -> None:
        client = aio.Client("ws://127.0.0.1:1", {"name": "A", "game": None}, max_events=8)
        assert client.options is client.policy.options
        assert (client.max_events, client.on_full, client.reconnect) == (8, "backpressure", True)
        client.reconnect = False
        client.max_events = 3
        assert client.policy.options == ClientOptions(reconnect=False, max_events=3)
        with pytest.raises(ValueError):
            client.backoff_jitter = 2.0
        assert client.backoff_jitter == 0.5

    asyncio.run(main())
