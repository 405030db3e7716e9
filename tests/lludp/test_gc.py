"""Decoded messages and the cyclic GC.

The compiled twin leaves the values it makes that cannot be part of a
reference cycle (blocks of atomic values, UUIDs, tuples of floats, the acks
tuple, each block name's tuple of blocks, and the blocks dict holding only
those) untracked, so a program keeping many decoded messages does not make
each collection traverse them. The Message, which holds the mutable dict,
stays tracked; the dict tracks itself again when a user puts a tracked
value in it. A cycle a user makes through a decoded message is collected,
on both twins.
"""

from __future__ import annotations

import gc
import uuid
import weakref
from types import ModuleType
from typing import Any

import pytest

from gamecodec import lludp
from gamecodec.lludp import Message
from gamecodec.lludp.template import Template

AGENT = uuid.UUID("01234567-89ab-cdef-0123-456789abcdef")


class Holder:
    """A user object that can refer to anything (and be weakly referenced)."""

    def __init__(self, ref: Any = None) -> None:
        self.ref = ref


@pytest.fixture
def template() -> Template:
    return lludp.default_template()


def object_update(codec: ModuleType, template: Template) -> Message:
    """A decoded ObjectUpdate with UUIDs, vectors, a quaternion, bytes and acks."""
    msg = lludp.build(
        "ObjectPosition",
        AgentData={"AgentID": AGENT, "SessionID": AGENT},
        ObjectData=[{"ObjectLocalID": 7, "Position": (1.5, 2.5, 3.5)}],
    )
    msg = msg._replace(acks=(1000, 70000, 1 << 31))
    got: Message = codec.decode(codec.encode(msg, template), template)
    assert got.acks == (1000, 70000, 1 << 31)
    return got


def test_decoded_values_tracking(codec: ModuleType, impl: str, template: Template) -> None:
    """The Message is tracked on both twins; in the compiled twin nothing inside
    it is: not its dict, its tuples of blocks, blocks, UUIDs, float tuples, acks."""
    msg = object_update(codec, template)
    assert gc.is_tracked(msg)
    assert all(type(items) is tuple for items in msg.blocks.values())
    block = msg.AgentData[0]
    values = [
        msg.blocks,
        *msg.blocks.values(),
        block,
        block.AgentID,
        msg.ObjectData[0],
        msg.ObjectData[0].Position,
        msg.acks,
    ]
    if impl == "c":
        assert not any(map(gc.is_tracked, values))
    assert block.AgentID == AGENT and type(block.AgentID) is uuid.UUID
    assert hash(block.AgentID) == hash(AGENT) and str(block.AgentID) == str(AGENT)
    assert msg.ObjectData[0].Position == (1.5, 2.5, 3.5)


def test_absent_and_unknown_blocks_tracking(
    codec: ModuleType, impl: str, template: Template
) -> None:
    """An absent Variable block is an empty tuple; an unknown message's empty
    dict is untracked in the compiled twin too, and the Message tracked."""
    msg = lludp.build(
        "SimulatorLoad",
        SimulatorLoad={"TimeDilation": 1.0, "AgentCount": 2, "CanAcceptAgents": True},
    )
    wire = codec.encode(msg, template)
    cut = codec.decode(wire[:-1], template)  # the AgentList count byte is gone
    assert cut.absent == ("AgentList",) and cut.AgentList == ()
    unknown = codec.decode(b"\x00\x00\x00\x00\x01\x00\xff\xff\x27\x0f\x01", template)
    assert not unknown.known and unknown.blocks == {}
    for got in (cut, unknown):
        assert gc.is_tracked(got)
        if impl == "c":
            assert not gc.is_tracked(got.blocks)


def test_blocks_dict_tracks_what_a_user_adds(codec: ModuleType, template: Template) -> None:
    """Putting a tracked value into the (untracked) blocks dict makes it tracked."""
    msg = object_update(codec, template)
    msg.blocks["Mine"] = [Holder()]  # type: ignore[assignment]
    assert gc.is_tracked(msg.blocks)
    other = object_update(codec, template)
    other.blocks["ObjectData"] = (*other.ObjectData, Holder())  # type: ignore[assignment]
    assert gc.is_tracked(other.blocks)


def test_values_a_user_makes_stay_tracked(codec: ModuleType, template: Template) -> None:
    """Blocks and messages made by the user (or by _replace) are ordinary tracked tuples."""
    msg = object_update(codec, template)
    cls = type(msg.AgentData[0])
    assert gc.is_tracked(cls((AGENT, AGENT)))
    assert gc.is_tracked(msg.AgentData[0]._replace(AgentID=[]))
    assert gc.is_tracked(msg._replace(sequence=5))


def collected(make: Any) -> bool:
    """Whether the cycle ``make()`` builds (returning a weak reference into it) is collected."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        ref = make()
        gc.collect()
        return ref() is None
    finally:
        if enabled:
            gc.enable()


def test_user_cycle_through_a_list_in_the_blocks_dict(
    codec: ModuleType, template: Template
) -> None:
    def make() -> weakref.ref[Holder]:
        msg = object_update(codec, template)
        holder = Holder(msg)
        msg.blocks["ObjectData"] = [*msg.ObjectData, holder]  # type: ignore[assignment]
        return weakref.ref(holder)

    assert collected(make)


def test_user_cycle_through_a_tuple_in_the_blocks_dict(
    codec: ModuleType, template: Template
) -> None:
    def make() -> weakref.ref[Holder]:
        msg = object_update(codec, template)
        holder = Holder(msg)
        msg.blocks["ObjectData"] = (*msg.ObjectData, holder)  # type: ignore[assignment]
        return weakref.ref(holder)

    assert collected(make)


def test_user_cycle_through_the_blocks_dict(codec: ModuleType, template: Template) -> None:
    def make() -> weakref.ref[Holder]:
        msg = object_update(codec, template)
        holder = Holder(msg)
        msg.blocks["Mine"] = holder  # type: ignore[assignment]
        return weakref.ref(holder)

    assert collected(make)


def test_user_cycle_through_a_replaced_block(codec: ModuleType, template: Template) -> None:
    """A block the user rebuilds holding a list of their own, put in the decoded message."""

    def make() -> weakref.ref[Holder]:
        msg = object_update(codec, template)
        mine: list[Any] = []
        msg.blocks["ObjectData"] = (msg.ObjectData[0]._replace(Position=mine),)
        holder = Holder(msg)
        mine.append(holder)
        return weakref.ref(holder)

    assert collected(make)


def test_user_cycle_through_a_replaced_message(codec: ModuleType, template: Template) -> None:
    """A message made by _replace with the decoded blocks dict, holding a user object."""

    def make() -> weakref.ref[Holder]:
        msg = object_update(codec, template)
        holder = Holder()
        mine = msg._replace(extra=holder)  # type: ignore[arg-type]
        holder.ref = mine
        return weakref.ref(holder)

    assert collected(make)


def test_decoded_blocks_are_immutable(codec: ModuleType, template: Template) -> None:
    msg = object_update(codec, template)
    with pytest.raises(TypeError):
        msg.ObjectData[0] = msg.ObjectData[0]  # type: ignore[index]
    with pytest.raises(AttributeError):
        msg.ObjectData.append(msg.ObjectData[0])  # type: ignore[attr-defined]


def test_user_cycle_holding_decoded_values(codec: ModuleType, template: Template) -> None:
    """A cycle of user objects that holds decoded (untracked) blocks and UUIDs."""

    def make() -> weakref.ref[Holder]:
        msg = object_update(codec, template)
        a = Holder([msg.AgentData[0], msg.AgentData[0].AgentID, msg.ObjectData[0].Position])
        b = Holder(a)
        a.ref.append(b)
        return weakref.ref(a)

    assert collected(make)


def test_kept_messages_free_when_dropped(codec: ModuleType, template: Template) -> None:
    """Untracked values are freed by reference counting: nothing is left behind."""
    msg = object_update(codec, template)
    data = codec.encode(msg, template)
    gc.collect()
    before = len(gc.get_objects())
    kept = [codec.decode(data, template) for _ in range(2000)]
    assert len(gc.get_objects()) >= before + 2000  # the messages, at least, are tracked
    refs = [weakref.ref(Holder())]  # a control: weakrefs work here
    del kept
    gc.collect()
    assert len(gc.get_objects()) <= before + 50
    assert refs[0]() is None
