"""Deterministic sample LLUDP traffic (for ``gamecodec bench`` and examples).

The packets have the shapes of the Hippolyzer speed table of the spec
(section 6): AgentUpdate, AgentUpdate with 20 appended acks, ObjectUpdate x5
(zero-coded, reliable), ImprovedTerseObjectUpdate x15 and PacketAck x200.
Values are pseudo-random, zero-heavy where real traffic is (object updates
are mostly zeros, which is why they are zero-coded).
"""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

from gamecodec.lludp._models import ZEROCODED, FieldType, Message, MessageSpec
from gamecodec.lludp.template import Template, default_template

__all__ = ["bench_messages", "random_message"]

_RELIABLE = 0x40


def _value(ftype: FieldType, size: int, rng: random.Random, zeros: float, var: int) -> Any:
    zero = rng.random() < zeros
    if ftype in (FieldType.U8, FieldType.U16, FieldType.U32, FieldType.U64):
        return 0 if zero else rng.getrandbits(8 * size)
    if ftype in (FieldType.S8, FieldType.S16, FieldType.S32, FieldType.S64):
        return 0 if zero else rng.getrandbits(8 * size) - (1 << (8 * size - 1))
    if ftype == FieldType.BOOL:
        return False if zero else rng.random() < 0.5
    if ftype == FieldType.IPPORT:
        return rng.getrandbits(16)
    if ftype == FieldType.IPADDR:
        return ".".join(str(rng.getrandbits(8)) for _ in range(4))
    if ftype in (FieldType.F32, FieldType.F64):
        return 0.0 if zero else round(rng.uniform(-256, 256), 3)
    if ftype in (FieldType.LLVECTOR3, FieldType.LLVECTOR3D, FieldType.LLVECTOR4):
        n = 4 if ftype == FieldType.LLVECTOR4 else 3
        return tuple(0.0 if zero else round(rng.uniform(-256, 256), 2) for _ in range(n))
    if ftype == FieldType.LLQUATERNION:
        x, y, z = (rng.uniform(-0.5, 0.5) for _ in range(3))
        w = math.sqrt(1.0 - (x * x + y * y + z * z))
        return (x, y, z, w)
    if ftype == FieldType.LLUUID:
        return uuid.UUID(int=0 if zero else rng.getrandbits(128))
    if ftype == FieldType.FIXED:
        return bytes(size) if zero else rng.randbytes(size)
    length = min(var, (1 << (8 * size)) - 1)
    # zero-heavy payloads: runs of zeros between random bytes
    return bytes(0 if rng.random() < zeros else rng.getrandbits(8) for _ in range(length))


def random_message(
    name: str,
    rng: random.Random,
    *,
    template: Template | None = None,
    counts: dict[str, int] | None = None,
    zeros: float = 0.3,
    var: int = 24,
    flags: int | None = None,
    acks: tuple[int, ...] = (),
) -> Message:
    """A message with every field filled from ``rng``; Variable blocks get ``counts``."""
    tpl = default_template() if template is None else template
    spec: MessageSpec = tpl[name]
    counts = counts or {}
    classes = tpl.block_classes(name)
    blocks = {}
    for block in spec.blocks:
        n = block.count if block.kind != 3 else counts.get(block.name, 1)
        blocks[block.name] = [
            classes[block.name](_value(f.type, f.size, rng, zeros, var) for f in block.fields)
            for _ in range(n)
        ]
    if flags is None:
        flags = ZEROCODED if spec.zerocoded else 0
    return Message(name, blocks, flags, rng.getrandbits(32), acks, b"", spec.frequency, spec.number)


def bench_messages(seed: int = 0x5EED) -> dict[str, Message]:
    """The five benchmark packets of the spec's speed table, as messages."""
    rng = random.Random(seed)
    acks = tuple(range(7000, 7020))
    return {
        "AgentUpdate": random_message("AgentUpdate", rng, zeros=0.4),
        "AgentUpdate+20 acks": random_message(
            "AgentUpdate", rng, zeros=0.4, flags=ZEROCODED, acks=acks
        ),
        "ObjectUpdate x5": random_message(
            "ObjectUpdate",
            rng,
            counts={"ObjectData": 5},
            zeros=0.5,
            var=20,
            flags=ZEROCODED | _RELIABLE,
        ),
        "ImprovedTerseObjectUpdate x15": random_message(
            "ImprovedTerseObjectUpdate",
            rng,
            counts={"ObjectData": 15},
            zeros=0.2,
            var=30,
            flags=0,
        ),
        "PacketAck x200": random_message("PacketAck", rng, counts={"Packets": 200}, flags=0),
    }
