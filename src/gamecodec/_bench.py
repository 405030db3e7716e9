"""The timing harness behind ``gamecodec bench`` (no pytest needed).

A :class:`Contest` is one piece of work done by two or more sides (gamecodec
through its public functions, and a peer or a floor) over the same realistic
stream. Its sides are timed in interleaved rounds in one process, the cyclic
GC on, so a change of load on a shared machine hits every side alike; each
ratio is the median of the per-round ratios, with their range.
"""

from __future__ import annotations

import gc
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TypeVar

__all__ = [
    "Config",
    "Contest",
    "Lazy",
    "Row",
    "Side",
    "measure_together",
    "pure_twin",
    "run_all",
    "run_contest",
    "skipped",
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Config:
    """How big and how long: ``quick`` (smoke test), default, or ``full``."""

    mode: str = "default"
    rounds: int = 3
    progress: Callable[[str], None] | None = None
    min_time: float = 0.05

    @property
    def full(self) -> bool:
        return self.mode == "full"

    @property
    def quick(self) -> bool:
        return self.mode == "quick"

    def size(self, quick: _T, default: _T, full: _T) -> _T:
        """The workload size for this mode."""
        return {"quick": quick, "full": full}.get(self.mode, default)

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)


_START = time.perf_counter()


def stderr_progress(text: str) -> None:
    """Progress lines for a terminal (stderr, so ``--json`` stays clean)."""
    print(f"  [{time.perf_counter() - _START:6.1f} s] {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Side:
    """One way of doing the work: ``run()`` does one whole pass over the stream.

    ``prepare()`` (untimed) runs before each pass and returns what ``run`` is
    given, e.g. fresh messages for a sender that consumes them; ``release``
    (untimed) gets what ``run`` returned, e.g. to drop kept results;
    ``finish()`` runs once the contest is over (see :class:`Lazy`)."""

    label: str
    run: Callable[[object], object]
    prepare: Callable[[], object] = lambda: None
    release: Callable[[object], None] = lambda _kept: None
    finish: Callable[[], None] = lambda: None


class Lazy:
    """Inputs built on a contest's first pass and dropped when it is over, so
    that objects one contest needs (decoded messages to encode, say) do not
    sit in the heap the cyclic GC walks while the other contests run."""

    def __init__(self, build: Callable[[], object]) -> None:
        self._build = build
        self._value: object = None

    def get(self) -> object:
        if self._value is None:
            self._value = self._build()
        return self._value

    def drop(self) -> None:
        self._value = None


@dataclass(frozen=True)
class Contest:
    """gamecodec (``ours``) against ``peer``, both over ``items`` items.

    ``kind="speedup"``: the figure is peer time / our time (higher is
    better; ``limit`` is a minimum). ``kind="cost"``: our time / peer time
    (lower is better; ``limit`` is a maximum)."""

    protocol: str
    title: str
    workload: str
    items: int
    unit: str
    ours: Side
    peer: Side
    kind: str = "speedup"
    limit: float | None = None


@dataclass
class Row:
    """A measured (or skipped) contest."""

    protocol: str
    title: str
    workload: str
    unit: str
    ours_label: str
    peer_label: str
    kind: str
    limit: float | None
    ours_us: float | None = None
    peer_us: float | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    skipped: str | None = None
    rounds: list[float] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``met``, ``MISSED``, ``skipped`` or ``no target``."""
        if self.skipped is not None:
            return "skipped"
        if self.limit is None or self.ratio is None:
            return "no target"
        ok = self.ratio >= self.limit if self.kind == "speedup" else self.ratio <= self.limit
        return "met" if ok else "MISSED"

    def as_dict(self) -> dict[str, object]:
        return {
            "protocol": self.protocol,
            "title": self.title,
            "workload": self.workload,
            "unit": self.unit,
            "ours": self.ours_label,
            "peer": self.peer_label,
            "kind": self.kind,
            "ours_us_per_item": self.ours_us,
            "peer_us_per_item": self.peer_us,
            "ratio": self.ratio,
            "ratio_low": self.low,
            "ratio_high": self.high,
            "ratio_per_round": self.rounds,
            "limit": self.limit,
            "status": self.status,
            "skipped": self.skipped,
        }


def skipped(
    protocol: str,
    title: str,
    reason: str,
    *,
    peer: str,
    kind: str = "speedup",
    limit: float | None = None,
    workload: str = "",
) -> Row:
    """A row whose peer (or our compiled twin) is not available here."""
    return Row(protocol, title, workload, "", "gamecodec", peer, kind, limit, skipped=reason)


def _timed_pass(side: Side, repeat: int = 1) -> float:
    """Seconds per pass, over ``repeat`` passes (each prepared and released untimed)."""
    total = 0.0
    gc.collect()  # each round starts from a collected heap, whatever the last one left
    for _ in range(repeat):
        arg = side.prepare()
        start = time.perf_counter()
        kept = side.run(arg)
        total += time.perf_counter() - start
        side.release(kept)
        del kept, arg
    return total / repeat


def _repeats(seconds: float, min_time: float) -> int:
    """Passes per round so that a round of this side lasts ``min_time``."""
    return max(1, min(200, int(min_time / max(seconds, 1e-9)) + 1)) if seconds < min_time else 1


def run_contest(contest: Contest, config: Config) -> Row:
    """Time both sides of ``contest`` in turn, round after round.

    One untimed warm-up pass each first; a side whose pass is short runs
    several passes per round (``Config.min_time``); the order alternates."""
    config.say(f"{contest.protocol}: {contest.title} ...")
    reps = {
        "ours": _repeats(_timed_pass(contest.ours), config.min_time),
        "peer": _repeats(_timed_pass(contest.peer), config.min_time),
    }
    ours: list[float] = []
    peer: list[float] = []
    for r in range(config.rounds):
        if r % 2:
            peer.append(_timed_pass(contest.peer, reps["peer"]))
            ours.append(_timed_pass(contest.ours, reps["ours"]))
        else:
            ours.append(_timed_pass(contest.ours, reps["ours"]))
            peer.append(_timed_pass(contest.peer, reps["peer"]))
    contest.ours.finish()
    contest.peer.finish()
    if contest.kind == "speedup":
        ratios = [p / o for o, p in zip(ours, peer, strict=True)]
    else:
        ratios = [o / p for o, p in zip(ours, peer, strict=True)]
    scale = 1e6 / max(1, contest.items)
    return Row(
        contest.protocol,
        contest.title,
        contest.workload,
        contest.unit,
        contest.ours.label,
        contest.peer.label,
        contest.kind,
        contest.limit,
        ours_us=statistics.median(ours) * scale,
        peer_us=statistics.median(peer) * scale,
        ratio=statistics.median(ratios),
        low=min(ratios),
        high=max(ratios),
        rounds=ratios,
    )


def pure_twin(implementation: str, *names: str) -> tuple[ModuleType | None, str]:
    """The pure twin (the first of ``names`` that imports), when the compiled
    twin is the one in use (``gamecodec.implementation()[implementation]``);
    else ``None`` and why (the row comparing them is then skipped)."""
    import gamecodec

    if gamecodec.implementation().get(implementation) != "c":
        return None, "the compiled twin is not loaded here (pure Python only)"
    for name in names:
        try:
            return importlib.import_module(name), ""
        except ImportError:
            continue
    return None, "the pure twin is not importable"


def run_all(items: list[Contest | Row], config: Config) -> list[Row]:
    """Time every contest (rows already made, e.g. skipped ones, pass through)."""
    return [item if isinstance(item, Row) else run_contest(item, config) for item in items]


def _calibrate(fn: Callable[[], object], min_time: float) -> int:
    """How many calls of ``fn`` (after one warm-up call) take ``min_time``."""
    fn()
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or loops >= 1 << 22:
            return loops
        loops *= 2 if elapsed <= 0 else max(2, min(10, int(min_time / elapsed) + 1))


def measure_together(
    fns: dict[str, Callable[[], object]], *, rounds: int = 5, min_time: float = 0.02
) -> dict[str, list[float]]:
    """Seconds per call of each function in each of ``rounds`` interleaved
    rounds (each function for its own calibrated loop count): for the
    single-packet table, where one call is too short to time alone."""
    loops = {name: _calibrate(fn, min_time) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(loops[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / loops[name])
    return samples
