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
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import NamedTuple, TypeVar

__all__ = [
    "PLAIN_WIDTH",
    "Config",
    "Contest",
    "Lazy",
    "Row",
    "Side",
    "describe_result",
    "describe_status",
    "describe_target",
    "legend",
    "measure_together",
    "progress_line",
    "pure_twin",
    "render_table",
    "run_all",
    "run_contest",
    "short_target",
    "skipped",
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Config:
    """How big and how long: ``quick`` (the default: small streams, about half
    a minute for every protocol) or ``full`` (the stream sizes the targets are
    set on, several minutes). ``progress`` gets a line of text as work is done."""

    mode: str = "quick"
    rounds: int = 3
    progress: Callable[[str], None] | None = None
    min_time: float = 0.02

    @property
    def full(self) -> bool:
        """Whether this is a full run."""
        return self.mode == "full"

    @property
    def quick(self) -> bool:
        """Whether this is a quick run."""
        return self.mode == "quick"

    def size(self, quick: _T, full: _T) -> _T:
        """The workload size for this mode."""
        return full if self.full else quick

    def say(self, text: str) -> None:
        """Report progress (when a progress callback is set)."""
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
    ``finish()`` runs once the contest is over (see :class:`Lazy`).
    ``timed(repeat)``, when set, does the timing elsewhere (another process)
    and returns the seconds per pass; ``run`` is then not called."""

    label: str
    run: Callable[[object], object]
    prepare: Callable[[], object] = lambda: None
    release: Callable[[object], None] = lambda _kept: None
    finish: Callable[[], None] = lambda: None
    timed: Callable[[int], float] | None = None


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
    judged: bool = True
    """False in a quick run: its small streams do not measure what the targets are set on."""

    @property
    def status(self) -> str:
        """``met``, ``MISSED``, ``not judged``, ``skipped`` or ``no target``."""
        if self.skipped is not None:
            return "skipped"
        if self.limit is None or self.ratio is None:
            return "no target"
        if not self.judged:
            return "not judged"
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
    if side.timed is not None:
        return side.timed(repeat)
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
    row = Row(
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
    config.say(progress_line(row))
    return row


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
    rows = []
    for item in items:
        if isinstance(item, Row):
            config.say(progress_line(item))
            rows.append(item)
        else:
            rows.append(run_contest(item, config))
    return rows


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


# ---- the table -------------------------------------------------------------------

NOT_MEASURED = "n/a"


def _fmt_us(value: float | None) -> str:
    if value is None:
        return NOT_MEASURED
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def describe_result(row: Row) -> str:
    """``"3.10x faster (2.90-3.30)"`` or ``"0.42x the time (0.40-0.45)"``."""
    if row.ratio is None or row.low is None or row.high is None:
        return NOT_MEASURED
    word = "faster" if row.kind == "speedup" else "the time"
    return f"{row.ratio:.2f}x {word} ({row.low:.2f}-{row.high:.2f})"


def describe_target(row: Row) -> str:
    """``">= 5x faster"``, ``"<= 0.5x the time"`` or ``"no target"``."""
    if row.limit is None:
        return "no target"
    if row.kind == "speedup":
        return f">= {row.limit:g}x faster"
    return f"<= {row.limit:g}x the time"


def _shortfall(row: Row) -> str:
    """How far a missed target is, as a share of the target: ``"38%"``."""
    assert row.ratio is not None and row.limit is not None
    gap = row.limit - row.ratio if row.kind == "speedup" else row.ratio - row.limit
    pct = 100 * gap / row.limit
    return f"{pct:.0f}%" if pct >= 1 else "under 1%"


def short_target(row: Row) -> str:
    """``">= 5x"``, ``"<= 0.5x"`` or ``"none"`` (the unit is the result's)."""
    if row.limit is None:
        return "none"
    return f"{'>=' if row.kind == 'speedup' else '<='} {row.limit:g}x"


def describe_status(row: Row, *, with_target: bool = False) -> str:
    """``met``, ``MISSED by 38%`` (``with_target``: ``MISSED by 38% (target >= 5x
    faster)``), ``not judged`` (a quick run), ``skipped: <why>``, or ``info only``
    for a row without a target."""
    status = row.status
    if status == "skipped":
        return f"skipped: {row.skipped}"
    if status == "MISSED":
        target = f" (target {describe_target(row)})" if with_target else ""
        return f"MISSED by {_shortfall(row)}{target}"
    if status == "no target":
        return "info only"
    return status


def progress_line(row: Row) -> str:
    """One line for a finished row: what, the result, the status."""
    if row.skipped is not None:
        return f"{row.protocol}: {row.title}: skipped ({row.skipped})"
    status = describe_status(row, with_target=True)
    return f"{row.protocol}: {row.title}: {describe_result(row)}, {status}"


class _Column(NamedTuple):
    name: str
    width: int  # where the plain-text table wraps the cells (0: not in the plain table)
    meaning: str


_RESULT = (
    "'Nx faster': the other side's time divided by gamecodec's (higher is better). "
    "'Nx the time': gamecodec's time divided by the other side's (lower is better; used "
    "against floors). The median of the per-round ratios, with the lowest and highest in "
    "parentheses."
)
_STATUS = (
    "'met'; 'MISSED by N%': the result is N% of the target short of it (or over it, for "
    "'the time'); 'not judged': a quick run, whose small streams are not what the targets "
    "are set on (--full judges them); 'skipped' with the reason (a peer not installed "
    "here, or no compiled twin to compare with); 'info only' for rows without a target."
)
_COLUMNS = (
    _Column("protocol", 0, "the protocol package (in the plain table, the heading over its rows)."),
    _Column(
        "what is timed",
        26,
        "the work, mostly as 'gamecodec's call vs the other side'; after the semicolon, "
        "the workload.",
    ),
    _Column(
        "workload",
        0,
        "the stream both sides work through (realistic, items distinct).",
    ),
    _Column(
        "compared with",
        17,
        "a peer library, what a user would write by hand, gamecodec's own pure-Python twin, "
        "or a floor (the least any Python code must do for the same work).",
    ),
    _Column(
        "gamecodec us/item",
        9,
        "gamecodec's time per item (packet, frame, reply, ...) in microseconds, the median "
        "over the rounds.",
    ),
    _Column("other us/item", 0, "the same for what gamecodec is compared with."),
    _Column("result", 15, _RESULT),
    _Column("target", 8, "what the result should reach; 'none' for rows that inform."),
    _Column("status", 13, _STATUS),
)
PLAIN_WIDTH = 100
"""The plain-text report fits this many columns."""


def legend(markdown: bool = False) -> str:
    """What each column of :func:`render_table` means."""
    if markdown:
        return "\n".join(f"- **{c.name}**: {c.meaning}" for c in _COLUMNS)
    return "\n".join(
        textwrap.fill(
            c.meaning, PLAIN_WIDTH, initial_indent=f"  {c.name}: ", subsequent_indent="      "
        )
        for c in _COLUMNS
    )


def _cells(row: Row) -> tuple[str, ...]:
    return (
        row.protocol,
        row.title,
        row.workload or NOT_MEASURED,
        row.peer_label,
        _fmt_us(row.ours_us),
        _fmt_us(row.peer_us),
        describe_result(row),
        describe_target(row),
        describe_status(row),
    )


def _plain_cells(row: Row, note: int | None) -> tuple[str, ...]:
    what = f"{row.title}; {row.workload}" if row.workload else row.title
    status = f"skipped [{note}]" if note is not None else describe_status(row)
    return (
        what,
        row.peer_label,
        _fmt_us(row.ours_us),
        describe_result(row),
        short_target(row),
        status,
    )


def _wrap(cell: str, width: int) -> list[str]:
    return textwrap.wrap(cell, width, break_on_hyphens=False) or [""]


def render_table(rows: list[Row], markdown: bool = False) -> str:
    """The rows as a plain-text table at most :data:`PLAIN_WIDTH` wide (rows
    under a heading per protocol, long cells wrapped, skip reasons as numbered
    notes below) or as a Markdown table of every column."""
    if markdown:
        head = tuple(c.name for c in _COLUMNS)
        lines = [
            "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
            for cells in (head, *(_cells(r) for r in rows))
        ]
        lines.insert(1, "|" + "|".join("---" for _ in head) + "|")
        return "\n".join(lines)
    columns = [c for c in _COLUMNS if c.width]
    notes: dict[str, int] = {}
    for row in rows:
        if row.skipped is not None:
            notes.setdefault(row.skipped, len(notes) + 1)
    body = [
        (r.protocol, _plain_cells(r, notes.get(r.skipped) if r.skipped else None)) for r in rows
    ]
    heading = [_wrap(c.name, c.width) for c in columns]
    wrapped = [
        (protocol, [_wrap(text, c.width) for text, c in zip(texts, columns, strict=True)])
        for protocol, texts in body
    ]
    widths = [
        max(len(line) for cells in [heading, *(w for _, w in wrapped)] for line in cells[i])
        for i in range(len(columns))
    ]

    def lines_of(cells: list[list[str]]) -> list[str]:
        return [
            "  ".join(
                (lines[k] if k < len(lines) else "").ljust(width)
                for lines, width in zip(cells, widths, strict=True)
            ).rstrip()
            for k in range(max(map(len, cells)))
        ]

    out = lines_of(heading)
    out.append("  ".join("-" * w for w in widths))
    current = None
    for name, cells in wrapped:
        if name != current:
            out += ["", name, ""] if current is not None else [name, ""]
            current = name
        else:
            out.append("")
        out += lines_of(cells)
    if notes:
        out.append("")
        for reason, number in notes.items():
            out.append(
                textwrap.fill(
                    reason,
                    PLAIN_WIDTH,
                    initial_indent=f"[{number}] skipped: ",
                    subsequent_indent="    ",
                    break_on_hyphens=False,
                )
            )
    return "\n".join(out)
