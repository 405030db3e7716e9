"""Benchmarks: every operation in a group, the twins (and a baseline) side by side.

Run: ``pytest benchmarks`` (add ``--benchmark-disable`` for a smoke test).
Ratios matter, not absolute times: this machine is shared and noisy.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


@pytest.fixture(scope="session", params=["py", "c"])
def avara_codec(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(f"gamecodec.avara._codec_{request.param}")
