"""Writing the tables: one Parquet (or Arrow IPC) file per table, streamed."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from gamecodec.capture._records import Item
from gamecodec.capture._source import Source, as_items
from gamecodec.capture._tables import BATCH_SIZE, SCHEMAS, TableBuilder

__all__ = ["FORMATS", "TableFiles", "write_tables"]

FORMATS = {"parquet": ".parquet", "arrow": ".arrow"}

_FREE_TEXT = frozenset({"fields", "command_fields", "response_fields", "message"})


def _dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns Parquet dictionary-encodes: the names, addresses and flows that
    repeat. JSON text and binary columns are written plain (trying a dictionary
    on them costs time and saves nothing)."""
    names = [f.name for f in schema if f.type == pa.string() and f.name not in _FREE_TEXT]
    if "blocks" in schema.names:
        names.append("blocks.list.element.block")
    if "message" in schema.names and "number" in schema.names:  # LLUDP: the message name
        names.append("message")
    return names


class TableFiles:
    """Files ``DIRECTORY/<table><suffix>`` (with ``dataset``:
    ``DIRECTORY/<table>/<stem><suffix>``) opened as their first batch comes.

    ``format`` is ``parquet`` (pyarrow.parquet, zstd) or ``arrow`` (the Arrow IPC
    file format). Use as a context manager; :attr:`rows` counts each table's rows."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        format: str = "parquet",
        *,
        stem: str = "",
        dataset: bool = False,
    ) -> None:
        if format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
        self.directory = Path(directory)
        self.format = format
        self.stem = stem
        self.dataset = dataset
        self.rows: dict[str, int] = {}
        self.paths: dict[str, Path] = {}
        self._writers: dict[str, Any] = {}

    def path(self, table: str) -> Path:
        if self.dataset:
            return self.directory / table / f"{self.stem}{FORMATS[self.format]}"
        return self.directory / f"{self.stem}{table}{FORMATS[self.format]}"

    def write(self, table: str, batch: pa.RecordBatch) -> None:
        writer = self._writers.get(table)
        if writer is None:
            path = self.path(table)
            path.parent.mkdir(parents=True, exist_ok=True)
            if self.format == "parquet":
                import pyarrow.parquet as pq

                schema = SCHEMAS[table]
                writer = pq.ParquetWriter(
                    path,
                    schema,
                    compression="zstd",
                    use_dictionary=_dictionary_columns(schema),
                )
            else:
                writer = pa.ipc.new_file(path, SCHEMAS[table])
            self._writers[table] = writer
            self.paths[table] = path
            self.rows[table] = 0
        if self.format == "parquet":
            writer.write_batch(batch, row_group_size=max(batch.num_rows, 1))
        else:
            writer.write_batch(batch)
        self.rows[table] += batch.num_rows

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()

    def __enter__(self) -> TableFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_tables(
    source: Source | Iterable[Item],
    directory: str | os.PathLike[str],
    format: str = "parquet",
    *,
    protocols: Sequence[str] = (),
    capture: str | None = None,
    stem: str = "",
    dataset: bool = False,
    batch_size: int = BATCH_SIZE,
) -> dict[str, int]:
    """Write the tables ``source`` fills (a capture, or items already read) to
    ``directory``, one file per table; rows written, by table. Memory holds one
    batch per table at most."""
    items, name = as_items(source, protocols, capture)
    builder = TableBuilder(name, batch_size=batch_size)
    with TableFiles(directory, format, stem=stem, dataset=dataset) as files:
        for item in items:
            for table, batch in builder.add(item):
                files.write(table, batch)
        for table, batch in builder.finish():
            files.write(table, batch)
    return files.rows
