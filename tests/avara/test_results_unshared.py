"""No two decodes share a mutable object (a list, an array, its memory):
mutating one result never changes another, whatever values the datagrams
have in common."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from gamecodec.avara import sample
from tests.conftest import load_twin
from tests.unshared import mutable_objects


def _assert_unshared(results: list[Any], at_least: int) -> None:
    owner: dict[int, int] = {}
    arrays: list[tuple[int, np.ndarray]] = []
    for index, objects in enumerate(mutable_objects(result) for result in results):
        for key, obj in objects.items():
            assert owner.setdefault(key, index) == index, (
                f"results {owner[key]} and {index} share {obj!r}"
            )
            if isinstance(obj, np.ndarray):
                arrays.append((index, obj))
    assert len(owner) >= at_least
    for i, (index, array) in enumerate(arrays):
        for other_index, other in arrays[i + 1 :]:
            if other_index != index:
                assert not np.shares_memory(array, other)


def test_decodes_share_no_mutable_object(codec: ModuleType) -> None:
    datagrams = sample.sample_traffic(300, seed=3)
    results: list[Any] = [codec.decode(d) for d in datagrams]
    results += [codec.decode(d) for d in datagrams]  # the same datagrams again
    results += [codec.decode_many(datagrams), codec.decode_many(datagrams)]
    _assert_unshared(results, at_least=2)


def test_decode_array_batches_share_no_array(codec: ModuleType) -> None:
    datagrams = sample.sample_traffic(300, seed=3)
    batches = [codec.decode_array(datagrams), codec.decode_array(datagrams[:100])]
    _assert_unshared(batches, at_least=4)
    first, second = batches
    first.commands[:] = np.zeros_like(first.commands)  # a program reusing its buffer
    assert codec.decode_array(datagrams[:100]).commands.tobytes() == second.commands.tobytes()


def test_connections_deliver_unshared_commands(impl: str) -> None:
    """Two connections given the same datagrams deliver commands that share nothing mutable."""
    twin = load_twin("gamecodec.avara", "_session", impl)
    sender = twin.Connection(my_id=1, peer_id=2, now=0.0)
    for i in range(20):
        sender.send(17, p1=i, data=b"same payload", now=0.0)
    wires = sender.datagrams_to_send(0.0)
    delivered = []
    for _ in range(2):
        receiver = twin.Connection(my_id=2, peer_id=1, now=0.0)
        delivered.append([receiver.receive_datagram(w, 0.0) for w in wires])
    assert sum(map(len, delivered[0])) == 20
    _assert_unshared(delivered, at_least=2)
