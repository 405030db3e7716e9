"""Decoded capture items as Arrow record batches: one table per protocol.

Every table starts with the same columns (:data:`COMMON`); the rest are the
protocol's own (``docs/capture.md`` lists them all). Rows are built in batches of
``batch_size`` so that memory stays flat however long the capture is.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

try:
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "gamecodec.capture tables need pyarrow: pip install 'gamecodec[capture]'"
    ) from exc

import msgspec

from gamecodec.capture._records import CaptureError, Flow, Item, Unit
from gamecodec.capture._source import Source, as_items
from gamecodec.cli import to_json

__all__ = ["COMMON", "PROTOCOLS", "SCHEMAS", "TableBuilder", "record_batches", "tables"]

BATCH_SIZE = 65_536
"""Rows per record batch (and so per Parquet row group) unless told otherwise; a
batch closes after the unit that fills it, so one unit's rows never straddle two."""

TIME = pa.timestamp("us", tz="UTC")

COMMON = pa.schema(
    [
        ("capture", pa.string()),
        ("time", TIME),
        ("packet", pa.int64()),
        ("flow", pa.int32()),
        ("flow_id", pa.string()),
        ("client", pa.string()),
        ("server", pa.string()),
        ("direction", pa.string()),
    ]
)
"""The columns every table starts with: the capture's name, the time and number
of the packet that completed the unit, the flow's number and id, its client and
server addresses, and ``to_server`` or ``to_client``."""

BLOCK = pa.struct([("block", pa.string()), ("fields", pa.string())])

_SIZE = [("size", pa.int32())]

SCHEMAS: dict[str, pa.Schema] = {
    "lludp": pa.schema(
        [
            *COMMON,
            *_SIZE,
            ("message", pa.string()),
            ("number", pa.uint32()),
            ("frequency", pa.string()),
            ("flags", pa.uint8()),
            ("reliable", pa.bool_()),
            ("resent", pa.bool_()),
            ("zerocoded", pa.bool_()),
            ("sequence", pa.uint32()),
            ("acks", pa.list_(pa.uint32())),
            ("extra", pa.binary()),
            ("excess", pa.binary()),
            ("truncated", pa.bool_()),
            ("blocks", pa.list_(BLOCK)),
        ]
    ),
    "avara": pa.schema(
        [
            *COMMON,
            *_SIZE,
            ("crc_ok", pa.bool_()),
            ("ack", pa.int32()),
            ("ack_bitmap", pa.int64()),
            ("index", pa.int16()),
            ("command_name", pa.string()),
            ("command", pa.int16()),
            ("serial", pa.int32()),
            ("send_count", pa.int16()),
            ("flags", pa.uint8()),
            ("distribution", pa.int32()),
            ("p1", pa.int32()),
            ("p2", pa.int32()),
            ("p3", pa.int32()),
            ("sender", pa.int16()),
            ("data", pa.binary()),
        ]
    ),
    "archipelago": pa.schema(
        [
            *COMMON,
            *_SIZE,
            ("index", pa.int32()),
            ("cmd", pa.string()),
            ("fields", pa.string()),
        ]
    ),
    "bzrc": pa.schema(
        [
            *COMMON,
            ("command", pa.string()),
            ("command_fields", pa.string()),
            ("command_size", pa.int32()),
            ("response_time", TIME),
            ("response_packet", pa.int64()),
            ("response", pa.string()),
            ("response_fields", pa.string()),
            ("response_size", pa.int32()),
        ]
    ),
    "ywindow": pa.schema([*COMMON, *_SIZE, ("kind", pa.string()), ("fields", pa.string())]),
    "errors": pa.schema(
        [
            *COMMON,
            ("protocol", pa.string()),
            ("where", pa.string()),
            ("offset", pa.int64()),
            ("message", pa.string()),
        ]
    ),
}
"""The schema of each table. ``errors`` holds every :class:`CaptureError`
(its ``flow``/``client``/``server``/``direction``/``time``/``packet`` are null
when the error has none)."""

PROTOCOLS = ("lludp", "avara", "archipelago", "bzrc", "ywindow")


def json_text(value: object) -> str:
    """``value`` as the JSON text JSON lines give it (:func:`gamecodec.cli.to_json`)."""
    return json.dumps(to_json(value), ensure_ascii=False, separators=(",", ":"))


# ---- LLUDP blocks: the fast path -------------------------------------------------

_ENCODE = msgspec.json.Encoder().encode
_BYTES_TYPES = ("VARIABLE", "FIXED")
_BLOCK_TYPES: dict[type, tuple[Any, tuple[int, ...]]] = {}


def _block_type(cls: type) -> tuple[Any, tuple[int, ...]]:
    """A msgspec Struct with the block's field names, and which fields are bytes."""
    fields = cls._spec.fields  # type: ignore[attr-defined]
    struct = msgspec.defstruct(cls.__name__, [f.name for f in fields])
    hexed = tuple(i for i, f in enumerate(fields) if f.type.name in _BYTES_TYPES)
    _BLOCK_TYPES[cls] = struct, hexed
    return struct, hexed


def _block_json(block: Any) -> bytes:
    """One block's fields as JSON text (UTF-8), equal as JSON to what JSON lines
    give for the block (:func:`gamecodec.cli.to_json`) without its ``type`` key.

    msgspec writes UUIDs, tuples, ints and floats as ``to_json`` does once bytes
    are hex; it writes a non-finite float as ``null``, which ``to_json`` never
    gives for an LLUDP field, so a block with ``null`` in its text is written by
    ``to_json`` instead."""
    cls = type(block)
    try:
        struct, hexed = _BLOCK_TYPES[cls]
    except KeyError:
        struct, hexed = _block_type(cls)
    if hexed:
        values = list(block)
        for i in hexed:
            values[i] = values[i].hex()
        text: bytes = _ENCODE(struct(*values))
    else:
        text = _ENCODE(struct(*block))
    if b"null" in text:
        data = to_json(block)
        data.pop("type", None)
        return json.dumps(data, separators=(",", ":")).encode()
    return text


# ---- the builders ------------------------------------------------------------------


class _Columns:
    """Column lists for one table, and the record batch they make."""

    def __init__(self, schema: pa.Schema, capture: str) -> None:
        self.schema = schema
        self.capture = capture
        self.cols: dict[str, list[Any]] = {name: [] for name in schema.names}
        self.block_names: list[str] = []
        self.block_fields: list[bytes] = []
        self.rows = 0
        self._flows: dict[int, tuple[Flow, int, str, str, str]] = {}

    def _flow(self, flow: Flow) -> tuple[Flow, int, str, str, str]:
        # by identity: the reader hands out one Flow object per flow
        got = self._flows.get(id(flow))
        if got is None or got[0] is not flow:
            got = (flow, flow.index, flow.id, str(flow.client), str(flow.server))
            if len(self._flows) > 4096:
                self._flows.clear()
            self._flows[id(flow)] = got
        return got

    def common(
        self, time: float | None, packet: int | None, flow: Flow | None, direction: Any
    ) -> None:
        c = self.cols
        c["capture"].append(self.capture)
        c["time"].append(time)
        c["packet"].append(packet)
        if flow is None:
            c["flow"].append(None)
            c["flow_id"].append(None)
            c["client"].append(None)
            c["server"].append(None)
        else:
            _, index, flow_id, client, server = self._flow(flow)
            c["flow"].append(index)
            c["flow_id"].append(flow_id)
            c["client"].append(client)
            c["server"].append(server)
        c["direction"].append(direction)
        self.rows += 1

    def _array(self, field: pa.Field, values: list[Any]) -> pa.Array:
        if field.name in ("time", "response_time"):  # seconds -> microseconds
            seconds = pa.array(values, pa.float64())
            micros = pc.round(pc.multiply(seconds, 1e6), round_mode="half_to_even")
            return micros.cast(pa.int64()).cast(field.type)
        if field.name == "blocks":
            blocks = pa.StructArray.from_arrays(
                [
                    pa.array(self.block_names, pa.string()),
                    pa.array(self.block_fields, pa.binary()).cast(pa.string()),
                ],
                fields=list(BLOCK),
            )
            offsets = pa.array([*values, len(self.block_names)], pa.int32())
            return pa.ListArray.from_arrays(offsets, blocks, type=field.type)
        return pa.array(values, field.type)

    def batch(self) -> pa.RecordBatch:
        arrays = [self._array(field, self.cols[field.name]) for field in self.schema]
        for values in self.cols.values():
            values.clear()
        self.block_names.clear()
        self.block_fields.clear()
        self.rows = 0
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


_FREQUENCIES: dict[object, str] = {}


def _add_lludp(cols: _Columns, unit: Unit) -> None:
    m: Any = unit.value
    cols.common(unit.time, unit.packet, unit.flow, unit.direction)
    c = cols.cols
    c["size"].append(unit.size)
    c["message"].append(m.name)
    c["number"].append(m.code)
    frequency = m.frequency
    name = _FREQUENCIES.get(frequency)
    if name is None:
        name = _FREQUENCIES[frequency] = frequency.name
    c["frequency"].append(name)
    flags = m.flags
    c["flags"].append(flags)
    c["reliable"].append(bool(flags & 0x40))
    c["resent"].append(bool(flags & 0x20))
    c["zerocoded"].append(bool(flags & 0x80))
    c["sequence"].append(m.sequence)
    c["acks"].append(m.acks)
    c["extra"].append(m.extra)
    c["excess"].append(m.excess)
    c["truncated"].append(m.truncated)
    c["blocks"].append(len(cols.block_names))  # where this row's blocks start
    names = cols.block_names
    fields = cols.block_fields
    for name, instances in m.blocks.items():
        for block in instances:
            names.append(name)
            fields.append(_block_json(block))


def _add_avara(cols: _Columns, unit: Unit) -> None:
    d: Any = unit.value
    commands = d.commands or (None,)
    for index, command in enumerate(commands):
        cols.common(unit.time, unit.packet, unit.flow, unit.direction)
        c = cols.cols
        c["size"].append(unit.size)
        c["crc_ok"].append(d.crc_ok)
        c["ack"].append(d.ack)
        c["ack_bitmap"].append(d.ack_bitmap)
        if command is None:
            for name in _AVARA_COMMAND:
                c[name].append(None)
            continue
        c["index"].append(index)
        c["command_name"].append(_avara_name(command.command))
        c["command"].append(command.command)
        c["serial"].append(command.serial)
        c["send_count"].append(command.send_count)
        c["flags"].append(command.flags)
        c["distribution"].append(command.distribution)
        c["p1"].append(command.p1)
        c["p2"].append(command.p2)
        c["p3"].append(command.p3)
        c["sender"].append(command.sender)
        c["data"].append(command.data)


_AVARA_COMMAND = (
    "index",
    "command_name",
    "command",
    "serial",
    "send_count",
    "flags",
    "distribution",
    "p1",
    "p2",
    "p3",
    "sender",
    "data",
)
_AVARA_NAMES: dict[int, str | None] = {}


def _avara_name(command: int) -> str | None:
    """The ``CommandId`` name of a command number (``None`` for an unknown one)."""
    try:
        return _AVARA_NAMES[command]
    except KeyError:
        from gamecodec.avara import CommandId

        try:
            name: str | None = CommandId(command).name
        except ValueError:
            name = None
        _AVARA_NAMES[command] = name
        return name


def _fields_json(command: object) -> str:
    data = to_json(command)
    if isinstance(data, dict):
        data.pop("type", None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _add_archipelago(cols: _Columns, unit: Unit) -> None:
    value: Any = unit.value
    commands = value if isinstance(value, list | tuple) else [value]
    for index, command in enumerate(commands):
        cols.common(unit.time, unit.packet, unit.flow, unit.direction)
        c = cols.cols
        c["size"].append(unit.size)
        c["index"].append(index)
        c["cmd"].append(unit.names[index] if index < len(unit.names) else None)
        c["fields"].append(_fields_json(command))


def _add_ywindow(cols: _Columns, unit: Unit) -> None:
    cols.common(unit.time, unit.packet, unit.flow, unit.direction)
    c = cols.cols
    c["size"].append(unit.size)
    c["kind"].append(unit.names[0] if unit.names else None)
    c["fields"].append(_fields_json(unit.value))


def _add_error(cols: _Columns, error: CaptureError) -> None:
    cols.common(error.time, error.packet, error.flow, error.direction)
    c = cols.cols
    c["protocol"].append(None if error.flow is None else error.flow.protocol)
    c["where"].append(error.where)
    c["offset"].append(error.offset)
    c["message"].append(error.message)


class _Pairs:
    """BZRC rows: each command with the response that answers it, in order."""

    def __init__(self) -> None:
        self.pending: dict[Flow, deque[Unit]] = {}

    def add(self, cols: _Columns, unit: Unit) -> None:
        queue = self.pending.setdefault(unit.flow, deque())
        if unit.direction == "to_server":
            queue.append(unit)
            return
        answers = _answers(unit)
        if answers is None:  # the greeting, or a line that answers nothing
            self.row(cols, None, unit)
            return
        # commands the server never answers (``agent``) come before the one it did
        while queue and answers and _first(queue[0].names) != answers:
            if not any(_first(c.names) == answers for c in queue):
                break
            self.row(cols, queue.popleft(), None)
        self.row(cols, queue.popleft() if queue else None, unit)

    def row(self, cols: _Columns, command: Unit | None, response: Unit | None) -> None:
        first = command if command is not None else response
        assert first is not None
        cols.common(first.time, first.packet, first.flow, "to_server" if command else "to_client")
        c = cols.cols
        for prefix, unit in (("command", command), ("response", response)):
            c[prefix].append(None if unit is None else _first(unit.names))
            c[f"{prefix}_fields"].append(None if unit is None else _fields_json(unit.value))
            c[f"{prefix}_size"].append(None if unit is None else unit.size)
        c["response_time"].append(None if response is None else response.time)
        c["response_packet"].append(None if response is None else response.packet)

    def finish(self, cols: _Columns, flow: Flow | None = None) -> None:
        """Rows for the commands still unanswered (of ``flow``, or of every flow)."""
        for key in [flow] if flow is not None else list(self.pending):
            for command in self.pending.pop(key, ()):
                self.row(cols, command, None)


def _first(names: tuple[str, ...]) -> str | None:
    return names[0] if names else None


def _answers(unit: Unit) -> str | None:
    """The command a response answers (its ack's command word; ``""`` when it
    names none); ``None`` for the greeting and unsolicited lines."""
    value = unit.value
    if type(value).__name__ in ("Greeting", "Unsolicited"):
        return None
    ack = getattr(value, "ack", None)
    command = getattr(ack, "command", None)
    return command if isinstance(command, str) else ""


_ADDERS: dict[str, Callable[[_Columns, Unit], None]] = {
    "lludp": _add_lludp,
    "avara": _add_avara,
    "archipelago": _add_archipelago,
    "ywindow": _add_ywindow,
}


class TableBuilder:
    """Turns items into record batches, one stream of batches per protocol.

    :meth:`add` returns the batches that became full; :meth:`finish` the rest.
    ``capture`` fills the ``capture`` column (the file's name, say)."""

    def __init__(self, capture: str = "", *, batch_size: int = BATCH_SIZE) -> None:
        self._capture = capture
        self.batch_size = batch_size
        self.columns: dict[str, _Columns] = {}
        self.pairs = _Pairs()

    @property
    def capture(self) -> str:
        """What the ``capture`` column of the rows added next holds."""
        return self._capture

    @capture.setter
    def capture(self, name: str) -> None:
        self._capture = name
        for cols in self.columns.values():
            cols.capture = name

    def _cols(self, table: str) -> _Columns:
        cols = self.columns.get(table)
        if cols is None:
            cols = self.columns[table] = _Columns(SCHEMAS[table], self._capture)
        return cols

    def add(self, item: Item) -> list[tuple[str, pa.RecordBatch]]:
        """Add one item; the batches it filled."""
        if isinstance(item, CaptureError):
            table = "errors"
            _add_error(self._cols(table), item)
        else:
            table = item.protocol
            if table == "bzrc":
                self.pairs.add(self._cols(table), item)
            else:
                adder = _ADDERS.get(table)
                if adder is None:
                    return []
                adder(self._cols(table), item)
        cols = self.columns[table]
        if cols.rows >= self.batch_size:
            return [(table, cols.batch())]
        return []

    def finish(self) -> list[tuple[str, pa.RecordBatch]]:
        """The last batches (unanswered BZRC commands included)."""
        if self.pairs.pending:
            self.pairs.finish(self._cols("bzrc"))
        return [(name, cols.batch()) for name, cols in self.columns.items() if cols.rows]


def record_batches(
    source: Source | Iterable[Item],
    *,
    protocols: Sequence[str] = (),
    capture: str | None = None,
    batch_size: int = BATCH_SIZE,
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``(table name, record batch)`` pairs, as batches fill up.

    ``source``: a capture (a path or a binary file, read with ``protocols`` as
    overrides) or items already read. ``capture`` fills the ``capture`` column
    (default: the file's name)."""
    items, name = as_items(source, protocols, capture)
    builder = TableBuilder(name, batch_size=batch_size)
    for item in items:
        if done := builder.add(item):
            yield from done
    yield from builder.finish()


def tables(
    source: Source | Iterable[Item],
    *,
    protocols: Sequence[str] = (),
    capture: str | None = None,
    batch_size: int = BATCH_SIZE,
) -> dict[str, pa.Table]:
    """Every table ``source`` fills, whole (for a capture that fits in memory);
    arguments as for :func:`record_batches`."""
    batches: dict[str, list[pa.RecordBatch]] = {}
    for name, batch in record_batches(
        source, protocols=protocols, capture=capture, batch_size=batch_size
    ):
        batches.setdefault(name, []).append(batch)
    return {name: pa.Table.from_batches(b, SCHEMAS[name]) for name, b in batches.items()}
