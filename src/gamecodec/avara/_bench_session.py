"""Avara session rows of ``gamecodec bench``: the per-packet cost of Connection.

The workload is the steady state of play. Two connected peers each send one
kpKeyAndMouse per 16 ms frame, and each datagram takes 4 ms to arrive, with no
loss. Each datagram also carries the ack for the other side. One "packet" is
one ``send`` + ``datagrams_to_send`` on one side and one ``receive_datagram``
on the other: the session's whole per-packet work (receive, ack bookkeeping,
send). Each datagram is the ack block and one command: 17 or 19 bytes.

What is timed, in one process, in interleaved rounds:

* ``session[c]`` / ``session[py]``: the loop that drives the compiled / pure
  twin, per packet. This includes the loop itself (Python bytecode: the frame
  counter, the time stamps, iterating the returned lists).
* ``idle``: the same loop driving ``_session_c._Idle``. This is a compiled
  stand-in with the same three calls. It does nothing and allocates nothing,
  so it measures the loop plus the bare cost of making the calls.
* ``decode``: the compiled ``decode_datagram`` of the same datagrams, per
  datagram, in a plain loop (the loop is included).

Targets (each the median of the per-round ratios). The issue's target is
``(session[c] - idle) / decode <= 2``: the session's own per-packet work,
which includes parsing and writing the datagrams and every object the session
allocates, against one compiled decode.
For scale, the run also reports the same ratio for the pure twin and the
compiled ratio with the loop included (``session[c] / decode``). Neither of
these has a limit ("<= inf").
"""

from __future__ import annotations

import importlib
import math
import statistics
from functools import partial
from types import ModuleType
from typing import Any

from gamecodec._bench import Case, Target, measure
from gamecodec.avara import _session_py
from gamecodec.avara.payloads import encode_key_and_mouse

__all__ = ["cases", "targets"]

FRAME = 0.016
LATENCY = 0.004
KM = 17
WARMUP = 200  # frames: past the sender-byte serials (<= 100) and the first RTT samples


def _inputs() -> list[tuple[int, int, bytes]]:
    out = []
    for i in range(8):
        p1, p2, _, data = encode_key_and_mouse(1, held=1 + (i & 1), mouse_h=i)
        out.append((p1, p2, data))
    return out


_INPUTS = _inputs()


def _compiled(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"gamecodec.avara.{module}_c")
    except ImportError:
        return None


class _Play:
    """Two peers exchanging one kpKeyAndMouse each per frame, lossless.

    ``a`` and ``b`` are ``Connection``s of ``twin`` (or two ``idle`` stand-ins).
    """

    def __init__(self, twin: ModuleType, idle: Any = None) -> None:
        if idle is None:
            self.a: Any = twin.Connection(my_id=1, peer_id=2)
            self.b: Any = twin.Connection(my_id=2, peer_id=1)
        else:
            self.a = self.b = idle
        self.now = 0.0
        self.frame = 0
        if idle is None:
            self.run(WARMUP)

    def run(self, frames: int) -> int:
        """Play ``frames`` frames; return the number of datagrams received.

        The peers look at their sessions once per frame and when something
        arrives, as the game does.
        """
        a_send, a_out, a_in = self.a.send, self.a.datagrams_to_send, self.a.receive_datagram
        b_send, b_out, b_in = self.b.send, self.b.datagrams_to_send, self.b.receive_datagram
        inputs = _INPUTS
        now = self.now
        frame = self.frame
        received = 0
        for _ in range(frames):
            frame += 1
            p1, p2, data = inputs[frame & 7]
            a_send(KM, p1=p1, p2=p2, p3=frame, data=data, now=now)
            later = now + LATENCY
            for dg in a_out(now):
                b_in(dg, later)
                received += 1
            b_send(KM, p1=p1, p2=p2, p3=frame, data=data, now=later)
            for dg in b_out(later):
                a_in(dg, later + LATENCY)
                received += 1
            now += FRAME
        self.now = now
        self.frame = frame
        return received

    def record(self, frames: int) -> list[bytes]:
        """Play ``frames`` frames and return the datagrams, both directions."""
        wire: list[bytes] = []
        a, b = self.a, self.b
        for _ in range(frames):
            self.frame += 1
            p1, p2, data = _INPUTS[self.frame & 7]
            later = self.now + LATENCY
            a.send(KM, p1=p1, p2=p2, p3=self.frame, data=data, now=self.now)
            for dg in a.datagrams_to_send(self.now):
                wire.append(dg)
                b.receive_datagram(dg, later)
            b.send(KM, p1=p1, p2=p2, p3=self.frame, data=data, now=later)
            for dg in b.datagrams_to_send(later):
                wire.append(dg)
                a.receive_datagram(dg, later + LATENCY)
            self.now += FRAME
        return wire


def cases(frames: int = 1000) -> list[Case]:
    """The session's per-packet work, both twins (the loop driving it included)."""
    twin_c = _compiled("_session")

    def play(twin: ModuleType) -> Any:
        game = _Play(twin)
        return lambda: game.run(frames)

    wire = _Play(_session_py).record(50)
    return [
        Case(
            "avara",
            "Connection: send + receive + ack, one kpKeyAndMouse each way per frame",
            2 * frames,
            sum(map(len, wire)) * frames * 2 // len(wire),
            None if twin_c is None else play(twin_c),
            play(_session_py),
        )
    ]


def timings(*, rounds: int = 7, min_time: float = 0.05) -> list[dict[str, float]]:
    """Seconds per packet of ``session[c]``, ``session[py]``, ``idle`` and
    ``decode`` (see the module docstring), one dict per round. The rounds are
    interleaved, so each round compares like with like on a shared machine."""
    twin_c = _compiled("_session")
    codec_c = _compiled("_codec")
    if twin_c is None or codec_c is None:
        return []
    frames = 500
    sample = _Play(twin_c).record(frames)
    plays = {
        "session[c]": (_Play(twin_c), frames),
        "session[py]": (_Play(_session_py), frames // 10),
        "idle": (_Play(twin_c, twin_c._Idle(sample[0])), frames),
    }
    decode = codec_c.decode_datagram

    def decode_all() -> None:
        for data in sample:
            decode(data)

    out = []
    for _ in range(rounds):
        got = {}
        for name, (game, n) in plays.items():
            got[name] = measure(partial(game.run, n), rounds=1, min_time=min_time) / (2 * n)
        got["decode"] = measure(decode_all, rounds=1, min_time=min_time) / len(sample)
        out.append(got)
    return out


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratio (compiled session's own work per packet against one
    compiled decode) and, for scale, the pure twin's and the whole loop's;
    each the median of the per-round ratios."""
    runs = timings(rounds=rounds, min_time=min_time)
    if not runs:
        return []

    def ratio(session: str, idle: bool) -> float:
        return statistics.median(
            (t[session] - (t["idle"] if idle else 0.0)) / t["decode"] for t in runs
        )

    return [
        Target(
            "avara",
            "Connection[c] per packet, session's own work (session - idle) / compiled decode",
            ratio("session[c]", idle=True),
            2.0,
            True,
        ),
        Target(
            "avara",
            "Connection[py] per packet, session's own work / compiled decode (no limit)",
            ratio("session[py]", idle=True),
            math.inf,
            True,
        ),
        Target(
            "avara",
            "Connection[c] per packet, driving loop included / compiled decode (no limit)",
            ratio("session[c]", idle=False),
            math.inf,
            True,
        ),
    ]
