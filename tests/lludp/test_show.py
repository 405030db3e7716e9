"""What the fields are, without the template's source (issue 35 item 6):
``MessageSpec.show()``, ``Template.show()`` and ``Message.show()`` (decoded on both twins)."""

from __future__ import annotations

import uuid
from types import ModuleType

from gamecodec import lludp
from gamecodec.lludp import default_template, opensim_template

SOURCE = uuid.UUID("5801511b-c0a5-4f2d-281f-98f1b92abc6a")


def test_a_message_spec_lists_its_blocks_and_fields() -> None:
    assert default_template()["ChatFromSimulator"].show().splitlines() == [
        "ChatFromSimulator  Low 139  Trusted Unencoded",
        "  ChatData  Single",
        "    FromName    Variable 1    1-byte length, then the data",
        "    SourceID    LLUUID        16 bytes",
        "    OwnerID     LLUUID        16 bytes",
        "    SourceType  U8            1 byte",
        "    ChatType    U8            1 byte",
        "    Audible     U8            1 byte",
        "    Position    LLVector3     12 bytes",
        "    Message     Variable 2    2-byte length, then the data",
    ]


def test_every_block_kind_and_number_form_is_named() -> None:
    tpl = default_template()
    test = tpl["TestMessage"].show().splitlines()
    assert test[0] == "TestMessage  Low 1  NotTrusted Zerocoded"
    assert "  NeighborBlock  Multiple(4)" in test
    assert "  Packets  Variable" in tpl["PacketAck"].show().splitlines()
    assert tpl["PacketAck"].show().startswith("PacketAck  Fixed 0xFFFFFFFB  NotTrusted")
    assert "    ID  U32           4 bytes" in tpl["PacketAck"].show().splitlines()


def test_the_template_listing_fits_100_columns() -> None:
    for tpl in (default_template(), opensim_template()):
        listing = tpl.show().splitlines()
        assert listing[0] == repr(tpl) and len(listing) == len(tpl) + 1
        assert max(len(line) for line in listing) <= 100
        for spec in tpl:
            assert max(len(line) for line in spec.show().splitlines()) <= 100
    chat = [line for line in default_template().show().splitlines() if "Low 139 " in line]
    assert chat == [
        f"{'ChatFromSimulator':<31}  {'Low 139':<16}  {'Trusted Unencoded':<20}  ChatData"
    ]


def test_a_decoded_message_shows_its_values(codec: ModuleType) -> None:
    tpl = default_template()
    built = lludp.build(
        "ChatFromSimulator",
        flags=lludp.RELIABLE,
        sequence=7,
        ChatData={
            "FromName": "Governor Linden",
            "SourceID": SOURCE,
            "OwnerID": uuid.UUID(int=0),
            "SourceType": 2,
            "ChatType": 1,
            "Audible": 1,
            "Position": (128.0, 64.5, 22.0),
            "Message": b"\xff\x00\x01",  # not text: shown as bytes
        },
    )
    message = codec.decode(codec.encode(built, tpl, "flag"), tpl)
    assert message.show().splitlines() == [
        "ChatFromSimulator  Low 139  flags 0x40 RELIABLE  sequence 7",
        "  ChatData",
        "    FromName    'Governor Linden'",
        f"    SourceID    {SOURCE}",
        "    OwnerID     00000000-0000-0000-0000-000000000000",
        "    SourceType  2",
        "    ChatType    1",
        "    Audible     1",
        "    Position    (128.0, 64.5, 22.0)",
        "    Message     3 bytes: ff 00 01",
    ]


def test_instances_are_numbered_and_an_unknown_message_shows_its_body(
    codec: ModuleType,
) -> None:
    tpl = default_template()
    acks = lludp.build("PacketAck", Packets=[{"ID": 1}, {"ID": 2}])
    shown = codec.decode(codec.encode(acks, tpl, "flag"), tpl).show().splitlines()
    assert shown[1:] == ["  Packets[0]", "    ID  1", "  Packets[1]", "    ID  2"]
    empty = lludp.build("ObjectRotation", AgentData={"AgentID": SOURCE, "SessionID": SOURCE})
    assert empty.show().splitlines()[-1:] == ["  ObjectData: no instances"]
    unknown = codec.decode(bytes.fromhex("00 00000001 00 ffff7fff") + b"hi" * 20, tpl)
    assert unknown.show().splitlines()[1:] == [
        "  body: '" + "hi" * 20 + "'",
    ]
    raw = codec.decode(bytes.fromhex("00 00000001 00 ffff7fff") + bytes(range(40)), tpl)
    assert raw.show().splitlines()[1] == ("  body: 40 bytes: " + bytes(range(32)).hex(" ") + " ...")
