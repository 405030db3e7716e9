"""README.md: every user-facing extra is named, and its benchmark table is a committed run's."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
INTERNAL = {"dev", "fuzz"}  # the maintainers' extras (CONTRIBUTING-level, not for users)


def test_every_extra_is_named() -> None:
    # the README named no [docs] extra (nor [dask]): `mkdocs build` failed after its
    # install commands
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"]) - INTERNAL
    named = set(re.findall(r'gamecodec\[(\w+)\]|"\.\[(\w+)\]"', README))
    assert extras <= {a or b for a, b in named}


def test_the_benchmark_table_is_the_committed_report() -> None:
    # the README's per-item figures could be traced to no run
    report = re.search(r"benchmarks/results/[\w.-]+\.json", README)
    assert report is not None, "the README names no saved report"
    assert (ROOT / report[0]).is_file()
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "readme_bench.py"), report[0], "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_test_extra_installs_what_the_tests_import_if_present() -> None:
    # duckdb, polars, pandas and mypy were not in [test]: 5 tests skipped after the
    # README's own test command
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]

    def names(extra: str) -> set[str]:
        out: set[str] = set()
        for req in extras[extra]:
            included = re.fullmatch(r"gamecodec\[(\w+)\]", req)
            out |= names(included[1]) if included else {re.split(r"[<>=!;\[ ]", req)[0]}
        return out

    provided = {n.lower() for n in names("test")}
    optional = set()
    for path in (ROOT / "tests").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        optional |= set(re.findall(r"importorskip\(\s*\"(\w+)", text))
    docs_only = {"griffe"}  # the docs extension's own test (the [docs] extra)
    assert {"duckdb", "polars", "pandas", "mypy"} <= optional
    assert optional - docs_only <= provided
