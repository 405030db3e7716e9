"""Avara targets: the datagram decoders, the payload decoders, hole punches,
and a pair of reliable connections driven by an op stream."""

from __future__ import annotations

import json
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
    items_of,
    join_items,
    outcome,
    target,
    twins,
)

from gamecodec.avara import payloads, punch
from gamecodec.avara.sample import key_and_mouse_datagram, sample_traffic
from gamecodec.errors import GameCodecError

CODECS = twins("gamecodec.avara", "_codec")
SESSIONS = twins("gamecodec.avara", "_session")
VERSION = 18


def _recorded() -> list[bytes]:
    lines = (DATA / "avara" / "vectors.jsonl").read_text().splitlines()
    return [bytes.fromhex(json.loads(line)["wire"]) for line in lines if line.strip()]


def _datagrams() -> list[bytes]:
    return [*_recorded(), key_and_mouse_datagram(), *sample_traffic(120, seed=5)]


def _options(opt: int, raw: bytes) -> tuple[bytes, dict[str, Any]]:
    """The option byte: 0 no CRC check, 1 re-signed, 2 as is, 3 legacy layout."""
    mode = opt & 3
    kw: dict[str, Any] = {"version": None if mode in (0, 3) else VERSION}
    if mode == 3:
        kw["layout"] = 0
    if mode == 1 and len(raw) >= 2:
        raw = CODECS[0].datagram_crc(raw, VERSION).to_bytes(2, "little") + raw[2:]
    return raw, kw


def _decode_seeds() -> Iterator[bytes]:
    for i, dg in enumerate(_datagrams()):
        yield bytes([i % 8]) + dg


@target("avara.decode", _decode_seeds)
def decode(data: bytes) -> None:
    raw, kw = _options(data[:1][0] if data else 0, data[1:])
    strict = bool(data[:1] and data[0] & 4)
    both("avara.decode", CODECS, lambda c: outcome(DECODE_ONLY, c.decode, raw, strict=strict, **kw))


def _batch_seeds() -> Iterator[bytes]:
    dgs = _datagrams()
    for i in range(0, len(dgs), 6):
        yield bytes([i % 8]) + join_items(dgs[i : i + 6])


def _batch(data: bytes) -> tuple[list[bytes], dict[str, Any], bool]:
    opt = data[0] if data else 0
    items = [_options(opt, item)[0] for item in items_of(data[1:])]
    return items, _options(opt, b"")[1], bool(opt & 4)


@target("avara.decode_many", _batch_seeds)
def decode_many(data: bytes) -> None:
    items, kw, strict = _batch(data)
    both(
        "avara.decode_many",
        CODECS,
        lambda c: outcome(DECODE_ONLY, c.decode_many, items, strict=strict, **kw),
    )


@target("avara.decode_array", _batch_seeds)
def decode_array(data: bytes) -> None:
    items, kw, _ = _batch(data)
    both("avara.decode_array", CODECS, lambda c: outcome(DECODE_ONLY, c.decode_array, items, **kw))


PAYLOADS = (
    "key_and_mouse",
    "toc",
    "player_config",
    "results",
    "win_frame",
    "pascal",
    "level_tag",
    "json",
)


def _payload_seeds() -> Iterator[bytes]:
    commands = [
        c
        for dg in _datagrams()
        for c in getattr(CODECS[0].decode(dg, version=None), "commands", ())
    ]
    for i, cmd in enumerate(commands[:200]):
        head = bytes([i % len(PAYLOADS) | (i & 8) * 2, cmd.p1 & 0xFF, cmd.p2 & 0xFF])
        yield head + (cmd.p3 & 0xFFFFFFFF).to_bytes(4, "big") + cmd.data
    yield bytes([7, 0, 0, 0, 0, 0, 0]) + b'{"a":[1,2.5,"x",null,true]}'
    yield bytes([5, 0, 0, 0, 0, 0, 0, 5]) + b"hello"


@target("avara.payloads", _payload_seeds)
def payload(data: bytes) -> None:
    """One payload decoder (pure only): nothing but DecodeError escapes."""
    ops = Ops(data)
    opt = ops.byte()
    p1, p2, p3 = ops.byte() - 128, ops.byte() - 128, ops.u32() - (1 << 31)
    body = data[ops.pos :]
    kind = PAYLOADS[opt % len(PAYLOADS)]
    strict = bool(opt & 16)
    if kind == "key_and_mouse":
        outcome(DECODE_ONLY, payloads.decode_key_and_mouse, p1, p2, p3, body, strict=strict)
    elif kind == "json":
        outcome(DECODE_ONLY, payloads.decode_json, body)
    else:
        outcome(DECODE_ONLY, getattr(payloads, f"decode_{kind}"), body, strict=strict)


def _punch_seeds() -> Iterator[bytes]:
    for command in range(8):
        yield bytes([command, 10, 0, 0, 1, 0x1F, 0x90])
    yield from (dg for dg in _recorded() if len(dg) == 7)


@target("avara.decode_punch", _punch_seeds)
def decode_punch(data: bytes) -> None:
    raw = data[:7].ljust(7, b"\x00")
    outcome(DECODE_ONLY, punch.decode_punch, raw)
    both("avara.decode(punch)", CODECS, lambda c: outcome(DECODE_ONLY, c.decode, raw))


# -- a pair of connections -------------------------------------------------------------------

SESSION_ERRORS = (GameCodecError,)


def _snapshot(conn: Any) -> tuple[object, ...]:
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
        conn.skip_after,
    )


class _World:
    def __init__(self, twin: Any, codec: Any, cfg: dict[str, Any]) -> None:
        self.conns = (
            twin.Connection(my_id=1, peer_id=2, codec=codec, **cfg),
            twin.Connection(my_id=2, peer_id=1, codec=codec, **cfg),
        )
        self.wire: tuple[list[bytes], list[bytes]] = ([], [])  # in flight to side 0 / 1
        self.codec = codec
        self.version = cfg["version"]


def _step(world: _World, op: tuple[Any, ...], now: float) -> Any:
    kind, side = op[0], op[1]
    conn = world.conns[side]
    call = outcome
    if kind == "send":
        _, _, command, p1, p2, p3, body, urgent = op
        return call(
            SESSION_ERRORS,
            conn.send,
            command,
            p1=p1,
            p2=p2,
            p3=p3,
            data=body,
            urgent=urgent,
            now=now,
        )
    if kind == "transmit":
        try:
            sent = conn.datagrams_to_send(now)
        except SESSION_ERRORS as exc:
            return ("raised", type(exc).__name__, str(exc))
        world.wire[1 - side].extend(sent)
        return ("ok", sent)
    if kind == "garbage":
        return call(SESSION_ERRORS, conn.receive_datagram, op[2], now)
    if kind == "frame":  # a healthy game frame: each side sends, transmits, the other receives
        got = []
        for me in (side, 1 - side):
            sender, peer = world.conns[me], world.conns[1 - me]
            got.append(call(SESSION_ERRORS, sender.send, 17, p1=op[2], p3=op[3], now=now))
            try:
                world.wire[1 - me].extend(sender.datagrams_to_send(now))
            except SESSION_ERRORS as exc:
                got.append(("raised", type(exc).__name__, str(exc)))
            queue = world.wire[1 - me]
            while queue:
                got.append(call(SESSION_ERRORS, peer.receive_datagram, queue.pop(0), now + 0.002))
        return got
    if kind == "glitch":
        res = call((*SESSION_ERRORS, ValueError), conn.datagrams_to_send, op[2])
        if res[0] == "ok":
            raise Finding(f"avara.Connection: datagrams_to_send({op[2]!r}) accepted the time")
        return res
    queue = world.wire[side]
    if not queue:
        return ("empty",)
    index = op[2] % len(queue)
    if kind == "deliver":
        mode = op[3]
        dg = queue[index] if mode == 2 else queue.pop(index)  # 2: duplicate
        if mode == 1:
            return ("dropped",)
        return call(SESSION_ERRORS, conn.receive_datagram, dg, now)
    # mangle: flip a byte, cut, maybe re-sign, deliver
    raw = bytearray(queue.pop(index))
    if raw:
        raw[op[3] % len(raw)] ^= op[4] or 0x5A
    raw = raw[: op[5] % (len(raw) + 1)]
    if op[6] and len(raw) >= 2:
        raw[:2] = world.codec.datagram_crc(bytes(raw), world.version).to_bytes(2, "little")
    return call(SESSION_ERRORS, conn.receive_datagram, bytes(raw), now)


def _read_op(ops: Ops) -> tuple[Any, ...]:
    kind = ops.choice(
        ("send", "send", "transmit", "transmit", "deliver", "deliver", "deliver", "tick",
         "mangle", "garbage", "glitch", "frame", "frame")
    )  # fmt: skip
    side = ops.pick(2)
    if kind == "frame":
        return (kind, side, ops.byte() - 128, ops.u16())
    if kind == "send":
        command = ops.choice((17, 17, 31, 6, -4, 0, 5, ops.byte() - 128))
        p1 = ops.choice((0, 1, -1, -8, 127, -128, 200))
        p2 = ops.choice((0, 1, -1, 0x7FFF, -0x8000, 70000))
        p3 = ops.choice((0, 1, 65535, 65536, -1, 2**31 - 1, 2**31, ops.u32()))
        body = ops.choice((b"", ops.blob(24), b"z" * 984, b"z" * 985, b"\x01" * 300))
        return (kind, side, command, p1, p2, p3, body, bool(ops.pick(2)))
    if kind == "tick":
        return (kind, side, ops.choice(TIMES))
    if kind == "garbage":
        return (kind, side, ops.blob(40))
    if kind == "glitch":
        return (kind, side, ops.choice(BAD_TIMES))
    if kind == "deliver":
        return (kind, side, ops.byte(), ops.choice((0, 0, 0, 1, 2)))
    return (kind, side, ops.byte(), ops.u16(), ops.byte(), ops.u16(), ops.pick(2))


def _config(ops: Ops) -> dict[str, Any]:
    return {
        "skip_after": ops.choice((True, None, False, 1, 3, 16)),
        "max_resends_without_receive": ops.choice((3, None, 0, 1)),
        "cram_data": ops.pick(4),
        "peer_cram_data": ops.pick(4),
        "frame_time": ops.choice((16.0, 8.0, 33.3, 64.0)),
        "version": ops.choice((18, 17, 0)),
        "first_receive_serial": ops.choice((0, 0, 0, 0, 0, 2, 65532)),
    }


def _session_seeds() -> Iterator[bytes]:
    import random

    rng = random.Random(18)
    for n in (8, 40, 120, 300):
        for _ in range(6):
            yield rng.randbytes(n)
    # a healthy exchange: sends, transmits and in-order deliveries
    yield bytes(8) + bytes([0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 4, 1, 0, 0]) * 30


@target("avara.connection", _session_seeds, kind="session")
def connection(data: bytes) -> None:
    ops = Ops(data)
    cfg = _config(ops)
    worlds = [_World(s, c, cfg) for s, c in zip(SESSIONS, CODECS, strict=True)]
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
                [c.events() for c in w.conns],
                [_snapshot(c) for c in w.conns],
                w.wire,
            )
            for w in worlds
        ]
        if op[0] == "frame":
            now += 0.016
        if views[0] != views[1]:
            raise Finding(
                f"twin mismatch in avara.Connection at step {step} {op!r}:\n  py: {views[0]!r}"[
                    :3000
                ]
                + f"\n  c:  {views[1]!r}"[:3000]
            )
