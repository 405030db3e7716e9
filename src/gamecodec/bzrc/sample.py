"""Deterministic sample traffic for benchmarks and examples.

Shaped like replies recorded from a real bzrflag server: the
four_ls map's obstacles, 12-significant-digit floats, the 28-space mytank
gap, ``0`` reload/angvel until set.
"""

from __future__ import annotations

import math
import random

import numpy as np
import numpy.typing as npt

from gamecodec._public import public_dir
from gamecodec.bzrc._encode import encode_response
from gamecodec.bzrc._models import Ack, Listing, MyTank, OccGrid

__all__ = ["FOUR_LS_BOXES", "four_ls_grid", "mytanks_responses", "occgrid_response"]

FOUR_LS_BOXES: tuple[tuple[int, int, int, int], ...] = (
    (90, 90, 150, 150),
    (90, 150, 150, 210),
    (150, 90, 210, 150),
    (90, -150, 150, -90),
    (150, -150, 210, -90),
    (90, -210, 150, -150),
    (-150, -150, -90, -90),
    (-150, -210, -90, -150),
    (-210, -150, -150, -90),
    (-150, 90, -90, 150),
    (-150, 150, -90, 210),
    (-210, 90, -150, 150),
    (-10, -60, 10, 60),
)
"""(x1, y1, x2, y2) of the four_ls map's boxes, from the recorded ``obstacles`` reply."""


def four_ls_grid(size: int = 800) -> npt.NDArray[np.uint8]:
    """The whole four_ls world as an occgrid: rows are x, columns y."""
    grid = np.zeros((size, size), dtype=np.uint8)
    half = size // 2
    for x1, y1, x2, y2 in FOUR_LS_BOXES:
        grid[x1 + half : x2 + half, y1 + half : y2 + half] = 1
    return grid


def occgrid_response(size: int = 800) -> bytes:
    """A full-world ``occgrid`` reply (ack, begin, at, size, rows, end)."""
    half = size // 2
    grid = OccGrid(Ack(1.18974399567, "occgrid", ()), -half, -half, four_ls_grid(size))
    return encode_response(grid)


def _float(rng: random.Random, low: float, high: float) -> float:
    return float(f"{rng.uniform(low, high):.12g}")


def mytanks_responses(count: int = 64, tanks: int = 20, seed: int = 1) -> list[bytes]:
    """``count`` successive ``mytanks`` replies of ``tanks`` moving tanks."""
    rng = random.Random(seed)
    state = [
        [rng.uniform(-400, -300), rng.uniform(-60, 60), rng.uniform(-math.pi, math.pi)]
        for _ in range(tanks)
    ]
    out = []
    for tick in range(count):
        items = []
        for i, (x, y, angle) in enumerate(state):
            moving = i % 3 != 2
            if moving:
                state[i][0] += rng.uniform(-1, 1)
                state[i][1] += rng.uniform(-1, 1)
                state[i][2] = math.remainder(angle + rng.uniform(-0.2, 0.2), math.tau)
            reload: int | float = round(rng.uniform(-0.001, 2.5), 6) if moving and tick % 2 else 0
            items.append(
                MyTank(
                    i,
                    f"red{i}",
                    "alive",
                    10 - (i % 3),
                    reload,
                    "-",
                    int(x),
                    int(y),
                    float(f"{state[i][2]:.12g}"),
                    _float(rng, -25, 25) if moving else -0.0,
                    _float(rng, -25, 25) if moving else 0.0,
                    _float(rng, -1, 1) if moving else 0,
                )
            )
        ack = Ack(float(f"{3.0 + tick * 0.1:.12g}"), "mytanks", ())
        out.append(encode_response(Listing(ack, list(items))))
    return out


__dir__ = public_dir(__name__)
