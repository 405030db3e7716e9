"""docs/archipelago.md names the types the asyncio client returns."""

from __future__ import annotations

import typing

import pytest

from gamecodec import archipelago as ap
from tests.conftest import ROOT

DOC = ROOT / "docs" / "archipelago.md"
pytestmark = pytest.mark.skipif(not DOC.exists(), reason="docs/archipelago.md is not in this copy")


def asyncio_section() -> str:
    text = DOC.read_text()
    start = text.index("\n## asyncio\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_guide_names_the_item_type_of_items_and_scout() -> None:
    """``client.items`` and ``scout()`` return ``ap.Item``; the guide showed only
    ``ap.NetworkItem`` (the compat codec's NamedTuple), and no guide named
    ``ap.Item``."""
    item = typing.get_type_hints(ap.aio.Client.scout)["return"]
    assert item == typing.get_type_hints(ap.aio.Client.items.fget)["return"] == list[ap.Item]
    section = asyncio_section()
    assert "`ap.Item`" in section
    typed = section[section.index("`ap.Item`") - 300 : section.index("`ap.Item`")]
    assert "client.items" in typed and "client.scout(" in typed


def test_wait_for_returns_the_class_it_waits_for() -> None:
    """The return type follows ``kind`` (it was ``Any``), as the guide says."""
    hints = typing.get_type_hints(ap.aio.Client.wait_for)
    assert hints["return"] is hints["kind"].__args__[0]
    assert "typed as its class" in asyncio_section()
