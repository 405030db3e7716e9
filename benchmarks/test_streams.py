"""Every contest of ``gamecodec bench``: gamecodec and its peer on the same stream."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import all_contests
from gamecodec._bench import Contest, Row

CONTESTS = all_contests()


def _id(item: Contest | Row) -> str:
    return f"{item.protocol}: {item.title} [{item.workload}]"


@pytest.mark.parametrize("side", ["gamecodec", "peer"])
@pytest.mark.parametrize("item", CONTESTS, ids=[_id(c) for c in CONTESTS])
def test_stream(benchmark: Any, item: Contest | Row, side: str) -> None:
    if isinstance(item, Row):
        pytest.skip(item.skipped or "not measured here")
    chosen = item.ours if side == "gamecodec" else item.peer
    if chosen.timed is not None:
        pytest.skip(f"{chosen.label}: timed in a second Python by gamecodec bench only")
    benchmark.group = _id(item)
    benchmark.name = chosen.label
    benchmark.extra_info["items"] = item.items
    benchmark.extra_info["unit"] = item.unit
    benchmark.pedantic(chosen.run, setup=lambda: ((chosen.prepare(),), {}), rounds=3, iterations=1)
