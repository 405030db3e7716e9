"""Fixtures for the Archipelago tests: the compat twins and the recorded corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_path, twin_fixtures

SESSIONS = ("small", "js/ws", "js/native")


codec, py_codec, c_codec = twin_fixtures("gamecodec.archipelago", "_compat")


def load_session(name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(session.jsonl row, expected.jsonl row) pairs of one recorded session."""
    root: Path = shared_path("corpus", "archipelago", name)
    frames = [json.loads(line) for line in (root / "session.jsonl").open(encoding="utf-8")]
    expected = [json.loads(line) for line in (root / "expected.jsonl").open(encoding="utf-8")]
    assert [f["seq"] for f in frames] == [e["seq"] for e in expected]
    return list(zip(frames, expected, strict=True))


@pytest.fixture(scope="session")
def corpus() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Every recorded frame: (session, frame row, expected row)."""
    return [(name, f, e) for name in SESSIONS for f, e in load_session(name)]
