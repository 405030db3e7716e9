"""ywindow targets: Decoder.feed in random chunking, decode, parse_greeting,
and a client and a server Peer talking through an op stream."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tools.fuzz.driver import (
    DECODE_ONLY,
    Finding,
    Ops,
    both,
    canon,
    chunks_of,
    outcome,
    same,
    target,
    twins,
)

from gamecodec.errors import GameCodecError, RemoteProtocolError
from gamecodec.ywindow import Keyword, Role, encode_greeting, encode_word, parse_greeting
from gamecodec.ywindow import session as yw_session
from gamecodec.ywindow.sample import sample_messages

CODECS = twins("gamecodec.ywindow", "_codec")
WORDS = (
    encode_word(0), encode_word(-1), encode_word(2**31 - 1), encode_word(Keyword("goto")),
    encode_word(Keyword("")), encode_word("text"), encode_word("\u00e9"), encode_word(b"\x00\xff"),
    encode_word(b"x" * 300), b"c\x04\x00\x00\x00\x01", b"v\x04\x00\x00\x00\x02",
    b"r\x04\x00\x00\x00\x00", b"c\x04\xff\xff\xff\xff", b"s\x01\xff", b"k\x01\x80",
    b"i\x04\x00\x00\x00", b"B\x04\x00\x00\x01\x00",
)  # fmt: skip
MAX_MESSAGES = (1 << 24, 1 << 24, 64, 16, 300)


def _streams() -> list[bytes]:
    messages = sample_messages(60, seed=7)
    return [*messages, *(b"".join(messages[i : i + 6]) for i in range(0, 60, 6))]


def _words_mutate(data: bytes, rng: random.Random) -> bytes:
    """Splice a whole encoded word or message header in at a word-ish boundary."""
    at = rng.randint(0, len(data))
    return data[:at] + rng.choice(WORDS) + data[at:]


def _cap(data: bytes) -> int:
    return MAX_MESSAGES[len(data) % len(MAX_MESSAGES)]


def _feed_all(codec: Any, parts: list[bytes], cap: int) -> list[Any]:
    decoder = codec.Decoder(max_message=cap)
    got = []
    for part in [*parts, None]:
        fn = decoder.close if part is None else decoder.feed
        res = outcome(DECODE_ONLY, fn, *(() if part is None else (part,)))
        got.append(res)
        if res[0] != "ok":
            break
    got.append(("state", decoder.offset, decoder.buffered, decoder.at_boundary))
    return got


def _flatten(got: list[Any]) -> tuple[list[Any], Any]:
    items: list[Any] = []
    error = None
    for res in got:
        if res[0] == "ok" and res[1][0] == "list":
            items += list(res[1][1])
        elif res[0] == "raised":
            error = res[1][1], res[1][3]
            items += list(res[1][4][1]) if res[1][4][0] == "list" else []
    return items, error


@target("ywindow.feed", _streams, tokens=WORDS, mutate=_words_mutate)
def feed(data: bytes) -> None:
    """Random chunking: the twins agree, and the messages and the error
    (type, offset) are those of one whole feed."""
    cap = _cap(data)
    chunked = both("ywindow.Decoder.feed", CODECS, lambda c: _feed_all(c, chunks_of(data), cap))
    whole = _feed_all(CODECS[0], [data], cap)
    same("ywindow.Decoder chunked vs whole", _flatten(whole), _flatten(chunked))


@target("ywindow.decode", _streams, tokens=WORDS, mutate=_words_mutate)
def decode(data: bytes) -> None:
    cap = _cap(data)
    both("ywindow.decode", CODECS, lambda c: outcome(DECODE_ONLY, c.decode, data, max_message=cap))


def _greetings() -> Iterator[bytes]:
    for role in Role:
        yield encode_greeting(role, "gamecodec")
        yield encode_greeting(role, "Y-window 0.3 \u00e9", (9, 99))
    yield b"Yclient 1.0\n"


@target("ywindow.parse_greeting", _greetings, tokens=(b"Y", b"\n", b" ", b".", b"9" * 12))
def greeting(data: bytes) -> None:
    """One implementation: only RemoteProtocolError (as documented)."""
    role = list(Role)[len(data) % 2]
    outcome((RemoteProtocolError,), parse_greeting, data, role)


# -- a client and a server peer ----------------------------------------------------------------

AUTHORITY = bytes(range(256))
SESSION_ERRORS = (GameCodecError,)
ARGS: tuple[tuple[Any, ...], ...] = (
    (), (1, 2), ("text",), (b"\x00" * 40,), (Keyword("k"), -5), (2**31,), ("\ud800",),
)  # fmt: skip


class _World:
    def __init__(self, codec: Any, cap: int) -> None:
        self.decoder = codec.Decoder
        self.peers = (
            yw_session.Peer.client(AUTHORITY, cookie=b"c" * 256, max_message=cap),
            yw_session.Peer.server(AUTHORITY, cookie=b"s" * 256, max_message=cap),
        )
        self.wire = [b"", b""]  # bytes in flight to peer 0 / 1
        self.calls: tuple[list[int], list[int]] = ([], [])  # incoming call ids per peer

    def run(self, side: int, fn: Any, *args: Any) -> Any:
        saved = yw_session.Decoder
        yw_session.Decoder = self.decoder
        try:
            try:
                result = fn(*args)
            except SESSION_ERRORS as exc:
                return ("raised", canon(exc))
        finally:
            yw_session.Decoder = saved
        if isinstance(result, list):
            self.calls[side].extend(e.id for e in result if type(e).__name__ == "Call")
        return ("ok", canon(result))

    def view(self) -> Any:
        return canon(
            [(p.state, p.pending_calls, p.unanswered_calls, p.events()) for p in self.peers]
            + [self.wire, self.calls]
        )


def _step(w: _World, op: tuple[Any, ...]) -> Any:
    kind, side = op[0], op[1]
    peer = w.peers[side]
    if kind == "call":
        return w.run(side, peer.call, "m", *ARGS[op[2]])
    if kind == "notify":
        return w.run(side, peer.notify, "e", *ARGS[op[2]])
    if kind == "reply":
        if not w.calls[side]:
            return ("none",)
        call_id = w.calls[side].pop(op[2] % len(w.calls[side]))
        return w.run(side, peer.reply, call_id, *ARGS[op[3]])
    if kind == "pump":  # what the other side wrote, plus extra bytes, cut somewhere
        w.wire[side] += w.peers[1 - side].data_to_send() + op[2]
        n = len(w.wire[side]) if op[3] & 0x8000 else op[3] % (len(w.wire[side]) + 1)
        part, w.wire[side] = w.wire[side][:n], w.wire[side][n:]
        if not part:
            return ("nothing",)
        return w.run(side, peer.receive_data, part, 0.0)
    if kind == "eof":
        return w.run(side, peer.receive_data, b"", 0.0)
    return w.run(side, peer.close)


def _read_op(ops: Ops) -> tuple[Any, ...]:
    kind = ops.choice(
        ("call", "call", "notify", "reply", "reply", "pump", "pump", "pump", "pump", "eof")
    )
    side = ops.pick(2)
    if kind in ("call", "notify"):
        return (kind, side, ops.pick(len(ARGS)))
    if kind == "reply":
        return (kind, side, ops.byte(), ops.pick(len(ARGS)))
    if kind == "pump":
        extra = ops.blob(16) if ops.pick(6) == 0 else b""
        if extra and ops.pick(2):
            extra = ops.choice(WORDS) + extra
        return (kind, side, extra, ops.u16())
    return (kind, side) if ops.pick(6) == 0 else ("pump", side, b"", 0xFFFF)


def _session_seeds() -> Iterator[bytes]:
    rng = random.Random(51)
    for n in (8, 40, 120, 300):
        for _ in range(6):
            yield rng.randbytes(n)
    handshake = bytes([5, 0, 0, 0xFF, 0xFF, 5, 1, 0, 0xFF, 0xFF]) * 4
    yield bytes([0]) + handshake + bytes([0, 0, 1, 5, 1, 0, 0xFF, 0xFF, 3, 1, 0, 2]) * 10


@target("ywindow.session", _session_seeds, kind="session")
def peers(data: bytes) -> None:
    ops = Ops(data)
    cap = MAX_MESSAGES[ops.pick(len(MAX_MESSAGES))]
    worlds = [_World(c, cap) for c in CODECS]
    prelude = [("pump", side, b"", 0xFFFF) for _ in range(3) for side in (0, 1)]
    if ops.pick(4) == 0:  # else a clean handshake first, then the ops
        prelude = []
    for step in range(200):
        if prelude:
            op = prelude.pop(0)
            views = [(_step(w, op), w.view()) for w in worlds]
            same(f"ywindow peers, handshake step {step}", views[0], views[1])
            continue
        if ops.done:
            break
        op = _read_op(ops)
        views = [(_step(w, op), w.view()) for w in worlds]
        if views[0] != views[1]:
            raise Finding(
                f"twin mismatch in ywindow peers at step {step} {op!r}"[:1000]
                + f"\n  py: {views[0]!r}"[:3000]
                + f"\n  c:  {views[1]!r}"[:3000]
            )
