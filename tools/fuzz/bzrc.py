"""BZRC targets: Decoder.feed in random chunking, whole-stream decode, and a
client and a server session talking through an op stream."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from tools.fuzz.driver import (
    DATA,
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

from gamecodec.bzrc import Fail, Listing, OccGrid, Ok, Timer
from gamecodec.bzrc import session as bz_session
from gamecodec.bzrc.sample import mytanks_responses, occgrid_response
from gamecodec.errors import GameCodecError

CODECS = twins("gamecodec.bzrc", "_codec")
TOKENS = (
    b"\n", b"ack ", b"fail ", b"error ", b"begin\n", b"end\n", b"mytank ", b"othertank ",
    b"team ", b"base ", b"flag ", b"shot ", b"obstacle ", b"constant ", b"at ", b"size ",
    b"timer ", b"hit ", b"nan", b"inf", b"-0", b"1e308", b"0.5", b"99999999999999999999",
    b"bzrobots 1\n", b" ", b"\t", b"\r", b"0101", b"x", b":", b"\n        ", b"\n    fail\n",
)  # fmt: skip
LIMITS = (
    (1 << 20, 1 << 22, 1 << 14),
    (1 << 20, 1 << 22, 1 << 14),
    (64, 16, 3),
    (1, 0, 0),
    (300, 2500, 40),
)  # (max_line, max_grid_cells, max_items)


def _streams() -> list[bytes]:
    out = []
    for name in ("basic_four_ls.json", "errors_four_ls.json"):
        exchanges = json.loads((DATA / "bzrc" / name).read_text())["exchanges"]
        out.append("".join(e["recv"] for e in exchanges).encode("latin-1"))
        out += [e["recv"].encode("latin-1") for e in exchanges if e["recv"]]
    out += mytanks_responses(3, tanks=3)
    out.append(occgrid_response(12))
    return out


def _limits(data: bytes) -> tuple[int, int, int]:
    return LIMITS[len(data) % len(LIMITS)]


def _feed_all(codec: Any, parts: list[bytes], limits: tuple[int, int, int]) -> list[Any]:
    """Each feed's outcome, then close's; stops at the first error."""
    decoder = codec.Decoder(max_line=limits[0], max_grid_cells=limits[1], max_items=limits[2])
    got = []
    for part in [*parts, None]:
        res = outcome(DECODE_ONLY, decoder.close if part is None else decoder.feed, *(
            () if part is None else (part,)))  # fmt: skip
        got.append(res)
        if res[0] != "ok":
            break
    got.append(("offset", decoder.offset, decoder.idle))
    return got


def _flatten(got: list[Any]) -> tuple[list[Any], Any]:
    """The responses in order and the final error (type, offset) of a feed run."""
    items: list[Any] = []
    error = None
    for res in got:
        if res[0] == "ok":
            items += list(res[1][1])
        elif res[0] == "raised":
            error = res[1][1], res[1][3]
            items += list(res[1][4][1]) if res[1][4][0] == "list" else []
    return items, error


@target("bzrc.feed", _streams, tokens=TOKENS)
def feed(data: bytes) -> None:
    """Random chunking: the twins agree, and the responses and the error
    (type, offset) are those of one whole feed."""
    limits = _limits(data)
    chunked = both("bzrc.Decoder.feed", CODECS, lambda c: _feed_all(c, chunks_of(data), limits))
    whole = _feed_all(CODECS[0], [data], limits)
    same("bzrc.Decoder chunked vs whole", _flatten(whole), _flatten(chunked))


@target("bzrc.decode", _streams, tokens=TOKENS)
def decode(data: bytes) -> None:
    limits = _limits(data)
    both("bzrc.decode", CODECS, lambda c: _feed_all(c, [data], limits))


# -- a client and a server ---------------------------------------------------------------

SESSION_ERRORS = (GameCodecError,)
SENDS: tuple[tuple[Any, ...], ...] = (
    ("shoot", 0), ("speed", 0, 0.5), ("angvel", 1, -1.0), ("accelx", 0, 0.25), ("occgrid", 0),
    ("teams",), ("obstacles",), ("bases",), ("flags",), ("shots",), ("mytanks",),
    ("othertanks",), ("constants",), ("scores",), ("timer",), ("taunt", "hi", "there"),
    ("help",), ("help", "speed"), ("quit",), ("endgame",), ("speed", 0, float("nan")),
    ("bogus", 1), ("shoot", "x"),
)  # fmt: skip


def _responses() -> list[Any]:
    out: list[Any] = []
    for stream in _streams()[:1] + _streams()[-2:]:
        try:
            out += CODECS[0].Decoder().feed(stream)
        except GameCodecError:
            continue
    return [r for r in out if isinstance(r, (Ok, Fail, Listing, Timer, OccGrid))][:40]


RESPONSES = _responses()


class _World:
    def __init__(self, codec: Any, limits: tuple[int, int, int]) -> None:
        caps = {"max_line": limits[0], "max_grid_cells": limits[1], "max_items": limits[2]}
        self.client = bz_session.ClientSession(**caps)
        self.client._parser = codec.Decoder(**caps)
        self.server = bz_session.ServerSession(0.0, max_line=limits[0])
        self.requests: list[Any] = []
        self.to_client = b""

    def view(self) -> Any:
        c, s = self.client, self.server
        return canon((c.events(), c.pending, c.greeting, c.closed, s.closed, s.unanswered,
                      s.established, self.requests, self.to_client))  # fmt: skip


def _step(w: _World, op: tuple[Any, ...], now: float) -> Any:
    kind = op[0]
    if kind == "send":
        return outcome(SESSION_ERRORS, w.client.send, *SENDS[op[1]])
    if kind == "to_server":
        data = w.client.data_to_send() + op[1]
        try:
            requests = w.server.receive_data(data, now)
        except SESSION_ERRORS as exc:
            return ("raised", canon(exc))
        w.requests += requests
        return ("ok", canon(requests))
    if kind == "answer":
        if not w.requests:
            return ("none",)
        request = w.requests.pop(op[1] % len(w.requests))
        how = op[2] % 3
        if how == 0:
            return outcome(SESSION_ERRORS, w.server.ok, request, now)
        if how == 1:
            return outcome(SESSION_ERRORS, w.server.fail, request, now, "no")
        response = RESPONSES[op[3] % len(RESPONSES)]
        return outcome(SESSION_ERRORS, w.server.respond, request, response, now)
    if kind == "to_client":
        w.to_client += w.server.data_to_send() + op[1]
        n = len(w.to_client) if op[2] & 0x8000 else op[2] % (len(w.to_client) + 1)
        part, w.to_client = w.to_client[:n], w.to_client[n:]
        if not part:
            return ("nothing",)
        return outcome(SESSION_ERRORS, w.client.receive_data, part, now)
    if kind == "eof":
        return outcome(SESSION_ERRORS, w.client.receive_data, b"", now)
    return outcome(SESSION_ERRORS, w.client.end_help)


def _read_op(ops: Ops) -> tuple[Any, ...]:
    kind = ops.choice(
        ("send", "send", "to_server", "to_server", "answer", "answer", "to_client",
         "to_client", "to_client", "eof", "end_help")
    )  # fmt: skip
    if kind == "send":
        return (kind, ops.pick(len(SENDS)))
    if kind == "to_server":
        return (kind, ops.blob(24) if ops.pick(4) == 0 else b"")
    if kind == "answer":
        return (kind, ops.byte(), ops.byte(), ops.byte())
    if kind == "to_client":
        extra = ops.blob(24) if ops.pick(4) == 0 else b""
        if extra and ops.pick(2):
            extra = ops.choice(TOKENS) + extra
        return (kind, extra, ops.u16())
    if kind == "eof":
        return (kind,) if ops.pick(4) == 0 else ("end_help",)
    return (kind,)


def _session_seeds() -> Iterator[bytes]:
    rng = random.Random(41)
    for n in (8, 40, 120, 300):
        for _ in range(6):
            yield rng.randbytes(n)
    yield bytes([0, 2, 0, 6, 0, 0xFF, 0xFF, 0, 0, 10, 2, 0, 4, 0, 0, 0, 6, 0, 0xFF, 0xFF]) * 10


@target("bzrc.session", _session_seeds, kind="session")
def client_server(data: bytes) -> None:
    ops = Ops(data)
    limits = LIMITS[ops.pick(len(LIMITS))]
    worlds = [_World(c, limits) for c in CODECS]
    now = 0.0
    for step in range(200):
        if ops.done:
            break
        op = _read_op(ops)
        now += 0.01
        views = [(_step(w, op, now), w.view()) for w in worlds]
        if views[0] != views[1]:
            raise Finding(
                f"twin mismatch in bzrc sessions at step {step} {op!r}"[:1000]
                + f"\n  py: {views[0]!r}"[:3000]
                + f"\n  c:  {views[1]!r}"[:3000]
            )
