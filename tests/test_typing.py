"""The programs in tests/typing, written as users write them, pass ``mypy --strict``.

Each is type-checked against ``src`` (not run): the public API's types must
carry through to what an agent, a bot or a tracker reads, and the mistakes
marked ``# type: ignore[...]`` in them must be caught (``--strict`` reports
an ignore that catches nothing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MYPYPATH, PACKAGE_ROOT, ROOT

api = pytest.importorskip("mypy.api", reason="mypy is not installed")

PROGRAMS = sorted((ROOT / "tests" / "typing").glob("*.py"))


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """mypy's report on every program, from one run."""
    cache = tmp_path_factory.mktemp("mypy-cache")
    old = os.environ.pop("MYPYPATH", None)
    if MYPYPATH is not None:
        os.environ["MYPYPATH"] = MYPYPATH
    try:
        stdout, stderr, _ = api.run(
            [
                "--strict",
                "--config-file",
                str(ROOT / "pyproject.toml"),
                "--cache-dir",
                str(cache),
                "--no-error-summary",
                *map(str, PROGRAMS),
            ]
        )
    finally:
        os.environ.pop("MYPYPATH", None)
        if old is not None:
            os.environ["MYPYPATH"] = old
    assert not stderr, stderr
    return stdout


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_program_passes_mypy_strict(program: Path, mypy_report: str) -> None:
    errors = [
        line
        for line in mypy_report.splitlines()
        if Path(line.split(":", 1)[0]).name == program.name
    ]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(
    ("package", "name"),
    [("bzrc", "Bot"), ("ywindow", "Client"), ("archipelago", "Client")],
)
def test_aio_is_reachable_from_its_package(package: str, name: str) -> None:
    """``bzrc.aio.Bot`` works after ``from gamecodec import bzrc`` alone, as its
    type says: the package loads ``aio`` on first use (in a fresh interpreter,
    where nothing imported ``gamecodec.<package>.aio`` before)."""
    code = (
        "import sys\n"
        f"from gamecodec import {package}\n"
        f"assert 'gamecodec.{package}.aio' not in sys.modules\n"
        f"print({package}.aio.{name}.__module__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"gamecodec.{package}.aio"
