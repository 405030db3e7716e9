"""Decoded capture items as Arrow record batches: one table per protocol.

Every table starts with the same columns (:data:`COMMON`); the rest are the
protocol's own (``docs/capture.md`` lists them all). Rows are built in batches of
``batch_size`` so that memory stays flat however long the capture is.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

try:
    import pyarrow as pa
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "gamecodec.capture tables need pyarrow: pip install 'gamecodec[capture]'"
    ) from exc

import msgspec

from gamecodec.capture._records import CaptureError, Flow, Item, Unit
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


def _plain(value: object) -> object:
    if type(value) is bytes:
        return value.hex()
    return value


def _block_json(block: Any) -> str:
    """One block's fields as JSON text, equal (as JSON) to ``json_text(block)``
    without its ``type`` key.

    msgspec writes UUIDs, tuples, ints and floats as ``to_json`` does, once
    bytes are hex; it writes a non-finite float as ``null``, which ``to_json``
    never gives for an LLUDP field, so such a block takes the slow path."""
    names = block._fields
    text = _ENCODE(dict(zip(names, map(_plain, block), strict=True)))
    if b"null" in text:
        data = to_json(block)
        data.pop("type", None)
        return json.dumps(data, separators=(",", ":"))
    return text.decode()


# ---- the builders ------------------------------------------------------------------


class _Columns:
    """Column lists for one table, and the record batch they make."""

    def __init__(self, schema: pa.Schema, capture: str) -> None:
        self.schema = schema
        self.capture = capture
        self.cols: dict[str, list[Any]] = {name: [] for name in schema.names}
        self.rows = 0

    def common(
        self, time: float | None, packet: int | None, flow: Flow | None, direction: Any
    ) -> None:
        c = self.cols
        c["capture"].append(self.capture)
        c["time"].append(None if time is None else round(time * 1_000_000))
        c["packet"].append(packet)
        c["flow"].append(None if flow is None else flow.index)
        c["flow_id"].append(None if flow is None else flow.id)
        c["client"].append(None if flow is None else str(flow.client))
        c["server"].append(None if flow is None else str(flow.server))
        c["direction"].append(direction)
        self.rows += 1

    def batch(self) -> pa.RecordBatch:
        arrays = []
        for field in self.schema:
            values = self.cols[field.name]
            if pa.types.is_timestamp(field.type):
                arrays.append(pa.array(values, pa.int64()).cast(field.type))
            else:
                arrays.append(pa.array(values, field.type))
        for values in self.cols.values():
            values.clear()
        self.rows = 0
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _add_lludp(cols: _Columns, unit: Unit) -> None:
    m: Any = unit.value
    cols.common(unit.time, unit.packet, unit.flow, unit.direction)
    c = cols.cols
    c["size"].append(unit.size)
    c["message"].append(m.name)
    c["number"].append(m.code)
    c["frequency"].append(m.frequency.name)
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
    c["blocks"].append(
        [
            {"block": name, "fields": _block_json(block)}
            for name, instances in m.blocks.items()
            for block in instances
        ]
    )


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
        c["response_time"].append(None if response is None else round(response.time * 1e6))
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
    items: Iterable[Item], *, capture: str = "", batch_size: int = BATCH_SIZE
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``(table name, record batch)`` pairs for ``items``, as batches fill up."""
    builder = TableBuilder(capture, batch_size=batch_size)
    for item in items:
        if done := builder.add(item):
            yield from done
    yield from builder.finish()


def tables(
    items: Iterable[Item], *, capture: str = "", batch_size: int = BATCH_SIZE
) -> dict[str, pa.Table]:
    """Every table ``items`` fill, whole (for a capture that fits in memory)."""
    batches: dict[str, list[pa.RecordBatch]] = {}
    for name, batch in record_batches(items, capture=capture, batch_size=batch_size):
        batches.setdefault(name, []).append(batch)
    return {name: pa.Table.from_batches(b, SCHEMAS[name]) for name, b in batches.items()}
