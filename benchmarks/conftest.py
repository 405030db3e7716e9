"""Benchmarks on realistic streams: the contests of ``gamecodec bench``, each side alone.

Run: ``pytest benchmarks`` (``--benchmark-disable`` runs every side once: a
smoke test). Each group holds gamecodec and its peer on the same stream (the
sizes of a default ``gamecodec bench`` run); compare within a group, by the
``items`` in ``extra_info``. ``gamecodec bench`` times the same pairs
interleaved in one process, which is what its ratios come from.
"""

from __future__ import annotations

import importlib

from gamecodec._bench import Config, Contest, Row
from gamecodec._protocols import protocols

SUITES = tuple(suite for p in protocols() for suite in p.bench_suites)
"""Every protocol's bench suites, from the protocols' declarations."""
CONFIG = Config("quick", 1)


def all_contests() -> list[Contest | Row]:
    """Every contest of every protocol at the quick sizes (skipped rows included)."""
    out: list[Contest | Row] = []
    for name in SUITES:
        out.extend(importlib.import_module(name).contests(CONFIG))
    return out
