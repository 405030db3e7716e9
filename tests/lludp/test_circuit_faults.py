"""Circuit over a simulated lossy network (tests/netsim.py): loss, duplicates, reordering.

Seeded and deterministic, virtual time. Every test runs on both twins ([py]:
pure circuit on the pure codec, [c]: compiled circuit on the compiled codec).
100,000 reliable messages each way by default (``GAMECODEC_FAULT_MESSAGES``
changes the count). Two profiles:

* ``reliable``: LL's timers and wire behaviour with the give-up rule off
  (``max_resends=None``): with 30% loss, duplication, reordering and jitter,
  every message arrives exactly once and nothing is lost.
* ``ll``: the viewer's defaults (3 resends, then the message is given up):
  what arrives arrives exactly once, and every message that did not arrive
  was reported given up (MessageDropped) by its sender.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import pytest

from gamecodec.lludp.circuit import MessageDropped, PeerLost
from tests.lludp.conftest import numbered
from tests.netsim import LinkConfig, Network

MESSAGES = int(os.environ.get("GAMECODEC_FAULT_MESSAGES", "100000"))
FAULTY = LinkConfig(
    loss=0.30, duplicate=0.05, reorder=0.10, reorder_delay=0.05, delay=0.02, jitter=0.01
)
RELIABLE = {"max_resends": None}


class Peer:
    """netsim endpoint: a Circuit and an application sending ``total`` numbered
    reliable messages, at most ``window`` unacked at a time (the application
    waits for acks instead of piling messages up)."""

    def __init__(self, circuit: Any, total: int, window: int = 64) -> None:
        self.circuit = circuit
        self.total = total
        self.window = window
        self.next_index = 0
        self.seq_to_index: dict[int, int] = {}
        self.got: list[int] = []
        self.dropped: list[int] = []
        self.lost: PeerLost | None = None
        self.bad = 0

    def _events(self) -> None:
        for event in self.circuit.events():
            if isinstance(event, MessageDropped):
                self.dropped.append(self.seq_to_index[event.sequence])
            elif isinstance(event, PeerLost):
                self.lost = event
            else:
                self.bad += 1

    def receive(self, data: bytes, now: float) -> None:
        got = self.got
        for msg in self.circuit.receive_datagram(data, now):
            got.append(msg.blocks["TestBlock1"][0][0])
        self._events()

    def transmit(self, now: float) -> list[bytes]:
        circuit = self.circuit
        while self.lost is None and self.next_index < self.total and circuit.unacked < self.window:
            seq = circuit.send(numbered(self.next_index), reliable=True, now=now)
            self.seq_to_index[seq] = self.next_index
            self.next_index += 1
        out: list[bytes] = circuit.datagrams_to_send(now)
        self._events()
        return out

    def next_deadline(self) -> float | None:
        deadline: float | None = self.circuit.next_deadline()
        return deadline


def pair(
    twin: ModuleType, codec: ModuleType, total: int, seed: int, cfg: LinkConfig, **kw: Any
) -> Network:
    a = Peer(twin.Circuit(codec=codec, **kw), total)
    b = Peer(twin.Circuit(codec=codec, **kw), total)
    return Network(a, b, seed=seed, ab=cfg)


def peers(net: Network) -> tuple[Peer, Peer]:
    a, b = net.a, net.b
    assert isinstance(a, Peer) and isinstance(b, Peer)
    return a, b


def done(net: Network) -> bool:
    a, b = peers(net)
    if a.lost is not None or b.lost is not None:
        return True
    return all(
        p.next_index >= p.total
        and p.circuit.unacked == 0
        and len(o.got) + len(p.dropped) >= p.total
        for p, o in ((a, b), (b, a))
    )


@pytest.mark.slow
def test_reliable_profile_delivers_everything_exactly_once(
    twin: ModuleType, codec: ModuleType
) -> None:
    net = pair(twin, codec, MESSAGES, seed=7, cfg=FAULTY, **RELIABLE)
    net.run(stop=lambda: done(net))
    a, b = peers(net)
    for peer in (a, b):
        assert peer.lost is None
        assert peer.dropped == []
        assert peer.bad == 0
        assert len(peer.got) == MESSAGES  # nothing twice ...
        assert sorted(peer.got) == list(range(MESSAGES))  # ... and nothing missing
        assert peer.circuit.unacked == 0
    stats = net.stats["ab"]
    assert stats["lost"] > 0.25 * stats["sent"]
    assert stats["duplicated"] > 0 and stats["reordered"] > 0
    assert a.circuit.duplicates > 0 and a.circuit.resent > 0


def test_ll_profile_delivers_once_and_reports_what_it_gave_up(
    twin: ModuleType, codec: ModuleType
) -> None:
    count = max(MESSAGES // 10, 100)
    net = pair(twin, codec, count, seed=11, cfg=FAULTY)
    net.run(stop=lambda: done(net))
    a, b = peers(net)
    for peer, other in ((a, b), (b, a)):
        assert peer.lost is None
        assert len(peer.got) == len(set(peer.got))  # exactly once
        missing = set(range(count)) - set(peer.got)
        assert missing <= set(other.dropped)  # only what the sender gave up is missing
        assert other.dropped  # 30% loss and 3 resends: some are given up
    assert a.circuit.max_resends == 3


def test_cut_link_reports_the_lost_peer_within_the_timeout(
    twin: ModuleType, codec: ModuleType
) -> None:
    mild = LinkConfig(loss=0.05, duplicate=0.05, reorder=0.1, delay=0.02, jitter=0.01)
    net = pair(twin, codec, 10**9, seed=3, cfg=mild, **RELIABLE)
    a, b = peers(net)
    net.run(until=30.0)
    assert a.lost is None and b.lost is None and len(a.got) > 1000
    net.cut()
    net.run(stop=lambda: a.lost is not None and b.lost is not None, until=400.0)
    for peer in (a, b):
        assert peer.lost is not None
        assert peer.lost.reason == "no CompletePingCheck for 100 s"
        # the last answered ping came at most one ping interval (+ a round trip) before the cut
        assert 30.0 + 100.0 - 5.2 < peer.lost.at <= 30.0 + 100.0
        assert peer.circuit.next_deadline() is None


def test_idle_circuits_stay_alive_on_pings_alone(twin: ModuleType, codec: ModuleType) -> None:
    net = pair(twin, codec, 0, seed=5, cfg=FAULTY)
    net.run(until=1000.0)
    a, b = peers(net)
    assert a.lost is None and b.lost is None
    assert 0.1 <= a.circuit.ping <= 2.0 and a.circuit.rtt < 1.0


@pytest.mark.parametrize("seed", range(12))
def test_many_seeds_short_runs(twin: ModuleType, codec: ModuleType, seed: int) -> None:
    """Short runs under varied fault mixes (including bursty reordering)."""
    cfg = LinkConfig(
        loss=0.05 + 0.3 * (seed % 4) / 3,
        duplicate=0.2 * (seed % 3) / 2,
        reorder=0.5 * (seed % 5) / 4,
        reorder_delay=0.2,
        delay=0.005 + 0.05 * (seed % 2),
        jitter=0.03,
    )
    net = pair(twin, codec, 400, seed=seed, cfg=cfg, **RELIABLE)
    net.run(stop=lambda: done(net))
    for peer in peers(net):
        assert peer.lost is None
        assert sorted(peer.got) == list(range(400))


def test_netsim_is_deterministic(twin: ModuleType, codec: ModuleType) -> None:
    runs = []
    for _ in range(2):
        net = pair(twin, codec, 500, seed=42, cfg=FAULTY, **RELIABLE)
        steps = net.run(stop=lambda n=net: done(n))
        a, b = peers(net)
        runs.append((steps, net.now, net.stats, a.got, b.got))
    assert runs[0] == runs[1]
    other = pair(twin, codec, 500, seed=43, cfg=FAULTY, **RELIABLE)
    other.run(stop=lambda: done(other))
    assert other.stats != runs[0][2]
