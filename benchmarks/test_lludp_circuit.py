"""LLUDP Circuit: per-packet circuit cost against the compiled decode.

One round plays 500 frames: each of two circuits sends one AgentUpdate per
frame (reliable, or unreliable) and receives the other's, acks riding on the
next AgentUpdate (1000 datagrams). ``[py-c]`` is the pure circuit on the
compiled codec, ``[c-c]`` the compiled circuit on the compiled codec, and the
baseline the compiled ``lludp.decode`` of the same 1000 datagrams (captured by a
separate, untimed ``_Play.capture`` run of the same game); ``idle`` is the same
loop driving the compiled ``_Idle`` stand-in (the loop and the bare calls). The
issue's target: per-packet circuit work (receive + ack bookkeeping + send, the
circuit's encode and decode included, the idle loop left out) at most 2x that
decode (``gamecodec.lludp._bench_circuit.targets`` gives the ratios of one
run, rounds interleaved).
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from gamecodec.lludp import _codec_c, default_template
from gamecodec.lludp._bench_circuit import _Play

FRAMES = 500


def _group(reliable: bool) -> str:
    kind = "reliable" if reliable else "unreliable"
    return f"lludp Circuit, {FRAMES} frames ({kind} AgentUpdate each way, 1000 datagrams)"


@pytest.fixture(params=["py", "c"])
def circuit_twin(request: pytest.FixtureRequest) -> Any:
    return importlib.import_module(f"gamecodec.lludp._circuit_{request.param}")


@pytest.mark.parametrize("reliable", [True, False], ids=["reliable", "unreliable"])
def test_circuit_play(benchmark: Any, circuit_twin: Any, reliable: bool) -> None:
    benchmark.group = _group(reliable)
    game = _Play(circuit_twin, _codec_c, reliable=reliable)
    received = benchmark(game.run, FRAMES)
    assert received >= 2 * FRAMES  # (plus a few pings and their answers)


@pytest.mark.parametrize("reliable", [True, False], ids=["reliable", "unreliable"])
def test_compiled_decode_baseline(benchmark: Any, reliable: bool) -> None:
    """The same 1000 datagrams (both directions) through the compiled decoder."""
    benchmark.group = _group(reliable)
    circuit_c = importlib.import_module("gamecodec.lludp._circuit_c")
    game = _Play(circuit_c, _codec_c, reliable=reliable)
    game.capture(FRAMES)
    wire = list(game.wire)
    template = default_template()
    decode = _codec_c.decode

    def decode_all() -> None:
        for data in wire:
            decode(data, template, False, 8192)

    benchmark(decode_all)
    assert len(wire) >= 2 * FRAMES


@pytest.mark.parametrize("reliable", [True, False], ids=["reliable", "unreliable"])
def test_idle_loop(benchmark: Any, reliable: bool) -> None:
    """The same loop driving the compiled ``_Idle`` (nothing done, nothing allocated)."""
    benchmark.group = _group(reliable)
    circuit_c = importlib.import_module("gamecodec.lludp._circuit_c")
    game = _Play(circuit_c, _codec_c, reliable=reliable)
    game.capture(1)
    idle = _Play(circuit_c, _codec_c, reliable=reliable, idle=circuit_c._Idle(game.wire[0]))
    received = benchmark(idle.run, FRAMES)
    assert received == 2 * FRAMES
