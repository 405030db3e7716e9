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
