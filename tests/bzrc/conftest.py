from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import IMPLS, load_twin, shared_path


@pytest.fixture(scope="session")
def codec(impl: str) -> ModuleType:
    """The BZRC codec twin under test."""
    return load_twin("gamecodec.bzrc", "_codec", impl)


@pytest.fixture(scope="session")
def py_codec() -> ModuleType:
    return load_twin("gamecodec.bzrc", "_codec", "py")


@pytest.fixture(scope="session")
def c_codec() -> ModuleType:
    if "c" not in IMPLS:
        pytest.skip("GAMECODEC_TEST_IMPLS excludes the compiled twin")
    return load_twin("gamecodec.bzrc", "_codec", "c")


def load_transcript(name: str) -> dict[str, Any]:
    """One recorded transcript from ../shared/corpus/bzrc (skips if absent)."""
    with shared_path("corpus", "bzrc", name).open(encoding="ascii") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


TRANSCRIPTS = ["basic_four_ls.json", "errors_four_ls.json"]
