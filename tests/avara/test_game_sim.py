"""The game against a gamecodec Connection, against the game against itself
(game_sim: the game's sender, reader, timers and skip rule from
avaraline/Avara src/net/CUDPConnection.cpp and CUDPComm.cpp, see cpp_model)."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.avara.ack_sim import simulate as ack_sim
from tests.avara.cpp_model import CppAckWriter, CppPeer, reader_drops
from tests.avara.game_sim import GameStats, simulate

SEEDS = range(4)


def _sum(runs: list[GameStats]) -> tuple[int, float, int]:
    """(dropped unreceived, the game's resends per command, given up) over runs."""
    dropped = sum(r.dropped_unreceived for r in runs)
    resends = sum(r.game_resends for r in runs) / sum(r.commands for r in runs)
    return dropped, resends, sum(r.given_up for r in runs)


def test_the_game_against_us_is_the_game_against_itself(twin: ModuleType) -> None:
    """20% loss each way, 20-50 ms each way: the game's reader drops none of
    its commands that we lack, and its resends per command and the commands
    our skip rule gives up stay within 15% of two games', with ``peer_lead=2.0``.
    (With the default blocks, cumulative acks in practice, the game times each
    command after a hole as late as the hole's resend or skip, its retransmit
    time rises and it resends less than 60% as often.)"""
    games = [simulate(None, seed=s, commands=1500) for s in SEEDS]
    ours = [simulate(twin, seed=s, commands=1500, peer_lead=2.0) for s in SEEDS]
    _, g_resends, g_given_up = _sum(games)
    dropped, resends, given_up = _sum(ours)
    assert dropped == 0
    assert resends == pytest.approx(g_resends, rel=0.15), (resends, g_resends)
    assert given_up == pytest.approx(g_given_up, rel=0.15), (given_up, g_given_up)
    assert all(r.delivered + r.given_up == r.commands for r in ours)
    old = [simulate(twin, seed=s, commands=1500) for s in SEEDS]  # the default: no time bound
    assert _sum(old)[1] < 0.6 * g_resends


def test_our_blocks_hold_where_the_games_do_not(twin: ModuleType) -> None:
    """60-120 ms each way, 20% loss: the game's own blocks make its reader
    drop commands the other game never received (aliased bits: the sender
    holds serials more than 64 past the base); ours none."""
    games = [simulate(None, seed=s, commands=600, delay=60, jitter=60) for s in range(2)]
    ours = [
        simulate(twin, seed=s, commands=600, delay=60, jitter=60, peer_lead=2.0) for s in range(2)
    ]
    assert _sum(games)[0] > 0
    assert _sum(ours)[0] == 0


def test_no_margin_drops(twin: ModuleType) -> None:
    """The simulation can fail: with ``peer_lead=0`` (no time for the
    datagrams' trips) our bits alias onto commands the game sent after our
    newest one, and its reader drops some we never received."""
    runs = [simulate(twin, seed=s, commands=2000, peer_lead=0) for s in range(4)]
    assert _sum(runs)[0] > 0


def test_no_loss_no_resends(twin: ModuleType) -> None:
    """Without loss (10-20 ms each way) neither side resends: the game's
    connection to us has cramData 0 until a kpPacketProtocolControl arrives
    (IUDPConnection CUDPConnection.cpp:94, FreshClient :868,
    ReceiveControlPacket :923-933), so it takes no urgent command early
    (CUDPComm.cpp:1191-1201), and neither do we (``peer_cram_data`` 0)."""
    game = simulate(None, seed=0, commands=1000, loss=0.0, delay=10, jitter=10)
    ours = simulate(twin, seed=0, commands=1000, loss=0.0, delay=10, jitter=10)
    assert (game.game_resends, game.other_resends, game.given_up) == (0, 0, 0)
    assert (ours.game_resends, ours.other_resends, ours.given_up) == (0, 0, 0)
    assert ours.delivered == 1000
    told = simulate(twin, seed=0, commands=300, loss=0.0, delay=10, jitter=10, peer_cram_data=3)
    assert told.other_resends > 100  # urgent resends after 2 frames: the cost of a wrong cramData


def test_model_skip_keeps_the_older_block() -> None:
    """ReceivedPacket's skip (CUDPConnection.cpp:665-671) returns
    ReceivedPacket(nullptr), whose own change flag decides the recompute
    (:609-614, 676): a skip that releases nothing leaves the block as it was
    before the command was queued."""
    writer = CppAckWriter(skip_after=3)
    for sn in (4, 8):
        writer.receive(sn)
    assert writer.block() == (0xFFFF, 0b10100)  # base -2: have 4 and 8
    writer.receive(12)  # third queued: 0 is given up; 2 is missing too
    assert writer.skipped == [0] and writer.receive_serial == 2
    assert writer.block() == (0xFFFF, 0b10100)  # the older block, without 12
    writer.receive(2)
    assert writer.delivered == [2, 4] and writer.receive_serial == 6
    assert writer.block() == (5, 0b1010)  # base 4: have 8 and 12


def test_model_resends_are_counted_by_birth_date() -> None:
    """GetOutPacket counts a resend where birthDate != nextSendTime
    (CUDPConnection.cpp:337-340); a command is first sent with nextSendTime
    = retransmitTime later (cramData 0, CUDPComm.cpp:1198-1200) and timed
    from its first send (:1189, :384)."""
    peer = CppPeer(my_id=2, peer_id=1)
    first = peer.send(17, -8, 1, 100, urgent=True)
    assert first is not None and peer.total_sent == 1 and peer.total_resent == 0
    (packet,) = peer.queue
    assert (packet.birth, packet.next_send) == (100, 2100)  # retransmitTime 2000 at first
    assert peer.async_write(2099) is None
    assert peer.async_write(2100) is not None
    assert (peer.total_sent, peer.total_resent, packet.birth) == (2, 1, 100)


def test_model_reader_is_the_x86_shift() -> None:
    """The model's reader (ValidatePackets :547-555) acks every serial of a
    set bit's class mod 64: the base does not change which serials a bit
    stands for."""
    queue = {4, 68, 132, 6}
    assert reader_drops(1, 0b10, queue, max_valid=0xFFFE) == {4, 68, 132}
    assert reader_drops(0x8001, 0b10, queue, max_valid=0x8000) == {4, 68, 132}


def test_peer_lead_assumes_one_command_a_frame(twin: ModuleType) -> None:
    """The limit of ``peer_lead``: a sender that makes 8 commands a frame
    (ack_sim, holding up to 256) runs past the time bound, and its reader
    drops commands we never received; the default drops none."""
    lost = [
        ack_sim(
            twin, seed=s, window=256, per_tick=8, commands=300, peer_lead=2.0, horizon=20
        ).lost_by_reader
        for s in range(2)
    ]
    assert any(lost)
    safe = [ack_sim(twin, seed=s, window=256, per_tick=8, commands=300) for s in range(2)]
    assert all(not r.lost_by_reader for r in safe)
