"""A message whose blocks the template does not have is refused on encode
(issue 30): ``encode``, ``encode_into``, ``encode_packet`` and
``Circuit.send`` raise :class:`EncodeError` naming the blocks and the
template, on both twins, as ``build`` already did. Before, they wrote the
blocks the template has and left the others out without a word: a Second
Life ImprovedInstantMessage sent on an OpenSim circuit lost its MetaData.
"""

from __future__ import annotations

import re
import types
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gamecodec import lludp
from gamecodec.errors import EncodeError
from gamecodec.lludp import Message, Template, default_template, opensim_template
from tests.lludp.conftest import outcome
from tests.lludp.test_parity import SETTINGS, messages

IM_FIELDS: dict[str, Any] = {
    "AgentData": {"AgentID": bytes(16), "SessionID": bytes(16)},
    "MessageBlock": {
        "FromGroup": False, "ToAgentID": bytes(16), "ParentEstateID": 0,
        "RegionID": bytes(16), "Position": (0.0, 0.0, 0.0), "Offline": 0, "Dialog": 0,
        "ID": bytes(16), "Timestamp": 0, "FromAgentName": "Bot", "Message": "hi",
        "BinaryBucket": b"",
    },
    "EstateBlock": {"EstateID": 0},
}  # fmt: skip


def second_life_im() -> Message:
    """An ImprovedInstantMessage built with the Second Life template, MetaData included."""
    return lludp.build("ImprovedInstantMessage", MetaData=[{"Data": b"12345"}], **IM_FIELDS)


def test_second_life_im_on_the_opensim_template_is_refused(codec: ModuleType) -> None:
    im = second_life_im()._replace(flags=0)
    sent = codec.encode(im, default_template())
    with pytest.raises(EncodeError) as caught:
        codec.encode(im, opensim_template())  # before: 8 bytes fewer, MetaData left out
    text = str(caught.value)
    assert "MetaData" in text and "<Template opensim" in text
    assert text.startswith("ImprovedInstantMessage: ")
    # an empty MetaData too: the message was made for another template
    with pytest.raises(EncodeError, match="MetaData"):
        codec.encode(lludp.build("ImprovedInstantMessage", **IM_FIELDS), opensim_template())
    # the OpenSim template's own message encodes
    own = lludp.build("ImprovedInstantMessage", template="opensim", **IM_FIELDS)._replace(flags=0)
    # MetaData's 8 bytes: its count, the 2-byte length of Data and Data's 5 bytes
    assert codec.encode(own, opensim_template()) == sent[:-8]


def test_a_bogus_block_is_refused(codec: ModuleType, template: Template) -> None:
    im = second_life_im()
    bogus = im._replace(blocks={**im.blocks, "Bogus": im.blocks["EstateBlock"]})
    with pytest.raises(EncodeError, match=r"block Bogus .*<Template secondlife") as caught:
        codec.encode(bogus, template)  # encoded without error before
    assert "'" not in str(caught.value).split("(")[0]  # names as the template spells them
    with pytest.raises(EncodeError, match=r"blocks Bogus, Zzz, 0 "):
        codec.encode(im._replace(blocks={**bogus.blocks, "Zzz": (), 0: ()}), template)


def test_unknown_blocks_checked_on_every_body_path(codec: ModuleType, template: Template) -> None:
    """The compiled twin writes BOOL bytes other than 1 with the pure twin's
    body writer, and takes a blocks mapping that is not a dict by its ``get``."""
    im = second_life_im()
    blocks = {**im.blocks, "Bogus": ()}
    odd_bool = im._replace(blocks=blocks, bool_bytes=(("MessageBlock", 0, "FromGroup", 2),))
    with pytest.raises(EncodeError, match="Bogus"):
        codec.encode(odd_bool, template)
    with pytest.raises(EncodeError, match="Bogus"):
        codec.encode(im._replace(blocks=types.MappingProxyType(blocks)), template)
    # the same mapping without Bogus, and BOOL bytes on a known block, still encode
    assert codec.encode(im._replace(blocks=types.MappingProxyType(im.blocks)), template)
    assert codec.encode(odd_bool._replace(blocks=im.blocks), template)


def test_encode_into_refuses_and_leaves_the_buffer(codec: ModuleType) -> None:
    buf = bytearray(b"\xaa" * 64)
    with pytest.raises(EncodeError, match="MetaData"):
        codec.encode_into(second_life_im(), buf, 4, opensim_template())
    assert buf == bytearray(b"\xaa" * 64)
    with pytest.raises(EncodeError, match="MetaData"):
        lludp.encode_into(second_life_im(), bytearray(), template="opensim")


def test_encode_packet_refuses(codec: ModuleType) -> None:
    with pytest.raises(EncodeError, match="MetaData"):
        codec.encode_packet(second_life_im(), opensim_template(), "flag", 0, 1, [5], 1, 1200)


def test_the_public_functions_refuse() -> None:
    with pytest.raises(EncodeError, match=r"MetaData .*<Template opensim"):
        lludp.encode(second_life_im(), template="opensim")
    im = second_life_im()
    with pytest.raises(EncodeError, match="Bogus"):
        lludp.encode(im._replace(blocks={**im.blocks, "Bogus": ()}))


def test_circuit_send_refuses_and_queues_nothing(twin: ModuleType, codec: ModuleType) -> None:
    circuit = twin.Circuit(now=0.0, template="opensim", codec=codec)
    with pytest.raises(EncodeError, match=r"MetaData .*<Template opensim"):
        circuit.send(second_life_im(), reliable=True, now=0.0)
    assert circuit.next_sequence == 1 and circuit.unacked == 0 and circuit.packets_out == 0
    assert circuit.datagrams_to_send(0.0) == []
    own = lludp.build("ImprovedInstantMessage", template="opensim", **IM_FIELDS)
    assert circuit.send(own, reliable=True, now=0.0) == 1
    (wire,) = circuit.datagrams_to_send(0.0)
    assert lludp.decode(wire, template="opensim", strict=True).name == "ImprovedInstantMessage"


def test_a_proxy_re_encoding_for_the_other_template_is_refused(codec: ModuleType) -> None:
    """A proxy that decodes a viewer's IM with the Second Life template and
    re-encodes it for an OpenSim region; ``forward`` copies the body as it is
    (it has no template, so nothing of it can be left out)."""
    wire = codec.encode(second_life_im()._replace(flags=lludp.RELIABLE), default_template())
    decoded = codec.decode(wire, default_template())
    with pytest.raises(EncodeError, match="MetaData"):
        codec.encode(decoded, opensim_template())
    assert codec.forward(wire, None, 9, ())[6:] == wire[6:]


def unknown_names() -> st.SearchStrategy[list[Any]]:
    """Block names a message may wrongly hold: other messages' blocks, made-up
    names, keys that are not names."""
    names = sorted({b.name for m in default_template() for b in m.blocks})
    return st.lists(
        st.sampled_from(names) | st.sampled_from(["Bogus", "", "metadata"]) | st.integers(0, 3),
        min_size=1,
        max_size=3,
    )


@SETTINGS
@given(made=messages(), extra=unknown_names(), data=st.data())
def test_parity_unknown_blocks_same_error(
    py_codec: ModuleType,
    c_codec: ModuleType,
    made: tuple[Message, Template],
    extra: list[Any],
    data: Any,
) -> None:
    """Any message with blocks added (or one of its own replaced) raises the
    same EncodeError on both twins, on every encoder, naming every unknown block."""
    msg, template = made
    own = [b.name for b in template[msg.name].blocks]
    unknown = [k for k in extra if k not in own] or ["Bogus"]
    blocks = dict(msg.blocks)
    dropped = bool(own) and data.draw(st.booleans(), label="drop one of its own")
    if dropped:
        del blocks[data.draw(st.sampled_from(own))]
    values = [(), list(msg.blocks[own[0]])] if own else [()]
    blocks.update((k, data.draw(st.sampled_from(values))) for k in unknown)
    bad = msg._replace(blocks=blocks)
    a = outcome(py_codec.encode, bad, template, "flag")
    assert a == outcome(c_codec.encode, bad, template, "flag")
    assert a == outcome(py_codec.encode_packet, bad, template, "flag", 0, 1, [3], 1, 1200)
    assert a == outcome(c_codec.encode_packet, bad, template, "flag", 0, 1, [3], 1, 1200)
    buf_py, buf_c = bytearray(8), bytearray(8)
    assert a == outcome(py_codec.encode_into, bad, buf_py, 2, template, "smaller")
    assert a == outcome(c_codec.encode_into, bad, buf_c, 2, template, "smaller")
    assert a[0] == "encode", a
    if not dropped:  # (else a Single or Multiple block of its own may be missing: that error)
        for name in unknown:
            if isinstance(name, str) and name.isidentifier():
                assert re.search(rf"[ ,]{name}[ ,]", a[2]), (name, a)
        assert f"{template!r}" in a[2]
