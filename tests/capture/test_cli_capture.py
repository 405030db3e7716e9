"""``gamecodec dump`` and ``gamecodec stats`` on captures built from the corpus
and on the real captures (skipped without ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dpkt")

from gamecodec import avara, lludp  # noqa: E402
from gamecodec.cli import main  # noqa: E402

from . import pcapgen, unitgen  # noqa: E402
from .conftest import real_capture  # noqa: E402


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return pcapgen.write(tmp_path / "mixed.pcapng", unitgen.mixed_packets(), fmt="pcapng")


def _dump(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:  # type: ignore[type-arg]
    assert main(["dump", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_dump_gives_every_unit_as_a_json_line(mixed: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lines = _dump(capsys, str(mixed))
    by = {p: [x for x in lines if x.get("protocol") == p] for p in ("lludp", "avara", "bzrc")}
    assert [x["names"][0] for x in by["lludp"]] == [u.value.name for u in unitgen.lludp_units()]  # type: ignore[attr-defined]
    assert len(by["avara"]) == len(unitgen.avara_units())
    assert by["bzrc"]
    assert all(x["capture"] == "mixed.pcapng" for x in lines)
    assert not [x for x in lines if "error" in x]


def test_dump_filters(mixed: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    only = _dump(capsys, str(mixed), "--only", "avara")
    assert only and {x["protocol"] for x in only} == {"avara"}
    chat = _dump(capsys, str(mixed), "--message", "Chat*")
    assert sorted(x["names"][0] for x in chat) == ["ChatFromSimulator", "ChatFromViewer"]
    flow = only[0]["flow"]
    assert {x["flow"] for x in _dump(capsys, str(mixed), "--flow", str(flow))} == {flow}
    by_address = _dump(capsys, str(mixed), "--flow", "10.0.0.3:50002")
    assert {x["protocol"] for x in by_address} == {"avara"}
    assert _dump(capsys, str(mixed), "--flow", "\xb2") == []  # isdigit, but not for int()


def test_dump_with_an_override(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    a, b = ("10.0.0.2", 40_000), ("10.0.0.1", 13_999)  # not a port LLUDP is looked for on
    packets = [pcapgen.udp(1.0 + n, a, b, u.payload) for n, u in enumerate(unitgen.lludp_units())]
    path = pcapgen.write(tmp_path / "odd.pcap", packets)
    forced = _dump(capsys, str(path), "--protocol", "lludp:udp/13999")
    assert len([x for x in forced if x.get("protocol") == "lludp"]) == len(packets)


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_dump_tables_agree_with_json_lines(mixed: Path, tmp_path: Path, capsys, fmt: str) -> None:  # type: ignore[no-untyped-def]
    lines = _dump(capsys, str(mixed))
    out = tmp_path / "tables"
    assert main(["dump", str(mixed), "--format", fmt, "-o", str(out)]) == 0
    if fmt == "parquet":
        lludp_rows = pq.read_table(out / "lludp.parquet").to_pylist()
    else:
        import pyarrow as pa

        lludp_rows = pa.ipc.open_file(out / "lludp.arrow").read_all().to_pylist()
    jl = [x for x in lines if x.get("protocol") == "lludp"]
    assert [(r["packet"], r["message"], r["sequence"]) for r in lludp_rows] == [
        (x["packet"], x["value"]["name"], x["value"]["sequence"]) for x in jl
    ]


def test_stats_json_and_plot(mixed: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    png = tmp_path / "rates.png"
    assert main(["stats", str(mixed), "--json", "--plot", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    protocols = {f["protocol"] for f in data["flows"]}
    assert {"lludp", "avara", "bzrc"} <= protocols
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["stats", str(mixed)]) == 0
    assert "lludp" in capsys.readouterr().out


def test_stats_refuses_a_plot_format_before_reading(mixed: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """An unknown plot suffix is a one-line error (status 2) before any reading,
    not a traceback after all the work."""
    assert main(["stats", str(mixed), "--plot", str(tmp_path / "rates.xyz")]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("gamecodec: error: --plot ") and "png" in out.err
    assert not (tmp_path / "rates.xyz").exists()


def test_a_damaged_capture_gives_located_errors_and_the_rest(
    mixed: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    data = mixed.read_bytes()
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(data[: len(data) - 37])
    out = tmp_path / "tables"
    assert main(["dump", str(cut), "--format", "parquet", "-o", str(out)]) == 0
    errors = pq.read_table(out / "errors.parquet").to_pylist()
    assert errors and errors[-1]["where"] == "file" and errors[-1]["offset"] is not None
    assert pq.read_table(out / "lludp.parquet").num_rows == len(unitgen.lludp_units())


def test_progress_bar_when_asked(mixed: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import gamecodec.capture._cli as cli

    monkeypatch.setattr(cli, "SHOW_AFTER", 0.0)
    lines = _dump(capsys, str(mixed), "--progress")  # the bar goes to stderr only
    assert lines and all("protocol" in line for line in lines)
    assert main(["stats", str(mixed), "--no-progress"]) == 0


def _udp_payloads(path: Path, port: int) -> list[bytes]:
    """Every UDP datagram to or from ``port``, read with dpkt alone."""
    import dpkt

    with path.open("rb") as f:
        reader = dpkt.pcapng.Reader(f) if path.suffix == ".pcapng" else dpkt.pcap.Reader(f)
        out = []
        for _, buf in reader:
            ip = dpkt.ethernet.Ethernet(buf).data
            udp = ip.data if isinstance(ip, dpkt.ip.IP) else None
            if isinstance(udp, dpkt.udp.UDP) and port in (udp.sport, udp.dport):
                out.append(bytes(udp.data))
        return out


def test_real_lludp_capture_rows_equal_the_decoder(tmp_path: Path) -> None:
    path = real_capture("lludp_opensim_live_first30s.pcap")
    assert main(["dump", str(path), "--format", "parquet", "-o", str(tmp_path)]) == 0
    rows = pq.read_table(tmp_path / "lludp.parquet").to_pylist()
    payloads = _udp_payloads(path, 9000)
    assert len(rows) == len(payloads)
    for row, payload in zip(rows, payloads, strict=True):
        m = lludp.decode(payload)
        assert (row["message"], row["sequence"], row["acks"]) == (m.name, m.sequence, list(m.acks))
        assert len(row["blocks"]) == sum(len(b) for b in m.blocks.values())
    assert not (tmp_path / "errors.parquet").exists()


def test_real_avara_capture_rows_equal_the_decoder(tmp_path: Path) -> None:
    path = real_capture("avara_direct_first8s.pcap")
    assert main(["dump", str(path), "--format", "parquet", "-o", str(tmp_path)]) == 0
    rows = pq.read_table(tmp_path / "avara.parquet").to_pylist()
    expected = [
        (d.ack, c.serial if c else None, c.data if c else None)
        for d in map(avara.decode, _udp_payloads(path, 33585))
        for c in (d.commands or (None,))
    ]
    assert [(r["ack"], r["serial"], r["data"]) for r in rows] == expected


@pytest.mark.parametrize(
    "name",
    [
        "lludp_opensim_live_first30s.pcap",
        "avara_direct_first8s.pcap",
        "bzrc_bzrflag_play_first5s5.pcapng",
        "ap_gamecodec_session_first20s.pcapng",
    ],
)
def test_real_captures_json_lines_and_parquet_agree(name: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = real_capture(name)
    lines = _dump(capsys, str(path))
    assert main(["dump", str(path), "--format", "parquet", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    units = [x for x in lines if "error" not in x]
    assert units
    protocol = units[0]["protocol"]
    rows = pq.read_table(tmp_path / f"{protocol}.parquet").to_pylist()
    if protocol == "bzrc":
        commands = [x for x in units if x["direction"] == "to_server"]
        responses = [x for x in units if x["direction"] == "to_client"]
        assert sum(r["command"] is not None for r in rows) == len(commands)
        assert sum(r["response"] is not None for r in rows) == len(responses)
        return
    per_unit = {"lludp": lambda x: 1, "avara": lambda x: max(1, len(x["value"]["commands"]))}
    count = per_unit.get(protocol, lambda x: len(x["value"]))
    assert len(rows) == sum(count(x) for x in units)
    assert sorted({r["packet"] for r in rows}) == sorted({x["packet"] for x in units})


def test_a_missing_capture_is_one_line_and_status_2(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    for command in ("dump", "stats"):
        assert main([command, str(tmp_path / "absent.pcap")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("gamecodec: error:") and "absent.pcap" in err
        assert "Traceback" not in err


def test_a_bad_override_is_a_usage_error(mixed: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_:
        main(["dump", str(mixed), "--protocol", "bogus"])
    assert exit_.value.code == 2
    assert "bogus" in capsys.readouterr().err
