"""``gamecodec bench``: the harness, the CLI's table and --check, and the streams."""

from __future__ import annotations

import json

import pytest

import gamecodec
from gamecodec import avara, cli, lludp
from gamecodec._bench import Config, Contest, Row, Side, run_contest, skipped
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


def _row(status: str) -> Row:
    if status == "skipped":
        return skipped("p", "a skipped row", "the peer is not installed", peer="peer", limit=3.0)
    ratio = 5.0 if status == "met" else 1.0
    return Row("p", f"a {status} row", "10 items", "item", "ours", "peer", "speedup", 3.0,
               1.0, ratio, ratio, ratio, ratio)  # fmt: skip


@pytest.mark.parametrize(
    ("statuses", "code"),
    [(["met"], 0), (["met", "skipped"], 0), (["met", "MISSED", "skipped"], 1)],
)
def test_check_exit_code_and_table(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    statuses: list[str],
    code: int,
) -> None:
    rows = [_row(s) for s in statuses]
    monkeypatch.setattr(cli, "run_bench", lambda protocols, config: (rows, []))
    assert cli.main(["bench", "--check"]) == code
    out = capsys.readouterr().out
    for s in statuses:
        assert f"a {s} row" in out
    assert ">= 3x faster" in out
    if "skipped" in statuses:
        assert "skipped: the peer is not installed" in out
    assert "inf" not in out
    assert cli.main(["bench"]) == 0  # without --check a miss is only reported


def test_bench_smoke_json_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "--quick", "--json", "--rounds", "1", "--protocol", "ywindow"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["results"]
    assert row["protocol"] == "ywindow"
    if gamecodec.implementation()["ywindow"] == "c":
        assert row["ours_us_per_item"] > 0 and row["peer_us_per_item"] > 0
        assert row["status"] in {"met", "MISSED"}
    else:  # a row against the pure twin means nothing when the pure twin is the one loaded
        assert row["status"] == "skipped"
    cli.main(["bench", "--quick", "--markdown", "--rounds", "1", "--protocol", "bzrc"])
    out = capsys.readouterr().out
    assert "| protocol | what is timed |" in out
    assert "|---|" in out


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
    batch = avara.decode_many(stream)
    assert len(batch.commands) > len(stream)
