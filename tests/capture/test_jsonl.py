"""JSON lines of decoded units, and their agreement with the Parquet tables."""

from __future__ import annotations

import io
import json

import pytest

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dpkt")  # gamecodec.capture reads captures with dpkt

from gamecodec.capture._jsonl import write_json_lines  # noqa: E402
from gamecodec.capture._output import write_tables  # noqa: E402
from gamecodec.cli import to_json  # noqa: E402

from . import unitgen  # noqa: E402


def _lines(items: list) -> list[dict]:  # type: ignore[type-arg]
    out = io.StringIO()
    assert write_json_lines(items, out, capture="c.pcap") == len(items)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_each_unit_is_one_line_with_its_place_and_value() -> None:
    items = unitgen.all_items()
    for item, line in zip(items, _lines(items), strict=True):
        assert line["capture"] == "c.pcap"
        assert line["packet"] == item.packet
        if "error" in line:
            assert line["error"]["where"] == item.where  # type: ignore[union-attr]
            continue
        assert line["time"] == item.time
        assert line["flow_id"] == item.flow.id
        assert line["protocol"] == item.protocol
        assert line["names"] == list(item.names)
        assert line["value"] == to_json(item.value)


def _no_type(data: dict) -> dict:  # type: ignore[type-arg]
    return {k: v for k, v in data.items() if k != "type"}


def test_json_lines_and_parquet_agree(tmp_path) -> None:  # type: ignore[no-untyped-def]
    items = unitgen.all_items()
    lines = _lines(items)
    write_tables(items, tmp_path, capture="c.pcap")
    read = {
        n: pq.read_table(tmp_path / f"{n}.parquet").to_pylist()
        for n in ("lludp", "avara", "archipelago", "errors")
    }
    by = {
        p: [x for x in lines if x.get("protocol") == p and "error" not in x]
        for p in ("lludp", "avara", "archipelago")
    }

    lludp = read["lludp"]
    assert len(lludp) == len(by["lludp"])
    for row, line in zip(lludp, by["lludp"], strict=True):
        value = line["value"]
        assert (row["packet"], row["flow_id"], row["direction"]) == (
            line["packet"],
            line["flow_id"],
            line["direction"],
        )
        assert round(row["time"].timestamp() * 1e6) == round(line["time"] * 1e6)
        assert (row["message"], row["sequence"], row["flags"], row["acks"]) == (
            value["name"],
            value["sequence"],
            value["flags"],
            value["acks"],
        )
        blocks = [(name, _no_type(b)) for name, bs in value["blocks"].items() for b in bs]
        assert [(b["block"], json.loads(b["fields"])) for b in row["blocks"]] == blocks

    avara = read["avara"]
    flat = [
        (line, i, c)
        for line in by["avara"]
        for i, c in enumerate(line["value"]["commands"] or [None])
    ]
    assert len(avara) == len(flat)
    for row, (line, index, command) in zip(avara, flat, strict=True):
        assert row["packet"] == line["packet"]
        assert row["ack"] == line["value"]["ack"]
        if command is not None:
            assert row["index"] == index
            assert row["data"].hex() == command["data"]
            assert (row["serial"], row["p1"], row["p3"]) == (
                command["serial"],
                command["p1"],
                command["p3"],
            )

    archipelago = read["archipelago"]
    flat = [(line, i, c) for line in by["archipelago"] for i, c in enumerate(line["value"])]
    assert len(archipelago) == len(flat)
    for row, (line, index, command) in zip(archipelago, flat, strict=True):
        assert (row["packet"], row["index"], row["cmd"]) == (
            line["packet"],
            index,
            line["names"][index],
        )
        assert json.loads(row["fields"]) == _no_type(command)

    errors = [x for x in lines if "error" in x]
    assert [(r["where"], r["offset"]) for r in read["errors"]] == [
        (e["error"]["where"], e["error"]["offset"]) for e in errors
    ]
