"""The timing harness behind ``gamecodec bench`` (no pytest needed).

Each protocol's ``_bench.py`` offers :class:`Case` objects: the same work on
the compiled and the pure twin (and, for ratios, a baseline). Times are the
median of several rounds, each round long enough to swamp timer noise.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "Case",
    "Result",
    "Target",
    "calibrate",
    "measure",
    "measure_together",
    "paired_ratio",
    "run_case",
]


@dataclass(frozen=True)
class Case:
    """One operation over a fixed batch: ``packets`` items, ``nbytes`` bytes."""

    protocol: str
    operation: str
    packets: int
    nbytes: int
    compiled: Callable[[], object] | None
    pure: Callable[[], object]


@dataclass(frozen=True)
class Result:
    protocol: str
    operation: str
    packets: int
    nbytes: int
    compiled_s: float | None
    pure_s: float

    @property
    def ratio(self) -> float | None:
        """How many times faster the compiled twin is."""
        return None if self.compiled_s is None else self.pure_s / self.compiled_s

    def rate(self, seconds: float | None) -> tuple[float, float] | None:
        """(packets/s, MB/s) for a time per batch."""
        if seconds is None:
            return None
        return self.packets / seconds, self.nbytes / seconds / 1e6

    def as_dict(self) -> dict[str, object]:
        return {
            "protocol": self.protocol,
            "operation": self.operation,
            "packets": self.packets,
            "bytes": self.nbytes,
            "compiled_seconds": self.compiled_s,
            "pure_seconds": self.pure_s,
            "compiled_packets_per_s": None
            if self.compiled_s is None
            else self.packets / self.compiled_s,
            "pure_packets_per_s": self.packets / self.pure_s,
            "ratio": self.ratio,
        }


@dataclass(frozen=True)
class Target:
    """A ratio the issue tracker asks for, measured in the same run."""

    protocol: str
    name: str
    value: float
    limit: float
    at_most: bool

    @property
    def met(self) -> bool:
        return self.value <= self.limit if self.at_most else self.value >= self.limit

    def as_dict(self) -> dict[str, object]:
        return {
            "protocol": self.protocol,
            "name": self.name,
            "value": self.value,
            "limit": self.limit,
            "at_most": self.at_most,
            "met": self.met,
        }


def calibrate(fn: Callable[[], object], min_time: float) -> int:
    """How many calls of ``fn`` (after one warm-up call) take ``min_time``."""
    fn()
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or loops >= 1 << 24:
            return loops
        loops *= 2 if elapsed <= 0 else max(2, min(10, int(min_time / elapsed) + 1))


def _seconds(fn: Callable[[], object], loops: int) -> float:
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - start) / loops


def measure(fn: Callable[[], object], *, rounds: int = 7, min_time: float = 0.05) -> float:
    """Median seconds per call of ``fn`` over ``rounds`` rounds."""
    loops = calibrate(fn, min_time)
    return statistics.median(_seconds(fn, loops) for _ in range(rounds))


def measure_together(
    fns: dict[str, Callable[[], object]], *, rounds: int = 7, min_time: float = 0.05
) -> dict[str, list[float]]:
    """Seconds per call of each function in each of ``rounds`` interleaved rounds.

    Each round times every function in turn (each for its own calibrated loop
    count), so a change of load on a shared machine hits every side of a
    ratio alike instead of one side only."""
    loops = {name: calibrate(fn, min_time) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            samples[name].append(_seconds(fn, loops[name]))
    return samples


def paired_ratio(samples: dict[str, list[float]], top: str, bottom: str) -> float:
    """Median over rounds of ``top / bottom`` measured within each round."""
    return statistics.median(a / b for a, b in zip(samples[top], samples[bottom], strict=True))


def run_case(case: Case, *, rounds: int = 7, min_time: float = 0.05) -> Result:
    """Time both twins of ``case`` in interleaved rounds; medians of each."""
    fns = {"pure": case.pure}
    if case.compiled is not None:
        fns["compiled"] = case.compiled
    samples = measure_together(fns, rounds=rounds, min_time=min_time)
    compiled = statistics.median(samples["compiled"]) if "compiled" in samples else None
    pure = statistics.median(samples["pure"])
    return Result(case.protocol, case.operation, case.packets, case.nbytes, compiled, pure)
