"""The guides name what a user passes: every keyword of the asyncio ``connect`` calls."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPRECATED = {"login_timeout"}  # an old name of connect_timeout, still accepted


def test_the_archipelago_guide_names_every_connect_option() -> None:
    # the guide's `aio.connect(uri, *, name, game, ...)` listed no tags=, which a
    # tracker needs (it logs in with tags=["Tracker"])
    pytest.importorskip("websockets")
    from gamecodec.archipelago import aio

    guide = (ROOT / "docs" / "archipelago.md").read_text(encoding="utf-8")
    params = inspect.signature(aio.connect).parameters.values()
    keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in DEPRECATED]
    assert "tags" in keywords
    required = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    assert "aio.connect(uri, *, " + ", ".join(required) + ", ...)" in guide
    missing = [k for k in keywords if k not in required and f"`{k}=" not in guide]
    assert missing == []
