from __future__ import annotations

from types import ModuleType

import pytest

from tests.conftest import IMPLS, load_twin


@pytest.fixture(scope="session")
def codec(impl: str) -> ModuleType:
    """The Avara codec twin under test."""
    return load_twin("gamecodec.avara", "_codec", impl)


@pytest.fixture(scope="session")
def py_codec() -> ModuleType:
    return load_twin("gamecodec.avara", "_codec", "py")


@pytest.fixture(scope="session")
def c_codec() -> ModuleType:
    if "c" not in IMPLS:
        pytest.skip("GAMECODEC_TEST_IMPLS excludes the compiled twin")
    return load_twin("gamecodec.avara", "_codec", "c")
