"""Avara Connection: per-packet session cost against the compiled decode.

One round plays 500 frames. Each of two peers sends one kpKeyAndMouse per frame
and receives the other's, so a round is 1000 datagrams of 17 or 19 bytes. The group
puts side by side:

* the pure and the compiled session twins, with the loop that drives them;
* the same loop driving ``_session_c._Idle``, a compiled stand-in that does
  nothing and allocates nothing (the loop plus the bare calls);
* the compiled ``decode_datagram`` of the same 1000 datagrams.

The issue's target is ``(session[c] - idle) / decode <= 2``: the session's own
per-packet work (receive + ack bookkeeping + send) against one compiled decode.
``gamecodec.avara._bench_session.targets`` computes these ratios in one run.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from gamecodec.avara import _codec_c, _session_c
from gamecodec.avara._bench_session import _Play

FRAMES = 500
GROUP = "avara: Connection, 500 frames (1000 kpKeyAndMouse datagrams)"


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("impl", ["py", "c"])
def test_session_play(benchmark: Any, impl: str) -> None:
    game = _Play(importlib.import_module(f"gamecodec.avara._session_{impl}"))
    received = benchmark(game.run, FRAMES)
    assert received == 2 * FRAMES


@pytest.mark.benchmark(group=GROUP)
def test_idle_driver(benchmark: Any) -> None:
    """The driving loop and the bare calls, on a compiled do-nothing stand-in."""
    game = _Play(_session_c, _session_c._Idle(b"\x00" * 19))
    received = benchmark(game.run, FRAMES)
    assert received == 2 * FRAMES


@pytest.mark.benchmark(group=GROUP)
def test_compiled_decode_baseline(benchmark: Any) -> None:
    """The same 1000 datagrams (both directions) through the compiled decoder."""
    wire = _Play(_session_c).record(FRAMES)
    decode = _codec_c.decode_datagram

    def decode_all() -> None:
        for data in wire:
            decode(data)

    benchmark(decode_all)
    assert len(wire) == 2 * FRAMES
    assert {len(data) for data in wire} <= {17, 19}  # ack block + one command
