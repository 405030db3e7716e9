from __future__ import annotations

from types import ModuleType

import pytest

from tests.conftest import IMPLS, load_twin


@pytest.fixture(scope="session")
def codec(impl: str) -> ModuleType:
    """The ywindow decoder twin under test."""
    return load_twin("gamecodec.ywindow", "_codec", impl)


@pytest.fixture(scope="session")
def py_codec() -> ModuleType:
    return load_twin("gamecodec.ywindow", "_codec", "py")


@pytest.fixture(scope="session")
def c_codec() -> ModuleType:
    if "c" not in IMPLS:
        pytest.skip("GAMECODEC_TEST_IMPLS excludes the compiled twin")
    return load_twin("gamecodec.ywindow", "_codec", "c")
