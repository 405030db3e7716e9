"""Deterministic sample LLUDP traffic (for ``gamecodec bench`` and examples).

:func:`region_stream` is a region's traffic: every packet distinct (fresh
object ids, positions, sequence numbers and acks), in the mix a simulator and
a viewer exchange. :func:`bench_messages` are five single packets with the
shapes of the packets Hippolyzer's speed comparison uses: AgentUpdate,
AgentUpdate with 20 appended acks, ObjectUpdate x5 (zero-coded, reliable),
ImprovedTerseObjectUpdate x15 and PacketAck x200. Values are pseudo-random,
zero-heavy where real traffic is (object updates are mostly zeros, which is
why they are zero-coded).
"""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

from gamecodec._public import public_dir
from gamecodec.lludp._models import (
    ZEROCODED,
    Block,
    BlockKind,
    FieldSpec,
    FieldType,
    Message,
    MessageSpec,
)
from gamecodec.lludp.template import Template, default_template

__all__ = ["REGION_MIX", "bench_messages", "random_message", "region_stream"]

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
    blocks: dict[str, tuple[Block, ...]] = {}
    for block in spec.blocks:
        n = block.count if block.kind != 3 else counts.get(block.name, 1)
        blocks[block.name] = tuple(
            classes[block.name](_value(f.type, f.size, rng, zeros, var) for f in block.fields)
            for _ in range(n)
        )
    if flags is None:
        flags = ZEROCODED if spec.zerocoded else 0
    return Message(name, blocks, flags, rng.getrandbits(32), acks, b"", spec.frequency, spec.number)


def bench_messages(seed: int = 0x5EED) -> dict[str, Message]:
    """The five single benchmark packets (see the module docstring), as messages."""
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


REGION_MIX: tuple[tuple[str, float, bool], ...] = (
    ("ImprovedTerseObjectUpdate", 0.28, False),
    ("ObjectUpdate", 0.14, True),
    ("AgentUpdate", 0.14, False),
    ("PacketAck", 0.10, False),
    ("CoarseLocationUpdate", 0.05, False),
    ("LayerData", 0.04, True),
    ("ChatFromSimulator", 0.03, True),
)
"""(message, share of the packets, sent reliable) of :func:`region_stream`; the
rest of the packets (22 %) go round every other message of the template, reliable."""


class _Pools:
    """Slices of two large random buffers (text, zero-heavy data): cheap distinct payloads."""

    SIZE = 1 << 16

    def __init__(self, rng: random.Random) -> None:
        printable = bytes(0x20 + i % 0x5F for i in range(256))
        self.text = rng.randbytes(self.SIZE).translate(printable)
        data = bytearray(rng.randbytes(self.SIZE))
        i = 0
        while i < self.SIZE:  # zero runs between random bytes, as object data has
            run = rng.randint(1, 12)
            if rng.random() < 0.5:
                data[i : i + run] = bytes(len(data[i : i + run]))
            i += run
        self.data = bytes(data)
        self.rng = rng

    def text_field(self, high: int) -> bytes:
        n = self.rng.randint(0, high)
        at = self.rng.randrange(self.SIZE - n)
        return self.text[at : at + n] + b"\x00"

    def data_field(self, low: int, high: int) -> bytes:
        n = self.rng.randint(low, high)
        at = self.rng.randrange(self.SIZE - n)
        return self.data[at : at + n]


_VAR_SIZES: dict[tuple[str, str], tuple[int, int]] = {
    ("ImprovedTerseObjectUpdate", "Data"): (44, 60),
    ("ImprovedTerseObjectUpdate", "TextureEntry"): (0, 40),
    ("ObjectUpdate", "TextureEntry"): (40, 160),
    ("ObjectUpdate", "ObjectData"): (60, 60),
    ("ObjectUpdate", "Data"): (0, 16),
    ("ObjectUpdate", "ExtraParams"): (1, 40),
    ("ObjectUpdate", "TextureAnim"): (0, 16),
    ("ObjectUpdate", "PSBlock"): (0, 0),
    ("LayerData", "Data"): (300, 900),
}


def _field(pools: _Pools, message: str, spec: FieldSpec, zeros: float) -> Any:
    name, ftype, size = spec
    rng = pools.rng
    if ftype == FieldType.VARIABLE:
        low, high = _VAR_SIZES.get((message, name), (-1, -1))
        if low < 0:
            return pools.text_field(min(40, (1 << (8 * size)) - 2))
        return pools.data_field(low, high)
    if ftype == FieldType.LLUUID:
        return uuid.UUID(int=rng.getrandbits(128))
    if ftype == FieldType.F32:
        return 0.0 if rng.random() < zeros else round(rng.uniform(-256, 256), 3)
    if ftype == FieldType.U32:
        return 0 if rng.random() < zeros else rng.getrandbits(32)
    if ftype == FieldType.U8:
        return 0 if rng.random() < zeros else rng.getrandbits(8)
    return _value(ftype, size, rng, zeros, 0)


def _counts(rng: random.Random, name: str, spec: MessageSpec) -> dict[str, int]:
    if name == "ObjectUpdate":
        return {"ObjectData": rng.randint(1, 4)}
    if name == "ImprovedTerseObjectUpdate":
        return {"ObjectData": rng.randint(1, 12)}
    if name == "CoarseLocationUpdate":
        n = rng.randint(2, 30)
        return {"Location": n, "AgentData": n}
    if name == "PacketAck":
        return {"Packets": rng.randint(1, 24)}
    return {b.name: rng.randint(1, 3) for b in spec.blocks if b.kind == BlockKind.VARIABLE}


def _region_message(
    pools: _Pools,
    name: str,
    template: Template,
    *,
    flags: int,
    sequence: int,
    acks: tuple[int, ...],
) -> Message:
    rng = pools.rng
    spec = template[name]
    classes = template.block_classes(name)
    counts = _counts(rng, name, spec)
    zeros = 0.5 if spec.zerocoded else 0.2
    blocks: dict[str, tuple[Block, ...]] = {}
    for block in spec.blocks:
        n = block.count if block.kind != BlockKind.VARIABLE else counts.get(block.name, 0)
        cls = classes[block.name]
        blocks[block.name] = tuple(
            cls(_field(pools, name, f, zeros) for f in block.fields) for _ in range(n)
        )
    if name == "PacketAck":  # ascending ids just behind the peer's sequence
        base = max(0, sequence - rng.randint(30, 300))
        ids = sorted(rng.sample(range(base, base + 400), len(blocks["Packets"])))
        blocks["Packets"] = tuple(classes["Packets"]((i,)) for i in ids)
    if spec.zerocoded:
        flags |= ZEROCODED
    return Message(name, blocks, flags, sequence, acks, b"", spec.frequency, spec.number)


def region_stream(
    count: int = 20_000, *, seed: int = 0x5E61, template: Template | None = None
) -> list[Message]:
    """``count`` distinct messages of a region's traffic, in :data:`REGION_MIX`.

    Every packet gets fresh values (object UUIDs and local ids, positions,
    texture entries, chat text, terrain patches), the next sequence number,
    and one in eight reliable packets carries 1-8 appended acks. The other
    template messages (all of them, round the template in turn) fill 22 %."""
    tpl = default_template() if template is None else template
    rng = random.Random(seed)
    pools = _Pools(rng)
    named = {name for name, _, _ in REGION_MIX}
    others = sorted(m.name for m in tpl if m.name not in named)
    weights = [share for _, share, _ in REGION_MIX]
    weights.append(1.0 - sum(weights))
    choices = [*REGION_MIX, ("", 0.0, True)]
    out: list[Message] = []
    sequence = rng.randint(1, 1 << 20)
    other = 0
    while len(out) < count:
        name, _, reliable = rng.choices(choices, weights)[0]
        if not name:
            name = others[other % len(others)]
            other += 1
        sequence += 1
        flags = _RELIABLE if reliable else 0
        acks: tuple[int, ...] = ()
        if reliable and name != "PacketAck" and rng.random() < 0.125:
            base = sequence - rng.randint(20, 200)
            acks = tuple(base + i for i in range(rng.randint(1, 8)))
        out.append(_region_message(pools, name, tpl, flags=flags, sequence=sequence, acks=acks))
    return out


__dir__ = public_dir(__name__)
