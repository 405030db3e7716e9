"""The public API: exports, the active twin, the docstring examples."""

from __future__ import annotations

import doctest

import pytest

import gamecodec
from gamecodec import archipelago
from gamecodec.archipelago import compat, testing


def test_all_is_complete() -> None:
    assert set(archipelago.__all__) <= set(dir(archipelago))
    for name in ("decode_frame", "encode_frame", "encode_frame_bytes", "compat", "ClientSession"):
        assert name in archipelago.__all__


def test_compat_uses_the_active_twin() -> None:
    active = gamecodec._accel.active()["archipelago"]
    assert compat.decode.__module__.endswith(f"_compat_{active}")
    assert compat.encode.__module__.endswith(f"_compat_{active}")


@pytest.mark.parametrize("module", [archipelago, compat, testing])
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0
