"""The Sans-IO client session: handshake, item index rules, cache, request matching."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from gamecodec.archipelago import commands as C
from gamecodec.archipelago import session as S
from gamecodec.archipelago.frames import decode, encode
from gamecodec.errors import LocalProtocolError, RemoteProtocolError
from gamecodec.sessions import Event, FrameSession

V = C.VersionInfo(0, 6, 8)
GAME = C.GameData({"Cake": 3}, {"Lamp": 1003}, "abc123")


def room_info(checksums: dict[str, str] | None = None) -> str:
    return encode(
        [
            C.RoomInfo(
                False,
                ["Clique"],
                ["AP"],
                V,
                datapackage_checksums={"Clique": "abc123"} if checksums is None else checksums,
            )
        ]
    )


def connected(checked: list[int] | None = None) -> C.Connected:
    return C.Connected(
        team=0,
        slot=1,
        players=[C.Player(0, 1, "JS", "JS")],
        missing_locations=[1001],
        checked_locations=checked or [],
        slot_info={"1": C.Slot("JS", "Clique", 1)},
        hint_points=0,
        slot_data={"a": 1},
    )


def sent(session: S.ClientSession) -> list[dict[str, Any]]:
    return [c for frame in session.frames_to_send() for c in json.loads(frame)]


def logged_in(**options: Any) -> S.ClientSession:
    session = S.ClientSession(name="JS", game="Clique", data_packages={"abc123": GAME}, **options)
    session.receive_frame(room_info(), 0.0)
    session.receive_frame(encode([connected()]), 0.0)
    session.frames_to_send()
    return session


def test_handshake_downloads_missing_data_packages_then_connects() -> None:
    cache: dict[str, C.GameData] = {}
    session = S.ClientSession(
        name="JS", game="Clique", password="pw", uuid="u", data_packages=cache
    )
    assert session.state is S.State.AWAIT_ROOM_INFO
    events = session.receive_frame(room_info(), 1.0)
    assert isinstance(events[0], S.RoomInfoReceived)
    assert session.state is S.State.AWAIT_DATA_PACKAGE
    assert sent(session) == [{"cmd": "GetDataPackage", "games": ["Clique"]}]
    events = session.receive_frame(
        encode([C.DataPackage(C.DataPackageData({"Clique": GAME}))]), 1.0
    )
    assert isinstance(events[0], S.DataPackageReady)
    assert cache == {"abc123": GAME}
    (connect,) = sent(session)
    assert connect == {
        "cmd": "Connect",
        "password": "pw",
        "name": "JS",
        "version": {"major": 0, "minor": 6, "build": 8, "class": "Version"},
        "tags": ["AP"],
        "items_handling": 7,
        "uuid": "u",
        "game": "Clique",
        "slot_data": True,
    }
    events = session.receive_frame(
        encode([connected(), C.ReceivedItems(0, [C.Item(3, 1001, 1)])]), 2.0
    )
    assert isinstance(events[0], S.LoggedIn)
    assert events[1] == S.ItemsReceived(0, [C.Item(3, 1001, 1)])
    assert session.state is S.State.CONNECTED
    assert session.connected is not None and session.connected.slot_data == {"a": 1}


def test_cached_data_package_is_not_downloaded_again() -> None:
    session = S.ClientSession(name="JS", game="Clique", data_packages={"abc123": GAME})
    events = session.receive_frame(room_info(), 0.0)
    assert [type(e) for e in events] == [S.RoomInfoReceived, S.DataPackageReady]
    assert [c["cmd"] for c in sent(session)] == ["Connect"]
    # a changed checksum means a new download
    session = S.ClientSession(name="JS", game="Clique", data_packages={"abc123": GAME})
    session.receive_frame(room_info({"Clique": "def456"}), 0.0)
    assert [c["cmd"] for c in sent(session)] == ["GetDataPackage"]


def test_login_refused() -> None:
    session = S.ClientSession(name="JS", game="Clique", data_packages={"abc123": GAME})
    session.receive_frame(room_info(), 0.0)
    events = session.receive_frame('[{"cmd":"ConnectionRefused","errors":["InvalidSlot"]}]', 0.0)
    assert events == [S.LoginRefused(["InvalidSlot"])]
    assert session.state is S.State.REFUSED


def test_commands_need_a_login() -> None:
    session = S.ClientSession(name="JS", game="Clique")
    with pytest.raises(LocalProtocolError):
        session.say("hi")


def test_bad_frame_is_a_remote_protocol_error() -> None:
    with pytest.raises(RemoteProtocolError):
        S.ClientSession(name="JS", game="Clique").receive_frame("[{", 0.0)


def items(index: int, *ids: int) -> str:
    return encode([C.ReceivedItems(index, [C.Item(i, 0, 1) for i in ids])])


def test_out_of_step_items_queue_one_resync_per_drain() -> None:
    """A server sending frames out of step cannot grow the outbox: one resync
    waits, however many such frames arrive before frames_to_send."""
    session = logged_in()
    session.receive_frame(items(0, 1), 0.0)
    session.check_locations(range(1000, 1500))
    session.frames_to_send()
    for _ in range(100):
        assert session.receive_frame(items(7, 9), 0.0) == []
    assert [c["cmd"] for c in sent(session)] == ["Sync", "LocationChecks"]
    session.receive_frame(items(7, 9), 0.0)  # still out of step after the drain: again
    assert [c["cmd"] for c in sent(session)] == ["Sync", "LocationChecks"]


def test_received_items_index_rules() -> None:
    session = logged_in()
    assert session.receive_frame(items(0, 1, 2), 0.0) == [
        S.ItemsReceived(0, [C.Item(1, 0, 1), C.Item(2, 0, 1)])
    ]
    assert session.receive_frame(items(2, 3), 0.0)[0].index == 2
    assert [i.item for i in session.items] == [1, 2, 3]
    session.check_locations([1001])
    session.frames_to_send()
    # a gap: ignored, and we ask for everything again and repeat our checks
    assert session.receive_frame(items(5, 9), 0.0) == []
    assert [i.item for i in session.items] == [1, 2, 3]
    assert sent(session) == [{"cmd": "Sync"}, {"cmd": "LocationChecks", "locations": [1001]}]
    # index 0 replaces the list
    session.receive_frame(items(0, 7, 8, 9), 0.0)
    assert [i.item for i in session.items] == [7, 8, 9]


def test_get_and_set_replies_are_matched_by_request_id() -> None:
    session = logged_in()
    first = session.get(["a"], 1.0)
    second = session.set("k", [("add", 1)], 1.0, default=0)
    frames = sent(session)
    assert frames[0] == {"cmd": "Get", "keys": ["a"], "request_id": first}
    assert frames[1]["request_id"] == second and frames[1]["operations"] == [
        {"operation": "add", "value": 1}
    ]
    reply = C.SetReply(key="k", default=0, want_reply=True, original_value=0, slot=1, value=1)
    reply.set_extra({"request_id": second})
    read = C.Retrieved({"a": 5})
    read.set_extra({"request_id": first})
    notice = C.SetReply(key="k", value=2)
    events = session.receive_frame(encode([reply, read, notice]), 2.0)
    assert events[0].request_id == second and events[0].value == 1
    assert events[1] == S.StorageRead(first, {"a": 5})
    assert events[2].request_id is None and events[2].value == 2
    assert session.next_deadline() is None


def test_notices_never_close_requests_of_another_kind_or_session() -> None:
    """The server echoes another client's Set, extras included, to every watcher:
    its request_id must not answer our Get (ids differ per session, kinds are checked)."""
    a, b = logged_in(), logged_in()
    assert a.get(["x"], 0.0) != b.get(["x"], 0.0)
    got = b.get(["mine"], 1.0)
    b.set_notify(["shared"])
    sent(b)
    echo = C.SetReply(key="shared", value=1, original_value=0, slot=2)
    echo.set_extra({"request_id": got})  # the same number, from a Set
    (notice,) = b.receive_frame(encode([echo]), 2.0)
    assert isinstance(notice, S.StorageChanged) and notice.request_id is None
    read = C.Retrieved({"mine": 5})
    read.set_extra({"request_id": got})
    assert b.receive_frame(encode([read]), 3.0) == [S.StorageRead(got, {"mine": 5})]


def test_set_without_default_leaves_the_key_out() -> None:
    """The reference server starts from ``args.get("default", 0)``: a null default
    would make "add" fail there (and drop the client)."""
    session = logged_in()
    session.set("counter", [("add", 1)], 0.0)
    session.set("counter", [("add", 1)], 0.0, default=5)
    plain, given = sent(session)
    assert "default" not in plain and given["default"] == 5


def test_a_late_scout_reply_does_not_shift_later_ones() -> None:
    session = logged_in(request_timeout=5.0)
    a = session.scout_locations([10], 0.0)
    b = session.scout_locations([20], 4.0)
    assert session.handle_timeout(5.5) == [S.RequestTimedOut(a, "LocationScouts")]
    late = encode([C.LocationInfo([C.Item(1, 10, 1)])])
    (event,) = session.receive_frame(late, 6.0)
    assert isinstance(event, S.CommandReceived)  # a's, already reported as timed out
    on_time = encode([C.LocationInfo([C.Item(1, 20, 1)])])
    assert session.receive_frame(on_time, 7.0) == [S.LocationsScouted(b, [C.Item(1, 20, 1)])]
    assert session.next_deadline() is None


def test_scouts_are_matched_in_order_and_time_out() -> None:
    session = logged_in(request_timeout=5.0)
    a = session.scout_locations([1], 10.0)
    b = session.scout_locations([2], 11.0)
    assert session.next_deadline() == 15.0
    (event,) = session.receive_frame(encode([C.LocationInfo([C.Item(3, 1, 1)])]), 12.0)
    assert event == S.LocationsScouted(a, [C.Item(3, 1, 1)])
    assert session.handle_timeout(15.9) == []
    assert session.handle_timeout(16.0) == [S.RequestTimedOut(b, "LocationScouts")]
    assert session.next_deadline() is None


def test_death_link() -> None:
    session = logged_in(death_link_enabled=True)
    assert "DeathLink" in session.tags
    session.death_link(1700000000.5, "fell")
    (bounce,) = sent(session)
    assert bounce == {
        "cmd": "Bounce",
        "tags": ["DeathLink"],
        "data": {"time": 1700000000.5, "cause": "fell", "source": "JS"},
    }
    ours = (
        '[{"cmd":"Bounced","tags":["DeathLink"],'
        '"data":{"time":1700000000.5,"cause":"fell","source":"JS"}}]'
    )
    assert session.receive_frame(ours, 0.0) == []
    theirs = (
        '[{"cmd":"Bounced","tags":["DeathLink"],"data":{"time":17,"cause":"boom","source":"B"}}]'
    )
    assert session.receive_frame(theirs, 0.0) == [S.DeathLinkReceived(17.0, "boom", "B")]
    other = '[{"cmd":"Bounced","games":["Clique"],"data":{"x":1}}]'
    (event,) = session.receive_frame(other, 0.0)
    assert isinstance(event, S.BounceReceived) and event.bounced.data == {"x": 1}


def test_other_commands_are_reported() -> None:
    session = logged_in()
    events = session.receive_frame(
        '[{"cmd":"PrintJSON","data":[{"text":"hi"}],"type":"Chat","team":0,"slot":1,"message":"hi"},'
        '{"cmd":"RoomUpdate","checked_locations":[1001]},{"cmd":"Future","x":1}]',
        0.0,
    )
    assert isinstance(events[0], S.MessageReceived) and events[0].text == "hi"
    assert isinstance(events[1], S.CommandReceived)
    assert session.checked_locations == {1001}
    assert events[2] == S.CommandReceived({"cmd": "Future", "x": 1})


def test_outgoing_frames_decode() -> None:
    session = logged_in()
    session.say("x")
    session.status_update(30)
    session.set_notify(["k"])
    session.update_tags(["AP", "Tracker"])
    session.sync()
    session.bounce({"a": 1}, slots=[2])
    cmds = [c for frame in session.frames_to_send() for c in decode(frame)]
    assert [type(c).__name__ for c in cmds] == [
        "Say",
        "StatusUpdate",
        "SetNotify",
        "ConnectUpdate",
        "Sync",
        "Bounce",
    ]


@pytest.mark.parametrize("time", ["1" * 400, "true", '"soon"'])
def test_a_death_link_bounce_with_a_bad_time_is_a_bounce(time: str) -> None:
    """Any player's Bounce reaches every DeathLink client: float() of a 400-digit
    int raised OverflowError out of receive_frame and ended the client."""
    session = logged_in(death_link_enabled=True)
    frame = '[{"cmd":"Bounced","tags":["DeathLink"],"data":{"time":' + time + ',"source":"x"}}]'
    (event,) = session.receive_frame(frame, 0.0)
    assert isinstance(event, S.BounceReceived)
    assert session.state is S.State.CONNECTED


@pytest.mark.parametrize(
    ("time", "expected"), [("NaN", None), ("-Infinity", -math.inf), ("1e400", math.inf)]
)
def test_a_death_link_at_nan_or_infinity_is_a_death(time: str, expected: float | None) -> None:
    """The reference relays NaN and Infinity (and reads 1e400 as inf): the
    frame decodes typed and the death is reported (before: refused by the
    typed decoder, delivered as an untyped command, no DeathLinkReceived)."""
    session = logged_in(death_link_enabled=True)
    frame = '[{"cmd":"Bounced","tags":["DeathLink"],"data":{"time":' + time + ',"source":"x"}}]'
    (event,) = session.receive_frame(frame, 0.0)
    assert isinstance(event, S.DeathLinkReceived) and event.source == "x"
    assert math.isnan(event.time) if expected is None else event.time == expected


def test_a_frame_with_nan_is_delivered_typed() -> None:
    session = logged_in()
    frame = '[{"cmd":"PrintJSON","data":[{"text":"x"}],"extra":NaN},{"cmd":"Foo","n":Infinity}]'
    events = session.receive_frame(frame, 0.0)
    assert [type(e) for e in events] == [S.MessageReceived, S.CommandReceived]
    assert math.isnan(events[0].message.extra["extra"])
    command = events[1].command
    assert isinstance(command, dict) and command["n"] == float("inf")
    with pytest.raises(RemoteProtocolError):
        session.receive_frame('[{"cmd":"Say","text":"x"', 0.0)  # bad for the reference too


def test_a_refused_scout_does_not_take_the_next_scouts_reply() -> None:
    """The server answers a LocationScouts it refuses with InvalidPacket and no
    LocationInfo; the next LocationInfo was matched to the refused request."""
    session = logged_in(request_timeout=None)
    first = session.scout_locations([1001], 0.0)
    second = session.scout_locations([1002], 0.0)
    invalid = (
        '[{"cmd":"InvalidPacket","type":"arguments","text":"LocationScouts",'
        '"original_cmd":"LocationScouts"}]'
    )
    (refused,) = session.receive_frame(invalid, 0.0)
    assert isinstance(refused, S.RequestRefused) and refused.request_id == first
    info = encode([C.LocationInfo([C.Item(5, 1002, 1, 0)])])
    (scouted,) = session.receive_frame(info, 0.0)
    assert isinstance(scouted, S.LocationsScouted) and scouted.request_id == second
    (unsolicited,) = session.receive_frame(info, 0.0)  # no scout pending: not an answer
    assert isinstance(unsolicited, S.CommandReceived)
    with pytest.raises(TypeError, match="ints"):
        session.scout_locations([True], 0.0)


def data_package(*games: str) -> str:
    return encode([C.DataPackage(C.DataPackageData({g: GAME for g in games}))])


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(room_info(), id="RoomInfo after the login"),
        pytest.param(encode([connected()]), id="a second Connected"),
        pytest.param('[{"cmd":"ConnectionRefused","errors":["InvalidSlot"]}]', id="refused late"),
    ],
)
def test_a_handshake_command_after_the_login_is_a_protocol_error(frame: str) -> None:
    """A RoomInfo after the login sent a second Connect and put the session back
    in the handshake; a late ConnectionRefused logged it out."""
    session = logged_in()
    with pytest.raises(RemoteProtocolError, match="out of turn"):
        session.receive_frame(frame, 0.0)
    assert session.state is S.State.CONNECTED
    assert session.frames_to_send() == []


def test_connected_before_our_connect_is_a_protocol_error() -> None:
    session = S.ClientSession(name="JS", game="Clique", data_packages={"abc123": GAME})
    with pytest.raises(RemoteProtocolError, match="Connected out of turn"):
        session.receive_frame(encode([connected()]), 0.0)
    assert session.state is S.State.AWAIT_ROOM_INFO


def test_a_frame_with_two_handshake_steps_changes_nothing() -> None:
    """Each step makes us send something, so its answer cannot share its frame;
    the frame is refused before its first command is handled."""
    session = S.ClientSession(name="JS", game="Clique")
    frame = encode([C.RoomInfo(False, ["Clique"], ["AP"], V, datapackage_checksums={})])
    frame = frame[:-1] + "," + data_package("Clique")[1:]
    with pytest.raises(RemoteProtocolError, match="same frame"):
        session.receive_frame(frame, 0.0)
    assert session.state is S.State.AWAIT_ROOM_INFO and session.room is None
    assert session.frames_to_send() == []


def test_an_unsolicited_data_package_leaves_the_cache_alone() -> None:
    cache = {"abc123": GAME}
    session = S.ClientSession(name="JS", game="Clique", data_packages=cache)
    session.receive_frame(room_info(), 0.0)
    session.receive_frame(encode([connected()]), 0.0)
    other = C.GameData({"Sword": 1}, {"Cave": 2}, "other-checksum")
    frame = encode([C.DataPackage(C.DataPackageData({"Other": other}))])
    for _ in range(3):
        (event,) = session.receive_frame(frame, 0.0)
        assert isinstance(event, S.CommandReceived)
    assert cache == {"abc123": GAME} and set(session.games) == {"Clique"}


def test_an_incomplete_data_package_names_the_missing_games() -> None:
    """DataPackageReady said every game was there when the server left some out."""
    session = S.ClientSession(name="JS", game="Clique")
    session.receive_frame(room_info({"Clique": "abc123", "Other": "x"}), 0.0)
    assert sent(session) == [{"cmd": "GetDataPackage", "games": ["Clique", "Other"]}]
    (ready,) = session.receive_frame(data_package("Clique"), 0.0)
    assert ready == S.DataPackageReady({"Clique": GAME}, ("Other",))
    assert [c["cmd"] for c in sent(session)] == ["Connect"]  # the login goes ahead
    assert session.state is S.State.AWAIT_CONNECTED


def test_timed_out_scouts_keep_their_places_without_memory() -> None:
    """Scouts the server never answers grew two containers without bound; a
    timed-out scout now keeps its place in line at no cost, however many there
    are, so each late reply (the server answers every scout, in order) is
    reported as a reply to no request and a later scout gets its own."""
    session = logged_in(request_timeout=1.0)
    extra = 5
    for _ in range(S.MAX_LATE_SCOUTS + extra):
        session.scout_locations([1], 0.0)
    assert len(session.handle_timeout(2.0)) == S.MAX_LATE_SCOUTS + extra
    assert not session.requests._scouts and not session.requests.remembered
    fresh = session.scout_locations([2], 3.0)
    late = encode([C.LocationInfo([C.Item(1, 1, 1)])])
    for _ in range(S.MAX_LATE_SCOUTS + extra):
        (event,) = session.receive_frame(late, 3.0)
        assert isinstance(event, S.CommandReceived)
    info = encode([C.LocationInfo([C.Item(1, 2, 1)])])
    assert session.receive_frame(info, 3.0) == [S.LocationsScouted(fresh, [C.Item(1, 2, 1)])]


def test_our_own_deaths_are_remembered_up_to_a_limit() -> None:
    session = logged_in(death_link_enabled=True)
    for n in range(S.MAX_SENT_DEATHS + 1):
        session.death_link(float(n), "x")

    def echo(n: int) -> str:
        data = f'{{"time":{n}.0,"cause":"x","source":"JS"}}'
        return '[{"cmd":"Bounced","tags":["DeathLink"],"data":' + data + "}]"

    assert session.receive_frame(echo(S.MAX_SENT_DEATHS), 0.0) == []  # the newest: ours
    (forgotten,) = session.receive_frame(echo(0), 0.0)  # the oldest was dropped
    assert forgotten == S.DeathLinkReceived(0.0, "x", "JS")


def test_the_session_is_a_frame_session_with_library_events() -> None:
    session = logged_in(request_timeout=1.0)
    assert isinstance(session, FrameSession)
    assert S.Event is Event
    for name in S.__all__:
        value = getattr(S, name)
        if isinstance(value, type) and name not in {"ClientSession", "State"}:
            assert issubclass(value, Event), name
    # every event came from receive_frame or handle_timeout: events() has none left over
    session.scout_locations([1], 0.0)
    session.say("hi")
    assert session.events() == []
    assert session.handle_timeout(1.0) != []
    assert session.events() == []


def test_session_errors_carry_the_protocol() -> None:
    with pytest.raises(LocalProtocolError) as local:
        S.ClientSession(name="JS", game="Clique").say("hi")
    with pytest.raises(RemoteProtocolError) as remote:
        S.ClientSession(name="JS", game="Clique").receive_frame("[{", 0.0)
    with pytest.raises(RemoteProtocolError) as out_of_turn:
        S.ClientSession(name="JS", game="Clique").receive_frame(encode([connected()]), 0.0)
    for error in (local.value, remote.value, out_of_turn.value):
        assert error.protocol == "archipelago"
