"""Arrow tables of decoded units: schemas, one row per unit or command, batches, files."""

from __future__ import annotations

import dataclasses
import json
import math

import msgspec
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dpkt")  # gamecodec.capture reads captures with dpkt

from gamecodec import lludp  # noqa: E402
from gamecodec.capture import CaptureError, Unit  # noqa: E402
from gamecodec.capture._output import write_tables  # noqa: E402
from gamecodec.capture._tables import SCHEMAS, record_batches, tables  # noqa: E402
from gamecodec.cli import to_json  # noqa: E402

from . import unitgen  # noqa: E402


def _without_type(data: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in data.items() if k != "type"}


def test_every_batch_has_its_tables_schema() -> None:
    sizes: dict[str, list[int]] = {}
    for name, batch in record_batches(unitgen.all_items(), batch_size=5):
        assert batch.schema == SCHEMAS[name]
        sizes.setdefault(name, []).append(batch.num_rows)
    assert set(sizes) == {"lludp", "avara", "archipelago", "bzrc", "errors"}
    for rows in sizes.values():  # a batch closes at the unit that fills it
        assert all(n >= 5 for n in rows[:-1]) and rows[-1] > 0
    assert max(sizes["lludp"]) == 5


def test_lludp_one_row_per_datagram_equal_to_the_decoder() -> None:
    units = unitgen.lludp_units()
    rows = tables(units, capture="c.pcap")["lludp"].to_pylist()
    assert len(rows) == len(units)
    for unit, row in zip(units, rows, strict=True):
        m = lludp.decode(unit.payload)
        assert row["capture"] == "c.pcap"
        assert row["packet"] == unit.packet
        assert row["time"].timestamp() == pytest.approx(unit.time, abs=1e-6)
        assert row["flow_id"] == unit.flow.id
        assert (row["message"], row["number"], row["flags"]) == (m.name, m.code, m.flags)
        assert (row["sequence"], row["acks"]) == (m.sequence, list(m.acks))
        assert (row["reliable"], row["resent"], row["zerocoded"]) == (
            m.reliable,
            m.resent,
            m.zerocoded,
        )
        assert row["size"] == len(unit.payload)
        expected = [
            (name, _without_type(to_json(block)))
            for name, instances in m.blocks.items()
            for block in instances
        ]
        assert [(b["block"], json.loads(b["fields"])) for b in row["blocks"]] == expected


def test_a_non_finite_float_in_a_block_is_written_as_json_lines_write_it() -> None:
    unit = unitgen.lludp_units()[0]
    m: lludp.Message = unit.value  # type: ignore[assignment]
    assert m.name == "AgentUpdate"
    block = m.blocks["AgentData"][0]
    nan = m._replace(blocks={"AgentData": (block._replace(Far=math.nan),)})
    row = tables([Unit(**{**_fields(unit), "value": nan})])["lludp"].to_pylist()[0]
    assert json.loads(row["blocks"][0]["fields"])["Far"] == "NaN"


def _msgspec_text(block: lludp.Block) -> str:
    values = {k: v.hex() if isinstance(v, bytes) else v for k, v in block.items()}
    return str(msgspec.json.encode(values), "utf-8")


def _to_json_text(block: lludp.Block) -> str:
    return json.dumps(_without_type(to_json(block)), separators=(",", ":"))


def test_block_text_is_msgspecs_unless_its_row_holds_a_non_finite_float() -> None:
    # msgspec writes 1e16 as 1e16, json.dumps as 1e+16: each row's text is one or the
    # other (a row with a non-finite float anywhere: every block of it by to_json)
    units = unitgen.lludp_units()
    unit = units[0]
    m: lludp.Message = unit.value  # type: ignore[assignment]
    block = m.blocks["AgentData"][0]
    big = m._replace(blocks={"AgentData": (block._replace(Far=1e16),)})
    nan_block = block._replace(CameraCenter=(math.nan, 0.25, 0.5))
    vector_nan = m._replace(blocks={"AgentData": (nan_block, block._replace(Far=1e16))})
    moved: lludp.Message = next(
        u.value
        for u in units
        if u.value.name == "AgentMovementComplete"  # type: ignore[attr-defined]
    )
    data = moved.blocks["Data"][0]  # vectors, no float field
    moved_nan = moved._replace(
        blocks={**moved.blocks, "Data": (data._replace(Position=(0.5, math.inf, 1e16)),)}
    )
    values = [big, vector_nan, *(u.value for u in units[1:]), moved_nan, big]
    items = [Unit(**{**_fields(unit), "value": v}) for v in values]
    for batch_size in (1, 3, 1000):
        rows = tables(items, batch_size=batch_size)["lludp"].to_pylist()
        for value, row in zip(values, rows, strict=True):
            blocks = [b for instances in value.blocks.values() for b in instances]  # type: ignore[attr-defined]
            text = _to_json_text if value in (vector_nan, moved_nan) else _msgspec_text
            assert [b["fields"] for b in row["blocks"]] == [text(b) for b in blocks]
    assert '"Far":1e16' in _msgspec_text(big.blocks["AgentData"][0])


def _fields(unit: Unit) -> dict[str, object]:
    return {name: getattr(unit, name) for name in Unit.__slots__}


def test_avara_one_row_per_command() -> None:
    units = unitgen.avara_units()
    rows = tables(units)["avara"].to_pylist()
    expected = [(u, i, c) for u in units for i, c in enumerate(u.value.commands or [None])]  # type: ignore[attr-defined]
    assert len(rows) == len(expected)
    for row, (unit, index, command) in zip(rows, expected, strict=True):
        assert (row["packet"], row["ack"], row["crc_ok"]) == (
            unit.packet,
            unit.value.ack,  # type: ignore[attr-defined]
            unit.value.crc_ok,  # type: ignore[attr-defined]
        )
        if command is None:
            assert row["command"] is None and row["index"] is None
            continue
        assert row["index"] == index
        for name in ("command", "serial", "send_count", "flags", "p1", "p2", "p3", "data"):
            assert row[name] == getattr(command, name)
        assert row["command_name"] == unit.names[index]


def test_archipelago_one_row_per_command_with_its_fields() -> None:
    units = unitgen.archipelago_units()
    rows = tables(units)["archipelago"].to_pylist()
    expected = [(u, i, c) for u in units for i, c in enumerate(u.value)]  # type: ignore[call-overload]
    assert len(rows) == len(expected)
    for row, (unit, index, command) in zip(rows, expected, strict=True):
        assert row["index"] == index
        assert row["cmd"] == unit.names[index]
        assert json.loads(row["fields"]) == _without_type(to_json(command))


def test_bzrc_pairs_each_command_with_its_response() -> None:
    rows = tables(unitgen.bzrc_units())["bzrc"].to_pylist()
    greeting, agent, *rest = rows
    assert (greeting["command"], greeting["response"]) == (None, "Greeting")
    assert (agent["command"], agent["response"]) == ("agent", None)
    assert rest
    for row in rest:
        assert row["command"] == json.loads(row["response_fields"])["ack"]["command"]
        assert row["response_time"] >= row["time"]


def test_bzrc_a_command_left_unanswered_gets_a_row() -> None:
    units = unitgen.bzrc_units()[:3]  # greeting, agent, teams (its reply cut off)
    rows = tables(units)["bzrc"].to_pylist()
    assert [(r["command"], r["response"]) for r in rows] == [
        (None, "Greeting"),
        ("agent", None),
        ("teams", None),
    ]


def test_errors_table_keeps_where_and_offset() -> None:
    rows = tables(unitgen.errors())["errors"].to_pylist()
    assert [(r["where"], r["offset"], r["packet"]) for r in rows] == [
        ("file", 1234, 7),
        ("decode", 6, 9),
    ]
    assert rows[0]["flow"] is None and rows[1]["protocol"] == "lludp"


def test_a_time_the_column_cannot_hold_is_null() -> None:
    """A damaged record's time past what microseconds in int64 hold (a pcapng
    timestamp of 2**63 us and more) is a null; the rest of the batch is written
    (the cast refused the whole batch with ArrowInvalid)."""
    items = [
        *unitgen.errors(),
        CaptureError("ip", "far off", 1.8e13, 10),
        CaptureError("ip", "far back", -1.8e13, 11),
        *[dataclasses.replace(u, time=1e13) for u in unitgen.lludp_units()[:1]],
    ]
    built = tables(items)
    times = built["errors"].column("time").to_pylist()
    assert times[0] is None and times[1].timestamp() == unitgen.T0 and times[2:] == [None, None]
    assert built["lludp"].column("time").to_pylist() == [None]


def test_batch_size_does_not_change_the_rows() -> None:
    items = unitgen.all_items()
    small = tables(items, batch_size=3)
    big = tables(items)
    assert small.keys() == big.keys()
    for name in big:
        assert small[name].equals(big[name])


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_files_hold_the_same_rows(tmp_path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    items = unitgen.all_items()
    rows = write_tables(items, tmp_path, fmt, capture="c", batch_size=4)
    expected = tables(items, capture="c")
    assert rows == {name: t.num_rows for name, t in expected.items()}
    for name, table in expected.items():
        path = tmp_path / f"{name}.{fmt}"
        got = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(path).read_all()
        assert got.equals(table)


def test_the_guide_documents_every_column() -> None:
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs" / "capture.md").read_text()
    for name, schema in SCHEMAS.items():
        assert f"### {name}" in guide
        for column in schema.names:
            assert f"`{column}`" in guide, (name, column)


def test_bzrc_commands_waiting_for_answers_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from gamecodec.capture import _tables

    monkeypatch.setattr(_tables, "MAX_UNANSWERED", 3)
    units = [u for u in unitgen.bzrc_units() if u.direction == "to_server"][:10]
    builder = _tables.TableBuilder()
    for unit in units:
        builder.add(unit)
    assert len(builder.pairs.pending[units[0].flow]) == 3
    rows = pa.Table.from_batches([b for _, b in builder.finish()]).to_pylist()
    assert [r["packet"] for r in rows] == [u.packet for u in units]
    assert all(r["response"] is None for r in rows)


def test_lludp_a_message_the_template_does_not_know_keeps_its_body() -> None:
    wire = bytes([0x00, 0, 0, 0, 5, 0, 0xFF, 0xFF, 0xFE, 0x99, 1, 2, 3])
    m = lludp.decode(wire)
    unit = Unit(1.0, 1, unitgen.flow("lludp", 1), "to_server", "lludp", (m.name,), m, 13, wire)
    (row,) = tables([unit])["lludp"].to_pylist()
    assert (row["message"], row["body"], row["blocks"]) == (
        "Unknown:0xfffffe99",
        b"\x01\x02\x03",
        [],
    )


def test_the_capture_column_follows_the_builders_capture_name() -> None:
    from gamecodec.capture._tables import TableBuilder

    units = unitgen.lludp_units()[:6]
    builder = TableBuilder("a.pcap", batch_size=4)
    batches = [b for u in units[:3] for b in builder.add(u)]
    builder.capture = "unused.pcap"  # renamed again before any row: no row of its own
    builder.capture = "b.pcap"
    batches += [b for u in units[3:] for b in builder.add(u)] + builder.finish()
    names = [n for _, batch in batches for n in batch.column("capture").to_pylist()]
    assert names == ["a.pcap"] * 3 + ["b.pcap"] * 3
    blocks = [n for _, batch in batches for n in batch.column("blocks").to_pylist()]
    expected = [
        [(name, _without_type(to_json(b))) for name, bs in u.value.blocks.items() for b in bs]
        for u in units
    ]
    assert [[(b["block"], json.loads(b["fields"])) for b in row] for row in blocks] == expected


def _avara_reader_units() -> list[Unit]:
    """Avara units as the reader makes them (with their decoder's options): the
    sample capture's datagrams, the vectors in both layouts, hole punches, and
    datagrams that decode without a matching checksum."""
    from gamecodec import avara
    from gamecodec.avara.sample import capture_stream
    from gamecodec.capture._udp import AvaraDatagrams

    lines = (unitgen.DATA / "avara" / "vectors.jsonl").read_text().splitlines()
    wires = [bytes.fromhex(json.loads(line)["wire"]) for line in lines]
    wires += capture_stream(300, seed=5)
    wires += [avara.encode_punch(c) for c in (0, 1, 2)]
    current, legacy = AvaraDatagrams(layout=1), AvaraDatagrams(layout=0)
    other_version = AvaraDatagrams(version=avara.DEFAULT_VERSION + 1)
    flow = unitgen.flow("avara", 2, port=19567)
    units: list[Unit] = []
    for n, wire in enumerate(wires):
        for decoder in (current, legacy, other_version) if n % 7 == 0 else (current,):
            item = decoder.decode(wire, unitgen.T0 + n, n + 1, flow, "to_server")
            if isinstance(item, Unit):
                units.append(item)
        d = avara.decode(wire)
        if isinstance(d, avara.Datagram) and len(wire) > 4 and n % 5 == 0:
            bad = wire[:1] + bytes([wire[1] ^ 1]) + wire[2:]  # checksum off: no commands
            value = avara.decode(bad)
            place = (unitgen.T0 + n, n + 1, flow, "to_client")
            options = (avara.DEFAULT_VERSION, 1)
            units.append(Unit(*place, "avara", (), value, len(bad), bad, options))  # type: ignore[arg-type]
    return units


@pytest.mark.parametrize("batch_size", [3, 7, 65_536])
def test_avara_rows_from_payloads_equal_rows_from_values(batch_size: int) -> None:
    import dataclasses

    units = _avara_reader_units()
    assert len({u.options for u in units}) == 3  # both layouts, two versions
    assert {len(u.names) for u in units} >= {0, 1, 2}  # no command, one, several
    valueless = [dataclasses.replace(u, options=None) for u in units]
    # units with and without options mixed: the table switches between the two ways
    mixed = [
        u if (n // 5) % 2 else v for n, (u, v) in enumerate(zip(units, valueless, strict=True))
    ]
    expected = tables(valueless, batch_size=batch_size)["avara"]
    for given in (units, mixed):
        got = tables(given, batch_size=batch_size)["avara"]
        assert got.schema == expected.schema
        assert got.to_pylist() == expected.to_pylist()
    sizes = [b.num_rows for _, b in record_batches(units, batch_size=batch_size)]
    assert sizes == [b.num_rows for _, b in record_batches(valueless, batch_size=batch_size)]


def test_avara_rows_from_payloads_follow_the_capture_name() -> None:
    from gamecodec.capture._tables import TableBuilder

    units = _avara_reader_units()[:40]
    builder = TableBuilder("a.pcap", batch_size=1000)
    batches = [b for u in units[:20] for b in builder.add(u)]
    builder.capture = "b.pcap"
    batches += [b for u in units[20:] for b in builder.add(u)] + builder.finish()
    got = [(r["capture"], r["packet"]) for _, b in batches for r in b.to_pylist()]
    table = tables(units)["avara"].to_pylist()
    cut = tables(units[:20])["avara"].num_rows
    assert 20 < cut < len(table)
    assert [p for _, p in got] == [r["packet"] for r in table]
    assert [c for c, _ in got] == ["a.pcap"] * cut + ["b.pcap"] * (len(got) - cut)
