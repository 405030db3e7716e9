"""LLUDP targets: decode (tolerant and strict), peek, forward, zero_decode,
and a pair of circuits driven by an op stream."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from tools.fuzz.driver import (
    BAD_TIMES,
    DATA,
    DECODE_ONLY,
    TIMES,
    Finding,
    Ops,
    both,
    outcome,
    target,
    twins,
)

from gamecodec.errors import DecodeError, EncodeError, GameCodecError
from gamecodec.lludp import build, default_template
from gamecodec.lludp.sample import region_stream

CODECS = twins("gamecodec.lludp", "_codec")
CIRCUITS = twins("gamecodec.lludp", "_circuit")
TEMPLATE = default_template()
MAX_SIZES = (8192, 8192, 8192, 0, 1, 64, 200, 1 << 16)


def _packets() -> list[bytes]:
    out = []
    for line in (DATA / "lludp" / "messages.jsonl").read_text().splitlines():
        if line.strip():
            out.append(bytes.fromhex(json.loads(line)["wire"]))
    bench = json.loads((DATA / "lludp" / "bench_packets.json").read_text())
    out += [bytes.fromhex(p["wire"]) for p in bench["packets"]]
    out += [CODECS[0].encode(m, TEMPLATE, "flag") for m in region_stream(60, seed=21)]
    return out


def _seeds() -> Iterator[bytes]:
    yield from _packets()


def _decoder(strict: bool) -> Any:
    def run(data: bytes) -> None:
        both(
            "lludp.decode",
            CODECS,
            lambda c: outcome(DECODE_ONLY, c.decode, data, TEMPLATE, strict, 8192),
        )

    return run


target("lludp.decode", _seeds)(_decoder(False))
target("lludp.decode_strict", _seeds)(_decoder(True))


@target("lludp.peek", _seeds)
def peek(data: bytes) -> None:
    both("lludp.peek", CODECS, lambda c: outcome(DECODE_ONLY, c.peek, data, TEMPLATE))


def _forward_seeds() -> Iterator[bytes]:
    for i, packet in enumerate(_packets()):
        yield bytes([i % 16, i, 0, 0, 1, 3, 0, 0, 0, 7]) + packet


FORWARD_ERRORS = (DecodeError, EncodeError)  # EncodeError: acks it may not append (documented)


@target("lludp.forward", _forward_seeds)
def forward(data: bytes) -> None:
    """Options byte: bit 0 new flags, bit 1 new sequence, bit 2 new acks."""
    ops = Ops(data)
    opt = ops.byte()
    flags = ops.byte() if opt & 1 else None
    sequence = ops.u32() if opt & 2 else None
    acks = tuple(ops.u32() for _ in range(ops.pick(4) if opt & 4 else 0)) if opt & 4 else None
    if opt & 8 and acks is not None:
        acks = tuple(range(ops.byte() + 200))  # past the 255-ack limit sometimes
    packet = data[ops.pos :]
    both(
        "lludp.forward",
        CODECS,
        lambda c: outcome(FORWARD_ERRORS, c.forward, packet, flags, sequence, acks),
    )


def _zero_seeds() -> Iterator[bytes]:
    for i, packet in enumerate(_packets()):
        yield bytes([i % len(MAX_SIZES)]) + packet[6:]
    yield bytes([0]) + b"\x00\x00\x00\x05\x01\x00"


@target("lludp.zero_decode", _zero_seeds)
def zero_decode(data: bytes) -> None:
    cap = MAX_SIZES[data[0] % len(MAX_SIZES)] if data else 8192
    body = data[1:]
    both("lludp.zero_decode", CODECS, lambda c: outcome(DECODE_ONLY, c.zero_decode, body, cap))


# -- a pair of circuits ----------------------------------------------------------------------

SESSION_ERRORS = (GameCodecError,)


def _messages() -> list[Any]:
    out = [
        build(
            "TestMessage",
            TestBlock1={"Test1": i},
            NeighborBlock=[{"Test0": i, "Test1": 0, "Test2": 0}] * 4,
        )
        for i in range(4)
    ]
    out.append(build("StartPingCheck", PingID={"PingID": 7, "OldestUnacked": 0}))
    out += region_stream(8, seed=9)
    return out


MESSAGES = _messages()


def _snapshot(c: Any) -> tuple[object, ...]:
    return (
        c.next_sequence,
        c.unacked_sequences,
        c.acks_pending,
        c.next_deadline(),
        c.packets_in,
        c.packets_out,
        c.resent,
        c.duplicates,
        c.dropped,
        c.ping,
        c.pings_in_transit,
        c.lost,
    )


class _World:
    def __init__(self, twin: Any, codec: Any, cfg: dict[str, Any]) -> None:
        self.ends = (twin.Circuit(codec=codec, **cfg), twin.Circuit(codec=codec, **cfg))
        self.wire: tuple[list[bytes], list[bytes]] = ([], [])


def _step(world: _World, op: tuple[Any, ...], now: float) -> Any:
    kind, side = op[0], op[1]
    end = world.ends[side]
    if kind == "send":
        return outcome(SESSION_ERRORS, end.send, MESSAGES[op[2]], reliable=op[3], now=now)
    if kind == "transmit":
        try:
            sent = end.datagrams_to_send(now)
        except SESSION_ERRORS as exc:
            return ("raised", type(exc).__name__, str(exc))
        world.wire[1 - side].extend(sent)
        return ("ok", sent)
    if kind == "garbage":
        return outcome(SESSION_ERRORS, end.receive_datagram, op[2], now)
    if kind == "glitch":
        res = outcome((*SESSION_ERRORS, ValueError), end.datagrams_to_send, op[2])
        if res[0] == "ok":
            raise Finding(f"lludp.Circuit: datagrams_to_send({op[2]!r}) accepted the time")
        return res
    queue = world.wire[side]
    if not queue:
        return ("empty",)
    index = op[2] % len(queue)
    if kind == "deliver":
        mode = op[3]
        dg = queue[index] if mode == 2 else queue.pop(index)
        if mode == 1:
            return ("dropped",)
        return outcome(SESSION_ERRORS, end.receive_datagram, dg, now)
    raw = bytearray(queue.pop(index))
    if raw:
        raw[op[3] % len(raw)] ^= op[4] or 0x5A
    raw = raw[: op[5] % (len(raw) + 1)]
    return outcome(SESSION_ERRORS, end.receive_datagram, bytes(raw), now)


def _read_op(ops: Ops) -> tuple[Any, ...]:
    kind = ops.choice(
        ("send", "send", "transmit", "transmit", "deliver", "deliver", "deliver", "tick",
         "mangle", "garbage", "glitch")
    )  # fmt: skip
    side = ops.pick(2)
    if kind == "send":
        return (kind, side, ops.pick(len(MESSAGES)), bool(ops.pick(2)))
    if kind == "tick":
        return (kind, side, ops.choice((*TIMES, 5.0, 60.0)))
    if kind == "garbage":
        return (kind, side, ops.blob(64))
    if kind == "glitch":
        return (kind, side, ops.choice(BAD_TIMES))
    if kind == "deliver":
        return (kind, side, ops.byte(), ops.choice((0, 0, 0, 1, 2)))
    return (kind, side, ops.byte(), ops.u16(), ops.byte(), ops.u16())


def _config(ops: Ops) -> dict[str, Any]:
    return {
        "strict": bool(ops.pick(2)),
        "max_resends": ops.choice((3, None, 0, 1)),
        "zero_coding": ops.choice(("flag", "smaller")),
        "max_appended_acks": ops.choice((250, 0, 1, 3)),
        "duplicate_window": ops.choice((2048, 1, 4)),
        "first_sequence": ops.choice((1, 0, 0xFFFFFF, 0xFFFFFFFE)),
        "deliver_control": bool(ops.pick(2)),
    }


def _session_seeds() -> Iterator[bytes]:
    rng = random.Random(21)
    for n in (8, 40, 120, 300):
        for _ in range(6):
            yield rng.randbytes(n)
    yield bytes(7) + bytes([0, 0, 0, 1, 2, 1, 4, 1, 0, 0, 1, 0, 0, 4, 0, 0, 0, 7, 0, 3]) * 20


@target("lludp.circuit", _session_seeds, kind="session")
def circuit(data: bytes) -> None:
    ops = Ops(data)
    cfg = _config(ops)
    worlds = [_World(t, c, cfg) for t, c in zip(CIRCUITS, CODECS, strict=True)]
    now = 0.0
    for step in range(400):
        if ops.done:
            break
        op = _read_op(ops)
        if op[0] == "tick":
            now += op[2]
            continue
        views = [
            (
                _step(w, op, now),
                [e.events() for e in w.ends],
                [_snapshot(e) for e in w.ends],
                w.wire,
            )
            for w in worlds
        ]
        if repr(views[0]) != repr(views[1]):
            raise Finding(
                f"twin mismatch in lludp.Circuit at step {step} {op!r}:\n"
                + f"  py: {views[0]!r}"[:3000]
                + f"\n  c:  {views[1]!r}"[:3000]
            )
