"""LLUDP circuit rows of ``gamecodec bench``: a region's stream through two circuits.

A simulator and a viewer, each a circuit, carry the region stream of
:func:`gamecodec.lludp.sample.region_stream` (PacketAck and the pings left
out: the circuits make their own): AgentUpdate goes up, everything else
down, one packet every 2 ms of virtual time, 4 ms from end to end, no loss.
Each packet is sent reliable or not as its stream entry says. Per packet, the
timed loop sends it, delivers what the sender has due to the other side, and
delivers back what that side has due (acks), so the work is each circuit's
whole per-packet job: encode, sequence number, acks owed and appended, the
reliable bookkeeping, decode, duplicate check, retiring acks.

gamecodec: two public ``lludp.Circuit``, acks appended or in PacketAck every
``ACK_COLLECT_TIME``, resends checked by ``datagrams_to_send``. Hippolyzer:
two of its ``Circuit`` with its serializer and deserializer, acking as its
client does (a PacketAck for each reliable packet at once, ``collect_acks``,
``track_reliable``), ``resend_unacked`` every 50 packets (100 ms).
"""

from __future__ import annotations

import asyncio
from typing import Any

from gamecodec import lludp
from gamecodec._bench import Config, Contest, Lazy, Row, Side, run_all, skipped
from gamecodec.lludp._bench import PEER, hippolyzer, stream

__all__ = ["contests", "rows"]

STEP = 0.002
LATENCY = 0.004
_CONTROL = {"PacketAck", "StartPingCheck", "CompletePingCheck"}


def _plan(data: list[bytes]) -> list[tuple[lludp.Message, bool, bool]]:
    """(message, goes up, reliable) for each packet of the stream."""
    out = []
    for datagram in data:
        msg = lludp.decode(datagram)
        if msg.name in _CONTROL:
            continue
        out.append((msg._replace(acks=()), msg.name == "AgentUpdate", msg.reliable))
    return out


def _ours(plan: Lazy) -> Side:
    def prepare() -> object:
        return lludp.Circuit(now=0.0), lludp.Circuit(now=0.0), plan.get()

    def run(state: Any) -> int:
        sim, viewer, messages = state
        now = 0.0
        received = 0
        for msg, up, reliable in messages:
            src, dst = (viewer, sim) if up else (sim, viewer)
            src.send(msg, reliable=reliable, now=now)
            later = now + LATENCY
            for datagram in src.datagrams_to_send(now):
                dst.receive_datagram(datagram, later)
                received += 1
            for datagram in dst.datagrams_to_send(later):
                src.receive_datagram(datagram, later + LATENCY)
                received += 1
            now += STEP
        return received

    return Side("lludp.Circuit", run, prepare, finish=plan.drop)


class _Wire:
    """Hippolyzer's transport interface, keeping what is sent."""

    def __init__(self) -> None:
        self.out: list[bytes] = []

    def send_packet(self, packet: Any) -> None:
        self.out.append(packet.data)

    def close(self) -> None:
        pass


def _theirs(hip: dict[str, Any], data: list[bytes]) -> Side:
    from hippolyzer.lib.base.message.circuit import Circuit
    from hippolyzer.lib.base.network.transport import Direction

    deserialize = hip["decode"]
    heads = [(d, lludp.peek(d).name) for d in data]
    wanted = [(d, name == "AgentUpdate") for d, name in heads if name not in _CONTROL]

    def prepare() -> object:
        loop = asyncio.new_event_loop()  # its resend records hold asyncio Futures
        asyncio.set_event_loop(loop)
        messages = []
        for datagram, up in wanted:
            msg = deserialize(datagram)
            msg.packet_id = None
            msg.synthetic = True
            msg.acks = ()
            messages.append((msg, up))
        sim_wire, viewer_wire = _Wire(), _Wire()
        sim = Circuit(("127.0.0.1", 1), ("127.0.0.1", 2), sim_wire)
        viewer = Circuit(("127.0.0.1", 2), ("127.0.0.1", 1), viewer_wire)
        return loop, messages, (sim, sim_wire), (viewer, viewer_wire)

    def deliver(wire: _Wire, dst: Any) -> int:
        n = 0
        for datagram in wire.out:
            msg = deserialize(datagram)
            msg.direction = Direction.IN
            dst.collect_acks(msg)
            if msg.reliable:
                dst.send_acks((msg.packet_id,))
                dst.track_reliable(msg.packet_id)
            n += 1
        wire.out.clear()
        return n

    def run(state: Any) -> int:
        _, messages, sim, viewer = state
        received = 0
        for i, (msg, up) in enumerate(messages):
            (src, src_wire), (dst, dst_wire) = (viewer, sim) if up else (sim, viewer)
            src.send(msg)
            received += deliver(src_wire, dst)
            received += deliver(dst_wire, src)
            if i % 50 == 0:
                src.resend_unacked()
                dst.resend_unacked()
        return received

    def prepare_and_keep() -> object:
        state = prepare()
        kept.append(state)
        return state

    kept: list[Any] = []

    def release_loop(_: object) -> None:
        while kept:
            loop = kept.pop()[0]
            asyncio.set_event_loop(None)
            loop.close()

    return Side(PEER + " Circuit", run, prepare_and_keep, release_loop)


def contests(config: Config) -> list[Contest | Row]:
    count = config.size(2_000, 20_000)
    title = "Circuit per packet: send, receive, acks, resend bookkeeping"
    hip = hippolyzer()
    if isinstance(hip, str):
        return [skipped("lludp", title, hip, peer=PEER + " Circuit", limit=10.0)]
    data, left_out = stream(count)  # the stream of the lludp decode rows (cached)
    packets = sum(1 for d in data if lludp.peek(d).name not in _CONTROL)
    extra = f", {left_out} refused by a decoder left out" if left_out else ""
    return [
        Contest(
            "lludp",
            title,
            f"{packets:,} distinct packets of the region stream{extra}",
            packets,
            "packet",
            _ours(Lazy(lambda: _plan(data))),
            _theirs(hip, data),
            limit=10.0,
        )
    ]


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
