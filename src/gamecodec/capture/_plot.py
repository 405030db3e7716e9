"""``--plot``: message rates over time and sizes by message (needs matplotlib)."""

from __future__ import annotations

import os
from collections import defaultdict

from gamecodec.capture._stats import CaptureStats

__all__ = ["plot"]

TOP = 25
"""Message names shown in the sizes chart (the most frequent)."""


def plot(stats: CaptureStats, path: str | os.PathLike[str]) -> None:
    """Draw ``stats`` into an image at ``path`` (PNG, SVG, PDF: by its suffix)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("--plot needs matplotlib: pip install 'gamecodec[capture]'") from exc

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
