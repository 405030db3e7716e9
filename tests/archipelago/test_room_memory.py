"""testing.Room's frame log is bounded (count and characters)."""

from __future__ import annotations

import asyncio

import pytest

from gamecodec.archipelago.testing import FrameLog, Game, Room, RoomSlot
from tests.archipelago.room_peer import Peer, connect_command


def test_frame_log_is_bounded() -> None:
    log = FrameLog(max_frames=3, max_chars=10)
    for text in ("aaaa", "bbbb", "cccc", "dd", "x" * 11):
        log.append(("s2c", text))
    assert [t for _, t in log] == ["bbbb", "cccc", "dd"] and log.chars == 10 and log.dropped == 2
    log.append(("c2s", "e"))  # over 3 frames and 10 chars: the oldest goes
    assert log[-1] == ("c2s", "e") and log[:1] == [("s2c", "cccc")] and log.dropped == 3
    off = FrameLog(0, 0)
    off.append(("c2s", "x"))
    assert len(off) == 0 and off.dropped == 1
    with pytest.raises(ValueError, match=">= 0"):
        FrameLog(-1)


def test_the_room_frame_log_stays_within_its_bounds() -> None:
    """300 games' DataPackage in one reply: the log keeps at most max_chars."""
    games = [
        Game(
            f"G{n}",
            {f"item {n} {i}": i for i in range(200)},
            {f"loc {n} {i}": i for i in range(200)},
        )
        for n in range(300)
    ]
    room = Room(
        games=games, slots=[RoomSlot("A", "G0", {0: (1, 1, 0)})], frame_log=(100, 1_000_000)
    )

    async def main() -> None:
        async with room:
            peer = await Peer.open(room)
            await peer.send({"cmd": "GetDataPackage"})
            reply = await peer.expect("DataPackage", timeout=20)
            assert len(reply["data"]["games"]) == 301  # and the reference's "Archipelago"
            await peer.send(connect_command("A", "G0"))
            await peer.expect("Connected")
            for n in range(150):
                await peer.send({"cmd": "Get", "keys": [f"k{n}"]})
            await peer.drain()
        assert room.frames.chars <= 1_000_000 and len(room.frames) <= 100
        assert room.frames.dropped >= 200  # the DataPackage reply (over 1 MB) was never kept

    asyncio.run(asyncio.wait_for(main(), 60))
