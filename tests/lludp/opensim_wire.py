"""Datagrams OpenSimulator 0.9.2.0 sent to a gamecodec bot (loopback capture,
``lludp_opensim_live_first30s.pcap``): the three messages whose layout is not
the Second Life template's. Facts about the real program, kept here so that a
checkout without the captures still tests them."""

from __future__ import annotations

# ImprovedInstantMessage (reliable): AgentData, MessageBlock and EstateBlock
# (4 zero bytes), then nothing: no MetaData count.
IM = bytes.fromhex(
    "400000000700ffff00fe22222222000000000000000000000001000000000000000000000000000000"
    "000022222222000000000000000000000002010000001111111122223333444455555555555592ffff"
    "4292ffff426659d0410000000000000000000000000000000000034839086b08426f74204f6e65000a"
    "00696d2d70696e672d300001000000000000"
)

# MapBlockReply (reliable): one Data block, then OpenSim's Size block with count 0.
MAP_BLOCK_REPLY = bytes.fromhex(
    "400000001500ffff0199222222220000000000000000000000010000000001e803e803104c6f6f7062"
    "61636b20526567696f6e000d000000000000f612d825434d4a769ae146639586f4d600"
)

# AvatarAppearance (reliable, zero-coded): no AttachmentBlock count at the end.
AVATAR_APPEARANCE = bytes.fromhex(
    "c00000000700ffff00019e22222222000b010001400001c228d1cf4b5d4ba884f4899a0796aa970008"
    "803f0003803f0021da213d55173a7f3f553f2a0001553f24555f993f2200013f6d58843f8851556788"
    "7f00019696967f00057f0002ff7f727f633f7f8c7f7f0003bf000168000991d88500017f00017faa00"
    "027f7f6d557f7f3f552a969696969696961996969600017f000290557f847f5500017f7f7f7f7f7f3b"
    "7f557f7f6a2f4f7f7fcc028d4200027f7f00047f00019f0002b27f2455837f7f7f995f00018c4b1b7f"
    "7f00019696c600023f1e7fa5d1c67f7f99cc3333ffffffcc0001ff969696969696969696960001969696"
    "969600017f7f96969696969696960002963384969696000101000c"
)

ALL = {
    "ImprovedInstantMessage": IM,
    "MapBlockReply": MAP_BLOCK_REPLY,
    "AvatarAppearance": AVATAR_APPEARANCE,
}
