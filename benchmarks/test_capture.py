"""Capture -> Parquet beside iterating the same file with dpkt (the floor), and the
peak memory of a dump of a large generated capture.

``gamecodec bench --protocol capture`` times the same pairs interleaved in one
process (the ratio of record, target <= 3x); here each side runs alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dpkt")
pytest.importorskip("pyarrow")

from gamecodec._bench import Config, Contest, Row
from gamecodec.capture import _bench

CONFIG = Config("quick", 1)


@pytest.fixture(scope="module")
def contests(tmp_path_factory: pytest.TempPathFactory) -> list[Contest | Row]:
    return _bench.contests(CONFIG, str(tmp_path_factory.mktemp("parquet")))


@pytest.mark.parametrize("side", ["gamecodec", "floor"])
@pytest.mark.parametrize(
    "index",
    range(6),
    ids=["lludp", "lludp-read", "lludp-write", "avara", "avara-read", "avara-write"],
)
def test_capture_to_parquet(
    benchmark: Any, contests: list[Contest | Row], index: int, side: str
) -> None:
    item = contests[index]
    if isinstance(item, Row):
        pytest.skip(item.skipped or "not measured here")
    chosen = item.ours if side == "gamecodec" else item.peer
    benchmark.group = f"{item.title} [{item.workload}]"
    benchmark.name = chosen.label
    benchmark.extra_info["items"] = item.items
    benchmark.pedantic(chosen.run, args=(None,), rounds=3, iterations=1)


_PEAK = """
import json, resource, sys
from gamecodec.capture._output import write_tables
rows = write_tables(sys.argv[1], sys.argv[2])
print(json.dumps({"rows": rows, "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _peak(capture: Path, out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(capture), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_memory_stays_flat_as_the_capture_grows(tmp_path: Path) -> None:
    """Peak RSS of a dump to Parquet of 20,000 and of 200,000 LLUDP datagrams."""
    from gamecodec import lludp
    from gamecodec.lludp.sample import region_stream

    wires = [lludp.encode(m) for m in region_stream(20_000)]
    viewer, sim = ("10.0.0.2", 50_000), ("10.0.0.1", 9000)
    peaks = []
    for repeats in (1, 10):
        path = tmp_path / f"x{repeats}.pcap"
        with path.open("wb") as out:
            _bench.write_pcap(
                out,
                (
                    (1.7e9 + (r * len(wires) + n) * 1e-3, sim, viewer, w)
                    for r in range(repeats)
                    for n, w in enumerate(wires)
                ),
            )
        result = _peak(path, tmp_path / f"out{repeats}")
        assert result["rows"]["lludp"] == repeats * len(wires)
        peaks.append(result["peak_kib"])
    # ten times the capture, not ten times the memory (one batch per table is held)
    assert peaks[1] < peaks[0] * 1.5, peaks
