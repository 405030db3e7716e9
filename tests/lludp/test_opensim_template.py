"""The built-in OpenSimulator template (``template="opensim"``): OpenSimulator's
own datagrams decode strictly with it, on both twins."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from gamecodec import lludp
from gamecodec.errors import DecodeError
from gamecodec.lludp import (
    StrictDecodeFailed,
    Template,
    TemplateError,
    builtin_template,
    default_template,
    opensim_template,
)
from tests.conftest import shared_path
from tests.lludp.opensim_wire import ALL, IM, MAP_BLOCK_REPLY
from tests.lludp.test_circuit import QUIET, make

OPENSIM = opensim_template()
SL = default_template()

# How OpenSimulator's wire differs from the Second Life template (read from
# LLClientView.cs and OpenSim's libopenmetaverse message_template.msg): the
# blocks of each changed message.
CHANGED = {
    "ImprovedInstantMessage": ["AgentData", "MessageBlock", "EstateBlock"],
    "AvatarAppearance": [
        "Sender", "ObjectData", "VisualParam", "AppearanceData", "AppearanceHover",
    ],
    "AlertMessage": ["AlertData", "AlertInfo"],
    "RegionInfo": ["AgentData", "RegionInfo", "RegionInfo2", "RegionInfo3"],
    "MapBlockReply": ["AgentData", "Data", "Size"],
}  # fmt: skip


def test_the_variant_changes_only_what_opensim_sends() -> None:
    assert [m.name for m in OPENSIM] == [m.name for m in SL]
    changed = {m.name: [b.name for b in m.blocks] for m in OPENSIM if m != SL[m.name]}
    assert changed == CHANGED
    size = OPENSIM["MapBlockReply"].blocks[-1]
    assert (size.kind, [(f.name, f.type, f.size) for f in size.fields]) == (
        lludp.BlockKind.VARIABLE,
        [("SizeX", lludp.FieldType.U16, 2), ("SizeY", lludp.FieldType.U16, 2)],
    )
    for name in CHANGED:  # numbers, flags and the blocks kept are the Second Life ones
        assert OPENSIM[name]._replace(blocks=()) == SL[name]._replace(blocks=())
        sl_blocks = {b.name: b for b in SL[name].blocks}
        assert all(sl_blocks.get(b.name, b) == b for b in OPENSIM[name].blocks)


def test_names() -> None:
    assert builtin_template("opensim") is OPENSIM and builtin_template("secondlife") is SL
    assert repr(OPENSIM) == "<Template opensim, version 2.0, 483 messages>"
    with pytest.raises(TemplateError, match="no built-in template 'hippo'"):
        builtin_template("hippo")
    with pytest.raises(TemplateError):
        lludp.decode(IM, template="opensimulator")
    assert isinstance(OPENSIM, Template)


@pytest.mark.parametrize("name", sorted(ALL))
def test_opensim_datagrams_decode_strictly(codec: ModuleType, name: str) -> None:
    data = ALL[name]
    with pytest.raises(DecodeError):
        codec.decode(data, SL, True, 8192)
    msg = codec.decode(data, OPENSIM, True, 8192)
    assert msg.name == name and not (msg.excess or msg.absent or msg.truncated)
    assert codec.encode(msg, OPENSIM, "flag") == data
    assert msg == lludp.decode(data, template="opensim", strict=True)


def test_what_the_messages_hold(codec: ModuleType) -> None:
    im = codec.decode(IM, OPENSIM, True, 8192)
    assert im.EstateBlock[0].EstateID == 0 and "MetaData" not in im.blocks
    assert lludp.text(im.MessageBlock[0].Message) == "im-ping-0"
    reply = codec.decode(MAP_BLOCK_REPLY, OPENSIM, True, 8192)
    assert reply.Size == () and lludp.text(reply.Data[0].Name) == "Loopback Region"


def test_building_for_opensim(codec: ModuleType) -> None:
    """Built with the variant, messages carry OpenSim's layout (no trailing count
    bytes for the blocks it lacks), which the Second Life template reads only
    tolerantly."""
    alert = lludp.build("AlertMessage", template="opensim", AlertData={"Message": "hi"})
    wire = codec.encode(alert, OPENSIM, "flag")
    assert wire.endswith(b"\x03hi\x00\x00")  # AlertData, then AlertInfo's count: nothing more
    assert codec.decode(wire, SL, False, 8192).absent == ("AgentInfo",)
    sizes = lludp.build(
        "MapBlockReply",
        template="opensim",
        AgentData={"AgentID": bytes(16), "Flags": 0},
        Size=[{"SizeX": 512, "SizeY": 768}],
    )
    wire = codec.encode(sizes, OPENSIM, "flag")
    assert wire.endswith(b"\x00\x01\x00\x02\x00\x03")  # Data count 0, Size count 1, 512, 768
    assert codec.decode(wire, OPENSIM, True, 8192).Size[0] == (512, 768)


def test_strict_circuit_with_the_variant(twin: ModuleType, codec: ModuleType) -> None:
    """What a strict circuit on the Second Life template reports, it delivers
    with the OpenSimulator one."""
    for template in ("secondlife", "opensim"):
        viewer = make(twin, codec, strict=True, template=template, **QUIET)
        assert viewer.template is builtin_template(template)
        got = [
            m.name
            for seq, data in enumerate(ALL.values(), 1)  # (two of them are both number 7)
            for m in viewer.receive_datagram(lludp.forward(data, sequence=seq), 0.0)
        ]
        events = [e.name for e in viewer.events() if isinstance(e, StrictDecodeFailed)]
        if template == "opensim":
            assert (got, events) == (list(ALL), [])
        else:
            assert (got, events) == ([], list(ALL))
        assert len(viewer.acks_pending) == 3  # acked either way
    viewer.template = "secondlife"
    assert viewer.template is SL


# --- the capture -------------------------------------------------------------------------------


def udp_payloads(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(source port, destination port, payload) of each IPv4 UDP packet of a
    little-endian Ethernet pcap file."""
    data = path.read_bytes()
    magic, _, _, _, _, _, link = struct.unpack_from("<IHHiIII", data)
    assert magic == 0xA1B2C3D4 and link == 1  # microseconds, Ethernet
    pos = 24
    while pos + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, pos + 8)[0]
        frame = data[pos + 16 : pos + 16 + caplen]
        pos += 16 + caplen
        if frame[12:14] != b"\x08\x00" or frame[23] != 17:  # IPv4, UDP
            continue
        ip = frame[14:]
        udp = ip[(ip[0] & 0x0F) * 4 :]
        sport, dport, length = struct.unpack_from(">HHH", udp)
        yield sport, dport, udp[8:length]


def test_every_datagram_of_the_opensim_capture(codec: ModuleType) -> None:
    """OpenSimulator 0.9.2.0 and two gamecodec bots (on the Second Life
    template), 30 s on loopback: every datagram the simulator sent decodes
    strictly with the variant and re-encodes byte for byte; with the Second
    Life template, ImprovedInstantMessage, MapBlockReply and AvatarAppearance
    fail. The bots' datagrams decode strictly with the Second Life template,
    and with the variant all but their ImprovedInstantMessages (which carry
    the Second Life MetaData count: one byte the simulator ignores)."""
    path = shared_path("corpus", "pcap", "lludp_opensim_live_first30s.pcap")
    datagrams = [(s, p) for s, d, p in udp_payloads(path) if 9000 in (s, d)]
    assert len(datagrams) > 700
    refused: dict[str, Counter[str]] = {"sim": Counter(), "bots": Counter()}
    for sport, data in datagrams:
        sender = "sim" if sport == 9000 else "bots"
        mine, other = (OPENSIM, SL) if sender == "sim" else (SL, OPENSIM)
        msg = codec.decode(data, mine, True, 8192)
        assert codec.encode(msg, mine, "flag") == data
        try:
            codec.decode(data, other, True, 8192)
        except DecodeError:
            refused[sender][msg.name] += 1
    assert set(refused["sim"]) == set(ALL)
    assert set(refused["bots"]) == {"ImprovedInstantMessage"}
