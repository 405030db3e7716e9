"""A game sender (the C++ ack reader of ``cpp_model``) against our Connection.

One direction of a stream: a sender that keeps at most ``window`` commands
queued sends them one per datagram through a lossy, reordering channel to a
gamecodec ``Connection``; the Connection's ack blocks travel back through the
same kind of channel and the sender applies them exactly as the game's
``ValidatePackets`` does, x86 shift masking included. As in a game, the
Connection sends a command of its own every frame, so its ack blocks go out
with them (the sender acks that stream cumulatively). Seeded, so a failure
replays.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from gamecodec import avara
from tests.avara.cpp_model import reader_drops, serial_diff

KM = 17


@dataclass
class SimResult:
    created: int = 0
    delivered: list[int] = field(default_factory=list)
    resends: int = 0  # every resend the sender made
    needless: int = 0  # resends of a command the receiver already had
    lost_by_reader: list[int] = field(default_factory=list)  # dropped, never received
    bitmap_blocks: int = 0  # ack blocks with a bitmap the sender read
    blocks: int = 0


def simulate(
    twin: ModuleType,
    *,
    seed: int,
    window: int,
    commands: int = 400,
    per_tick: int = 1,
    loss: float = 0.2,
    delay: float = 0.02,
    jitter: float = 0.03,
    rto: float = 0.12,
    frame: float = 0.016,
    horizon: float = 120.0,
    **connection_kwargs: Any,
) -> SimResult:
    """Run until every command is acked (or ``horizon`` seconds pass)."""
    rng = random.Random(seed)
    conn = twin.Connection(
        my_id=1,
        peer_id=2,
        now=0.0,
        skip_after=None,
        max_resends_without_receive=None,
        **connection_kwargs,
    )
    res = SimResult()
    queue: dict[int, tuple[float, int]] = {}  # serial -> (next send, send count)
    max_valid = 0xFFFE
    received: set[int] = set()
    wire: list[tuple[float, int, str, bytes]] = []  # (arrival, order, to, datagram)
    order = 0
    next_tick = 0.0
    t = 0.0

    def post(to: str, datagram: bytes) -> None:
        nonlocal order
        if rng.random() < loss:
            return
        order += 1
        heapq.heappush(wire, (t + delay + rng.random() * jitter, order, to, datagram))

    back_serial = 0  # the next serial of the Connection's own stream, in order
    back_got: set[int] = set()

    def command(serial: int, count: int) -> bytes:
        c = avara.Command.make(serial, KM, p1=-8, p3=serial + 1, sender=2, send_count=count & 0xFF)
        return avara.encode((back_serial - 2) & 0xFFFF, [c])

    while t < horizon:
        if t >= next_tick:
            next_tick += frame
            if conn.lost is None:
                conn.send(6, data=b"x", now=t)  # kpRosterMessage: not timed
            sent = False
            for _ in range(per_tick):
                if res.created < commands and len(queue) < window:
                    serial = 2 * res.created
                    res.created += 1
                    queue[serial] = (t + rto, 0)
                    post("receiver", command(serial, 0))
                    sent = True
            for serial, (due, count) in sorted(queue.items()):
                if due <= t:
                    queue[serial] = (t + rto, count + 1)
                    res.resends += 1
                    res.needless += serial in received
                    post("receiver", command(serial, count + 1))
                    sent = True
            if not sent:  # an ACK-only datagram for the Connection's stream
                post("receiver", avara.encode((back_serial - 2) & 0xFFFF, []))
        while wire and wire[0][0] <= t:
            _, _, to, datagram = heapq.heappop(wire)
            if to == "receiver":
                for cmd in conn.receive_datagram(datagram, t):
                    res.delivered.append(cmd.serial)
                if len(datagram) > 4:
                    received.add(datagram[4] | datagram[5] << 8)
            else:
                for back in avara.decode(datagram).commands:
                    back_got.add(back.serial)
                while back_serial in back_got:
                    back_got.discard(back_serial)
                    back_serial += 2
                ack = datagram[2] | datagram[3] << 8
                bitmap = int.from_bytes(datagram[4:8], "little") if ack & 1 else None
                res.blocks += 1
                res.bitmap_blocks += bitmap is not None
                base = ack & 0xFFFE
                for serial in reader_drops(ack, bitmap, set(queue), max_valid):
                    if serial not in received:
                        res.lost_by_reader.append(serial)
                    del queue[serial]
                if serial_diff(base, max_valid) > 0:
                    max_valid = base
        for datagram in conn.datagrams_to_send(t):
            post("sender", datagram)
        if res.created == commands and not queue:
            break
        t = round(t + 0.001, 6)
    return res
