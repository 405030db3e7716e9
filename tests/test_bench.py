"""``gamecodec bench``: the harness, the CLI's table and --check, and the streams."""

from __future__ import annotations

import json
import re

import pytest

import gamecodec
from gamecodec import avara, cli, lludp
from gamecodec._bench import (
    PLAIN_WIDTH,
    Config,
    Contest,
    Row,
    Side,
    describe_result,
    describe_status,
    describe_target,
    legend,
    render_table,
    run_all,
    run_contest,
    skipped,
)
from gamecodec.avara.sample import capture_stream
from gamecodec.lludp.sample import REGION_MIX, region_stream


def _spin(n: int) -> Side:
    def run(_: object) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    return Side(f"spin {n}", run)


def test_contest_ratio_and_range() -> None:
    contest = Contest("x", "spin", "w", 1000, "item", _spin(20_000), _spin(160_000), limit=1.5)
    row = run_contest(contest, Config("quick", 3, min_time=0.005))
    assert row.ratio is not None and row.low is not None and row.high is not None
    assert row.low <= row.ratio <= row.high
    assert row.ratio > 2  # eight times the work
    assert row.status == "met"
    cost = run_contest(
        Contest(
            "x", "spin", "w", 1000, "item", _spin(160_000), _spin(20_000), kind="cost", limit=1.5
        ),
        Config("quick", 3, min_time=0.005),
    )
    assert cost.ratio is not None and cost.ratio > 2
    assert cost.status == "MISSED"


def _row(status: str, kind: str = "speedup") -> Row:
    if status == "skipped":
        return skipped("p", "a skipped row", "the peer is not installed", peer="peer", limit=3.0)
    if status == "no target":
        return Row("p", "a row without a target", "10 items", "item", "ours", "peer", kind,
                   None, 1.0, 2.0, 2.0, 1.9, 2.1)  # fmt: skip
    ratio = 5.0 if (status == "met") == (kind == "speedup") else 1.0
    return Row("p", f"a {status} row", "10 items", "item", "ours", "peer", kind, 3.0,
               1.0, ratio, ratio, ratio, ratio)  # fmt: skip


@pytest.mark.parametrize(
    ("statuses", "code"),
    [(["met"], 0), (["met", "skipped"], 0), (["met", "MISSED", "skipped", "no target"], 1)],
)
def test_check_exit_code_and_table(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    statuses: list[str],
    code: int,
) -> None:
    rows = [_row(s) for s in statuses]
    monkeypatch.setattr(cli, "run_bench", lambda protocols, config: (rows, []))
    assert cli.main(["bench", "--check", "--markdown"]) == code
    out = capsys.readouterr().out
    for s in statuses:
        assert f"a {s} row" in out or s == "no target"
    assert ">= 3x faster" in out
    if "skipped" in statuses:
        assert "skipped: the peer is not installed" in out
    if "MISSED" in statuses:  # how far off, and the target
        assert "| MISSED by 67% |" in out and "| >= 3x faster |" in out
    if "no target" in statuses:
        assert "no target" in out and "info only" in out
    assert not re.search(r"\binf\b", out)
    assert " NO " not in out and " YES " not in out
    assert not re.search(r"(?<![\w.(])-\d", out)  # no negative figures
    assert cli.main(["bench"]) == 0  # without --check a miss is only reported


def test_the_legend_explains_every_column(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row("met"), _row("MISSED", kind="cost")]
    monkeypatch.setattr(cli, "run_bench", lambda protocols, config: (rows, []))
    assert cli.main(["bench", "--full"]) == 0
    out = capsys.readouterr().out
    table = render_table(rows)
    header = table.splitlines()[0].split()
    for word in header:
        assert word in legend()
    for name in ("protocol", "what is timed", "workload", "result", "target", "status"):
        assert f"  {name}: " in out
    assert "| <= 3x the time | MISSED by 67% |" in render_table(rows, markdown=True)
    lines = render_table(rows).splitlines()
    assert max(map(len, lines)) <= PLAIN_WIDTH  # long cells wrap
    assert lines.count("p") == 1  # one heading over the protocol's rows
    markdown = render_table(rows, markdown=True).splitlines()
    assert markdown[0].startswith("| protocol | what is timed |")
    assert markdown[1] == "|---|---|---|---|---|---|---|---|---|"
    assert len(markdown) == 2 + len(rows)


def test_status_descriptions() -> None:
    assert describe_target(_row("no target")) == "no target"
    assert describe_status(_row("no target")) == "info only"
    assert describe_target(_row("met", kind="cost")) == "<= 3x the time"
    row = _row("met")
    row.ratio = 2.99
    assert describe_status(row) == "MISSED by under 1%"
    assert describe_status(row, with_target=True) == "MISSED by under 1% (target >= 3x faster)"
    assert describe_result(_row("skipped")) == "n/a"


def test_progress_goes_to_stderr_only_when_asked_or_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fake_run(protocols: list[str], config: Config) -> tuple[list[Row], list[Row]]:
        return run_all([_row("skipped"), _spin_contest()], config), []

    monkeypatch.setattr(cli, "run_bench", fake_run)
    assert cli.main(["bench", "--json"]) == 0  # stdout is not a terminal here
    assert capsys.readouterr().err == ""
    assert cli.main(["bench", "--json", "--progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3  # what runs, then one line per row as it finishes
    assert "skipped (the peer is not installed)" in err[1]
    assert "x faster" in err[2] and "met" in err[2]


def _spin_contest() -> Contest:
    return Contest("x", "spin", "w", 1000, "item", _spin(2_000), _spin(16_000), limit=1.5)


def test_modes_and_the_quick_alias(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[Config] = []

    def fake_run(protocols: list[str], config: Config) -> tuple[list[Row], list[Row]]:
        seen.append(config)
        return [], []

    monkeypatch.setattr(cli, "run_bench", fake_run)
    for argv in (["bench"], ["bench", "--quick"], ["bench", "--full"], ["bench", "--check"]):
        assert cli.main([*argv, "--json"]) == 0
    assert [(c.mode, c.rounds) for c in seen] == [
        ("quick", 3), ("quick", 3), ("full", 5), ("full", 5)
    ]  # fmt: skip
    assert Config("quick").size(1, 2) == 1 and Config("full").size(1, 2) == 2
    with pytest.raises(SystemExit):
        cli.main(["bench", "--quick", "--full"])
    capsys.readouterr()


def test_bench_smoke_json_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "--json", "--rounds", "1", "--protocol", "ywindow"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"info", "mode", "rounds", "results", "single_packet", "summary"}
    assert data["mode"] == "quick"
    (row,) = data["results"]
    assert set(row) == {
        "protocol", "title", "workload", "unit", "ours", "peer", "kind", "ours_us_per_item",
        "peer_us_per_item", "ratio", "ratio_low", "ratio_high", "ratio_per_round", "limit",
        "status", "skipped",
    }  # fmt: skip
    assert row["protocol"] == "ywindow"
    if gamecodec.implementation()["ywindow"] == "c":
        assert row["ours_us_per_item"] > 0 and row["peer_us_per_item"] > 0
        assert row["status"] == "not judged"  # a quick run: results only
    else:  # a row against the pure twin means nothing when the pure twin is the one loaded
        assert row["status"] == "skipped"
    cli.main(["bench", "--quick", "--markdown", "--rounds", "1", "--protocol", "bzrc"])
    out = capsys.readouterr().out
    assert "| protocol | what is timed |" in out
    assert "|---|" in out
    assert "- **status**: " in out


def test_region_stream_is_distinct_and_covers_the_template() -> None:
    messages = region_stream(3000)
    datagrams = [lludp.encode(m) for m in messages]
    assert len(set(datagrams)) == len(datagrams)
    names = {m.name for m in messages}
    assert names == {spec.name for spec in lludp.default_template()}
    for name, share, _ in REGION_MIX:
        count = sum(1 for m in messages if m.name == name)
        assert 0.5 * share * 3000 < count < 1.5 * share * 3000, name
    object_ids = [b.FullID for m in messages if m.name == "ObjectUpdate" for b in m.ObjectData]
    assert len(set(object_ids)) == len(object_ids)
    for data in datagrams:
        assert lludp.decode(data, strict=True).name


def test_capture_stream_is_distinct() -> None:
    stream = capture_stream(5000)
    assert len(set(stream)) == len(stream) == 5000
    batch = avara.decode_array(stream)
    assert len(batch.commands) > len(stream)


def test_a_quick_run_judges_no_target_and_fits_100_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `gamecodec bench` (the README's first command) printed "MISSED by 25-64%" rows
    # judged on small streams against --full's targets, 176 columns wide, with each
    # skip reason wrapped over five lines of its row
    long_reason = "Hippolyzer 0.17.6 needs Python 3.12+ and none was found " * 3
    rows = [
        _row("met"),
        _row("MISSED"),
        _row("MISSED", kind="cost"),
        _row("no target"),
        skipped("p", "one skipped row", long_reason, peer="Hippolyzer 0.17.6", limit=30.0),
        skipped("p", "another skipped row", long_reason, peer="Hippolyzer 0.17.6", limit=15.0),
    ]
    monkeypatch.setattr(cli, "run_bench", lambda protocols, config: (rows, []))
    assert cli.main(["bench"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"MISSED by \d", out)
    assert out.count("not judged") >= 3 and "--full judges them" in out
    assert max(len(line) for line in out.splitlines()) <= PLAIN_WIDTH
    assert out.count("skipped [1]") == 2 and out.count("[1] skipped: Hippolyzer") == 1
    assert "[2]" not in out
    for row in rows:
        row.judged = True
    assert cli.main(["bench", "--full"]) == 0  # --full judges, and says how far off
    out = capsys.readouterr().out
    assert "MISSED by 67%" in out and "judged them" not in out
    assert max(len(line) for line in out.splitlines()) <= PLAIN_WIDTH


def test_a_side_timed_elsewhere_is_not_run_here() -> None:
    calls: list[int] = []

    def timed(repeat: int) -> float:
        calls.append(repeat)
        return 0.004

    def never(_: object) -> object:
        raise AssertionError("run() of a side timed elsewhere")

    remote = Side("peer elsewhere", never, timed=timed)
    row = run_contest(Contest("x", "t", "w", 1, "item", _spin(2_000), remote), Config("quick", 3))
    assert len(calls) == 4  # the warm-up pass, then one per round
    assert row.peer_us == pytest.approx(4000)


def test_without_hippolyzer_the_skip_says_how_to_get_its_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gamecodec.lludp import _bench as lludp_bench

    monkeypatch.delenv(lludp_bench.HIPPOLYZER_PYTHON, raising=False)
    monkeypatch.setattr(lludp_bench.sys, "version_info", (3, 11, 7))
    why = lludp_bench._why_not("Hippolyzer is not installed")
    assert "GAMECODEC_HIPPOLYZER_PYTHON=" in why and "hippolyzer==0.17.6" in why
    assert "python3.12 -m venv" in why


def test_hippolyzer_in_a_second_python_times_its_side() -> None:
    import os

    from gamecodec.lludp._bench import RemotePeer

    python = os.environ.get("GAMECODEC_HIPPOLYZER_PYTHON")
    if not python:
        pytest.skip("GAMECODEC_HIPPOLYZER_PYTHON is not set (a Python with hippolyzer==0.17.6)")
    datagrams = [lludp.encode(m) for m in region_stream(50)]
    peer = RemotePeer(python)
    try:
        assert peer.version.startswith("3.")
        refused = peer.call("refused", [*datagrams, b"\x00"])
        assert len(datagrams) in refused  # a 1-byte datagram is no packet
        kept = [d for n, d in enumerate(datagrams) if n not in set(refused)]
        circuit = [(d, lludp.peek(d).name == "AgentUpdate") for d in kept]
        names = peer.call("setup", kept, kept * 2, circuit)
        assert set(names) == {"decode", "kept", "encode", "peek", "circuit"}
        for name in names:
            assert peer.call("time", name, 2) > 0
        with pytest.raises(RuntimeError, match="unknown request"):
            peer.call("nonsense")
    finally:
        peer.close()
