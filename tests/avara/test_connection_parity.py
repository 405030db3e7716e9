"""Differential parity of the session twins (``_session_py`` and ``_session_c``).

Hypothesis drives a pure pair and a compiled pair of connected ``Connection``s
through the same operations (sends, transmits at random times, deliveries with
loss / duplication / reordering, mangled and random datagrams, time jumps) and
checks after every step that both give the same results: datagram bytes,
released commands, events, deadlines, ack blocks and the rest of the state.
The sessions read datagrams with the codec's command reader and then apply
their own rules (sender slots, odd serials, duplicates, ordering), so a second
test holds what they deliver to the codec's ``decode`` (including
truncated and re-signed input).
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gamecodec.avara import Command
from gamecodec.errors import DecodeError
from tests.conftest import IMPLS, load_twin

pytestmark = pytest.mark.skipif("c" not in IMPLS, reason="needs the compiled twin")


@pytest.fixture(scope="module")
def twins() -> tuple[ModuleType, ModuleType]:
    return load_twin("gamecodec.avara", "_session", "py"), load_twin(
        "gamecodec.avara", "_session", "c"
    )


@pytest.fixture(scope="module")
def codecs() -> tuple[ModuleType, ModuleType]:
    return load_twin("gamecodec.avara", "_codec", "py"), load_twin("gamecodec.avara", "_codec", "c")


def snapshot(conn: Any) -> tuple[object, ...]:
    """Everything observable about a connection (events are taken separately)."""
    return (
        conn.next_serial,
        conn.receive_serial,
        conn.unacked,
        conn.unacked_serials,
        conn.receive_queue,
        conn.ack_block(),
        conn.next_deadline(),
        conn.retransmit_time,
        conn.urgent_retransmit_time,
        conn.mean_round_trip,
        conn.total_sent,
        conn.total_resent,
        conn.lost,
        conn.peer_cram_data,
        conn.skip_after,
        conn.max_resends_without_receive,
        conn.my_id,
        conn.latency_tolerance,
        conn.peer_window,
    )


def outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, object]:
    """``fn(*args, **kwargs)``, or its exception's type and message."""
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as exc:  # compared between the twins
        return type(exc).__name__, str(exc)


settings_kw = {
    "max_examples": 150,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}

config = st.fixed_dictionaries(
    {
        "skip_after": st.sampled_from([True, None, False, 1, 3, 16]),
        "max_resends_without_receive": st.sampled_from([3, None, 0, 1]),
        "cram_data": st.integers(0, 3),
        "peer_cram_data": st.integers(0, 3),
        "frame_time": st.sampled_from([16.0, 8.0, 33.3, 64.0]),
        "version": st.sampled_from([18, 17, 0]),
        "first_receive_serial": st.sampled_from([0, 2, 65532]),
        "peer_window": st.sampled_from([1024, 1, 16, 32, 100, 16383]),
        "latency_tolerance": st.sampled_from([0.0, 2.0, 1.25, 8.0]),
    }
)
small = st.sampled_from([0, 1, -1, 5, -8, 127, -128])
bad = st.sampled_from([200, -129, 70000, 2**31, 2**40, 1.5])  # EncodeError on both
p1_st = st.one_of(small, small, st.integers(-128, 127), bad)
p2_st = st.one_of(small, small, st.integers(-0x8000, 0x7FFF), bad)
p3_st = st.one_of(small, st.integers(0, 0xFFFF), st.integers(-(2**31), 2**31 - 1), bad)
send_op = st.tuples(
    st.just("send"),
    st.integers(0, 1),
    st.one_of(st.sampled_from([17, 17, 31, 6, -4, 0, 5]), st.integers(-130, 130)),
    p1_st,
    p2_st,
    p3_st,
    st.one_of(
        st.binary(max_size=20),
        st.binary(max_size=20),
        st.binary(min_size=250, max_size=300),
        st.sampled_from([b"z" * 984, b"z" * 985, "text"]),
    ),
    st.booleans(),
)
transmit_op = st.tuples(st.just("transmit"), st.integers(0, 1))
deliver_op = st.tuples(
    st.just("deliver"),
    st.integers(0, 1),
    st.integers(0, 1000),
    st.sampled_from(["take", "take", "take", "drop", "dup"]),
)
tick_op = st.tuples(
    st.just("tick"),
    st.sampled_from(
        [0.0, 0.001, 0.004, 0.016, 0.016, 0.041, 0.3, 2.0, 4.5, 30.0, 121.0, -0.5, -200.0]
    ),
)
# a call with a time the timers cannot use: refused the same way, nothing changes
glitch_op = st.tuples(
    st.just("glitch"),
    st.integers(0, 1),
    st.sampled_from(["send", "transmit", "receive"]),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e18, -(2.0**41)]),
)
# a healthy game frame: each side sends a kpKeyAndMouse, transmits, and the
# other side receives everything in flight (drives serials, acks and RTTs)
frame_op = st.tuples(st.just("frame"), st.integers(0, 1), st.integers(-128, 127))
# many commands at once (packing, the send window, ack bitmaps)
flood_op = st.tuples(st.just("flood"), st.integers(0, 1), st.integers(1, 40))
# a client taking its slot from the TOC (once; other values refused the same way)
set_id_op = st.tuples(st.just("set_id"), st.integers(0, 1), st.sampled_from([1, 2, 3, -1, 200]))
# the game's latency tolerance changing (out of range refused the same way)
set_lt_op = st.tuples(
    st.just("set_lt"), st.integers(0, 1), st.sampled_from([0.0, 1.5, 4.0, 8.0, 9.0, math.nan])
)
operation = st.one_of(
    send_op,
    set_id_op,
    set_lt_op,
    frame_op,
    frame_op,
    flood_op,
    transmit_op,
    transmit_op,
    deliver_op,
    deliver_op,
    tick_op,
    tick_op,
    st.tuples(
        st.just("mangle"),
        st.integers(0, 1),
        st.integers(0, 1000),
        st.integers(0, 2000),
        st.integers(0, 2000),
        st.booleans(),
    ),
    st.tuples(st.just("garbage"), st.integers(0, 1), st.binary(max_size=40)),
    glitch_op,
)


class Side:
    """One implementation's pair of connections and the datagrams in flight."""

    def __init__(self, twin: ModuleType, cfg: dict[str, Any]) -> None:
        self.conns = (
            twin.Connection(my_id=1, peer_id=2, **cfg),
            twin.Connection(my_id=2, peer_id=1, **cfg),
        )
        self.wire: tuple[list[bytes], list[bytes]] = ([], [])  # in flight *to* side 0 / 1
        self.frames = 0


def play(side: Side, op: tuple[Any, ...], now: float) -> list[object]:
    """A "frame" or a "flood" on one implementation; everything it returned."""
    got: list[object] = []
    first = op[1]
    if op[0] == "flood":
        conn = side.conns[first]
        for i in range(op[2]):
            got.append(outcome(conn.send, 17, p1=-8, p3=i, data=b"\x01" * (i % 7), now=now))
        return got
    for me in (first, 1 - first):
        conn, peer = side.conns[me], side.conns[1 - me]
        side.frames += 1
        got.append(outcome(conn.send, 17, p1=op[2], p3=side.frames, now=now))
        sent = outcome(conn.datagrams_to_send, now)
        got.append(sent)
        queue = side.wire[1 - me]
        if sent[0] == "ok":
            queue.extend(sent[1])  # type: ignore[arg-type]
        while queue:
            got.append(outcome(peer.receive_datagram, queue.pop(0), now + 0.002))
    return got


def resign(data: bytes, version: int, codec: ModuleType) -> bytes:
    if len(data) < 2:
        return data
    return codec.datagram_crc(data, version).to_bytes(2, "little") + data[2:]


@settings(**settings_kw)
@given(cfg=config, ops=st.lists(operation, min_size=10, max_size=120))
def test_twins_agree_step_by_step(
    twins: tuple[ModuleType, ModuleType],
    codecs: tuple[ModuleType, ModuleType],
    cfg: dict[str, Any],
    ops: list[tuple[Any, ...]],
) -> None:
    sides = [Side(twin, cfg) for twin in twins]
    now = 0.0
    for step, op in enumerate(ops):
        kind = op[0]
        if kind == "tick":
            now += op[1]
            results: list[object] = [None, None]
        elif kind in ("frame", "flood"):
            results = [play(side, op, now) for side in sides]
            if kind == "frame":
                now += 0.016
        else:
            results = []
            for side in sides:
                conn = side.conns[op[1]]
                if kind == "send":
                    _, _, command, p1, p2, p3, data, urgent = op
                    res = outcome(
                        conn.send, command, p1=p1, p2=p2, p3=p3, data=data, urgent=urgent, now=now
                    )
                elif kind == "transmit":
                    res = outcome(conn.datagrams_to_send, now)
                    if res[0] == "ok":
                        side.wire[1 - op[1]].extend(res[1])  # type: ignore[arg-type]
                elif kind == "garbage":
                    res = outcome(conn.receive_datagram, op[2], now)
                elif kind == "set_id":
                    res = outcome(setattr, conn, "my_id", op[2])
                elif kind == "set_lt":
                    res = outcome(setattr, conn, "latency_tolerance", op[2])
                elif kind == "glitch":
                    _, _, call, bad = op
                    if call == "send":
                        res = outcome(conn.send, 17, p1=-8, now=bad)
                    elif call == "transmit":
                        res = outcome(conn.datagrams_to_send, bad)
                    else:
                        res = outcome(conn.receive_datagram, b"\x00" * 9, bad)
                    # refused (a lost connection refuses every send first)
                    assert res[0] == "ValueError" or (
                        call == "send" and res[0] == "LocalProtocolError"
                    )
                else:
                    queue = side.wire[op[1]]
                    if not queue:
                        res = ("empty", None)
                    elif kind == "deliver":
                        index = op[2] % len(queue)
                        mode = op[3]
                        dg = queue[index] if mode == "dup" else queue.pop(index)
                        res = (
                            ("dropped", None)
                            if mode == "drop"
                            else outcome(conn.receive_datagram, dg, now)
                        )
                    else:  # mangle: flip a byte, cut, maybe re-sign, deliver
                        _, _, index, flip, cut, sign_again = op
                        raw = bytearray(queue.pop(index % len(queue)))
                        raw[flip % len(raw)] ^= 0x5A
                        raw = raw[: cut % (len(raw) + 1)]
                        data = bytes(raw)
                        if sign_again:
                            data = resign(data, cfg["version"], codecs[0])
                        res = outcome(conn.receive_datagram, bytearray(data), now)
                results.append(res)
        views = [
            (
                results[i],
                [conn.events() for conn in side.conns],
                [snapshot(conn) for conn in side.conns],
            )
            for i, side in enumerate(sides)
        ]
        assert views[0] == views[1], f"step {step}: {op}"
        assert sides[0].wire == sides[1].wire


# -- what the sessions deliver against the codec's decode ----------------------------------

command_st = st.builds(
    lambda command, p1, p2, p3, data, dist, with_sender: (
        command,
        p1,
        p2,
        p3,
        data,
        dist,
        with_sender,
    ),
    st.integers(-128, 127),
    st.integers(-128, 127),
    st.integers(-0x8000, 0x7FFF),
    st.one_of(small, st.integers(-(2**31), 2**31 - 1)),
    st.one_of(st.binary(max_size=12), st.binary(min_size=256, max_size=300)),
    st.one_of(st.none(), st.integers(-0x8000, 0x7FFF)),
    st.booleans(),
)


@settings(**settings_kw)
@given(
    start=st.sampled_from([0, 100, 65534]),
    parts=st.lists(command_st, max_size=6),
    ack=st.integers(0, 0xFFFF),
    bitmap=st.integers(-(2**31), 2**31 - 1),
    cut=st.one_of(st.none(), st.integers(0, 2000)),
    flip=st.one_of(st.none(), st.tuples(st.integers(0, 2000), st.integers(1, 255))),
)
@example(  # the changed byte makes the serial odd (1): dropped, not queued
    start=0, parts=[(0, 0, 0, 0, b"", None, False)], ack=1, bitmap=1, cut=None, flip=(0, 1)
)
def test_session_delivers_what_the_codec_decodes(
    twins: tuple[ModuleType, ModuleType],
    codecs: tuple[ModuleType, ModuleType],
    start: int,
    parts: list[tuple[Any, ...]],
    ack: int,
    bitmap: int,
    cut: int | None,
    flip: tuple[int, int] | None,
) -> None:
    """Every command the codec decodes reaches the session as decoded: with
    consecutive serials from ``start`` all are delivered; a changed byte may
    reorder them (then :func:`in_order` says what is delivered and queued);
    a bad datagram keeps the commands before the error."""
    commands = [
        Command.make(
            (start + 2 * i) & 0xFFFF,
            command,
            p1=p1,
            p2=p2,
            p3=p3,
            data=data,
            distribution=dist,
            sender=2 if with_sender else None,
        )
        for i, (command, p1, p2, p3, data, dist, with_sender) in enumerate(parts)
    ]
    py_codec = codecs[0]
    data = py_codec.encode(ack, commands, bitmap if ack & 1 else None)
    if flip is not None:  # a changed byte, signed again: non-canonical flags, bad lengths
        raw = bytearray(data)
        raw[max(2, flip[0] % len(raw))] ^= flip[1]
        data = resign(bytes(raw), 18, py_codec)
    if cut is not None:
        data = resign(data[: cut % (len(data) + 1)], 18, py_codec)
    expected: list[list[Command]] = []
    for codec in codecs:
        try:
            decoded = codec.decode(data)
        except DecodeError as exc:
            decoded = exc.partial
        expected.append(list(decoded.commands) if decoded is not None and decoded.crc_ok else [])
    assert expected[0] == expected[1]
    delivered, queued = in_order(expected[0], start, peer_id=2)
    if flip is None:
        assert delivered == [c for c in expected[0] if c.sender in (None, 2)]
    for twin in twins:
        conn = twin.Connection(my_id=1, peer_id=2, first_receive_serial=start, skip_after=None)
        got = conn.receive_datagram(data, 1.0)
        assert got == delivered
        assert [type(c) for c in got] == [Command] * len(got)
        assert [hash(c) for c in got] == [hash(c) for c in delivered]
        assert conn.receive_queue == queued


def in_order(
    commands: list[Command], start: int, peer_id: int
) -> tuple[list[Command], tuple[int, ...]]:
    """Spec §4.5 delivery of one datagram's commands to a fresh receiver: the
    commands released in serial order and the serials left waiting."""
    rs = start
    waiting: dict[int, Command] = {}
    out = []
    for cmd in commands:
        if cmd.sender is not None and cmd.sender != peer_id:
            continue
        if cmd.serial & 1:
            continue  # serials are even: an odd one (a changed byte) is dropped
        if cmd.serial == rs:
            out.append(cmd)
            rs = (rs + 2) & 0xFFFF
            while rs in waiting:
                out.append(waiting.pop(rs))
                rs = (rs + 2) & 0xFFFF
        elif (rs - cmd.serial) & 0xFFFF > 0x7FFF and cmd.serial not in waiting:
            waiting[cmd.serial] = cmd
    return out, tuple(sorted(waiting, key=lambda s: (s - rs) & 0xFFFF))
