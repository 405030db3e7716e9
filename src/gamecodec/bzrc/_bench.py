"""BZRC rows of ``gamecodec bench``: sample replies through both parser twins."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from gamecodec._bench import Case, Target, measure
from gamecodec.bzrc import _codec_py
from gamecodec.bzrc._encode import encode_response
from gamecodec.bzrc.sample import mytanks_responses, occgrid_response

__all__ = ["cases", "split_baseline", "targets"]


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


def split_baseline(texts: list[str]) -> Callable[[], object]:
    """The issue's baseline: a plain ``str.split`` loop over each reply's lines."""

    def run() -> object:
        for text in texts:
            [line.split() for line in text.splitlines()]
        return None

    return run


def cases() -> list[Case]:
    c = _compiled()
    grid = occgrid_response(800)
    tanks = mytanks_responses(64, 20)
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


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratios, measured together in one run."""
    c = _compiled()
    if c is None:
        return []
    grid = occgrid_response(800)
    t_grid_c = measure(_feed_fresh(c, grid), rounds=rounds, min_time=min_time)
    t_grid_py = measure(_feed_fresh(_codec_py, grid), rounds=rounds, min_time=min_time)
    t_copy = measure(lambda: bytes(memoryview(grid)), rounds=rounds, min_time=min_time)
    tanks = mytanks_responses(64, 20)
    texts = [t.decode("latin-1") for t in tanks]
    t_split = measure(split_baseline(texts), rounds=rounds, min_time=min_time)
    t_tanks_c = measure(_feed_each(c, tanks), rounds=rounds, min_time=min_time)
    return [
        Target("bzrc", "800x800 occgrid: pure / compiled", t_grid_py / t_grid_c, 100.0, False),
        Target(
            "bzrc",
            "800x800 occgrid: compiled / bytes(memoryview(reply))",
            t_grid_c / t_copy,
            10.0,
            True,
        ),
        Target(
            "bzrc",
            "mytanks (20 tanks): str.split loop / compiled",
            t_split / t_tanks_c,
            5.0,
            False,
        ),
    ]
