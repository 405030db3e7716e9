"""Connection over a simulated lossy network (tests/netsim.py): loss, reordering, duplicates.

100,000 messages each way by default (``GAMECODEC_FAULT_MESSAGES`` changes the
count). Two profiles:

* ``reliable``: the game's wire behaviour and timers, with the two give-up
  rules off (``skip_after=None``, ``max_resends_without_receive=None``):
  every message must arrive exactly once, in order, with 30% loss.
* ``game``: the game's defaults. The skip rule gives up a serial after 16
  queued commands, so some messages are reported skipped instead of
  delivered; what is delivered is still in order and exactly once. As in the
  game, which sends every frame, filler commands follow the last message
  until the other side has accounted for every message (otherwise a serial
  the sender gave up near the end would hold the last few commands queued,
  with nothing after them to trigger the skip).
"""

from __future__ import annotations

import itertools
import os
from types import ModuleType

import pytest

from gamecodec.avara import CommandId
from gamecodec.avara.session import (
    MAX_TRANSMIT_QUEUE,
    ULP_TIMEOUT,
    Connection,
    PeerLost,
    SerialSkipped,
)
from tests.conftest import load_twin
from tests.netsim import LinkConfig, Network

MESSAGES = int(os.environ.get("GAMECODEC_FAULT_MESSAGES", "100000"))
FRAME = 0.016
KM = int(CommandId.kpKeyAndMouse)
FAULTY = LinkConfig(
    loss=0.30, duplicate=0.05, reorder=0.10, reorder_delay=0.05, delay=0.02, jitter=0.01
)
RELIABLE = {"skip_after": None, "max_resends_without_receive": None}
FILLER = -1  # p3 of the commands sent after the last message (indexes are >= 0)
APP_LIMIT = 32  # the application waits for acks past this many unacked commands


@pytest.fixture(scope="session")
def twin(impl: str) -> ModuleType:
    """The session twin under test: [py] the pure one, [c] the compiled one."""
    return load_twin("gamecodec.avara", "_session", impl)


class Peer:
    """netsim endpoint: a Connection plus an application sending ``total``
    numbered messages (p3 = index), one per 16 ms frame, at most
    ``APP_LIMIT`` unacked at a time (the app waits instead of piling up; the
    protocol's own window is 1024 commands, as the game's)."""

    def __init__(self, conn: Connection, total: int, *, filler: bool = False) -> None:
        self.conn = conn
        self.total = total
        self.filler = filler  # keep sending (FILLER) after the last message
        self.other: Peer | None = None
        self.next_index = 0
        self.got: list[int] = []
        self.skipped: list[int] = []
        self.lost: PeerLost | None = None
        self.net: Network | None = None
        self.waiting = False
        self.limit = APP_LIMIT

    def _events(self) -> None:
        for event in self.conn.events():
            if isinstance(event, SerialSkipped):
                if event.serial < 2 * self.total:  # a filler's serial comes after these
                    self.skipped.append(event.serial)
            else:
                self.lost = event

    def receive(self, data: bytes, now: float) -> None:
        got = self.got
        for cmd in self.conn.receive_datagram(data, now):
            if cmd.p3 != FILLER:
                got.append(cmd.p3)
        self._events()
        if self.waiting and self.conn.unacked < self.limit and self.net is not None:
            self.waiting = False
            self.net.at(now, self.tick)

    def transmit(self, now: float) -> list[bytes]:
        out = self.conn.datagrams_to_send(now)
        self._events()
        return out

    def next_deadline(self) -> float | None:
        return self.conn.next_deadline()

    def accounted(self) -> bool:
        """Every message delivered or reported skipped."""
        return len(self.got) + len(self.skipped) >= self.total

    def tick(self, now: float) -> None:
        """One game frame: send the next message unless ``limit`` are unacked."""
        if self.lost is not None:
            return
        if self.next_index >= self.total:
            other = self.other
            if self.filler and other is not None and not other.accounted():
                self.conn.send(KM, p1=-8, p3=FILLER, now=now)
                assert self.net is not None
                self.net.at(now + FRAME, self.tick)
            return
        if self.conn.unacked >= self.limit:
            self.waiting = True
            return
        self.conn.send(KM, p1=-8, p3=self.next_index, now=now)
        self.next_index += 1
        assert self.net is not None
        self.net.at(now + FRAME, self.tick)


def pair(
    twin: ModuleType, total: int, seed: int, cfg: LinkConfig, filler: bool = False, **kw: object
) -> Network:
    a = Peer(twin.Connection(my_id=1, peer_id=2, **kw), total, filler=filler)  # type: ignore[arg-type]
    b = Peer(twin.Connection(my_id=2, peer_id=1, **kw), total, filler=filler)  # type: ignore[arg-type]
    a.other, b.other = b, a
    net = Network(a, b, seed=seed, ab=cfg)
    a.net = b.net = net
    net.at(0.0, a.tick)
    net.at(0.0, b.tick)
    return net


def done(net: Network) -> bool:
    a, b = net.a, net.b
    assert isinstance(a, Peer) and isinstance(b, Peer)
    return all(
        p.accounted() and (p.filler or p.conn.unacked == 0) and p.lost is None for p in (a, b)
    ) or (a.lost is not None or b.lost is not None)


@pytest.mark.slow
def test_reliable_profile_delivers_everything_exactly_once_in_order(twin: ModuleType) -> None:
    net = pair(twin, MESSAGES, seed=7, cfg=FAULTY, **RELIABLE)
    net.run(stop=lambda: done(net))
    for peer in (net.a, net.b):
        assert isinstance(peer, Peer)
        assert peer.lost is None
        assert peer.skipped == []
        assert peer.got == list(range(MESSAGES))
    stats = net.stats["ab"]
    assert stats["lost"] > 0.25 * stats["sent"]
    assert stats["duplicated"] > 0 and stats["reordered"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("loss", [0.30, 0.05])
def test_game_profile_delivers_in_order_and_reports_skips(twin: ModuleType, loss: float) -> None:
    count = MESSAGES // 5
    cfg = LinkConfig(
        loss=loss, duplicate=0.05, reorder=0.10, reorder_delay=0.05, delay=0.02, jitter=0.01
    )
    assert count < 0x8000  # serials of messages and fillers do not wrap
    # both peers as two games are once their kpPacketProtocolControl arrived (cram data 3:
    # early resends allowed; CUDPConnection.cpp ~927): before it, peer_cram_data is 0
    net = pair(twin, count, seed=11, cfg=cfg, filler=True, peer_cram_data=3)
    net.run(stop=lambda: done(net))
    for peer in (net.a, net.b):
        assert isinstance(peer, Peer)
        assert peer.lost is None
        got = peer.got
        assert all(x < y for x, y in itertools.pairwise(got))  # in order, once
        assert len(got) + len(peer.skipped) == count  # every message accounted for
        assert set(got) <= set(range(count))
        if loss < 0.1:
            assert len(peer.skipped) < count // 100


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["reliable", "game"])
def test_cut_link_reports_peer_lost_on_queue_overflow(twin: ModuleType, profile: str) -> None:
    """The game keeps sending every frame: 1024 waiting commands kill the connection."""
    kw = RELIABLE if profile == "reliable" else {}
    mild = LinkConfig(loss=0.05, duplicate=0.05, reorder=0.1, delay=0.02, jitter=0.01)
    net = pair(twin, 10**9, seed=3, cfg=mild, **kw)
    a, b = net.a, net.b
    assert isinstance(a, Peer) and isinstance(b, Peer)
    a.limit = b.limit = 10**9  # the game does not wait for acks
    net.run(until=30.0)
    assert a.lost is None and b.lost is None and len(a.got) > 1000
    net.cut()
    net.run(stop=lambda: a.lost is not None and b.lost is not None, until=200.0)
    for peer in (a, b):
        assert peer.lost is not None
        assert peer.lost.reason == "transmit queue overflow"
        # at most the queue limit of frames (plus what was in flight at the cut)
        assert 30.0 < peer.lost.at <= 30.0 + (MAX_TRANSMIT_QUEUE + 64) * FRAME


@pytest.mark.parametrize("profile", ["reliable", "game"])
def test_cut_link_idle_peer_lost_after_120s(twin: ModuleType, profile: str) -> None:
    """An application that stops sending: 120 s without an ack kill it (reliable
    profile: resends never stop; game profile: see the report on the 3-resend cap)."""
    kw = RELIABLE if profile == "reliable" else {}
    net = pair(twin, 200, seed=5, cfg=LinkConfig(delay=0.02), **kw)
    a, b = net.a, net.b
    assert isinstance(a, Peer) and isinstance(b, Peer)
    net.run(until=2.0)
    net.cut()
    a.conn.send(KM, p1=-8, p3=-1, now=net.now)  # one more command that cannot arrive
    net.run(stop=lambda: a.lost is not None, until=400.0)
    assert a.lost is not None
    assert a.lost.reason == "no acknowledgement for 120 s"
    assert 2.0 + ULP_TIMEOUT < a.lost.at <= 2.0 + ULP_TIMEOUT + 1.0


@pytest.mark.parametrize("seed", range(20))
def test_many_seeds_short_runs(twin: ModuleType, seed: int) -> None:
    """Short runs under varied fault mixes (including bursty reordering)."""
    rng_cfg = LinkConfig(
        loss=0.05 + 0.3 * (seed % 4) / 3,
        duplicate=0.2 * (seed % 3) / 2,
        reorder=0.5 * (seed % 5) / 4,
        reorder_delay=0.2,
        delay=0.005 + 0.05 * (seed % 2),
        jitter=0.03,
    )
    net = pair(twin, 300, seed=seed, cfg=rng_cfg, **RELIABLE)
    net.run(stop=lambda: done(net))
    for peer in (net.a, net.b):
        assert isinstance(peer, Peer)
        assert peer.lost is None
        assert peer.got == list(range(300))
    # the game's defaults may give up serials (skip rule) or, when the 3-resend
    # cap meets a lost ACK-only datagram, stall until the 120 s kill
    game = pair(twin, 300, seed=seed, cfg=rng_cfg)
    game.run(stop=lambda: done(game))
    peers = (game.a, game.b)
    for peer in peers:
        assert isinstance(peer, Peer)
        assert all(x < y for x, y in itertools.pairwise(peer.got))
    if all(isinstance(p, Peer) and p.lost is None for p in peers):
        for peer in peers:
            assert isinstance(peer, Peer)
            assert len(peer.got) + len(peer.skipped) == 300


def test_netsim_is_deterministic(twin: ModuleType) -> None:
    runs = []
    for _ in range(2):
        net = pair(twin, 500, seed=42, cfg=FAULTY, **RELIABLE)
        steps = net.run(stop=lambda n=net: done(n))
        runs.append((steps, net.now, net.stats))
    assert runs[0] == runs[1]
    other = pair(twin, 500, seed=43, cfg=FAULTY, **RELIABLE)
    other.run(stop=lambda: done(other))
    assert other.stats != runs[0][2]
