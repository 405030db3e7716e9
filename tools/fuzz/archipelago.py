"""Archipelago targets: the typed decoder, compat.decode (both twins),
decode_many, and a ClientSession fed server frames by an op stream."""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import Iterator
from typing import Any

from tools.fuzz.driver import (
    DATA,
    DECODE_ONLY,
    Finding,
    Ops,
    both,
    canon,
    items_of,
    join_items,
    outcome,
    target,
    twins,
)

from gamecodec.archipelago import compat, frames
from gamecodec.archipelago import session as ap_session
from gamecodec.archipelago._requests import PendingRequests
from gamecodec.archipelago.sample import received_items_frame, sample_session
from gamecodec.errors import GameCodecError

COMPAT = twins("gamecodec.archipelago", "_compat")
TOKENS = (
    b"[", b"]", b"{", b"}", b":", b",", b'"cmd"', b'"class"', b'"NetworkItem"', b'"Version"',
    b'"ReceivedItems"', b'"RoomInfo"', b'"Connected"', b'"Bounced"', b'"PrintJSON"',
    b'"index"', b'"items"', b"null", b"true", b"false", b"NaN", b"Infinity", b"-Infinity",
    b"1e400", b"-0", b"0.5", b"9" * 40, b'"\\ud800"', b'"\\u0000"', b'"\xc3\xa9"', b"\xff",
    b"[" * 20, b"]" * 20,
)  # fmt: skip


def _frames(limit: int = 4000) -> list[bytes]:
    out = []
    for path in sorted((DATA / "archipelago").rglob("session.jsonl")):
        for line in path.read_text().splitlines():
            raw = json.loads(line)["raw"].encode()
            if len(raw) <= limit:
                out.append(raw)
    out += [f.encode() for f in sample_session(3, players=2, turns=6) if len(f) <= limit]
    out.append(received_items_frame(20).encode())
    return list(dict.fromkeys(out))


def _json_mutate(data: bytes, rng: random.Random) -> bytes:
    """Parse, change one value or key somewhere (type swaps, extremes), write back."""
    try:
        value = json.loads(data)
    except ValueError:
        return data
    nodes: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            nodes.extend((node, i) for i in range(len(node)))
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            nodes.extend((node, k) for k in node)
            for item in node.values():
                walk(item)

    walk(value)
    if not nodes:
        return data
    parent, key = rng.choice(nodes)
    choice = rng.randrange(6)
    new: Any = rng.choice(
        (None, True, 0, -1, 2**63, 1.5, "", "x" * 3, [], {}, {"cmd": "Sync"}, [1, [2]], "\u00e9")
    )
    if choice == 0 and isinstance(parent, dict):
        parent[rng.choice(("cmd", "class", "index", "items", "extra", "request_id"))] = new
    elif choice == 1 and isinstance(parent, list):
        parent.insert(key, parent[key])  # duplicate an element
    elif choice == 2:
        del parent[key]
    else:
        parent[key] = new
    return json.dumps(value, separators=(",", ":")).encode()


_LONE_SURROGATE = re.compile(  # a high escape not followed by a low one, or a low one alone
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F]"
)


@target("archipelago.decode", _frames, tokens=TOKENS, mutate=_json_mutate)
def decode(data: bytes) -> None:
    """The typed decoder (one implementation): only DecodeError; an
    unchanged decoded frame encodes back to its own text."""
    try:
        frame = frames.decode(data)
    except DECODE_ONLY:
        return
    text = data.decode("utf-8")
    again = outcome(DECODE_ONLY, frames.encode, frame)
    if again != ("ok", canon(text)):
        # an escaped lone surrogate is read as the reference reads it and written back
        # as the reference writes it, unescaped (json.dumps with ensure_ascii=False)
        lone = _LONE_SURROGATE.search(text) is not None
        if not lone or again != ("ok", canon(compat.encode(compat.decode(text)))):
            raise Finding(f"archipelago.encode(decode(x)) != x: {again!r} for {text!r}"[:3000])


@target("archipelago.compat_decode", _frames, tokens=TOKENS, mutate=_json_mutate)
def compat_decode(data: bytes) -> None:
    depth = 16 if len(data) % 3 else 4 + len(data) % 7
    arg: bytes | str = data
    if len(data) % 2:
        with contextlib.suppress(UnicodeDecodeError):
            arg = data.decode("utf-8")
    both(
        "archipelago.compat.decode",
        COMPAT,
        lambda c: outcome(DECODE_ONLY, c.decode, arg, max_depth=depth),
    )


def _many_seeds() -> Iterator[bytes]:
    fs = [f for f in _frames(250)]
    for i in range(0, len(fs), 5):
        yield join_items(fs[i : i + 5])


@target("archipelago.decode_many", _many_seeds, tokens=TOKENS)
def decode_many(data: bytes) -> None:
    items = items_of(data)
    got = outcome(DECODE_ONLY, frames.decode_many, items)
    if got[0] != "ok":
        raise Finding(f"archipelago.decode_many raised: {got!r}"[:2000])


# -- a client session fed server frames -----------------------------------------------------

SERVER_FRAMES: list[bytes] = []


def _server_frames() -> list[bytes]:
    if not SERVER_FRAMES:
        for path in sorted((DATA / "archipelago").rglob("session.jsonl")):
            for line in path.read_text().splitlines():
                rec = json.loads(line)
                if rec["dir"] == "s2c" and len(rec["raw"]) <= 20000:
                    SERVER_FRAMES.append(rec["raw"].encode())
        SERVER_FRAMES[:] = list(dict.fromkeys(SERVER_FRAMES))
    return SERVER_FRAMES


def _handshake() -> list[bytes]:
    """A recorded RoomInfo (without DataPackage checksums, so the client
    connects at once) and the recorded Connected that answers it."""
    room = connected = None
    for line in (DATA / "archipelago" / "small" / "session.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["dir"] == "s2c" and rec["cmds"] == ["RoomInfo"] and room is None:
            room = json.loads(rec["raw"])
            room[0]["datapackage_checksums"] = {}
        if rec["dir"] == "s2c" and rec["cmds"] == ["Connected"] and connected is None:
            connected = rec["raw"].encode()
    assert room is not None and connected is not None
    return [json.dumps(room).encode(), connected]


HANDSHAKE = _handshake()


def _made_frame(ops: Ops) -> bytes:
    """A server command built from the op stream (request ids the session issued)."""
    rid = ops.pick(6)
    kind = ops.pick(8)
    if kind == 0:
        cmd: dict[str, Any] = {"cmd": "Retrieved", "keys": {"k": ops.byte()}, "request_id": rid}
    elif kind == 1:
        cmd = {"cmd": "SetReply", "key": "k", "value": ops.byte(), "original_value": 0,
               "slot": 1, "request_id": rid}  # fmt: skip
    elif kind == 2:
        cmd = {"cmd": "LocationInfo", "locations": []}
    elif kind == 3:
        cmd = {"cmd": "InvalidPacket", "type": "arguments", "original_cmd": "LocationScouts",
               "text": "no"}  # fmt: skip
    elif kind == 4:
        item = {"item": 1, "location": 2, "player": 1, "flags": 0, "class": "NetworkItem"}
        cmd = {"cmd": "ReceivedItems", "index": ops.pick(4), "items": [item]}
    elif kind == 5:
        death = {"time": ops.choice((1.0, 0.0, 1e400, "x")), "source": "p", "cause": ""}
        cmd = {"cmd": "Bounced", "tags": ["DeathLink"], "data": death}
    elif kind == 6:
        cmd = {"cmd": "ConnectionRefused", "errors": ["InvalidSlot"]}
    else:
        cmd = {"cmd": "RoomUpdate", "checked_locations": [ops.byte()]}
    return json.dumps([cmd]).encode()


def _read_op(ops: Ops) -> tuple[Any, ...]:
    kind = ops.choice(
        ("frame", "frame", "frame", "made", "made", "garbage", "client", "client", "tick")
    )
    if kind == "frame":
        fs = _server_frames()
        raw = bytearray(fs[ops.pick(len(fs))])
        for _ in range(ops.pick(4) if ops.pick(3) == 0 else 0):  # a few flipped bytes
            raw[ops.u16() % len(raw)] ^= ops.byte() or 1
        return (kind, bytes(raw))
    if kind == "made":
        return (kind, _made_frame(ops))
    if kind == "garbage":
        return (kind, ops.blob(60))
    if kind == "tick":
        return (kind, ops.choice((0.0, 1.0, 10.0, 29.9, 30.0, 31.0, 100.0)))
    return (kind, ops.pick(9), ops.byte(), ops.blob(8).decode("latin-1"))


def _client(session: Any, op: tuple[Any, ...], now: float) -> Any:
    _, which, n, text = op
    calls = (
        lambda: session.check_locations([n, n + 1]),
        lambda: session.scout_locations([n], now),
        lambda: session.say(text),
        lambda: session.status_update(n),
        session.sync,
        lambda: session.get(["k", text], now),
        lambda: session.set("k", [("add", n)], now, want_reply=bool(n & 1)),
        lambda: session.death_link(now, text),
        lambda: session.bounce({"x": n}, tags=[text]),
    )
    return calls[which]()


def _view(session: Any) -> Any:
    return canon(
        (
            session.state.value,
            session.items,
            sorted(session.checked_locations),
            session.next_deadline(),
            session.frames_to_send(),
            session.events(),
            sorted(session.games),
        )
    )


class _CompatTwin:
    """Runs a call with ``compat.decode`` bound to one twin (the session's
    fallback reader of frames the typed codec refuses)."""

    def __init__(self, module: Any) -> None:
        self.decode = module.decode

    def __call__(self, fn: Any, *args: Any) -> Any:
        saved = compat.decode
        compat.decode = self.decode
        try:
            return outcome((GameCodecError,), fn, *args)
        finally:
            compat.decode = saved


def _session_seeds() -> Iterator[bytes]:
    rng = random.Random(31)
    for n in (8, 40, 120, 300):
        for _ in range(6):
            yield rng.randbytes(n)


@target("archipelago.session", _session_seeds, kind="session")
def client_session(data: bytes) -> None:
    ops = Ops(data)
    death = bool(ops.pick(2))
    runs = [_CompatTwin(m) for m in COMPAT]
    sessions = [
        ap_session.ClientSession(name="p", game="g", death_link_enabled=death, request_timeout=30.0)
        for _ in runs
    ]
    for s in sessions:
        s.requests = PendingRequests(first_id=1)  # request ids the made frames can name
    now = 0.0
    prelude = [("frame", f) for f in HANDSHAKE] if ops.pick(4) else []  # logged in first
    for step in range(200):
        if ops.done:
            break
        op = prelude.pop(0) if prelude else _read_op(ops)
        if op[0] == "tick":
            now += op[1]
            got = [run(s.handle_timeout, now) for run, s in zip(runs, sessions, strict=True)]
        elif op[0] == "client":
            got = [run(_client, s, op, now) for run, s in zip(runs, sessions, strict=True)]
        else:
            got = [run(s.receive_frame, op[1], now) for run, s in zip(runs, sessions, strict=True)]
        views = [(g, _view(s)) for g, s in zip(got, sessions, strict=True)]
        if views[0] != views[1]:
            raise Finding(
                f"twin mismatch in archipelago.ClientSession at step {step} {op!r}"[:2000]
                + f"\n  py: {views[0]!r}"[:3000]
                + f"\n  c:  {views[1]!r}"[:3000]
            )
