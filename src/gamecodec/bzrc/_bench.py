"""BZRC rows of ``gamecodec bench``: sample replies through both parser twins.

The issue's targets (measured together in one run, see :func:`measure_all`):

- an 800x800 ``occgrid`` reply: the compiled parser at least 100x faster
  than the pure (line-by-line) twin, and at most 10x the cost of copying
  the same bytes (``bytes(memoryview(reply))``);
- ``mytanks`` replies of 20 tanks: the compiled parser (typed
  :class:`~gamecodec.bzrc.MyTank` records) at least 5x faster than a plain
  ``str.split`` loop that decodes each reply, splits it into lines, splits
  each line and converts a tank's fields (:func:`split_baseline`).
"""

from __future__ import annotations

import importlib
import statistics
from collections.abc import Callable
from types import ModuleType

from gamecodec._bench import Case, Target, measure_together, paired_ratio
from gamecodec.bzrc import _codec_py
from gamecodec.bzrc._encode import encode_response
from gamecodec.bzrc.sample import mytanks_responses, occgrid_response

__all__ = [
    "cases",
    "measure_all",
    "split_baseline",
    "split_only_baseline",
    "targets",
]

GRID_SIZE = 800
TANK_REPLIES = 64
TANKS_PER_REPLY = 20


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.bzrc._codec_c")
    except ImportError:
        return None


def _feed_each(mod: ModuleType, replies: list[bytes]) -> Callable[[], object]:
    """One parser (one connection) fed every reply in turn."""
    parser = mod.ResponseParser()

    def run() -> object:
        feed = parser.feed
        for data in replies:
            feed(data)
        return None

    return run


def _feed_fresh(mod: ModuleType, data: bytes) -> Callable[[], object]:
    """A new parser for one reply (the grid case: one reply per call)."""
    cls = mod.ResponseParser
    return lambda: cls().feed(data)


def split_baseline(replies: list[bytes]) -> Callable[[], object]:
    """The mytanks target's baseline: the plain ``str.split`` loop a bot author
    writes. Each reply is decoded, split into lines, each line split on
    whitespace, and a ``mytank`` line's fields converted the way the
    reference client (``bzagents/bzrc.py``, spec §1.11) converts them: ints
    for the index and shot count, floats for the numbers, the words kept as
    str; one plain tuple per tank (cheaper to build than a NamedTuple)."""

    def run() -> object:
        for data in replies:
            tanks = []
            for line in data.decode().splitlines():
                f = line.split()
                if f[0] == "mytank":
                    tanks.append(
                        (
                            int(f[1]),
                            f[2],
                            f[3],
                            int(f[4]),
                            float(f[5]),
                            f[6],
                            float(f[7]),
                            float(f[8]),
                            float(f[9]),
                            float(f[10]),
                            float(f[11]),
                            float(f[12]),
                        )
                    )
        return None

    return run


def split_only_baseline(texts: list[str]) -> Callable[[], object]:
    """For information only (not a target's baseline): already-decoded text,
    lines split into tokens, no field converted, nothing built. This is less
    work than any typed result needs."""

    def run() -> object:
        for text in texts:
            [line.split() for line in text.splitlines()]
        return None

    return run


def cases() -> list[Case]:
    c = _compiled()
    grid = occgrid_response(GRID_SIZE)
    tanks = mytanks_responses(TANK_REPLIES, TANKS_PER_REPLY)
    parsed = _codec_py.ResponseParser().feed(b"".join(tanks))
    return [
        Case(
            "bzrc",
            "ResponseParser.feed (800x800 occgrid reply)",
            1,
            len(grid),
            None if c is None else _feed_fresh(c, grid),
            _feed_fresh(_codec_py, grid),
        ),
        Case(
            "bzrc",
            "ResponseParser.feed (mytanks reply, 20 tanks)",
            len(tanks),
            sum(map(len, tanks)),
            None if c is None else _feed_each(c, tanks),
            _feed_each(_codec_py, tanks),
        ),
        Case(
            "bzrc",
            "encode_response (mytanks reply, 20 tanks; pure only)",
            len(parsed),
            sum(map(len, tanks)),
            None,
            lambda: [encode_response(r) for r in parsed],
        ),
    ]


def measure_all(
    *, rounds: int = 7, min_time: float = 0.05
) -> tuple[dict[str, float], list[Target]]:
    """Everything the targets compare, from one run: the median seconds per
    call of each row, and the targets (each the median of its per-round
    ratios). Rows: ``grid_c``/``grid_py`` (one 800x800 occgrid reply, fresh
    parser), ``grid_copy`` (``bytes(memoryview(reply))``); ``tanks_c``/
    ``tanks_py`` (64 mytanks replies of 20 tanks through one parser),
    ``tanks_split`` (:func:`split_baseline` on the same replies) and
    ``tanks_split_only`` (:func:`split_only_baseline`, information only).
    Empty without the compiled twin."""
    c = _compiled()
    if c is None:
        return {}, []
    grid = occgrid_response(GRID_SIZE)
    tanks = mytanks_responses(TANK_REPLIES, TANKS_PER_REPLY)
    texts = [t.decode() for t in tanks]
    samples = measure_together(
        {
            "grid_c": _feed_fresh(c, grid),
            "grid_py": _feed_fresh(_codec_py, grid),
            "grid_copy": lambda: bytes(memoryview(grid)),
        },
        rounds=rounds,
        min_time=min_time,
    )
    samples.update(
        measure_together(
            {
                "tanks_c": _feed_each(c, tanks),
                "tanks_py": _feed_each(_codec_py, tanks),
                "tanks_split": split_baseline(tanks),
                "tanks_split_only": split_only_baseline(texts),
            },
            rounds=rounds,
            min_time=min_time,
        )
    )
    medians = {name: statistics.median(values) for name, values in samples.items()}
    found = [
        Target(
            "bzrc",
            "800x800 occgrid: pure / compiled",
            paired_ratio(samples, "grid_py", "grid_c"),
            100.0,
            False,
        ),
        Target(
            "bzrc",
            "800x800 occgrid: compiled / bytes(memoryview(reply))",
            paired_ratio(samples, "grid_c", "grid_copy"),
            10.0,
            True,
        ),
        Target(
            "bzrc",
            "mytanks (20 tanks): str.split loop with field conversion / compiled",
            paired_ratio(samples, "tanks_split", "tanks_c"),
            5.0,
            False,
        ),
    ]
    return medians, found


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratios, measured together in one run (:func:`measure_all`)."""
    return measure_all(rounds=rounds, min_time=min_time)[1]
