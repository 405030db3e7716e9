"""Avara Connection: per-packet session cost against the compiled decode.

One round plays 500 frames: each of two peers sends one kpKeyAndMouse per
frame and receives the other's (1000 datagrams). The issue's target: the
session's per-packet work (receive + ack bookkeeping + send) at most 2x the
compiled ``decode_datagram`` of the same datagrams (see
``gamecodec.avara._bench_session.targets`` for the ratio in one run).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from gamecodec.avara import _codec_c
from gamecodec.avara._bench_session import _Play

FRAMES = 500
GROUP = "avara: Connection, 500 frames (1000 kpKeyAndMouse datagrams)"


@pytest.mark.benchmark(group=GROUP)
def test_session_play(benchmark: Any, avara_codec: ModuleType) -> None:
    game = _Play(avara_codec)
    received = benchmark(game.run, FRAMES)
    assert received == 2 * FRAMES


@pytest.mark.benchmark(group=GROUP)
def test_compiled_decode_baseline(benchmark: Any) -> None:
    """The same 1000 datagrams (both directions) through the compiled decoder."""
    game = _Play(_codec_c)
    game.run(FRAMES)
    wire = list(game.wire)
    decode = _codec_c.decode_datagram

    def decode_all() -> None:
        for data in wire:
            decode(data)

    benchmark(decode_all)
    assert len(wire) == 2 * FRAMES
