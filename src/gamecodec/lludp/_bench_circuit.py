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
``track_reliable``), ``resend_unacked`` every 50 packets (100 ms): its side is
in :mod:`gamecodec.lludp._bench_hippolyzer` (it may run in a second Python).
"""

from __future__ import annotations

from typing import Any

from gamecodec import lludp
from gamecodec._bench import Config, Contest, Lazy, Row, Side, run_all, skipped
from gamecodec.lludp._bench import _CONTROL, PEER, peer_sides, stream

__all__ = ["contests", "rows"]

STEP = 0.002
LATENCY = 0.004


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


def contests(config: Config) -> list[Contest | Row]:
    count = config.size(2_000, 20_000)
    title = "Circuit per packet: send, receive, acks, resend bookkeeping"
    theirs = peer_sides(count, config.size(4_000, 100_000))
    if isinstance(theirs, str):
        return [skipped("lludp", title, theirs, peer=PEER + " Circuit", limit=10.0)]
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
            theirs["circuit"],
            limit=10.0,
        )
    ]


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
