"""A folder of captures as a batch job on Dask: one task per capture, writing Parquet.

Each task reads one capture and writes its tables to
``OUT/<table>/<number>-<capture name>.parquet`` (``number``: the capture's place in
the list, so that two captures of the same name do not collide). Every table's
folder is then one Parquet dataset (``dask.dataframe.read_parquet``, DuckDB's
``read_parquet('OUT/lludp/*.parquet')``, ``pyarrow.dataset.dataset``). The rows
are those a single process writes for the same captures.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from gamecodec.capture._output import write_tables
from gamecodec.capture._source import capture_name

__all__ = ["capture_to_parquet", "single_process", "to_parquet"]


def capture_to_parquet(
    number: int, path: str, out: str, protocols: Sequence[str] = ()
) -> dict[str, int]:
    """One task: the tables of capture ``path`` under ``out``; rows by table."""
    name = capture_name(path)
    return write_tables(
        path, out, protocols=protocols, capture=name, stem=f"{number:05d}-{name}", dataset=True
    )


def to_parquet(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    protocols: Sequence[str] = (),
    scheduler: str | None = None,
) -> dict[str, int]:
    """Decode every capture in ``paths`` to Parquet under ``out`` with dask.bag,
    one task per capture; rows written, by table.

    The work runs on the active ``distributed.Client`` if there is one (else
    on ``scheduler``, Dask's default when ``None``)."""
    import dask.bag as db

    names = [os.fspath(p) for p in paths]
    if not names:
        return {}
    from_sequence: Any = db.from_sequence
    bag = from_sequence(list(enumerate(names)), npartitions=len(names))
    counts = bag.map(lambda job: capture_to_parquet(job[0], job[1], os.fspath(out), protocols))
    total: Counter[str] = Counter()
    for written in counts.compute(scheduler=scheduler):
        total.update(written)
    return dict(total)


def single_process(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    protocols: Sequence[str] = (),
) -> dict[str, int]:
    """The same files as :func:`to_parquet`, written one capture after another here."""
    total: Counter[str] = Counter()
    for number, path in enumerate(paths):
        total.update(capture_to_parquet(number, os.fspath(path), os.fspath(out), protocols))
    return dict(total)
