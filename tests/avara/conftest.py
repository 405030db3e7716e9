from __future__ import annotations

from types import ModuleType

import pytest

from tests.conftest import load_twin, twin_fixtures

codec, py_codec, c_codec = twin_fixtures("gamecodec.avara")


@pytest.fixture(scope="session")
def twin(impl: str) -> ModuleType:
    """The session twin under test: [py] the pure one, [c] the compiled one."""
    return load_twin("gamecodec.avara", "_session", impl)
