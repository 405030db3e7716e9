"""BZRC: the occgrid and mytanks replies through both parser twins, with the
issue's baselines (a copy of the same bytes; a plain str.split loop that
decodes, splits and converts a tank's fields like the reference client).
``gamecodec bench --protocol bzrc`` computes the target ratios in one run."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from gamecodec.bzrc._bench import split_baseline, split_only_baseline
from gamecodec.bzrc.sample import mytanks_responses, occgrid_response

GRID = occgrid_response(800)
TANKS = mytanks_responses(64, 20)
TANK_TEXTS = [t.decode("latin-1") for t in TANKS]


@pytest.fixture(scope="module", params=["py", "c"])
def bzrc_codec(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(f"gamecodec.bzrc._codec_{request.param}")


def reference_style_grid(data: bytes) -> list[list[int]]:
    """Per-cell parsing in the style of the reference client (informational)."""
    lines = data.split(b"\n")
    width, height = (int(v) for v in lines[3].split()[1].split(b"x"))
    grid = [[0] * height for _ in range(width)]
    for x in range(width):
        for y, cell in enumerate(lines[4 + x].decode()):
            if cell == "1":
                grid[x][y] = 1
    return grid


@pytest.mark.benchmark(group="bzrc: one 800x800 occgrid reply")
def test_grid_parse(benchmark: Any, bzrc_codec: ModuleType) -> None:
    (grid,) = benchmark(lambda: bzrc_codec.ResponseParser().feed(GRID))
    assert grid.grid.shape == (800, 800) and grid.grid.dtype == np.uint8


@pytest.mark.benchmark(group="bzrc: one 800x800 occgrid reply")
def test_grid_copy_baseline(benchmark: Any) -> None:
    """``bytes(memoryview(reply))``: the compiled parse may cost at most 10x this."""
    assert benchmark(lambda: bytes(memoryview(GRID))) == GRID


@pytest.mark.benchmark(group="bzrc: one 800x800 occgrid reply")
def test_grid_reference_style_baseline(benchmark: Any) -> None:
    grid = benchmark.pedantic(reference_style_grid, (GRID,), rounds=3, iterations=1)
    assert len(grid) == 800


@pytest.mark.benchmark(group="bzrc: 64 mytanks replies of 20 tanks")
def test_mytanks_parse(benchmark: Any, bzrc_codec: ModuleType) -> None:
    parser = bzrc_codec.ResponseParser()

    def run() -> int:
        return sum(len(parser.feed(data)) for data in TANKS)

    assert benchmark(run) == len(TANKS)


@pytest.mark.benchmark(group="bzrc: 64 mytanks replies of 20 tanks")
def test_mytanks_split_baseline(benchmark: Any) -> None:
    """The 5x target's baseline: decode, splitlines, split, convert each
    tank's fields (ints, floats, str) into a tuple."""
    benchmark(split_baseline(TANKS))


@pytest.mark.benchmark(group="bzrc: 64 mytanks replies of 20 tanks")
def test_mytanks_split_only(benchmark: Any) -> None:
    """Information only: pre-decoded text split into tokens, nothing converted."""
    benchmark(split_only_baseline(TANK_TEXTS))
