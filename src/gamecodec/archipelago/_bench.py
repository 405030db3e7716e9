"""Archipelago rows of ``gamecodec bench``: bundled sample traffic through both twins.

The pure compat twin is the reference semantics (``NetUtils`` run from source),
so every ratio is "how many times faster than the reference": compat decode and
encode (compiled twin), and the typed codec (msgspec Structs, compiled writer).
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from gamecodec._bench import Case, Target
from gamecodec.archipelago import _codec_py, _typed
from gamecodec.archipelago.sample import received_items_frame, sample_session

__all__ = ["cases", "targets"]


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.archipelago._codec_c")
    except ImportError:
        return None


def _each(fn: Callable[[Any], object], batch: list[Any]) -> Callable[[], object]:
    def run() -> object:
        for item in batch:
            fn(item)
        return None

    return run


class _Work:
    """The batches every row runs on: one ReceivedItems x1000 frame, one session."""

    def __init__(self) -> None:
        self.ri = [received_items_frame(1000)]
        self.session = sample_session()
        self.ri_values = [_codec_py.decode(f) for f in self.ri]
        self.session_values = [_codec_py.decode(f) for f in self.session]
        # typed commands as a server builds them (plain lists, no remembered text)
        self.ri_typed = [list(_typed.decode_frame(f)) for f in self.ri]
        self.session_typed = [list(_typed.decode_frame(f)) for f in self.session]

    def batch(self, name: str) -> tuple[list[Any], list[Any], list[Any]]:
        if name == "ri":
            return self.ri, self.ri_values, self.ri_typed
        return self.session, self.session_values, self.session_typed


_LABELS = {"ri": "ReceivedItems x1000", "session": "sample session"}


def cases() -> list[Case]:
    c = _compiled()
    work = _Work()
    typed = _typed.FrameCodec(c if c is not None else _codec_py)
    out: list[Case] = []
    for name in ("ri", "session"):
        frames, values, commands = work.batch(name)
        nbytes = sum(len(f.encode()) for f in frames)
        count = sum(len(v) for v in values)
        label = _LABELS[name]
        out += [
            Case(
                "archipelago",
                f"compat decode ({label})",
                count,
                nbytes,
                None if c is None else _each(c.decode, frames),
                _each(_codec_py.decode, frames),
            ),
            Case(
                "archipelago",
                f"compat encode ({label})",
                count,
                nbytes,
                None if c is None else _each(c.encode, values),
                _each(_codec_py.encode, values),
            ),
            Case(
                "archipelago",
                f"typed decode_frame vs pure compat decode ({label})",
                count,
                nbytes,
                _each(_typed.decode_frame, frames),
                _each(_codec_py.decode, frames),
            ),
            Case(
                "archipelago",
                f"typed encode_frame vs pure compat encode ({label})",
                count,
                nbytes,
                _each(typed.encode_frame, commands),
                _each(_codec_py.encode, values),
            ),
        ]
    return out


def _loops(fn: Callable[[], object], min_time: float) -> int:
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - start >= min_time or loops >= 1 << 20:
            return loops
        loops *= 2


def _seconds(fn: Callable[[], object], loops: int) -> float:
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - start) / loops


def paired_ratio(
    slow: Callable[[], object], fast: Callable[[], object], *, rounds: int, min_time: float
) -> float:
    """Median over rounds of slow-time / fast-time, the two timed back to back in
    each round, so load that drifts during the run (a shared machine) cancels out."""
    slow_loops = _loops(slow, min_time)
    fast_loops = _loops(fast, min_time)
    ratios = [
        _seconds(slow, slow_loops) / _seconds(fast, fast_loops) for _ in range(max(rounds, 3))
    ]
    return statistics.median(ratios)


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratios against the pure twin: compat >= 10x, typed >= 20x, on
    ReceivedItems x1000 and on the sample session (each pair timed round by round)."""
    c = _compiled()
    if c is None:
        return []
    work = _Work()
    typed = _typed.FrameCodec(c)
    out: list[Target] = []
    for name in ("ri", "session"):
        frames, values, commands = work.batch(name)
        label = _LABELS[name]
        pure_decode = _each(_codec_py.decode, frames)
        pure_encode = _each(_codec_py.encode, values)
        rows = [
            ("pure / compiled compat decode", pure_decode, _each(c.decode, frames), 10.0),
            ("pure / compiled compat encode", pure_encode, _each(c.encode, values), 10.0),
            (
                "pure compat decode / typed decode_frame",
                pure_decode,
                _each(_typed.decode_frame, frames),
                20.0,
            ),
            (
                "pure compat encode / typed encode_frame",
                pure_encode,
                _each(typed.encode_frame, commands),
                20.0,
            ),
        ]
        for title, slow, fast, limit in rows:
            ratio = paired_ratio(slow, fast, rounds=rounds, min_time=min_time)
            out.append(Target("archipelago", f"{title} ({label})", ratio, limit, False))
    return out
