"""How OpenSimulator's wire differs from the Second Life template.

OpenSimulator writes some messages by hand (``LLClientView.cs``) and the rest
through its libopenmetaverse packet classes, generated from its own
``message_template.msg``; neither matches the Second Life template for the
messages below, and the hand-written ImprovedInstantMessage matches neither
template (it has EstateBlock, which OpenSim's template lacks, and no
MetaData). Only messages a simulator sends are changed: what viewers send
keeps the Second Life layout. Enum values as in gamecodec.lludp._models.
"""

# message -> the Second Life blocks it never carries (trailing Variable blocks)
DROPPED = {
    # LLClientView.SendInstantMessage: AgentData, MessageBlock, EstateBlock
    "ImprovedInstantMessage": ("MetaData",),
    # LLClientView.SendAppearance; also OpenSim's template
    "AvatarAppearance": ("AttachmentBlock",),
    # AlertMessagePacket of OpenSim's template
    "AlertMessage": ("AgentInfo",),
    # RegionInfoPacket of OpenSim's template
    "RegionInfo": ("RegionInfo5", "CombatSettings"),
}

# message -> blocks it adds after the Second Life ones: (name, kind, count, fields)
ADDED = {
    # LLClientView.SendMapBlock and OpenSim's template: region sizes, count 0
    # when every region is 256 m
    "MapBlockReply": (("Size", 3, 0, (("SizeX", 2, 2), ("SizeY", 2, 2))),),
}
