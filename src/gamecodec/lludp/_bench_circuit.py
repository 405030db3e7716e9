"""LLUDP circuit rows of ``gamecodec bench``: the per-packet cost of :class:`Circuit`.

What is measured: the steady state of two circuits talking to each other,
as a viewer and a simulator do while an avatar moves. Each "frame" (16 ms of
virtual time), each side sends one AgentUpdate (94 bytes, zero-coded, the
sample packet of ``gamecodec.lludp.sample``) and the other receives it 4 ms
later; the acks owed ride on the next AgentUpdate the other way (appended
acks), so no PacketAck is needed. One "packet" is one ``send`` +
``datagrams_to_send`` on one side and one ``receive_datagram`` on the other:
the circuit's whole per-packet work (encode once, sequence number, appending
acks, the reliable bookkeeping; reading the header, duplicate check, decode
once, retiring the appended acks, queueing the ack). Two rows: every
AgentUpdate reliable, and every AgentUpdate unreliable (acks then only ride
on pings, as LL sends AgentUpdate).

The harness loop calls the circuits as an application would
(``send(msg, reliable=..., now=...)``, keyword arguments included) through
bound methods taken once per run, and does nothing else per datagram: the
datagrams used as the baseline are captured by a separate :meth:`_Play.capture`
run of the same game, not inside the timed loop. The same loop driving
``_Idle`` (a compiled stand-in with the three calls that does nothing and
allocates nothing) measures the loop and the bare calls.

The baseline of the issue's ratio is the compiled ``lludp.decode`` of the same
datagrams (captured from the game, appended acks included). ``targets()``
reads the issue's "per-packet session overhead (receive + ack bookkeeping +
send)" as the Avara session bench does: the circuit's per-packet time minus
the idle loop's, its own encode and decode included, over one decode (limit
2). For scale it also reports the circuit's work beyond its codec calls
(encode and decode of the same packets subtracted too), the ratio with the
loop included, and the pure circuit twin (all on the compiled codec; rounds
interleaved).
"""

from __future__ import annotations

import importlib
import math
import statistics
from collections.abc import Callable
from types import ModuleType
from typing import Any

from gamecodec._bench import Case, Target, measure
from gamecodec.lludp import _circuit_py, _codec_py
from gamecodec.lludp._models import Message
from gamecodec.lludp.sample import bench_messages
from gamecodec.lludp.template import default_template

__all__ = ["cases", "targets"]

FRAME = 0.016
LATENCY = 0.004
WIRE_SAMPLE = 2000


def _compiled(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"gamecodec.lludp.{name}_c")
    except ImportError:
        return None


def _agent_update() -> Message:
    msg = bench_messages()["AgentUpdate"]
    return msg._replace(sequence=0, acks=())


class _Play:
    """Two circuits exchanging one AgentUpdate each per frame, lossless."""

    def __init__(
        self, circuit: ModuleType, codec: ModuleType, *, reliable: bool = True, idle: Any = None
    ) -> None:
        """``idle``: an ``_Idle`` that stands in for both circuits."""
        self.a: Any = circuit.Circuit(codec=codec) if idle is None else idle
        self.b: Any = circuit.Circuit(codec=codec) if idle is None else idle
        self.reliable = reliable
        self.message = _agent_update()
        self.now = 0.0
        self.wire: list[bytes] = []
        self.run(400)  # past the first pings: steady state

    def run(self, frames: int) -> int:
        """Play ``frames`` frames (the timed loop); return the number of
        datagrams received."""
        a_send, a_out, a_in = self.a.send, self.a.datagrams_to_send, self.a.receive_datagram
        b_send, b_out, b_in = self.b.send, self.b.datagrams_to_send, self.b.receive_datagram
        msg = self.message
        reliable = self.reliable
        now = self.now
        frame, latency = FRAME, LATENCY
        received = 0
        for _ in range(frames):
            a_send(msg, reliable=reliable, now=now)
            later = now + latency
            out = a_out(now)
            for dg in out:
                b_in(dg, later)
            b_send(msg, reliable=reliable, now=later)
            later_b = later + latency
            out_b = b_out(later)
            for dg in out_b:
                a_in(dg, later_b)
            received += len(out) + len(out_b)
            now += frame
        self.now = now
        return received

    def capture(self, frames: int) -> int:
        """:meth:`run`, keeping the datagrams in :attr:`wire` (up to
        ``WIRE_SAMPLE``): the baseline's packets, not timed."""
        a, b = self.a, self.b
        msg = self.message
        reliable = self.reliable
        now = self.now
        wire = self.wire
        received = 0
        for _ in range(frames):
            a.send(msg, reliable=reliable, now=now)
            later = now + LATENCY
            for dg in a.datagrams_to_send(now):
                if len(wire) < WIRE_SAMPLE:
                    wire.append(dg)
                b.receive_datagram(dg, later)
                received += 1
            b.send(msg, reliable=reliable, now=later)
            for dg in b.datagrams_to_send(later):
                if len(wire) < WIRE_SAMPLE:
                    wire.append(dg)
                a.receive_datagram(dg, later + LATENCY)
                received += 1
            now += FRAME
        self.now = now
        return received


def cases(frames: int = 1000) -> list[Case]:
    circuit_c = _compiled("_circuit")
    codec_c = _compiled("_codec")

    def play(circuit: ModuleType, codec: ModuleType, reliable: bool) -> Callable[[], object]:
        game = _Play(circuit, codec, reliable=reliable)
        return lambda: game.run(frames)

    out = []
    for reliable in (True, False):
        probe = _Play(_circuit_py, _codec_py, reliable=reliable)
        probe.capture(frames)
        nbytes = sum(map(len, probe.wire)) * frames * 2 // max(1, len(probe.wire))
        kind = "reliable" if reliable else "unreliable"
        out.append(
            Case(
                "lludp",
                f"Circuit: send + receive + ack, one {kind} AgentUpdate each way per frame",
                2 * frames,
                nbytes,
                None
                if circuit_c is None or codec_c is None
                else play(circuit_c, codec_c, reliable),
                play(_circuit_py, _codec_py, reliable),
            )
        )
    return out


def _ratios(
    circuit: ModuleType, codec_c: ModuleType, reliable: bool, rounds: int, min_time: float
) -> dict[str, float]:
    """Medians of the per-round ratios (see :func:`targets`) for one circuit twin."""
    frames = 500
    game = _Play(circuit, codec_c, reliable=reliable)
    game.capture(frames)
    sample = list(game.wire)
    game.wire.clear()
    packets = game.run(frames)
    idle_twin = _compiled("_circuit") or _circuit_py
    idle = _Play(circuit, codec_c, reliable=reliable, idle=idle_twin._Idle(sample[0]))
    template = default_template()
    decode = codec_c.decode
    encode = codec_c.encode
    sent = [m._replace(acks=()) for m in (decode(d, template) for d in sample)]

    def decode_all() -> None:
        for d in sample:
            decode(d, template, False, 8192)

    def encode_all() -> None:
        for m in sent:
            encode(m, template, "flag")

    rows: dict[str, list[float]] = {"work": [], "own": [], "loop": []}
    for _ in range(rounds):  # interleaved: this machine is shared
        t_circuit = measure(lambda: game.run(frames), rounds=1, min_time=min_time) / packets
        t_idle = measure(lambda: idle.run(frames), rounds=1, min_time=min_time) / packets
        t_decode = measure(decode_all, rounds=1, min_time=min_time) / len(sample)
        t_encode = measure(encode_all, rounds=1, min_time=min_time) / len(sample)
        rows["work"].append((t_circuit - t_idle) / t_decode)
        rows["own"].append((t_circuit - t_idle - t_decode - t_encode) / t_decode)
        rows["loop"].append(t_circuit / t_decode)
    return {name: statistics.median(values) for name, values in rows.items()}


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratio, read as the Avara session bench reads it: the circuit's
    per-packet work (its encode and decode included, the driving loop measured
    with ``_Idle`` and left out) over the compiled decode of the same packets.
    For scale, without limits: the circuit's work beyond its codec calls, the
    ratio with the driving loop included, and the pure circuit twin."""
    circuit_c = _compiled("_circuit")
    codec_c = _compiled("_codec")
    if codec_c is None:
        return []
    twins = [("py", _circuit_py)] + ([] if circuit_c is None else [("c", circuit_c)])
    out = []
    for reliable in (True, False):
        kind = "reliable" if reliable else "unreliable"
        for twin, module in twins:
            got = _ratios(module, codec_c, reliable, rounds, min_time)
            lead = f"Circuit[{twin}] per {kind} AgentUpdate"
            out.append(
                Target(
                    "lludp",
                    f"{lead}, the circuit's work (circuit - idle loop, encode and decode "
                    "included) / compiled decode" + ("" if twin == "c" else " (no limit)"),
                    got["work"],
                    2.0 if twin == "c" else math.inf,  # the pure twin is shown, not targeted
                    True,
                )
            )
            if twin != "c":
                continue
            out.append(
                Target(
                    "lludp",
                    f"{lead}, beyond its codec calls (circuit - idle - encode - decode) / "
                    "compiled decode (no limit)",
                    got["own"],
                    math.inf,
                    True,
                )
            )
            out.append(
                Target(
                    "lludp",
                    f"{lead}, driving loop included / compiled decode (no limit)",
                    got["loop"],
                    math.inf,
                    True,
                )
            )
    return out
