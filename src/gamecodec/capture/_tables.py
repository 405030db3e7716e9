"""Decoded capture items as Arrow record batches: one table per protocol.

Every table starts with the same columns (:data:`COMMON`); the rest are the
protocol's own (``docs/capture.md`` lists them all). Rows are built in batches of
``batch_size`` so that memory stays flat however long the capture is.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "gamecodec.capture tables need pyarrow: pip install 'gamecodec[capture]'"
    ) from exc

from gamecodec import avara
from gamecodec._json import to_json
from gamecodec._protocols import protocols, resolve
from gamecodec.capture._avara_columns import decoded_columns
from gamecodec.capture._blocks import BLOCK, Blocks
from gamecodec.capture._records import CaptureError, Flow, Item, Unit
from gamecodec.capture._source import Source, as_items

__all__ = [
    "COMMON",
    "PROTOCOLS",
    "SCHEMAS",
    "Table",
    "TableBuilder",
    "protocol_tables",
    "record_batches",
    "tables",
]

BATCH_SIZE = 65_536
"""Rows per record batch (and so per Parquet row group) unless told otherwise; a
batch closes after the unit that fills it, so one unit's rows never straddle two."""
BATCH_BYTES = 4 << 20
"""A batch also closes once its units took this many bytes on the wire (their
decoded fields, kept as JSON text until the batch is made, take a few times more)."""

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
            ("body", pa.binary()),
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

PROTOCOLS = tuple(p.name for p in protocols())
"""The protocols with a table (every declared one)."""


def json_text(value: object) -> str:
    """``value`` as the JSON text JSON lines give it (:func:`gamecodec.cli.to_json`)."""
    return json.dumps(to_json(value), ensure_ascii=False, separators=(",", ":"))


# ---- the builders ------------------------------------------------------------------

_NO_FLOW = (None, None, None, None, None)


class _Columns:
    """The rows of one table (kept as tuples), and the record batch they make.

    Each row is a *place* (a unit or an error: its ``time``, ``packet``, ``flow``
    and ``direction`` fill the common columns) and a tuple of the table's own
    columns in schema order; columns are built from them when a batch is made."""

    def __init__(self, schema: pa.Schema, capture: str) -> None:
        self.schema = schema
        self.own = schema.names[len(COMMON) :]
        self.capture = capture
        self._clear_places()
        self.values: list[tuple[Any, ...]] = []
        self.captures: list[tuple[int, str]] = [(0, capture)]
        """Where each run of places with one ``capture`` name starts."""
        self.blocks = Blocks()
        self.bytes = 0
        """Wire bytes of the units in the rows, to close a batch of big units early."""
        self.extra = 0
        """Rows held beyond one per place (a place may give several rows)."""
        self.expand: np.ndarray[Any, np.dtype[np.int64]] | None = None
        """Set by :meth:`own_columns` when a place gave other than one row: the
        place of each row, to take the common columns with."""
        self._flows: dict[int, tuple[Any, ...]] = {}

    @property
    def rows(self) -> int:
        return len(self.times) + self.extra

    def add(self, place: Any, values: tuple[Any, ...]) -> None:
        """One row: ``place`` gives the common columns (only its time, packet, flow
        and direction are kept, not the decoded value), ``values`` the others."""
        self.times.append(place.time)
        self.packets.append(place.packet)
        self.flows.append(place.flow)
        self.directions.append(place.direction)
        self.values.append(values)

    def _clear_places(self) -> None:
        # the common columns' values, a list each (not a tuple per row: a tuple
        # holding a Flow stays tracked by the cyclic collector, which then walks
        # every row held at each full collection)
        self.times: list[float | None] = []
        self.packets: list[int | None] = []
        self.flows: list[Flow | None] = []
        self.directions: list[str | None] = []

    def _flow(self, flow: Flow | None) -> tuple[Any, ...]:
        # by identity: the reader hands out one Flow object per flow
        if flow is None:
            return _NO_FLOW
        got = self._flows.get(id(flow))
        if got is None or got[0] is not flow:
            got = (flow, flow.index, flow.id, str(flow.client), str(flow.server))
            if len(self._flows) > 4096:
                self._flows.clear()
            self._flows[id(flow)] = got
        return got

    def _flow_columns(self, expand: Any) -> dict[str, pa.Array]:
        """The flow columns: each flow's values once, taken for every row (the
        rows' flows found by identity, without a Python step per row)."""
        ids = list(map(id, self.flows))
        by_id = dict(zip(ids, self.flows, strict=True))
        unique, places = np.unique(np.array(ids, np.uint64), return_inverse=True)
        flows = [self._flow(by_id[int(i)]) for i in unique]
        places = places.reshape(-1).astype(np.int64)
        take = pa.array(places if expand is None else places[expand])
        names = ("flow", "flow_id", "client", "server")  # _flow's items 1 to 4
        return {
            name: pa.array([f[k] for f in flows], COMMON.field(name).type).take(take)
            for k, name in enumerate(names, 1)
        }

    def _capture_column(self, expand: Any) -> pa.Array:
        starts = [start for start, _ in self.captures] + [len(self.times)]
        if expand is not None:  # the places' starts as rows
            starts = np.searchsorted(expand, starts).tolist()
        runs = [
            pa.repeat(pa.scalar(name, pa.string()), end - start)
            for (start, end), (_, name) in zip(
                itertools.pairwise(starts), self.captures, strict=True
            )
        ]
        return pa.concat_arrays(runs)

    def batch(self) -> pa.RecordBatch:
        own = self.own_columns()
        expand = self.expand
        common: dict[str, Any] = {
            "capture": self._capture_column(expand),
            "time": self.times,
            "packet": self.packets,
            **self._flow_columns(expand),
            "direction": self.directions,
        }
        if expand is not None:  # a place of several rows: its values for each
            common["time"] = np.asarray(self.times, np.float64)[expand]
            common["packet"] = np.asarray(self.packets, np.int64)[expand]
            common["direction"] = pa.array(self.directions, pa.string()).take(pa.array(expand))
        arrays = [self._array(field, common[field.name]) for field in COMMON]
        arrays += [self._array(self.schema.field(name), own[name]) for name in self.own]
        self._clear_places()
        self.values = []
        self.captures = [(0, self.capture)]
        self.bytes = 0
        self.extra = 0
        self.expand = None
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def own_columns(self) -> dict[str, Sequence[Any]]:
        """The table's own columns of the rows held."""
        return dict(zip(self.own, zip(*self.values, strict=True), strict=True))

    def _array(self, field: pa.Field, values: Any) -> pa.Array:
        if isinstance(values, pa.Array):
            return values
        if field.name in ("time", "response_time"):  # seconds -> microseconds
            seconds = pa.array(values, pa.float64())
            micros = pc.round(pc.multiply(seconds, 1e6), round_mode="half_to_even")
            bounds = pc.min_max(micros)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            if low is not None and (low < -_INT64_END or high >= _INT64_END):
                # a time the column cannot hold (a damaged record's, past the year
                # 294,000) is null: the cast would refuse the whole batch
                held = pc.and_(pc.greater_equal(micros, -_INT64_END), pc.less(micros, _INT64_END))
                micros = pc.if_else(held, micros, pa.scalar(None, pa.float64()))
            return micros.cast(pa.int64()).cast(field.type)
        if field.name == "blocks":
            return self.blocks.array(values)
        return pa.array(values, field.type)


_INT64_END = 2.0**63
"""The first float past int64 (microseconds of the time columns)."""

_FREQUENCY_NAMES = pa.array([None, "HIGH", "MEDIUM", None, "LOW", "FIXED"], pa.string())
""":class:`gamecodec.lludp.Frequency` names by value."""
_LLUDP_LISTS = (
    "size",
    "message",
    "frequency",
    "number",
    "flags",
    "sequence",
    "acks",
    "extra",
    "excess",
    "truncated",
    "body",
    "blocks",
)


class _LludpColumns(_Columns):
    """The LLUDP table: one list per column (a tuple per row would be held by
    the cyclic collector until the batch is made); the message code, the flag
    columns and the frequency names are computed per batch."""

    def __init__(self, schema: pa.Schema, capture: str) -> None:
        super().__init__(schema, capture)
        self._clear_lists()

    def _clear_lists(self) -> None:
        self.lists: dict[str, list[Any]] = {name: [] for name in _LLUDP_LISTS}

    def add_message(self, unit: Unit) -> None:
        """The row of one datagram."""
        m: Any = unit.value
        self.times.append(unit.time)
        self.packets.append(unit.packet)
        self.flows.append(unit.flow)
        self.directions.append(unit.direction)
        lists = self.lists
        lists["size"].append(unit.size)
        lists["message"].append(m.name)
        lists["frequency"].append(m.frequency)
        lists["number"].append(m.number)
        lists["flags"].append(m.flags)
        lists["sequence"].append(m.sequence)
        lists["acks"].append(m.acks)
        lists["extra"].append(m.extra)
        lists["excess"].append(m.excess)
        lists["truncated"].append(m.truncated)
        lists["body"].append(m.body)
        blocks = self.blocks
        lists["blocks"].append(blocks.count)  # where this row's blocks start
        blocks.add(m.blocks)

    def own_columns(self) -> dict[str, Sequence[Any]]:
        columns: dict[str, Any] = self.lists
        self._clear_lists()
        frequency = np.array(columns["frequency"], np.int64)
        number = np.array(columns["number"], np.int64)
        # the code as one integer (lludp.message_code): High n, Medium 0xFF00|n, Low 0xFFFF0000|n
        number[frequency == 2] |= 0xFF00
        number[frequency == 4] |= 0xFFFF0000
        flags = np.array(columns["flags"], np.uint8)
        columns.update(
            number=number,
            frequency=_FREQUENCY_NAMES.take(pa.array(frequency)),
            flags=flags,
            reliable=(flags & 0x40) != 0,
            resent=(flags & 0x20) != 0,
            zerocoded=(flags & 0x80) != 0,
        )
        return columns


_COMMAND_FIELDS = (
    "serial",
    "send_count",
    "flags",
    "command",
    "distribution",
    "p3",
    "p2",
    "p1",
    "sender",
    "data",
)
"""The fields of :class:`gamecodec.avara.Command`, in its order."""


_NO_COMMAND = (None,) * len(_COMMAND_FIELDS)


class _AvaraColumns(_Columns):
    """The Avara table: one row per command.

    A unit the reader made carries its decoder's options (net version and
    layout): only its place, size and payload are kept (and its rows counted),
    and each batch decodes the payloads again at once with
    :func:`gamecodec.avara.decode_array`, its arrays becoming the columns
    without a Python step per command. A unit
    without options (items made elsewhere) gives its rows from its decoded
    value, its commands' fields kept as plain tuples (which the cyclic collector
    stops tracking at its first look, unlike the decoder's Command)."""

    def __init__(self, schema: pa.Schema, capture: str) -> None:
        super().__init__(schema, capture)
        self.options: tuple[int, int] | None = None
        """The options the payloads held were decoded with (``None``: rows from values)."""
        self.parts: list[pa.RecordBatch] = []
        """Rows made already, when the units' options changed within the batch."""
        self._clear_lists()

    def _clear_lists(self) -> None:
        self.crc_ok: list[bool | None] = []
        self.ack: list[int | None] = []
        self.ack_bitmap: list[int | None] = []
        self.sizes: list[int] = []
        self.indexes: list[int | None] = []
        self.names: list[str | None] = []
        self.payloads: list[bytes] = []

    def add_datagram(self, unit: Unit) -> None:
        """The rows of one datagram."""
        options = unit.options
        if options is not None:
            if options is not self.options and options != self.options:
                self._switch(options)
            self.times.append(unit.time)
            self.packets.append(unit.packet)
            self.flows.append(unit.flow)
            self.directions.append(unit.direction)
            self.sizes.append(unit.size)
            self.payloads.append(unit.payload)
            commands = len(unit.names)  # the reader names every command
            if commands > 1:
                self.extra += commands - 1
            return
        if self.options is not None:
            self._switch(None)
        self._add_value(unit)

    def _switch(self, options: tuple[int, int] | None) -> None:
        """Rows held so far become a part; the next come with ``options``."""
        if self.times:
            held = self.bytes
            part = super().batch()
            self.parts.append(part)
            self.bytes = held
        self.extra = sum(p.num_rows for p in self.parts)
        self.options = options

    def batch(self) -> pa.RecordBatch:
        if not self.parts:
            return super().batch()
        if self.times:
            self._switch(self.options)
        parts, self.parts = self.parts, []
        self.extra = 0
        # one batch of the parts' rows (pyarrow.concat_batches is newer than pyarrow 14)
        return pa.Table.from_batches(parts).combine_chunks().to_batches()[0]

    def _add_value(self, unit: Unit) -> None:
        d: Any = unit.value
        # a hole punch (no ack block) has no commands: None, not its empty tuple
        commands = None if d.__class__ is avara.HolePunch else getattr(d, "commands", None)
        if commands and len(commands) == 1:  # most datagrams
            self.times.append(unit.time)
            self.packets.append(unit.packet)
            self.flows.append(unit.flow)
            self.directions.append(unit.direction)
            self.sizes.append(unit.size)
            self.crc_ok.append(d.crc_ok)
            self.ack.append(d.ack)
            self.ack_bitmap.append(d.ack_bitmap)
            self.indexes.append(0)
            self.names.append(unit.names[0] if unit.names else None)
            self.values.append(tuple(commands[0]))
            return
        count = len(commands) if commands else 1  # a hole punch or no commands: one row
        self.times += [unit.time] * count
        self.packets += [unit.packet] * count
        self.flows += [unit.flow] * count
        self.directions += [unit.direction] * count
        self.sizes += [unit.size] * count
        if commands is None:  # a hole punch: no ack block
            self.crc_ok.append(None)
            self.ack.append(None)
            self.ack_bitmap.append(None)
        else:
            self.crc_ok += [d.crc_ok] * count
            self.ack += [d.ack] * count
            self.ack_bitmap += [d.ack_bitmap] * count
        if not commands:
            self.values.append(_NO_COMMAND)
            self.indexes.append(None)
            self.names.append(_first(unit.names) if commands is None else None)
            return
        self.values += map(tuple, commands)
        self.indexes += range(count)
        names = unit.names
        if len(names) == count:
            self.names += names
        else:  # pragma: no cover - the reader names every command
            self.names += [names[i] if i < len(names) else None for i in range(count)]

    def own_columns(self) -> dict[str, Sequence[Any]]:
        if self.options is not None:
            decoded = decoded_columns(self.payloads, self.sizes, self.options)
            self.expand = decoded.pop("expand")
            self._clear_lists()
            return decoded
        columns: dict[str, Sequence[Any]] = dict(
            zip(_COMMAND_FIELDS, zip(*self.values, strict=True), strict=True)
        )
        columns.update(
            size=self.sizes,
            crc_ok=self.crc_ok,
            ack=self.ack,
            ack_bitmap=self.ack_bitmap,
            index=self.indexes,
            command_name=self.names,
        )
        self._clear_lists()
        return columns


def _fields_json(command: object) -> str:
    data = to_json(command)
    if isinstance(data, dict):
        data.pop("type", None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _add_archipelago(cols: _Columns, unit: Unit) -> None:
    value: Any = unit.value
    commands = value if isinstance(value, list | tuple) else [value]
    names = unit.names
    for index, command in enumerate(commands):
        name = names[index] if index < len(names) else None
        cols.add(unit, (unit.size, index, name, _fields_json(command)))


def _add_ywindow(cols: _Columns, unit: Unit) -> None:
    cols.add(unit, (unit.size, _first(unit.names), _fields_json(unit.value)))


def _add_error(cols: _Columns, error: CaptureError) -> None:
    protocol = None if error.flow is None else error.flow.protocol
    cols.add(error, (protocol, error.where, error.offset, error.message))


MAX_UNANSWERED = 4096
"""BZRC commands of one connection kept waiting for their responses; past it the
oldest gets its row without one (memory stays bounded)."""


class _Pairs:
    """BZRC rows: each command with the response that answers it, in order."""

    def __init__(self) -> None:
        self.pending: dict[Flow, deque[Unit]] = {}

    def add(self, cols: _Columns, unit: Unit) -> None:
        queue = self.pending.setdefault(unit.flow, deque())
        if unit.direction == "to_server":
            queue.append(unit)
            if len(queue) > MAX_UNANSWERED:  # a server that stopped answering
                self.row(cols, queue.popleft(), None)
            return
        answers = _answers(unit)
        if answers is None:  # the greeting, or a line that answers nothing
            self.row(cols, None, unit)
            return
        if answers and not any(_first(c.names) == answers for c in queue):
            self.row(cols, None, unit)  # its command was not captured
            return
        # commands the server never answers (``agent``) come before the one it did
        while queue and answers and _first(queue[0].names) != answers:
            self.row(cols, queue.popleft(), None)
        self.row(cols, queue.popleft() if queue else None, unit)

    def row(self, cols: _Columns, command: Unit | None, response: Unit | None) -> None:
        place = command if command is not None else response
        values: list[Any] = []
        for unit in (command, response):
            if unit is None:
                values += [None, None, None]
            else:
                values += [_first(unit.names), _fields_json(unit.value), unit.size]
        cols.add(
            place,
            (
                *values[:3],
                None if response is None else response.time,
                None if response is None else response.packet,
                *values[3:],
            ),
        )

    def finish(self, cols: _Columns) -> None:
        """Rows for the commands still unanswered."""
        for queue in self.pending.values():
            for command in queue:
                self.row(cols, command, None)
        self.pending.clear()


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


@dataclass(frozen=True, slots=True)
class Table:
    """A protocol's capture table: its schema, the kind of columns that keep its rows,
    and what makes the function that adds a unit's rows (given the builder)."""

    schema: pa.Schema
    columns: type[_Columns]
    adder: Callable[[TableBuilder], Callable[[Any, Unit], None]]


# each table's columns are made by its kind, so the adders take their own kind
LLUDP_TABLE = Table(SCHEMAS["lludp"], _LludpColumns, lambda _: _LludpColumns.add_message)
AVARA_TABLE = Table(SCHEMAS["avara"], _AvaraColumns, lambda _: _AvaraColumns.add_datagram)
ARCHIPELAGO_TABLE = Table(SCHEMAS["archipelago"], _Columns, lambda _: _add_archipelago)
BZRC_TABLE = Table(SCHEMAS["bzrc"], _Columns, lambda builder: builder.pairs.add)
YWINDOW_TABLE = Table(SCHEMAS["ywindow"], _Columns, lambda _: _add_ywindow)


@functools.cache
def protocol_tables() -> dict[str, Table]:
    """Each protocol's :class:`Table`, from the protocols' declarations."""
    return {p.name: resolve(p.capture_table) for p in protocols()}


class TableBuilder:
    """Turns items into record batches, one stream of batches per protocol.

    :meth:`add` returns the batches that became full; :meth:`finish` the rest.
    ``capture`` fills the ``capture`` column (the file's name, say)."""

    pairs: _Pairs
    """BZRC's commands waiting for their responses (a command and its response make one row)."""

    def __init__(self, capture: str = "", *, batch_size: int = BATCH_SIZE) -> None:
        self._capture = capture
        self.batch_size = batch_size
        self.columns: dict[str, _Columns] = {}
        self.pairs = _Pairs()
        self._adders = {name: t.adder(self) for name, t in protocol_tables().items()}

    @property
    def capture(self) -> str:
        """What the ``capture`` column of the rows added next holds."""
        return self._capture

    @capture.setter
    def capture(self, name: str) -> None:
        self._capture = name
        for cols in self.columns.values():
            cols.capture = name
            places = len(cols.times)
            if cols.captures[-1][0] == places:
                cols.captures[-1] = (places, name)
            else:
                cols.captures.append((places, name))

    def _cols(self, table: str) -> _Columns:
        cols = self.columns.get(table)
        if cols is None:
            own = protocol_tables().get(table)
            kind = _Columns if own is None else own.columns
            cols = self.columns[table] = kind(SCHEMAS[table], self._capture)
        return cols

    def add(self, item: Item) -> list[tuple[str, pa.RecordBatch]]:
        """Add one item; the batches it filled."""
        if type(item) is Unit:
            table = item.protocol
            adder = self._adders.get(table)
            if adder is None:
                return []
            cols = self.columns.get(table) or self._cols(table)
            adder(cols, item)
            cols.bytes += item.size
        else:
            assert isinstance(item, CaptureError)
            table = "errors"
            cols = self._cols(table)
            _add_error(cols, item)
        if len(cols.times) + cols.extra >= self.batch_size or cols.bytes >= BATCH_BYTES:
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
