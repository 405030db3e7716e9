"""No two decodes share a mutable object: mutating one result (a block list,
the blocks dict, a uuid.UUID through ``object.__setattr__``) never changes
another, whatever values the packets have in common."""

from __future__ import annotations

import uuid
from types import ModuleType
from typing import Any

from gamecodec.lludp import RELIABLE, Message, build, default_template, sample
from tests.unshared import mutable_objects, shared_mutables

AGENT = uuid.UUID("f47d26f4-9c99-b993-eea1-d179df752bb9")


def _agent_update(state: int) -> Message:
    """An AgentUpdate with the same UUIDs and vectors as every other one."""
    return build(
        "AgentUpdate",
        AgentData={
            "AgentID": AGENT,
            "SessionID": AGENT,
            "BodyRotation": (0.0, 0.0, 0.0, 1.0),
            "HeadRotation": (0.0, 0.0, 0.0, 1.0),
            "State": state,
            "CameraCenter": (128.0, 128.0, 20.0),
            "CameraAtAxis": (1.0, 0.0, 0.0),
            "CameraLeftAxis": (0.0, 1.0, 0.0),
            "CameraUpAxis": (0.0, 0.0, 1.0),
            "Far": 64.0,
            "ControlFlags": 0,
            "Flags": 0,
        },
    )


def _wires(codec: ModuleType) -> list[bytes]:
    template = default_template()
    messages = [_agent_update(0), _agent_update(1), *sample.region_stream(200, seed=5)]
    return [codec.encode(m, template) for m in messages]


def _assert_unshared(results: list[Any]) -> None:
    owner: dict[int, int] = {}
    held = [mutable_objects(result) for result in results]
    for index, objects in enumerate(held):
        for key in objects:
            assert owner.setdefault(key, index) == index, (
                f"results {owner[key]} and {index} share {objects[key]!r}"
            )
    assert sum(isinstance(o, uuid.UUID) for h in held for o in h.values()) > 4


def test_decodes_share_no_mutable_object(codec: ModuleType) -> None:
    template = default_template()
    wires = _wires(codec)
    results = [codec.decode(w, template) for w in wires]
    results += [codec.decode(w, template) for w in wires]  # the same packets again
    results.append(codec.decode_many(wires, template))
    _assert_unshared(results)


def test_equal_uuids_are_distinct_objects(codec: ModuleType) -> None:
    template = default_template()
    first, second = (codec.decode(w, template) for w in _wires(codec)[:2])
    a, b = first.blocks["AgentData"][0], second.blocks["AgentData"][0]
    assert a.AgentID == b.AgentID == AGENT and a.AgentID is not b.AgentID
    object.__setattr__(a.AgentID, "int", 0)  # a program mutating its result
    assert b.AgentID == AGENT
    assert codec.decode(_wires(codec)[0], template).blocks["AgentData"][0].AgentID == AGENT
    assert not shared_mutables(first, second)


def test_circuits_deliver_unshared_messages(twin: ModuleType, codec: ModuleType) -> None:
    """Two circuits (and one circuit, packet after packet) given packets with
    equal values deliver messages that share nothing mutable."""
    wires = [bytes([RELIABLE]) + w[1:] for w in _wires(codec)[:2]]
    delivered: list[Any] = []
    for _ in range(2):
        circuit = twin.Circuit(now=0.0)
        for seq, wire in enumerate(wires, 1):
            packet = wire[:1] + seq.to_bytes(4, "big") + wire[5:]
            delivered.extend(circuit.receive_datagram(packet, 0.0))
    assert len(delivered) == 4
    _assert_unshared(delivered)
