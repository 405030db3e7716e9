"""No two decodes share a mutable object (a list, a dict, a Struct, a
NetworkItem's container): mutating one result never changes another,
whatever values the frames have in common."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import msgspec

from gamecodec.archipelago import frames, sample
from tests.unshared import mutable_objects


def _assert_unshared(results: list[Any]) -> int:
    owner: dict[int, int] = {}
    for index, objects in enumerate(mutable_objects(result) for result in results):
        for key, obj in objects.items():
            assert owner.setdefault(key, index) == index, (
                f"results {owner[key]} and {index} share {obj!r}"
            )
    return len(owner)


def _frames() -> list[str]:
    session = sample.sample_session(seed=4)
    return [*session, *session]  # every frame twice: equal values in two decodes


def test_compat_decodes_share_no_mutable_object(codec: ModuleType) -> None:
    results = [codec.decode(f) for f in _frames()]
    results += [codec.decode(f.encode()) for f in _frames()]
    assert _assert_unshared(results) > 1000


def test_typed_decodes_share_no_mutable_object() -> None:
    results = [frames.decode(f) for f in _frames()]
    results += [frames.decode(f.encode()) for f in _frames()]
    found = _assert_unshared(results)
    structs = sum(isinstance(c, msgspec.Struct) for frame in results for c in frame)
    assert structs > 100 and found > structs
