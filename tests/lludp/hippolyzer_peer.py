"""Hippolyzer 0.17.6 as a reference peer for the LLUDP differential test.

A standalone script: it imports ``hippolyzer`` (LGPL, PyPI, needs Python >=
3.12) and never ``gamecodec``. ``tests/lludp/test_hippolyzer.py`` runs it as a
subprocess under the Python named by ``GAMECODEC_HIPPOLYZER_PYTHON``. It uses
Hippolyzer's Message/Block API and its UDP (de)serializers, plus one private
per-variable cache (``_probably_binary``) so that fields read back as bytes.

Modes (one JSON object per output line)::

    hippolyzer_peer.py info
    hippolyzer_peer.py generate SEED COUNT [NAME ...]
    hippolyzer_peer.py decode   < hex lines
    hippolyzer_peer.py encode   < JSON lines

``generate`` builds COUNT random instances of every template message (or of
the NAMEs given), serializes each with ``UDPMessageSerializer``, decodes the
bytes again with ``UDPMessageDeserializer`` (deferred parsing off), checks
that the decode equals what was built and re-serializes to the same bytes,
and prints the decode. ``decode`` prints Hippolyzer's decode of each wire
packet (or its error); ``encode`` serializes records in the same JSON form.

The JSON record: ``name``, ``wire`` (hex), ``flags``, ``sequence``, ``acks``
(``acks[0]`` is the id nearest the count byte, as ``Message.acks`` holds them
and as gamecodec orders them), ``extra`` (hex), ``blocks`` (``{block:
[{field: value}]}``, only the blocks Hippolyzer saw, in template order).
Values: ints (BOOL as its raw byte); floats (``Infinity`` for infinities);
vectors as lists; LLQuaternion as ``[x, y, z, w]`` (``w`` rebuilt by
Hippolyzer); LLUUID as its canonical string; IPADDR ``"a.b.c.d"``; Fixed and
Variable data as hex. Fixed/Variable fields are read as raw bytes: every
template variable is marked ``probably_binary`` so Hippolyzer never turns a
text-named field into a ``str`` (that would strip trailing NULs).
"""

from __future__ import annotations

import json
import logging
import math
import random
import socket
import struct
import sys
import uuid
from typing import Any

from hippolyzer.lib.base.datatypes import Quaternion
from hippolyzer.lib.base.message.message import Block, Message
from hippolyzer.lib.base.message.msgtypes import MsgBlockType, MsgType
from hippolyzer.lib.base.message.template_dict import DEFAULT_TEMPLATE_DICT
from hippolyzer.lib.base.message.udpdeserializer import UDPMessageDeserializer
from hippolyzer.lib.base.message.udpserializer import UDPMessageSerializer
from hippolyzer.lib.base.settings import Settings

TEMPLATES = DEFAULT_TEMPLATE_DICT.template_list
BY_NAME = {t.name: t for t in TEMPLATES}
BYTES_TYPES = (MsgType.MVT_FIXED, MsgType.MVT_VARIABLE)
F32_TYPES = (MsgType.MVT_F32, MsgType.MVT_LLVector3, MsgType.MVT_LLVector4)
INT_RANGES = {
    MsgType.MVT_U8: (0, 0xFF),
    MsgType.MVT_U16: (0, 0xFFFF),
    MsgType.MVT_U32: (0, 0xFFFFFFFF),
    MsgType.MVT_U64: (0, 0xFFFFFFFFFFFFFFFF),
    MsgType.MVT_S8: (-0x80, 0x7F),
    MsgType.MVT_S16: (-0x8000, 0x7FFF),
    MsgType.MVT_S32: (-0x80000000, 0x7FFFFFFF),
    MsgType.MVT_S64: (-0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
    MsgType.MVT_IP_PORT: (0, 0xFFFF),
}
MAX_ZEROCODED_BODY = 8000
"""Zero-coded bodies stay below gamecodec's default 8192 and Hippolyzer's 0x3000 caps."""


def _raw_bytes_everywhere() -> None:
    """Make Hippolyzer return every Fixed/Variable field as ``bytes``."""
    for template in TEMPLATES:
        for block in template.blocks:
            for var in block.variables:
                if var.type in BYTES_TYPES:
                    var._probably_binary = True  # the per-variable cache of that guess


def _deserializer() -> UDPMessageDeserializer:
    settings = Settings()
    settings.ENABLE_DEFERRED_PACKET_PARSING = False
    return UDPMessageDeserializer(settings=settings)


# --- random values ---------------------------------------------------------------------------


def _round32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]  # type: ignore[no-any-return]


def _f32(rng: random.Random) -> float:
    pick = rng.random()
    if pick < 0.1:
        return _round32(
            rng.choice(
                [0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 3.4028234663852886e38, math.inf, -math.inf]
            )
        )
    if pick < 0.5:
        return _round32(rng.uniform(-1000.0, 1000.0))
    while True:
        value = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0]
        if not math.isnan(value):
            return value  # type: ignore[no-any-return]


def _f64(rng: random.Random) -> float:
    pick = rng.random()
    if pick < 0.1:
        return rng.choice([0.0, -0.0, 5e-324, -1.7976931348623157e308, math.inf, 0.1])
    if pick < 0.5:
        return rng.uniform(-1e6, 1e6)
    while True:
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if not math.isnan(value):
            return value  # type: ignore[no-any-return]


def unit_quaternion(rng: random.Random) -> tuple[float, float, float]:
    """x, y, z (float32 values) of a unit quaternion with w >= 0 and w not tiny."""
    special = [(0.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.0, 0.0, 0.6), (-0.6, 0.0, 0.0)]
    if rng.random() < 0.15:
        x, y, z = rng.choice(special)
        return _round32(x), _round32(y), _round32(z)
    while True:
        q = [rng.gauss(0.0, 1.0) for _ in range(4)]
        norm = math.sqrt(sum(c * c for c in q))
        if norm < 1e-3:
            continue
        x, y, z, w = (c / norm for c in q)
        if w < 0:
            x, y, z, w = -x, -y, -z, -w
        xyz = [_round32(c) for c in (x, y, z)]
        if 1.0 - sum(c * c for c in xyz) > 1e-4:
            return xyz[0], xyz[1], xyz[2]


def _payload(rng: random.Random, length: int) -> bytes:
    kind = rng.random()
    if kind < 0.3:
        return rng.randbytes(length)
    if kind < 0.55:  # zero-heavy: long runs exercise zero-coding
        return bytes(rng.choice((0, 0, 0, rng.randrange(256))) for _ in range(length))
    if kind < 0.7:
        return bytes(length)
    text = "".join(rng.choice("abc xyz-é€\U0001f600") for _ in range(length)).encode("utf-8")
    text = text[: max(0, length - 1)]
    return text + bytes(length - len(text))  # NUL-terminated, maybe several NULs


def _variable_length(rng: random.Random, prefix: int, big_ok: bool) -> int:
    top = (1 << (8 * prefix)) - 1
    pick = rng.random()
    if pick < 0.15:
        return 0
    if pick < 0.25:
        return 1
    if prefix == 1:
        return top if pick < 0.4 else rng.randrange(2, top)
    if big_ok and pick < 0.3:
        return top
    if pick < 0.4:  # around the 255-zero run limit of zero-coding
        return rng.choice([254, 255, 256, 257, 510, 511, 512, 513])
    return rng.randrange(2, 700)


def random_value(rng: random.Random, var: Any, big_ok: bool) -> Any:
    """A random value for a template variable, in Hippolyzer's input types."""
    vtype = var.type
    if vtype in INT_RANGES:
        low, high = INT_RANGES[vtype]
        pick = rng.random()
        if pick < 0.2:
            return rng.choice([low, high, 0])
        if pick < 0.4:
            return rng.randrange(max(low, -300), min(high, 300) + 1)
        return rng.randint(low, high)
    if vtype == MsgType.MVT_BOOL:
        return rng.randrange(2)
    if vtype == MsgType.MVT_F32:
        return _f32(rng)
    if vtype == MsgType.MVT_F64:
        return _f64(rng)
    if vtype == MsgType.MVT_LLVector3:
        return tuple(_f32(rng) for _ in range(3))
    if vtype == MsgType.MVT_LLVector4:
        return tuple(_f32(rng) for _ in range(4))
    if vtype == MsgType.MVT_LLVector3d:
        return tuple(_f64(rng) for _ in range(3))
    if vtype == MsgType.MVT_LLQuaternion:
        return unit_quaternion(rng)
    if vtype == MsgType.MVT_LLUUID:
        pick = rng.random()
        if pick < 0.15:
            return uuid.UUID(int=0)
        if pick < 0.3:
            return uuid.UUID(bytes=bytes(rng.choice((0, rng.randrange(256))) for _ in range(16)))
        return uuid.UUID(bytes=rng.randbytes(16))
    if vtype == MsgType.MVT_IP_ADDR:
        return socket.inet_ntoa(rng.choice([bytes(4), b"\xff" * 4, rng.randbytes(4)]))
    if vtype == MsgType.MVT_FIXED:
        return _payload(rng, var.size)
    if vtype == MsgType.MVT_VARIABLE:
        return _payload(rng, _variable_length(rng, var.size, big_ok))
    raise ValueError(f"unhandled type {vtype}")


def _block_count(rng: random.Random, tmpl_block: Any) -> int:
    if tmpl_block.block_type == MsgBlockType.MBT_SINGLE:
        return 1
    if tmpl_block.block_type == MsgBlockType.MBT_MULTIPLE:
        return int(tmpl_block.number)
    pick = rng.random()
    small = all(v.size in (1, 2, 4, 8) and v.type not in BYTES_TYPES for v in tmpl_block.variables)
    if small and pick < 0.05:
        return 255
    if pick < 0.15:
        return rng.randrange(4, 9)
    return rng.choice([0, 0, 1, 1, 2, 3])


def _acks(rng: random.Random) -> tuple[int, ...]:
    count = rng.choice([0, 0, 0, 0, 1, 2, 5, 30, 250 if rng.random() < 0.2 else 3])
    pool = [0, 0xFFFFFFFF, 0x00010000, 0x01000000]
    return tuple(
        rng.choice(pool) if rng.random() < 0.2 else rng.getrandbits(32) for _ in range(count)
    )


def random_message(rng: random.Random, template: Any, big_ok: bool) -> Message:
    """A random instance of ``template`` with random header options."""
    blocks: list[tuple[Any, list[dict[str, Any]]]] = []
    for tmpl_block in template.blocks:
        count = _block_count(rng, tmpl_block)
        blocks.append((tmpl_block, [{} for _ in range(count)]))
    if template.blocks and not any(items for _, items in blocks):
        rng.choice(blocks)[1].append({})  # LL and gamecodec reject a message with no block
    msg = Message(template.name)
    for tmpl_block, items in blocks:
        msg.create_block_list(tmpl_block.name)
        for item in items:
            for var in tmpl_block.variables:
                value = random_value(rng, var, big_ok)
                if var.type == MsgType.MVT_VARIABLE and len(value) == 0xFFFF:
                    big_ok = False  # one maximal Variable 2 field is enough
                item[var.name] = value
            msg.add_block(Block(tmpl_block.name, **item))
    zerocoded = template.encoding == "Zerocoded"
    if rng.random() < 0.25:
        zerocoded = not zerocoded
    flags = 0x80 if zerocoded else 0
    flags |= rng.choice([0, 0x40]) | rng.choice([0, 0, 0x20])
    acks = () if template.name == "PacketAck" else _acks(rng)
    if acks or (template.name != "PacketAck" and rng.random() < 0.03):
        flags |= 0x10  # the ACK flag, sometimes with a count of 0
    msg.send_flags = flags
    msg.packet_id = rng.choice([0, 1, 0xFFFFFFFF, 0x01000000, rng.getrandbits(32)])
    msg.acks = acks
    if rng.random() < 0.1:
        msg.extra = rng.choice([b"\x00", b"\x07", b"\x00\x00\x05", rng.randbytes(4)])
    return msg


# --- JSON forms -------------------------------------------------------------------------------


def to_json_value(var: Any, value: Any) -> Any:
    vtype = var.type
    if vtype in BYTES_TYPES:
        return bytes(value).hex()
    if vtype == MsgType.MVT_LLQuaternion:
        if not isinstance(value, Quaternion):
            value = Quaternion(*value[:3])  # as built: w rebuilt the way Hippolyzer does
        return [value.X, value.Y, value.Z, value.W]
    if vtype in (MsgType.MVT_LLVector3, MsgType.MVT_LLVector3d, MsgType.MVT_LLVector4):
        return [float(c) for c in value]
    if vtype == MsgType.MVT_LLUUID:
        return str(value)
    if vtype in (MsgType.MVT_F32, MsgType.MVT_F64):
        return float(value)
    if vtype == MsgType.MVT_IP_ADDR:
        return str(value)
    return int(value)


def from_json_value(var: Any, value: Any) -> Any:
    vtype = var.type
    if vtype in BYTES_TYPES:
        return bytes.fromhex(value)
    if vtype == MsgType.MVT_LLQuaternion:
        return tuple(float(c) for c in value[:3])
    if vtype in (MsgType.MVT_LLVector3, MsgType.MVT_LLVector3d, MsgType.MVT_LLVector4):
        return tuple(float(c) for c in value)
    if vtype == MsgType.MVT_LLUUID:
        return uuid.UUID(value)
    if vtype in (MsgType.MVT_F32, MsgType.MVT_F64):
        return float(value)
    if vtype == MsgType.MVT_IP_ADDR:
        return str(value)
    return int(value)


def record(msg: Message, wire: bytes) -> dict[str, Any]:
    """The JSON form of a (decoded) message."""
    template = BY_NAME.get(msg.name)
    blocks: dict[str, list[dict[str, Any]]] = {}
    if template is not None:
        for tmpl_block in template.blocks:
            present = msg.blocks.get(tmpl_block.name)
            if present is None:
                continue
            blocks[tmpl_block.name] = [
                {var.name: to_json_value(var, blk[var.name]) for var in tmpl_block.variables}
                for blk in present
            ]
    return {
        "name": msg.name,
        "wire": wire.hex(),
        "flags": int(msg.send_flags),
        "sequence": int(msg.packet_id),
        "acks": [int(a) for a in msg.acks],
        "extra": bytes(msg.extra).hex(),
        "blocks": blocks,
    }


def message_from_record(rec: dict[str, Any]) -> Message:
    template = BY_NAME[rec["name"]]
    msg = Message(rec["name"])
    for tmpl_block in template.blocks:
        items = rec["blocks"].get(tmpl_block.name)
        if items is None:
            continue
        msg.create_block_list(tmpl_block.name)
        variables = {var.name: var for var in tmpl_block.variables}
        for item in items:
            values = {k: from_json_value(variables[k], v) for k, v in item.items()}
            msg.add_block(Block(tmpl_block.name, **values))
    msg.send_flags = int(rec.get("flags", 0))
    msg.packet_id = int(rec.get("sequence", 0))
    msg.acks = tuple(int(a) for a in rec.get("acks", ()))
    extra = bytes.fromhex(rec.get("extra", ""))
    if extra:
        msg.extra = extra
    return msg


# --- modes ------------------------------------------------------------------------------------


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def generate(seed: int, count: int, names: list[str]) -> None:
    serializer = UDPMessageSerializer()
    deserializer = _deserializer()
    for template in [BY_NAME[n] for n in names] if names else TEMPLATES:
        rng = random.Random(f"{seed}:{template.name}")
        has_big = any(
            v.type == MsgType.MVT_VARIABLE and v.size == 2
            for b in template.blocks
            for v in b.variables
        )
        for index in range(count):
            big_ok = has_big and index == count - 1 and rng.random() < 0.5
            msg = random_message(rng, template, big_ok)
            built = record(msg, b"")
            # keep zero-coded bodies under both implementations' expansion caps
            if msg.zerocoded:
                plain = msg.send_flags & ~0x80
                msg.send_flags = plain
                size = len(serializer.serialize(msg))
                msg.send_flags = plain | 0x80
                if size > MAX_ZEROCODED_BODY:
                    msg.send_flags = plain
                    built["flags"] = plain
            wire = bytes(serializer.serialize(msg))
            decoded = deserializer.deserialize(wire)
            got = record(decoded, wire)
            if {**got, "wire": ""} != {**built, "wire": ""}:
                raise SystemExit(
                    f"hippolyzer does not round-trip {template.name}: {got} != {built}"
                )
            again = bytes(serializer.serialize(decoded))
            if again != wire:
                raise SystemExit(f"hippolyzer re-serializes {template.name} differently")
            _emit(got)


def decode() -> None:
    serializer = UDPMessageSerializer()
    deserializer = _deserializer()
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        wire = bytes.fromhex(line)
        try:
            msg = deserializer.deserialize(wire)
            out = record(msg, wire)
            out["ok"] = True
            try:
                out["reencoded"] = bytes(serializer.serialize(msg)).hex()
            except Exception as exc:
                out["reencoded"] = None
                out["reencode_error"] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            out = {"ok": False, "wire": line, "error": f"{type(exc).__name__}: {exc}"}
        _emit(out)


def encode() -> None:
    serializer = UDPMessageSerializer()
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            out = {
                "ok": True,
                "wire": bytes(serializer.serialize(message_from_record(json.loads(line)))).hex(),
            }
        except Exception as exc:
            out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        _emit(out)


def info() -> None:
    from importlib.metadata import version

    _emit({"hippolyzer": version("hippolyzer"), "messages": len(TEMPLATES), "python": sys.version})


def main(argv: list[str]) -> None:
    logging.disable(logging.CRITICAL)  # Hippolyzer warns on leftovers/unknowns; keep stdout JSON
    _raw_bytes_everywhere()
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "generate" and len(argv) >= 4:
        generate(int(argv[2], 0), int(argv[3]), argv[4:])
    elif mode == "decode":
        decode()
    elif mode == "encode":
        encode()
    elif mode == "info":
        info()
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
