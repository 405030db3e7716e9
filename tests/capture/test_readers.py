"""The tables as other readers see them: DuckDB (the guide's own query), Polars and
pandas read every Parquet table with the rows and values pyarrow reads. Each reader is
optional: its test skips without it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from gamecodec.capture._output import write_tables  # noqa: E402

from . import unitgen  # noqa: E402

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "capture.md"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every table of the corpus-built units, as Parquet files in ``tables/``."""
    root = tmp_path_factory.mktemp("readers")
    written = write_tables(unitgen.all_items(), root / "tables", capture="corpus")
    assert set(written) >= {"lludp", "avara", "archipelago", "bzrc"}
    return root


def _paths(root: Path) -> list[Path]:
    return sorted((root / "tables").glob("*.parquet"))


def _guide_sql(marker: str) -> str:
    """The guide's SQL block whose first line contains ``marker``."""
    for block in re.findall(r"```sql\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL):
        if marker in block.splitlines()[0]:
            return str(block)
    raise AssertionError(f"no SQL block starting with {marker!r} in {GUIDE.name}")


def _chat_lines() -> list[tuple[float, str]]:
    """(time, text) of each ChatFromViewer's ChatData, from the decoder itself."""
    out = []
    for unit in unitgen.lludp_units():
        m = unit.value
        if m.name == "ChatFromViewer":
            for block in m.blocks["ChatData"]:
                out.append((unit.time, bytes(block.Message).rstrip(b"\0").decode()))
    assert out, "the corpus has no ChatFromViewer"
    return out


def test_duckdb_runs_the_guides_query(tables: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.chdir(tables)  # the query names 'tables/lludp.parquet'
    rows = duckdb.connect().sql(_guide_sql("every chat line")).fetchall()
    got = [(t.timestamp(), text) for t, text in rows]
    want = _chat_lines()
    assert [text for _, text in got] == [text for _, text in want]
    assert [round(t, 6) for t, _ in got] == [round(t, 6) for t, _ in want]


def test_duckdb_reads_every_table_as_pyarrow_does(tables: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    for path in _paths(tables):
        relation = con.sql(f"SELECT * FROM '{path}'")
        theirs = getattr(relation, "to_arrow_table", relation.arrow)()  # the newer name
        ours = pq.read_table(path)
        assert theirs.column_names == ours.column_names, path.name
        for name in ours.column_names:
            got, want = theirs[name].to_pylist(), ours[name].to_pylist()
            assert got == want, f"{path.name}: column {name}"


def test_polars_reads_every_table_as_pyarrow_does(tables: Path) -> None:
    pl = pytest.importorskip("polars")
    for path in _paths(tables):
        frame = pl.read_parquet(path)
        ours = pq.read_table(path)
        assert frame.columns == ours.column_names, path.name
        for name in ours.column_names:
            assert frame[name].to_list() == ours[name].to_pylist(), f"{path.name}: column {name}"


def test_pandas_reads_every_table(tables: Path) -> None:
    pd = pytest.importorskip("pandas")
    for path in _paths(tables):
        frame = pd.read_parquet(path)
        ours = pq.read_table(path)
        assert list(frame.columns) == ours.column_names, path.name
        assert len(frame) == ours.num_rows, path.name
        assert frame["packet"].tolist() == ours["packet"].to_pylist(), path.name
