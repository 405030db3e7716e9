"""``--plot``: message rates over time and sizes by message (needs matplotlib)."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from gamecodec.capture._stats import CaptureStats

__all__ = ["check", "plot"]

TOP = 25
"""Message names shown in the sizes chart (the most frequent)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("--plot needs matplotlib: pip install 'gamecodec[capture]'") from exc
    return plt


def check(path: str | os.PathLike[str]) -> None:
    """Raise before any work if ``path`` cannot be drawn into: :class:`ImportError`
    without matplotlib, :class:`ValueError` for a suffix it does not write."""
    plt = _pyplot()
    suffix = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    known = plt.figure().canvas.get_supported_filetypes()
    plt.close("all")
    if suffix not in known:
        formats = ", ".join(sorted(known))
        raise ValueError(f"--plot {os.fspath(path)}: the suffix names the format, one of {formats}")


def plot(stats: CaptureStats, path: str | os.PathLike[str]) -> None:
    """Draw ``stats`` into an image at ``path`` (PNG, SVG, PDF: by its suffix)."""
    plt = _pyplot()

    fig, (rates, sizes) = plt.subplots(2, 1, figsize=(10, 9), layout="constrained")
    series: dict[str, dict[int, int]] = defaultdict(dict)
    for (protocol, second), count in stats.timeline.items():
        series[protocol][second] = count
    start = min((s for (_, s) in stats.timeline), default=0)
    for protocol, counts in sorted(series.items()):
        seconds = range(min(counts), max(counts) + 1)
        rates.plot(
            [s - start for s in seconds],
            [counts.get(s, 0) for s in seconds],
            label=protocol,
            marker=".",
        )
    rates.set_title("Messages per second")
    rates.set_xlabel("seconds from the first message")
    rates.set_ylabel("units per second")
    if series:
        rates.legend()
    top = sorted(stats.sizes.items(), key=lambda kv: -kv[1][0])[:TOP]
    labels = [f"{protocol}: {name}" for (protocol, name), _ in top]
    means = [size / count for _, (count, size) in top]
    sizes.barh(range(len(top)), means)
    sizes.set_yticks(range(len(top)), labels, fontsize=7)
    sizes.invert_yaxis()
    sizes.set_title(f"Mean size by message (the {TOP} most frequent)")
    sizes.set_xlabel("bytes on the wire")
    fig.savefig(path)
    plt.close(fig)
