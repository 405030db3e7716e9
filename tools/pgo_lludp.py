"""Training workload for the profile-guided build of the LLUDP extensions.

``setup.py`` runs this (``python tools/pgo_lludp.py``) against instrumented
builds of ``gamecodec.lludp._codec_c`` and ``gamecodec.lludp._circuit_c``; GCC
records which branches and calls the run takes and the final build lays the
code out for them. So it should look like real traffic, not like one
benchmark: every message of the built-in template encoded, decoded, peeked
and forwarded (the high-frequency ones most), zero-coding of assorted
buffers, malformed datagrams (the DecodeError paths, which must stay correct
but need not be fast), and two circuits exchanging a viewer's and a
simulator's mixed traffic with a little loss, reordering and duplication.

It needs only the standard library and the package (no numpy, msgspec or
/work/shared): pip's isolated build environment has only setuptools and
Cython. It exits non-zero if the compiled twins cannot be imported, so a
training run that would record nothing fails loudly. ``--scale`` multiplies
the amount of work (1 takes about a second on an uninstrumented build).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import random
import sys
import time
from collections.abc import Callable
from types import ModuleType

from gamecodec.errors import DecodeError, EncodeError
from gamecodec.lludp._models import ACK, RELIABLE, RESENT, ZEROCODED, Message
from gamecodec.lludp.sample import random_message
from gamecodec.lludp.template import Template, default_template

# Messages a viewer and a simulator exchange all the time (most of real traffic).
VIEWER_TRAFFIC = ("AgentUpdate", "AgentAnimation", "ChatFromViewer", "RequestMultipleObjects")
SIM_TRAFFIC = (
    "ImprovedTerseObjectUpdate",
    "ObjectUpdate",
    "ObjectUpdateCached",
    "CoarseLocationUpdate",
    "SimStats",
    "AvatarAnimation",
    "AttachedSound",
    "ChatFromSimulator",
)
HOT = VIEWER_TRAFFIC + SIM_TRAFFIC + ("PacketAck", "StartPingCheck", "CompletePingCheck")


def _variant(name: str, rng: random.Random, template: Template) -> Message:
    """A random instance of ``name``: varied block counts, zeros, flags and acks."""
    counts = {
        block.name: rng.choice((0, 1, 1, 2, 3, 5, 15))
        for block in template[name].blocks
        if block.kind == 3
    }
    flags = None
    if rng.random() < 0.5:
        flags = rng.choice((0, ZEROCODED, RELIABLE, ZEROCODED | RELIABLE, RELIABLE | RESENT))
    acks: tuple[int, ...] = ()
    if rng.random() < 0.3:
        acks = tuple(rng.getrandbits(24) for _ in range(rng.choice((1, 2, 5, 20))))
    return random_message(
        name,
        rng,
        template=template,
        counts=counts,
        zeros=rng.choice((0.0, 0.3, 0.6, 0.9)),
        var=rng.choice((0, 4, 24, 60)),
        flags=flags,
        acks=acks,
    )


def _expect_error(fn: Callable[..., object], *args: object) -> None:
    """Call ``fn(*args)``; a DecodeError or EncodeError is expected and swallowed."""
    with contextlib.suppress(DecodeError, EncodeError):
        fn(*args)


def codec_work(codec: ModuleType, template: Template, rng: random.Random, scale: int) -> int:
    """Every template message through every codec entry point; returns packets handled."""
    names = [spec.name for spec in template]
    weighted = names + list(HOT) * 12
    handled = 0
    for _ in range(scale):
        wires = []
        for name in names + [rng.choice(weighted) for _ in range(6000)]:
            msg = _variant(name, rng, template)
            try:
                wire = codec.encode(msg, template, rng.choice(("flag", "flag", "smaller")))
            except EncodeError:
                continue
            wires.append(wire)
            try:  # a message whose Variable blocks all came out empty has no body
                codec.decode(wire, template)
            except DecodeError:
                continue
            codec.peek(wire, template)
            if rng.random() < 0.2:
                buf = bytearray(8)
                codec.encode_into(msg, buf, rng.choice((0, 3)), template, "flag")
                _expect_error(codec.decode, wire, template, True, 8192)
                seq, acks = rng.getrandbits(24), (1, 2, 3)
                _expect_error(codec.forward, wire, None, seq, acks)
            handled += 1
        for start in range(0, len(wires), 64):
            codec.decode_many(wires[start : start + 64], template, False, 8192)
        malformed_work(codec, template, rng, wires)
        zero_coding_work(codec, rng)
    return handled


def malformed_work(
    codec: ModuleType, template: Template, rng: random.Random, wires: list[bytes]
) -> None:
    """Cut, corrupted and random datagrams: the error paths of decode and peek."""
    bad = []
    for wire in rng.sample(wires, min(len(wires), 400)):
        kind = rng.randrange(6)
        if kind == 0:
            bad.append(wire[: rng.randrange(len(wire))])  # cut short
        elif kind == 1:
            flipped = bytearray(wire)
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            bad.append(bytes(flipped))  # one bit flipped
        elif kind == 2:
            bad.append(bytes([wire[0] | ACK]) + wire[1:] + b"\x07")  # ack count past the end
        elif kind == 3:
            bad.append(wire[:5] + b"\x40" + wire[6:])  # extra header longer than the packet
        elif kind == 4:
            bad.append(bytes([wire[0] | ZEROCODED]) + wire[1:] + b"\x00")  # bad zero-coding
        else:
            bad.append(rng.randbytes(rng.randrange(1, 40)))
    bad += [b"", b"\x00", b"\x80\x00\x00\x00\x01\x00\xff\xff\xff\xff\xff", b"\x00" * 6]
    for data in bad:
        _expect_error(codec.decode, data, template, rng.random() < 0.3, 8192)
        _expect_error(codec.peek, data, template)
        _expect_error(codec.decode, data, template, False, 64)
    codec.decode_many(bad, template, False, 8192)


def zero_coding_work(codec: ModuleType, rng: random.Random) -> None:
    """zero_encode / zero_decode of zero-heavy, zero-free and odd buffers."""
    for _ in range(300):
        size = rng.choice((0, 1, 7, 60, 300, 1200))
        zeros = rng.choice((0.0, 0.5, 0.95, 1.0))
        raw = bytes(0 if rng.random() < zeros else rng.randrange(1, 256) for _ in range(size))
        packed = codec.zero_encode(raw)
        codec.zero_decode(packed, 8192)
        _expect_error(codec.zero_decode, packed, 16)
    for odd in (b"\x00", b"\x00\x00", b"\x00\x00\x00", b"\x01\x00\xff\x00\x00\x02"):
        _expect_error(codec.zero_decode, odd, 8192)


def _traffic(name: str, rng: random.Random, codec: ModuleType, template: Template) -> list[Message]:
    """Eight sendable instances of ``name`` (no flags or acks: the circuit sets
    those), sized like real traffic: at most a few hundred bytes."""
    out: list[Message] = []
    while len(out) < 8:
        spec = template[name]
        counts = {block.name: rng.choice((1, 2, 3, 5)) for block in spec.blocks if block.kind == 3}
        msg = random_message(name, rng, template=template, counts=counts, zeros=0.5, var=16)
        if len(codec.encode(msg, template, "smaller")) <= 600:
            out.append(msg._replace(flags=msg.flags & ZEROCODED))
    return out


class _Link:
    """One direction of a lossy network: delays, drops, reorders, duplicates."""

    def __init__(self, rng: random.Random, loss: float) -> None:
        self.rng = rng
        self.loss = loss
        self.queue: list[tuple[float, bytes]] = []

    def put(self, datagrams: list[bytes], now: float) -> None:
        for dg in datagrams:
            roll = self.rng.random()
            if roll < self.loss:
                continue
            delay = 0.03 + (0.08 if roll > 0.98 else 0.0)  # a few arrive late (reordered)
            self.queue.append((now + delay, dg))
            if roll > 0.995:
                self.queue.append((now + delay + 0.01, dg))  # duplicated by the network

    def due(self, now: float) -> list[bytes]:
        ready = sorted(item for item in self.queue if item[0] <= now)
        self.queue = [item for item in self.queue if item[0] > now]
        return [dg for _, dg in ready]


def circuit_work(
    circuit: ModuleType, codec: ModuleType, template: Template, rng: random.Random, scale: int
) -> int:
    """A viewer and a simulator circuit talking for a while; returns datagrams received."""
    viewer = circuit.Circuit(codec=codec, template=template)
    sim = circuit.Circuit(codec=codec, template=template, zero_coding="smaller")
    to_sim, to_viewer = _Link(rng, 0.02), _Link(rng, 0.02)
    pool = {name: _traffic(name, rng, codec, template) for name in HOT}
    received = 0
    now = 0.0
    for frame in range(6000 * scale):
        now = frame * 0.016
        moving = frame % 1000 < 700  # an idle viewer sends little: its acks go as PacketAck
        if moving or frame % 30 == 0:
            viewer.send(rng.choice(pool["AgentUpdate"]), reliable=False, now=now)
        if moving and frame % 7 == 0:
            name = rng.choice(VIEWER_TRAFFIC)
            viewer.send(rng.choice(pool[name]), reliable=rng.random() < 0.6, now=now)
        burst = 40 if frame % 1000 == 0 else rng.choice((1, 1, 2, 4))  # a region's objects
        for _ in range(burst):
            name = "ObjectUpdate" if burst == 40 else rng.choice(SIM_TRAFFIC)
            sim.send(rng.choice(pool[name]), reliable=burst == 40 or rng.random() < 0.4, now=now)
        to_sim.put(viewer.datagrams_to_send(now), now)
        to_viewer.put(sim.datagrams_to_send(now), now)
        for dg in to_sim.due(now):
            received += len(sim.receive_datagram(dg, now))
        for dg in to_viewer.due(now):
            received += len(viewer.receive_datagram(dg, now))
        if frame % 500 == 250:
            viewer.receive_datagram(rng.randbytes(12), now)  # a stray datagram
        viewer.events()
        sim.events()
        viewer.next_deadline()
    return received


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=1, help="multiply the work (default 1)")
    args = parser.parse_args(argv)
    try:
        circuit_c = importlib.import_module("gamecodec.lludp._circuit_c")
        codec_c = importlib.import_module("gamecodec.lludp._codec_c")
    except ImportError as exc:
        print(f"pgo_lludp: the compiled twins are missing: {exc}", file=sys.stderr)
        return 1
    template = default_template()
    rng = random.Random(0x5067)
    start = time.perf_counter()
    handled = codec_work(codec_c, template, rng, args.scale)
    received = circuit_work(circuit_c, codec_c, template, rng, args.scale)
    took = time.perf_counter() - start
    print(f"pgo_lludp: {handled} packets coded, {received} delivered by circuits in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
