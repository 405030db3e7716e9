"""Differential test against Hippolyzer 0.17.6, on both twins.

``hippolyzer_peer.py`` runs under the Python named by the environment
variable ``GAMECODEC_HIPPOLYZER_PYTHON`` (a Python >= 3.12 with
``hippolyzer==0.17.6``; ``.ci/run`` makes one). Without it, or when that
Python cannot import hippolyzer, every test here is skipped.

* The peer builds random instances of every one of the 483 template messages
  with Hippolyzer's Message/Block API and serializes them; our decode of those
  bytes must equal Hippolyzer's decode, field for field (floats compared bit
  for bit), and our encode must give back Hippolyzer's bytes exactly.
* Messages generated here and encoded by us are decoded by Hippolyzer: it must
  read what we read and re-serialize our bytes exactly.
* The divergences that specs/lludp.md documents are tested explicitly: the
  quaternion normalise-and-negate on send, and LL's tolerance of truncated
  input (zero-fill, missing Variable counts, excess bytes, empty messages).
"""

from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gamecodec.errors import DecodeError
from gamecodec.lludp import Message, build, default_template
from gamecodec.lludp._models import BlockKind, FieldType, MessageSpec
from tests.conftest import load_twin

PEER = Path(__file__).with_name("hippolyzer_peer.py")
SEED = int(os.environ.get("GAMECODEC_HIPPOLYZER_SEED", "0x5EED"), 0)
PER_MESSAGE = 5
"""Random instances of each template message built by Hippolyzer."""
OURS_PER_MESSAGE = 1
"""Random instances of each message built here and decoded by Hippolyzer."""

F32_TYPES = {FieldType.F32, FieldType.LLVECTOR3, FieldType.LLVECTOR4}
F64_TYPES = {FieldType.F64, FieldType.LLVECTOR3D}
BYTES_TYPES = {FieldType.FIXED, FieldType.VARIABLE}
INT_RANGES = {
    FieldType.U8: (0, 0xFF),
    FieldType.U16: (0, 0xFFFF),
    FieldType.U32: (0, 0xFFFFFFFF),
    FieldType.U64: (0, 0xFFFFFFFFFFFFFFFF),
    FieldType.S8: (-0x80, 0x7F),
    FieldType.S16: (-0x8000, 0x7FFF),
    FieldType.S32: (-0x80000000, 0x7FFFFFFF),
    FieldType.S64: (-0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
    FieldType.IPPORT: (0, 0xFFFF),
}
TEMPLATE = default_template()


# --- the peer -------------------------------------------------------------------------------------


def _python() -> str:
    python = os.environ.get("GAMECODEC_HIPPOLYZER_PYTHON")
    if not python:
        pytest.skip("GAMECODEC_HIPPOLYZER_PYTHON is not set (a Python with hippolyzer==0.17.6)")
    try:
        probe = subprocess.run(
            [python, "-c", "import hippolyzer"], capture_output=True, timeout=60, check=False
        )
    except OSError as exc:
        pytest.skip(f"cannot run {python}: {exc}")
    if probe.returncode != 0:
        pytest.skip(f"{python} cannot import hippolyzer")
    return python


def run_peer(python: str, *args: str, lines: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the peer; one parsed JSON object per output line."""
    done = subprocess.run(
        [python, str(PEER), *args],
        input="".join(line + "\n" for line in lines or []),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"hippolyzer_peer.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def peer_decode(python: str, wires: list[bytes]) -> list[dict[str, Any]]:
    out = run_peer(python, "decode", lines=[w.hex() for w in wires])
    assert len(out) == len(wires)
    return out


def peer_encode(python: str, records: list[dict[str, Any]]) -> list[bytes]:
    out = run_peer(python, "encode", lines=[json.dumps(r) for r in records])
    assert len(out) == len(records)
    for result in out:
        assert result["ok"], result
    return [bytes.fromhex(r["wire"]) for r in out]


@pytest.fixture(scope="module")
def hippo() -> str:
    """The Python that runs the peer (skips the module when there is none)."""
    return _python()


@pytest.fixture(scope="module")
def instances(hippo: str) -> list[dict[str, Any]]:
    """Hippolyzer-built instances of every message (one peer run per session)."""
    return run_peer(hippo, "generate", str(SEED), str(PER_MESSAGE))


@pytest.fixture(scope="module")
def twin(impl: str) -> ModuleType:
    return load_twin("gamecodec.lludp", "_codec", impl)


# --- comparing values --------------------------------------------------------------------------


def _bits32(value: float) -> bytes:
    return struct.pack("<f", value)


def _bits64(value: float) -> bytes:
    return struct.pack("<d", value)


def same_value(ftype: FieldType, ours: Any, theirs: Any) -> bool:
    """Our decoded value against Hippolyzer's JSON form (floats bit for bit)."""
    if ftype in BYTES_TYPES:
        return isinstance(ours, bytes) and ours.hex() == theirs
    if ftype == FieldType.LLQUATERNION:
        return len(ours) == 4 and all(
            _bits32(a) == _bits32(b) for a, b in zip(ours, theirs, strict=True)
        )
    if ftype in F32_TYPES | F64_TYPES:
        items = [ours] if isinstance(ours, float) else list(ours)
        want = [theirs] if isinstance(theirs, float | int) else list(theirs)
        bits = _bits32 if ftype in F32_TYPES else _bits64
        return (
            all(isinstance(v, float) for v in items)
            and len(items) == len(want)
            and all(bits(a) == bits(b) for a, b in zip(items, want, strict=True))
        )
    if ftype == FieldType.LLUUID:
        return isinstance(ours, uuid.UUID) and str(ours) == theirs
    if ftype == FieldType.IPADDR:
        return ours == theirs
    if ftype == FieldType.BOOL:  # Hippolyzer keeps the byte; we read any non-zero as True
        return ours is (int(theirs) != 0)
    return type(ours) is int and ours == theirs


def block_differences(
    spec: MessageSpec, ours: dict[str, tuple[Any, ...]], theirs: dict[str, list[dict[str, Any]]]
) -> list[str]:
    """Where our blocks differ from Hippolyzer's (every block must be present in both)."""
    problems: list[str] = []
    if list(ours) != [b.name for b in spec.blocks]:
        problems.append(f"our blocks {list(ours)}")
    for bspec in spec.blocks:
        mine, want = ours.get(bspec.name, ()), theirs.get(bspec.name)
        if want is None:
            problems.append(f"{bspec.name}: absent in Hippolyzer's decode")
            continue
        if len(mine) != len(want):
            problems.append(f"{bspec.name}: {len(mine)} instances, Hippolyzer {len(want)}")
            continue
        for i, (block, values) in enumerate(zip(mine, want, strict=True)):
            for fspec in bspec.fields:
                a, b = block[fspec.name], values[fspec.name]
                if not same_value(fspec.type, a, b):
                    problems.append(f"{bspec.name}[{i}].{fspec.name}: ours {a!r}, Hippolyzer {b!r}")
    return problems


def header_differences(msg: Message, rec: dict[str, Any]) -> list[str]:
    problems = []
    for what, mine, want in (
        ("name", msg.name, rec["name"]),
        ("flags", msg.flags, rec["flags"]),
        ("sequence", msg.sequence, rec["sequence"]),
        ("acks", list(msg.acks), rec["acks"]),
        ("extra", msg.extra.hex(), rec["extra"]),
        ("excess", msg.excess, b""),
        ("absent", msg.absent, ()),
        ("truncated", msg.truncated, False),
    ):
        if mine != want:
            problems.append(f"{what}: ours {mine!r}, Hippolyzer {want!r}")
    return problems


def to_ours(ftype: FieldType, value: Any) -> Any:
    """Hippolyzer's JSON form as the values our encoder takes."""
    if ftype in BYTES_TYPES:
        return bytes.fromhex(value)
    if ftype == FieldType.LLUUID:
        return uuid.UUID(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def summary(failures: list[str], total: int) -> str:
    head = f"{len(failures)} of {total} instances differ from Hippolyzer 0.17.6:\n"
    return head + "\n".join(failures[:25])


# --- the peer itself ---------------------------------------------------------------------------


def test_peer_is_hippolyzer_0_17_6(hippo: str) -> None:
    (info,) = run_peer(hippo, "info")
    assert info["hippolyzer"] == "0.17.6"
    assert info["messages"] == len(TEMPLATE) == 483


def test_every_message_is_covered(instances: list[dict[str, Any]]) -> None:
    names = [rec["name"] for rec in instances]
    assert sorted(set(names)) == sorted(m.name for m in TEMPLATE)
    assert len(names) == PER_MESSAGE * 483
    # the generator reaches the interesting header options
    assert any(rec["flags"] & 0x80 for rec in instances)
    assert any(not rec["flags"] & 0x80 and TEMPLATE[rec["name"]].zerocoded for rec in instances)
    assert any(len(rec["acks"]) == 250 for rec in instances)
    assert any(rec["extra"] for rec in instances)
    # zero runs past 255 (encoded as 00 FF 00 n), Variable data of the prefix's maximum
    assert any(rec["flags"] & 0x80 and "00ff00" in rec["wire"] for rec in instances)
    assert any(len(rec["wire"]) > 2 * 0xFFFF for rec in instances)


def test_acks_order_is_ours(instances: list[dict[str, Any]]) -> None:
    """Hippolyzer's ``Message.acks`` already has acks[0] nearest the count byte (spec §9.4)."""
    checked = 0
    for rec in instances:
        wire = bytes.fromhex(rec["wire"])
        if rec["acks"]:
            count = wire[-1]
            ids = [int.from_bytes(wire[-5 - 4 * k : -1 - 4 * k], "big") for k in range(count)]
            assert ids == rec["acks"]
            checked += 1
    assert checked > 100


# --- Hippolyzer's bytes through our codec ---------------------------------------------------------


def test_decode_equals_hippolyzer(twin: ModuleType, instances: list[dict[str, Any]]) -> None:
    failures = []
    for rec in instances:
        wire = bytes.fromhex(rec["wire"])
        try:
            msg = twin.decode(wire, TEMPLATE, False, 8192)
        except (DecodeError, ValueError) as exc:
            failures.append(f"{rec['name']} {rec['wire'][:80]}: {exc!r}")
            continue
        problems = header_differences(msg, rec)
        problems += block_differences(TEMPLATE[rec["name"]], msg.blocks, rec["blocks"])
        if problems:
            failures.append(f"{rec['name']} {rec['wire'][:80]}: " + "; ".join(problems[:4]))
    assert not failures, summary(failures, len(instances))


def test_strict_decode_equals_tolerant(twin: ModuleType, instances: list[dict[str, Any]]) -> None:
    """Hippolyzer's output is well formed: strict mode accepts all of it."""
    for rec in instances:
        wire = bytes.fromhex(rec["wire"])
        assert twin.decode(wire, TEMPLATE, True, 8192) == twin.decode(wire, TEMPLATE, False, 8192)


def test_encode_of_decode_equals_hippolyzer(
    twin: ModuleType, instances: list[dict[str, Any]]
) -> None:
    failures = []
    for rec in instances:
        wire = bytes.fromhex(rec["wire"])
        try:
            got = twin.encode(twin.decode(wire, TEMPLATE, False, 8192), TEMPLATE, "flag")
        except (DecodeError, ValueError, TypeError) as exc:
            failures.append(f"{rec['name']}: {exc!r}")
            continue
        if got != wire:
            at = next(
                (i for i, (a, b) in enumerate(zip(got, wire, strict=False)) if a != b),
                min(len(got), len(wire)),
            )
            failures.append(
                f"{rec['name']}: differs at byte {at} (ours {len(got)} B, Hippolyzer {len(wire)} B)"
            )
    assert not failures, summary(failures, len(instances))


def test_encode_of_built_equals_hippolyzer(
    twin: ModuleType, instances: list[dict[str, Any]]
) -> None:
    """``build`` from Hippolyzer's values (quaternions as x, y, z, w), then encode."""
    failures = []
    for rec in instances:
        spec = TEMPLATE[rec["name"]]
        blocks = {
            b.name: [
                {f.name: to_ours(f.type, item[f.name]) for f in b.fields}
                for item in rec["blocks"][b.name]
            ]
            for b in spec.blocks
        }
        msg = build(
            rec["name"],
            sequence=rec["sequence"],
            acks=rec["acks"],
            extra=bytes.fromhex(rec["extra"]),
            **blocks,
        )._replace(flags=rec["flags"])
        try:
            got = twin.encode(msg, TEMPLATE, "flag")
        except (ValueError, TypeError) as exc:
            failures.append(f"{rec['name']}: {exc!r}")
            continue
        if got != bytes.fromhex(rec["wire"]):
            failures.append(f"{rec['name']}: ours {got.hex()[:120]}")
    assert not failures, summary(failures, len(instances))


# --- our bytes through Hippolyzer ---------------------------------------------------------------


def _our_f32(rng: random.Random) -> float:
    if rng.random() < 0.2:
        return rng.choice([0.0, -0.0, 1.0, -2.5, math.inf])
    return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e4, 1e4)))[0]  # type: ignore[no-any-return]


def _our_value(rng: random.Random, ftype: FieldType, size: int) -> Any:
    if ftype in INT_RANGES:
        low, high = INT_RANGES[ftype]
        return rng.choice([low, high, rng.randint(low, high)])
    if ftype == FieldType.BOOL:
        return rng.random() < 0.5
    if ftype == FieldType.F32:
        return _our_f32(rng)
    if ftype == FieldType.F64:
        return rng.choice([-0.0, 1e300, rng.uniform(-1e9, 1e9)])
    if ftype in (FieldType.LLVECTOR3, FieldType.LLVECTOR4):
        return tuple(_our_f32(rng) for _ in range(3 if ftype == FieldType.LLVECTOR3 else 4))
    if ftype == FieldType.LLVECTOR3D:
        return tuple(rng.uniform(-1e6, 1e6) for _ in range(3))
    if ftype == FieldType.LLQUATERNION:
        angle, axis = rng.uniform(0.0, math.pi), rng.choice([(1, 0, 0), (0, 1, 0), (0, 0, 1)])
        s = math.sin(angle / 2)
        return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))
    if ftype == FieldType.LLUUID:
        return uuid.UUID(bytes=rng.randbytes(16))
    if ftype == FieldType.IPADDR:
        return ".".join(str(rng.randrange(256)) for _ in range(4))
    if ftype == FieldType.FIXED:
        return rng.randbytes(size)
    top = 255 if size == 1 else 400
    return bytes(
        rng.choice((0, 0, rng.randrange(256)))
        for _ in range(rng.choice([0, top, rng.randrange(top)]))
    )


def our_random_message(rng: random.Random, spec: MessageSpec) -> Message:
    blocks: dict[str, list[dict[str, Any]]] = {}
    for b in spec.blocks:
        count = {BlockKind.SINGLE: 1, BlockKind.MULTIPLE: b.count}.get(b.kind, rng.randrange(4))
        blocks[b.name] = [
            {f.name: _our_value(rng, f.type, f.size) for f in b.fields} for _ in range(count)
        ]
    if spec.blocks and not any(blocks.values()):
        blocks[spec.blocks[0].name].append(
            {f.name: _our_value(rng, f.type, f.size) for f in spec.blocks[0].fields}
        )
    acks = (
        ()
        if spec.name == "PacketAck"
        else tuple(rng.getrandbits(32) for _ in range(rng.choice([0, 3])))
    )
    flags = rng.choice([0, 0x40, 0x80, 0xC0, 0xA0])
    return build(spec.name, sequence=rng.getrandbits(32), acks=acks, **blocks)._replace(flags=flags)


def test_hippolyzer_decodes_our_bytes(twin: ModuleType, hippo: str) -> None:
    rng = random.Random(SEED)
    wires = []
    for spec in TEMPLATE:
        for _ in range(OURS_PER_MESSAGE):
            msg = our_random_message(rng, spec)
            plain = twin.encode(msg._replace(flags=msg.flags & ~0x80), TEMPLATE, "flag")
            if len(plain) > 8000:
                msg = msg._replace(flags=msg.flags & ~0x80)  # Hippolyzer's cap is 0x3000
            wires.append(twin.encode(msg, TEMPLATE, "flag"))
            # LL's rule: zero-coded only if smaller, else plain with the flag clear
            wires.append(twin.encode(msg._replace(flags=msg.flags | 0x80), TEMPLATE, "smaller"))
    failures = []
    for wire, rec in zip(wires, peer_decode(hippo, wires), strict=True):
        mine = twin.decode(wire, TEMPLATE, True, 8192)
        if not rec["ok"]:
            failures.append(f"{mine.name}: Hippolyzer: {rec['error']}")
            continue
        problems = header_differences(mine, rec)
        problems += block_differences(TEMPLATE[mine.name], mine.blocks, rec["blocks"])
        if rec["reencoded"] != wire.hex():
            problems.append("Hippolyzer re-serializes our bytes differently")
        if problems:
            failures.append(f"{mine.name} {wire.hex()[:80]}: " + "; ".join(problems[:4]))
    assert not failures, summary(failures, len(wires))


# --- documented divergences ----------------------------------------------------------------------


def _agent_update(rotation: tuple[float, ...]) -> dict[str, Any]:
    """Hippolyzer's JSON form of a plain AgentUpdate whose BodyRotation is ``rotation``."""
    nil = str(uuid.UUID(int=0))
    fields = {
        "AgentID": nil,
        "SessionID": nil,
        "BodyRotation": list(rotation),
        "HeadRotation": [0.0, 0.0, 0.0],
        "State": 0,
        "CameraCenter": [1.0, 2.0, 3.0],
        "CameraAtAxis": [1.0, 0.0, 0.0],
        "CameraLeftAxis": [0.0, 1.0, 0.0],
        "CameraUpAxis": [0.0, 0.0, 1.0],
        "Far": 64.0,
        "ControlFlags": 0,
        "Flags": 0,
    }
    return {
        "name": "AgentUpdate",
        "flags": 0,
        "sequence": 9,
        "acks": [],
        "extra": "",
        "blocks": {"AgentData": [fields]},
    }


def _our_agent_update(rotation: tuple[float, ...]) -> Message:
    rec = _agent_update(rotation)
    fields = {
        f.name: to_ours(f.type, rec["blocks"]["AgentData"][0][f.name])
        for f in TEMPLATE["AgentUpdate"].blocks[0].fields
    }
    return build("AgentUpdate", sequence=9, AgentData=fields)._replace(flags=0)


BODY_ROTATION = 6 + 1 + 32  # header, High number, AgentID + SessionID


def _same_rotation(got: tuple[float, ...], wanted: tuple[float, ...]) -> bool:
    """``got`` is a unit quaternion for the rotation ``wanted`` (``q`` and ``-q`` are the same)."""
    norm = math.sqrt(sum(x * x for x in wanted))
    dot = sum(x * y / norm for x, y in zip(got, wanted, strict=True))
    unit = math.sqrt(sum(x * x for x in got))
    return abs(unit - 1.0) < 1e-6 and abs(abs(dot) - 1.0) < 1e-6


ROTATIONS = [
    (0.0, 0.0, 0.5, -0.8660254037844386),  # unit, w < 0 (spec §2's example)
    (0.5, -0.5, 0.5, -0.5),
    (0.0, 0.0, 1.0, 1.0),  # not unit, w > 0
    (2.0, 0.0, 0.0, 0.5),  # not unit, x > 1 (w = 0 would read as a decoded value: sent as is)
    (0.3, 0.1, -0.2, -3.0),  # not unit, w < 0
]


@pytest.fixture(scope="module")
def hippo_rotations(hippo: str) -> list[bytes]:
    """Hippolyzer's AgentUpdate packets for ROTATIONS (one peer run)."""
    return peer_encode(hippo, [_agent_update(rotation) for rotation in ROTATIONS])


def test_quaternion_normalised_on_send(
    twin: ModuleType, hippo: str, hippo_rotations: list[bytes]
) -> None:
    """We send LL's packing; Hippolyzer packs x, y, z as given (spec §2, §9.7)."""
    ours_all = [twin.encode(_our_agent_update(r), TEMPLATE, "flag") for r in ROTATIONS]
    hippo_reads_ours = peer_decode(hippo, ours_all)
    span = slice(BODY_ROTATION, BODY_ROTATION + 12)
    for rotation, ours, theirs, read in zip(
        ROTATIONS, ours_all, hippo_rotations, hippo_reads_ours, strict=True
    ):
        assert len(ours) == len(theirs)
        assert ours[: span.start] == theirs[: span.start]
        assert ours[span.stop :] == theirs[span.stop :]
        assert ours[span] != theirs[span]
        as_given = struct.unpack("<3f", struct.pack("<3f", *rotation[:3]))
        assert struct.unpack("<3f", theirs[span]) == as_given
        # what we sent decodes, on both sides, to the rotation asked for, with w >= 0
        sent = twin.decode(ours, TEMPLATE, True, 8192).AgentData[0].BodyRotation
        assert sent[3] >= 0 and _same_rotation(sent, rotation), (rotation, sent)
        hippo_sent = read["blocks"]["AgentData"][0]["BodyRotation"]
        assert same_value(FieldType.LLQUATERNION, sent, hippo_sent)
        # Hippolyzer's bytes give another rotation
        got = twin.decode(theirs, TEMPLATE, True, 8192).AgentData[0].BodyRotation
        assert not _same_rotation(got, rotation), (rotation, got)


def test_unit_quaternion_with_w_positive_is_sent_as_is(twin: ModuleType, hippo: str) -> None:
    rotation = (0.0, 0.6000000238418579, 0.0, 0.7999999821186066)
    (theirs,) = peer_encode(hippo, [_agent_update(rotation)])
    assert twin.encode(_our_agent_update(rotation), TEMPLATE, "flag") == theirs


def _plain(twin: ModuleType, name: str, **blocks: Any) -> bytes:
    """A plain (not zero-coded, no acks) packet of ``name``."""
    return bytes(
        twin.encode(build(name, sequence=77, **blocks)._replace(flags=0), TEMPLATE, "flag")
    )


def test_field_cut_short_is_zero_filled(twin: ModuleType, hippo: str) -> None:
    """LL zero-fills and delivers; Hippolyzer drops the partial block and stops (spec §2).
    LL zero-fills the cut field as a whole: the byte of Height that is there is not used."""
    agent = {"AgentID": uuid.UUID(int=1), "SessionID": uuid.UUID(int=2), "CircuitCode": 0x01020304}
    whole = _plain(
        twin,
        "AgentHeightWidth",
        AgentData=agent,
        HeightWidthBlock={"GenCounter": 0xAABBCCDD, "Height": 0x1234, "Width": 0x5678},
    )
    cut = whole[:-3]  # inside Height: its low byte is there
    ours = twin.decode(cut, TEMPLATE, False, 8192)
    assert ours.truncated
    assert ours.AgentData[0]._asdict() == agent
    assert ours.HeightWidthBlock[0]._asdict() == {
        "GenCounter": 0xAABBCCDD,
        "Height": 0,
        "Width": 0,
    }
    assert ours.blocks == twin.decode(cut[:-1] + bytes(4), TEMPLATE, True, 8192).blocks
    with pytest.raises(DecodeError) as info:
        twin.decode(cut, TEMPLATE, True, 8192)
    assert info.value.offset == len(cut) - 1  # Height starts one byte before the end
    (theirs,) = peer_decode(hippo, [cut])
    assert theirs["ok"] and theirs["blocks"]["HeightWidthBlock"] == []  # instance dropped
    assert not block_differences(
        TEMPLATE["AgentHeightWidth"]._replace(blocks=TEMPLATE["AgentHeightWidth"].blocks[:1]),
        {"AgentData": ours.AgentData},
        {"AgentData": theirs["blocks"]["AgentData"]},
    )
    assert bytes.fromhex(theirs["reencoded"]) == cut[: len(cut) - 5]  # without the partial block


def test_variable_count_beyond_data(twin: ModuleType, hippo: str) -> None:
    """PacketAck claiming 3 ids with 2: LL keeps 3 (the third 0), Hippolyzer 2 (spec §2)."""
    whole = _plain(twin, "PacketAck", Packets=[{"ID": 0x11111111}, {"ID": 0x22222222}, {"ID": 7}])
    cut = whole[:-4]
    ours = twin.decode(cut, TEMPLATE, False, 8192)
    assert [p.ID for p in ours.Packets] == [0x11111111, 0x22222222, 0]
    assert ours.truncated
    (theirs,) = peer_decode(hippo, [cut])
    assert [p["ID"] for p in theirs["blocks"]["Packets"]] == [0x11111111, 0x22222222]
    assert theirs["reencoded"] != cut.hex() and bytes.fromhex(theirs["reencoded"])[-9] == 2


def test_variable_field_cut_short(twin: ModuleType, hippo: str) -> None:
    data = bytes(range(1, 41))
    whole = _plain(
        twin,
        "ChatFromViewer",
        AgentData={"AgentID": uuid.UUID(int=5), "SessionID": uuid.UUID(int=6)},
        ChatData={"Message": data, "Type": 1, "Channel": 0},
    )
    cut = whole[: len(whole) - 5 - 30]  # 10 of the 40 data bytes left
    ours = twin.decode(cut, TEMPLATE, False, 8192)
    assert ours.truncated and ours.ChatData[0].Message == data[:10] + bytes(30)
    assert (ours.ChatData[0].Type, ours.ChatData[0].Channel) == (0, 0)
    (theirs,) = peer_decode(hippo, [cut])
    assert theirs["ok"] and theirs["blocks"]["ChatData"] == []


def test_bool_byte_other_than_0_or_1(twin: ModuleType, hippo: str) -> None:
    """LL reads any non-zero BOOL byte as true; Hippolyzer keeps the byte (2).
    We read True and keep the byte for re-encoding: both re-encode it exactly."""
    whole = bytearray(
        _plain(
            twin,
            "AgentAnimation",
            AgentData={"AgentID": uuid.UUID(int=1), "SessionID": uuid.UUID(int=2)},
            AnimationList=[{"AnimID": uuid.UUID(int=3), "StartAnim": True}],
        )
    )
    assert whole[-2] == 1  # StartAnim, before PhysicalAvatarEventList's count
    whole[-2] = 2
    data = bytes(whole)
    ours = twin.decode(data, TEMPLATE, True, 8192)
    assert ours.AnimationList[0].StartAnim is True
    assert ours.bool_bytes == (("AnimationList", 0, "StartAnim", 2),)
    assert twin.encode(ours, TEMPLATE, "flag") == data
    (theirs,) = peer_decode(hippo, [data])
    assert theirs["ok"] and theirs["blocks"]["AnimationList"][0]["StartAnim"] == 2
    assert bytes.fromhex(theirs["reencoded"]) == data


def test_missing_variable_count_is_absent(twin: ModuleType, hippo: str) -> None:
    """A trailing Variable block without its count: 0 repeats, recorded as absent."""
    whole = _plain(
        twin,
        "AgentAnimation",
        AgentData={"AgentID": uuid.UUID(int=1), "SessionID": uuid.UUID(int=2)},
        AnimationList=[{"AnimID": uuid.UUID(int=3), "StartAnim": True}],
    )
    cut = whole[:-1]  # drop PhysicalAvatarEventList's count byte (0)
    ours = twin.decode(cut, TEMPLATE, False, 8192)
    assert ours.absent == ("PhysicalAvatarEventList",) and not ours.truncated
    assert ours.PhysicalAvatarEventList == ()
    assert twin.encode(ours, TEMPLATE, "flag") == cut
    with pytest.raises(DecodeError):
        twin.decode(cut, TEMPLATE, True, 8192)
    (theirs,) = peer_decode(hippo, [cut])
    assert list(theirs["blocks"]) == ["AgentData", "AnimationList"]
    assert theirs["reencoded"] == cut.hex()


def test_excess_bytes_are_kept(twin: ModuleType, hippo: str) -> None:
    """We keep trailing bytes and re-encode them; Hippolyzer drops them (spec §2)."""
    whole = _plain(twin, "CompletePingCheck", PingID={"PingID": 9})
    longer = whole + b"\x01\x00\x03"
    ours = twin.decode(longer, TEMPLATE, False, 8192)
    assert ours.excess == b"\x01\x00\x03" and ours.PingID[0].PingID == 9
    assert twin.encode(ours, TEMPLATE, "flag") == longer
    with pytest.raises(DecodeError):
        twin.decode(longer, TEMPLATE, True, 8192)
    (theirs,) = peer_decode(hippo, [longer])
    assert theirs["blocks"] == {"PingID": [{"PingID": 9}]}
    assert theirs["reencoded"] == whole.hex()


def test_empty_messages(twin: ModuleType, hippo: str) -> None:
    """Nothing after the number: LL delivers a zero-filled Single block; PacketAck count 0
    or no count is dropped. Hippolyzer: the opposite in both cases (spec §1.6, §2)."""
    ping = _plain(twin, "CompletePingCheck", PingID={"PingID": 9})[:-1]
    ours = twin.decode(ping, TEMPLATE, False, 8192)
    assert ours.PingID[0].PingID == 0 and ours.truncated
    ack0 = _plain(twin, "PacketAck", Packets=[{"ID": 1}])[:-4]
    ack0 = ack0[:-1] + b"\x00"  # a count of 0
    for bad in (ack0, ack0[:-1]):
        for strict in (False, True):
            with pytest.raises(DecodeError):
                twin.decode(bad, TEMPLATE, strict, 8192)
    ping_theirs, ack0_theirs, none_theirs = peer_decode(hippo, [ping, ack0, ack0[:-1]])
    assert not ping_theirs["ok"] and "empty" in ping_theirs["error"]
    assert ack0_theirs["ok"] and ack0_theirs["blocks"] == {"Packets": []}
    assert not none_theirs["ok"]


# --- headers, zero-coding forms, unknown numbers -------------------------------------------------


def test_peek_equals_hippolyzer(twin: ModuleType, instances: list[dict[str, Any]]) -> None:
    for rec in instances:
        wire = bytes.fromhex(rec["wire"])
        head = twin.peek(wire, TEMPLATE)
        trailer = 4 * wire[-1] + 1 if rec["flags"] & 0x10 else 0
        assert (head.flags, head.sequence, list(head.acks), head.name) == (
            rec["flags"],
            rec["sequence"],
            rec["acks"],
            rec["name"],
        )
        assert head.extra_length == len(rec["extra"]) // 2
        assert head.body_end == len(wire) - trailer


def _wrap_zero_code(body: bytes) -> bytes:
    """Zero-coding with LL's wrap form: a run of 257..511 zeros as ``00 00 (n - 256)``."""
    out = bytearray()
    i = 0
    while i < len(body):
        if body[i]:
            out.append(body[i])
            i += 1
            continue
        j = i
        while j < len(body) and not body[j]:
            j += 1
        run = j - i
        while run:
            if 257 <= run <= 511:
                out += bytes((0, 0, run - 256))
                run = 0
            else:
                out += bytes((0, min(run, 255)))
                run -= min(run, 255)
        i = j
    return bytes(out)


def test_other_zero_coding_forms_decode_alike(twin: ModuleType, hippo: str) -> None:
    """The ``00 00 c`` wrap form and a trailing lone ``00`` mean the same to both (spec §1.2)."""
    chat = _plain(
        twin,
        "ChatFromViewer",
        AgentData={"AgentID": uuid.UUID(int=0), "SessionID": uuid.UUID(int=0)},
        ChatData={"Message": bytes(300) + b"hi\x00", "Type": 0, "Channel": 0},
    )
    wrapped = bytes((0x80,)) + chat[1:6] + _wrap_zero_code(chat[6:])
    assert bytes.fromhex("0000") in wrapped[6:]
    ping = _plain(twin, "CompletePingCheck", PingID={"PingID": 0})  # body 02 00
    lone = bytes((0x80,)) + ping[1:]  # ... 02 00: a trailing lone 00 is one zero
    results = peer_decode(hippo, [wrapped, lone])
    for wire, theirs, plain in zip((wrapped, lone), results, (chat, ping), strict=True):
        ours = twin.decode(wire, TEMPLATE, True, 8192)
        assert theirs["ok"] and not ours.truncated and not ours.excess
        assert not block_differences(TEMPLATE[ours.name], ours.blocks, theirs["blocks"])
        assert ours.blocks == twin.decode(plain, TEMPLATE, True, 8192).blocks
        # both re-encode in the canonical form
        canonical = twin.encode(ours, TEMPLATE, "flag")
        assert canonical == bytes.fromhex(theirs["reencoded"]) != wire


def test_unknown_message_numbers_round_trip(twin: ModuleType, hippo: str) -> None:
    """Unknown numbers keep their raw body on both sides (names differ by design)."""
    wires = [
        bytes.fromhex("400000000100ffff01f40102030405"),  # Low 500
        bytes.fromhex("000000000200ff7f00"),  # Medium 127
        bytes.fromhex("000000000300feaabb"),  # High 254
        bytes.fromhex("000000000400fffffffa01"),  # Fixed 0xFFFFFFFA
    ]
    for wire, theirs in zip(wires, peer_decode(hippo, wires), strict=True):
        ours = twin.decode(wire, TEMPLATE, False, 8192)
        assert not ours.known and ours.name.startswith("Unknown")
        assert theirs["ok"] and theirs["name"].startswith("UnknownMessage:")
        assert ours.body and wire.endswith(ours.body)
        assert twin.encode(ours, TEMPLATE, "flag") == wire == bytes.fromhex(theirs["reencoded"])
