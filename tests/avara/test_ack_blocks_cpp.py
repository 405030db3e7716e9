"""Our ack blocks as the deployed game's reader and writer see them (cpp_model)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamecodec.avara import _session_py
from tests.avara.ack_sim import simulate
from tests.avara.cpp_model import CppAckWriter, reader_bit, reader_drops, serial_diff
from tests.avara.test_connection import from_peer

DOCS = Path(__file__).resolve().parents[2] / "docs" / "avara.md"

# (offset past the next serial expected, commands in the datagram): a datagram
# of the serials receive_serial + 2 * (offset + i) for i < count, wrapped into
# the sender's window; any subset, order and repetition of a window's serials
arrival = st.tuples(st.integers(0, 1023), st.integers(1, 4))


def _possible_queue(conn: object, window: int) -> set[int]:
    """Every serial past the base the game's sender may hold when it reads our
    block: it holds at most ``window`` commands, plus the ones our bitmaps made
    it drop (received, so in the receive queue)."""
    base = (conn.receive_serial - 2) & 0xFFFF  # type: ignore[attr-defined]
    reach = window + len(conn.receive_queue)  # type: ignore[attr-defined]
    return {(base + 2 * i) & 0xFFFF for i in range(1, reach + 1)}


def _check_blocks(conn: object, window: int, steps: list[tuple[int, int]]) -> int:
    """Feed ``steps`` to ``conn``; after each, the game's reader, given our
    block and any queue the sender may hold, drops no serial past the base we
    have not received. Returns how many blocks had a bitmap."""
    got: set[int] = set()
    with_bitmap = 0
    for t, (offset, count) in enumerate(steps):
        rs = conn.receive_serial  # type: ignore[attr-defined]
        serials = [(rs + 2 * ((offset + i) % window)) & 0xFFFF for i in range(count)]
        conn.receive_datagram(from_peer(0xFFFE, *serials), t / 100)  # type: ignore[attr-defined]
        got.update(serials)
        ack, bitmap = conn.ack_block()  # type: ignore[attr-defined]
        with_bitmap += bitmap is not None
        queue = _possible_queue(conn, window)
        base = ack & 0xFFFE
        dropped = reader_drops(ack, bitmap, queue, max_valid=base)  # the bitmap's part only
        assert dropped <= got, (hex(ack), bitmap, sorted(dropped - got)[:5])
    return with_bitmap


@given(window=st.integers(1, 1024), steps=st.lists(arrival, max_size=40))
@settings(max_examples=300, deadline=None)
def test_default_blocks_drop_nothing_not_received(
    twin: ModuleType, window: int, steps: list[tuple[int, int]]
) -> None:
    """The default writes no bit the game's reader (x86 shift masking) could
    take for a serial not received, whatever the sender's window up to 1024."""
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0, skip_after=None)
    _check_blocks(conn, window, steps)


@given(window=st.integers(1, 1024), steps=st.lists(arrival, max_size=40), skip=st.booleans())
@settings(max_examples=300, deadline=None)
def test_peer_window_blocks_drop_nothing_not_received(
    twin: ModuleType, window: int, steps: list[tuple[int, int]], skip: bool
) -> None:
    conn = twin.Connection(
        my_id=1, peer_id=2, now=0.0, peer_window=window, skip_after=True if skip else None
    )
    _check_blocks(conn, window, steps)


def test_small_window_keeps_the_bitmap(twin: ModuleType) -> None:
    """Below the aliasing reach the bitmap is written in full."""
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0, peer_window=16, skip_after=None)
    assert _check_blocks(conn, 16, [(1, 1), (3, 2), (9, 1)]) == 3
    assert conn.ack_block() == (0xFFFF, 0b1000011010)


def test_reader_model_is_the_x86_shift() -> None:
    """Facts about the game's reader: bit (((sn - base) >> 1) - 1) & 31."""
    assert reader_bit(4, 0) == 1
    assert reader_bit(64, 0) == 31
    assert reader_bit(66, 0) == 0  # a shift by 32 is a shift by 0
    assert reader_bit(68, 0) == 1  # so serial 68 reads bit 1, serial 4's
    assert reader_bit(0, 0) == 31  # -1 & 31
    assert reader_bit(2, 65534) == 1  # across the wrap
    assert reader_drops(1, 0b10, {4, 68, 132}, max_valid=0xFFFE) == {4, 68, 132}
    assert reader_drops(4, None, {2, 4, 6}, max_valid=0) == {2, 4}


def test_old_blocks_fail_the_model() -> None:
    """The check above catches the blocks the game's own writer would make:
    base 0, 4 received, the sender holding 68."""
    writer = CppAckWriter()
    for sn in (0, 4, 70):
        writer.receive(sn)
    ack, bitmap = writer.block()
    assert (ack, bitmap) == (1, 0b110)  # 70: bit 34, written as bit 2 (serial 6)
    assert reader_drops(ack, bitmap, {2, 6, 68}, max_valid=0) == {6, 68}


WINDOWS = [(8, 1), (32, 1), (64, 4), (256, 8), (1024, 64)]


@pytest.mark.parametrize(("window", "per_tick"), WINDOWS)
def test_game_sender_loses_nothing(twin: ModuleType, window: int, per_tick: int) -> None:
    """A game sender holding up to ``window`` commands (20% loss each way,
    reordering) reads our blocks with its reader: every command is delivered,
    in order, and the reader dropped none we had not received."""
    for seed in range(3):
        res = simulate(twin, seed=seed, window=window, per_tick=per_tick, commands=300)
        assert res.lost_by_reader == []
        assert res.delivered == list(range(0, 600, 2))
        told = simulate(
            twin, seed=seed, window=window, per_tick=per_tick, commands=300, peer_window=window
        )
        assert told.lost_by_reader == []
        assert told.delivered == list(range(0, 600, 2))


def test_the_simulation_catches_an_unsafe_writer(twin: ModuleType) -> None:
    """Told a window of 1 while the sender holds up to 256, the blocks alias:
    the game's reader drops commands never received and the stream stalls."""
    res = simulate(twin, seed=1, window=256, per_tick=8, commands=300, peer_window=1, horizon=20)
    assert res.lost_by_reader
    assert len(res.delivered) < 300


@given(steps=st.lists(st.integers(0, 15), max_size=40))
@settings(max_examples=200, deadline=None)
def test_blocks_match_the_game_writer_one_command_per_datagram(
    twin: ModuleType, steps: list[int]
) -> None:
    """With one command per datagram, everything within base + 64 and a peer
    window under the aliasing reach, our block is the game writer's, except
    after an in-order command that releases nothing (ours is recomputed, the
    game's keeps its older base); otherwise ours is never older."""
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0, skip_after=None, peer_window=1)
    game = CppAckWriter()
    stale = False  # the game kept a block older than its receive serial
    for t, offset in enumerate(steps):
        sn = (conn.receive_serial + 2 * offset) & 0xFFFF
        rs = game.receive_serial
        conn.receive_datagram(from_peer(0xFFFE, sn), t / 100)
        game.receive(sn)
        if game.recomputed:
            stale = False
        elif game.receive_serial != rs and game.queue:
            stale = True
        ours, theirs = conn.ack_block(), game.block()
        if stale:
            assert serial_diff(ours[0] & 0xFFFE, theirs[0] & 0xFFFE) > 0
        else:
            assert ours == theirs


def test_several_commands_in_one_datagram(twin: ModuleType) -> None:
    """The game recomputes its block after each command that changes its
    receive queue, we once per datagram; the blocks differ only where an
    in-order command releases nothing: 6 then 2 after 0 leave the game at base
    0 (computed after 6; 2 released nothing), ours at base 2."""
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0, skip_after=None, peer_window=1)
    game = CppAckWriter()
    for sn in (0, 6, 2):
        game.receive(sn)
    conn.receive_datagram(from_peer(0xFFFE, 0), 0.1)
    conn.receive_datagram(from_peer(0xFFFE, 6, 2), 0.2)
    assert game.block() == (1, 0b100)  # base 0: have 6 (bit 2)
    assert conn.ack_block() == (3, 0b10)  # base 2: have 6 (bit 1)


def test_docs_state_how_blocks_differ_from_the_game() -> None:
    text = DOCS.read_text()
    assert "writes and reads them byte for byte" not in text
    for needle in (
        "peer_window",
        "x86",
        "once per datagram",
        "releases nothing",
        "read late",
        "68 - 2 x (peer_window + queued)",
    ):
        assert needle in text, needle


@given(window=st.integers(1, 1024), steps=st.lists(arrival, max_size=30))
@settings(max_examples=150, deadline=None)
def test_default_late_blocks_drop_nothing_not_received(
    twin: ModuleType, window: int, steps: list[tuple[int, int]]
) -> None:
    """A block the game's reader reads late, after later ones moved its
    maxValid on: with the default, every block written so far, read against
    any queue the sender may hold now, drops nothing we have not received."""
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0, skip_after=None)
    got: set[int] = set()
    blocks: list[tuple[int, int | None]] = []
    for t, (offset, count) in enumerate(steps):
        rs = conn.receive_serial
        serials = [(rs + 2 * ((offset + i) % window)) & 0xFFFF for i in range(count)]
        conn.receive_datagram(from_peer(0xFFFE, *serials), t / 100)
        got.update(serials)
        blocks.append(conn.ack_block())
        queue = _possible_queue(conn, window)
        max_valid = (conn.receive_serial - 2) & 0xFFFF
        for ack, bitmap in blocks:
            dropped = reader_drops(ack, bitmap, queue, max_valid)
            assert dropped <= got, (hex(ack), bitmap, sorted(dropped - got)[:5])


def test_a_late_block_under_a_small_peer_window_can_drop() -> None:
    """The limit of ``peer_window`` below the game's 1024 (docs/avara.md): a
    block read after a later one moved the sender's base on is checked
    against a window counted from its own base. Base -2 with 4 received
    (peer_window 8: bit 2 written); then 0..62 arrive; the sender reads base
    62, holds 64..78, then reads the old block: 68 aliases to 4."""
    conn = _session_py.Connection(my_id=1, peer_id=2, now=0.0, skip_after=None, peer_window=8)
    conn.receive_datagram(from_peer(0xFFFE, 4), 0.0)
    late = conn.ack_block()
    assert late == (0xFFFF, 0b100)
    for i, sn in enumerate(range(0, 64, 2)):
        conn.receive_datagram(from_peer(0xFFFE, sn), 0.01 * (i + 1))
    assert conn.ack_block() == (62, None)
    assert reader_drops(*late, set(range(64, 80, 2)), max_valid=62) == {68}


def _sent(twin: ModuleType, count: int) -> object:
    """A Connection that has sent ``count`` commands (serials 0, 2, ...)."""
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0, max_resends_without_receive=None)
    for i in range(count):
        conn.send(17, p1=-8, p3=i, now=0.0)
        conn.datagrams_to_send(0.0)
    return conn


def test_reading_an_aliased_game_bitmap_drops_nothing_not_received(twin: ModuleType) -> None:
    """The game's writer sets bit ((sn - base) >> 1) - 1) & 31 for a queued
    serial more than 64 past its base: having 68 but not 0 or 4, it writes bit
    2, which also reads as 4. With 71 commands out, that bit is ambiguous and
    is not applied."""
    conn = _sent(twin, 71)  # serials 0..140
    game = CppAckWriter()
    game.receive(68)
    ack, bitmap = game.block()
    assert (ack, bitmap) == (0xFFFF, 0b100)
    conn.receive_datagram(from_peer(ack, bitmap=bitmap), 0.1)
    assert 4 in conn.unacked_serials and conn.unacked == 71


@given(
    count=st.integers(1, 200),
    got=st.lists(st.integers(0, 199), max_size=60),
)
@settings(max_examples=300, deadline=None)
def test_game_blocks_drop_nothing_the_game_lacks(
    twin: ModuleType, count: int, got: list[int]
) -> None:
    """Whatever the game has received of our ``count`` commands, every block
    its writer makes leaves queued each command it does not hold."""
    conn = _sent(twin, count)
    game = CppAckWriter()
    for t, i in enumerate(got):
        if i < count:
            game.receive(2 * i)
            ack, bitmap = game.block()
            conn.receive_datagram(from_peer(ack, bitmap=bitmap), 0.1 + t / 1000)
            held = set(game.queue) | {
                s for s in range(0, 2 * count, 2) if serial_diff(s, game.receive_serial) < 0
            }
            dropped = set(range(0, 2 * count, 2)) - set(conn.unacked_serials)
            assert dropped <= held, sorted(dropped - held)[:5]
