"""The Dask batch path on a distributed.LocalCluster of 2 workers: the same rows
as the single-process run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from gamecodec.capture._dask import capture_to_parquet, to_parquet  # noqa: E402

from . import pcapgen, unitgen  # noqa: E402


def _captures(folder: Path) -> list[Path]:
    packets = unitgen.mixed_packets()
    folder.mkdir()
    return [
        pcapgen.write(folder / "a.pcap", packets),
        pcapgen.write(folder / "b.pcapng", pcapgen.shifted(packets, 60.0), fmt="pcapng"),
        pcapgen.write(folder / "c.pcap", packets[: len(packets) // 2], link="sll2"),
    ]


def _rows(out: Path) -> dict[str, list[dict]]:  # type: ignore[type-arg]
    tables = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        table = pa.concat_tables(pq.read_table(f) for f in sorted(folder.glob("*.parquet")))
        key = lambda r: (r["capture"], r["packet"] or 0, r["flow"] or 0, str(r))  # noqa: E731
        tables[folder.name] = sorted(table.to_pylist(), key=key)
    return tables


def test_local_cluster_writes_the_rows_of_the_single_process_run(tmp_path: Path) -> None:
    paths = _captures(tmp_path / "captures")
    single = tmp_path / "single"
    for number, path in enumerate(paths):
        capture_to_parquet(number, str(path), str(single))
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with distributed.get_task_stream(client) as stream:
            counts = to_parquet(paths, tmp_path / "dask")
        workers = set(client.run(os.getpid).values())
    assert len(workers) == 2 and os.getpid() not in workers
    assert len(stream.data) >= len(paths)  # the tasks ran on the cluster
    expected = _rows(single)
    assert set(expected) >= {"lludp", "avara", "bzrc"}
    assert _rows(tmp_path / "dask") == expected
    assert counts == {name: len(rows) for name, rows in expected.items()}
    assert {r["capture"] for r in expected["lludp"]} == {"a.pcap", "b.pcapng", "c.pcap"}


def test_the_local_scheduler_writes_the_same_files(tmp_path: Path) -> None:
    paths = _captures(tmp_path / "captures")
    single = tmp_path / "single"
    for number, path in enumerate(paths):
        capture_to_parquet(number, str(path), str(single))
    to_parquet(paths, tmp_path / "threads", scheduler="threads")
    assert _rows(tmp_path / "threads") == _rows(single)
