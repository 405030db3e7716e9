"""Real bytes: the Hippolyzer 0.17.6 corpus of ../shared/corpus/lludp, on both twins.

Every line of ``messages.jsonl`` must decode to the recorded header, acks and
field values, zero-decode to the recorded ``body_unzerocoded``, and come back
byte for byte from encoding (both the decoded message and one built from the
recorded values). A few corpus lines are embedded below so that a checkout
without ../shared still tests real bytes.
"""

from __future__ import annotations

import json
import math
import struct
import uuid
from types import ModuleType
from typing import Any

import pytest

from gamecodec.lludp import FieldType, Frequency, Message, Template, build
from tests.conftest import shared_path

F32_TYPES = {FieldType.F32, FieldType.LLVECTOR3, FieldType.LLVECTOR4}
F64_TYPES = {FieldType.F64, FieldType.LLVECTOR3D}

# Lines of messages.jsonl (data produced by running Hippolyzer 0.17.6; see the corpus README).
EMBEDDED = [
    # Low 149, zero-coded: the message number is on the wire as FF FF 00 01 95.
    '{"name":"RegionHandshakeReply","number":149,"frequency":"Low","flags":128,'
    '"sequence":3692647425,"acks":[],"extra":"","wire":"80dc19540100ffff0001955801511bc0a54f2d'
    '281f98f1b92abc6a299a2f9428f02ffc4a4a36685e8009fefeffffff","body_unzerocoded":"ffff009558015'
    '11bc0a54f2d281f98f1b92abc6a299a2f9428f02ffc4a4a36685e8009fefeffffff","blocks":{"AgentData":'
    '[{"AgentID":"5801511b-c0a5-4f2d-281f-98f1b92abc6a","SessionID":"299a2f94-28f0-2ffc-4a4a-3668'
    '5e8009fe"}],"RegionInfo":[{"Flags":4294967294}]},"template_zerocoded":true,"deprecation":null}',
    # High 1 with one appended ack.
    '{"name":"StartPingCheck","number":1,"frequency":"High","flags":80,"sequence":3062395301,'
    '"acks":[280976131],"extra":"","wire":"50b68871a50001ff0000000010bf5b0301","body_unzerocoded"'
    ':"01ff00000000","blocks":{"PingID":[{"PingID":255,"OldestUnacked":0}]},'
    '"template_zerocoded":false,"deprecation":null}',
    # Fixed 0xFFFFFFFB.
    '{"name":"PacketAck","number":4294967291,"frequency":"Fixed","flags":0,"sequence":1629815831,'
    '"acks":[],"extra":"","wire":"006125041700fffffffb0187d36b29","body_unzerocoded":"fffffffb018'
    '7d36b29","blocks":{"Packets":[{"ID":694932359}]},"template_zerocoded":false,'
    '"deprecation":null}',
    # A Variable block of two, one ack.
    '{"name":"KillObject","number":16,"frequency":"High","flags":16,"sequence":2821987670,'
    '"acks":[2680878178],"extra":"","wire":"10a8341d56001002f2000000736eaedf9fcaf46201",'
    '"body_unzerocoded":"1002f2000000736eaedf","blocks":{"ObjectData":[{"ID":242},'
    '{"ID":3752750707}]},"template_zerocoded":false,"deprecation":null}',
]


def _corpus() -> list[dict[str, Any]]:
    path = shared_path("corpus", "lludp", "messages.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    records = _corpus()
    assert len(records) == 40
    return records


def _bits(value: float, wide: bool) -> bytes:
    return struct.pack("<d" if wide else "<f", value)


def value_problem(ftype: FieldType, ours: Any, want: Any) -> str | None:
    """Why our decoded value differs from the corpus JSON form, or None."""
    if ftype in (FieldType.FIXED, FieldType.VARIABLE):
        return None if type(ours) is bytes and ours.hex() == want else "bytes differ"
    if ftype == FieldType.LLQUATERNION:
        if not (isinstance(ours, tuple) and len(ours) == 4):
            return "not an (x, y, z, w) tuple"
        if [_bits(a, True) for a in ours[:3]] != [_bits(float(b), True) for b in want]:
            return "x, y, z differ"
        t = 1.0 - sum(float(v) * float(v) for v in want)
        w = math.sqrt(t) if t > 0 else 0.0
        return None if math.isclose(ours[3], w, rel_tol=1e-12, abs_tol=1e-15) else "w differs"
    if ftype in F32_TYPES | F64_TYPES:
        items = [ours] if isinstance(ours, float) else list(ours)
        wants = [want] if isinstance(want, (int, float)) else list(want)
        if not all(type(v) is float for v in items) or len(items) != len(wants):
            return "not floats"
        ok = [_bits(a, True) for a in items] == [_bits(float(b), True) for b in wants]
        return None if ok else "floats differ"
    if ftype == FieldType.LLUUID:
        return None if type(ours) is uuid.UUID and str(ours) == want else "UUID differs"
    if ftype == FieldType.BOOL:
        return None if type(ours) is bool and int(ours) == want else "BOOL differs"
    if ftype == FieldType.IPADDR:
        return None if ours == want else "IPADDR differs"
    return None if type(ours) is int and ours == want else "int differs"


def check_record(codec: ModuleType, template: Template, rec: dict[str, Any]) -> None:
    """Decode, zero-decode, re-encode and build-and-encode one corpus line."""
    wire = bytes.fromhex(rec["wire"])
    name = rec["name"]
    msg = codec.decode(wire, template, False, 8192)
    assert msg.name == name
    assert msg.number == rec["number"]
    assert msg.frequency == Frequency[rec["frequency"].upper()]
    assert (msg.flags, msg.sequence) == (rec["flags"], rec["sequence"])
    assert msg.acks == tuple(reversed(rec["acks"]))  # ours: acks[0] nearest the count byte
    assert msg.extra.hex() == rec["extra"]
    assert (msg.excess, msg.absent, msg.truncated, msg.body) == (b"", (), False, None)
    spec = template[name]
    assert list(msg.blocks) == [b.name for b in spec.blocks] == list(rec["blocks"])
    for bspec in spec.blocks:
        got, want = msg.blocks[bspec.name], rec["blocks"][bspec.name]
        assert len(got) == len(want), bspec.name
        for i, (block, values) in enumerate(zip(got, want, strict=True)):
            for fspec in bspec.fields:
                problem = value_problem(fspec.type, block[fspec.name], values[fspec.name])
                assert problem is None, (
                    f"{name}.{bspec.name}[{i}].{fspec.name}: {problem}: "
                    f"{block[fspec.name]!r} vs {values[fspec.name]!r}"
                )
    # the zero-coded region: everything between the 6-byte header and the acks
    body_end = len(wire) - (4 * wire[-1] + 1 if rec["flags"] & 0x10 else 0)
    region = wire[6:body_end]
    if rec["flags"] & 0x80:
        region = codec.zero_decode(region, 8192)
    assert region.hex() == rec["body_unzerocoded"]
    header = codec.peek(wire, template)
    assert (header.name, header.flags, header.sequence, header.body_end) == (
        name,
        rec["flags"],
        rec["sequence"],
        body_end,
    )
    assert header.acks == msg.acks
    # back to the same bytes, from the decoded message and from the recorded values
    assert codec.encode(msg, template, "flag") == wire
    assert codec.decode(wire, template, True, 8192) == msg
    built = build(
        name,
        template=template,
        sequence=rec["sequence"],
        acks=tuple(reversed(rec["acks"])),
        extra=bytes.fromhex(rec["extra"]),
        **{
            b.name: [
                {f.name: json_to_value(f.type, item[f.name]) for f in b.fields}
                for item in rec["blocks"][b.name]
            ]
            for b in spec.blocks
        },
    )._replace(flags=rec["flags"] & ~0x10)
    assert codec.encode(built, template, "flag") == wire


def json_to_value(ftype: FieldType, value: Any) -> Any:
    """The corpus JSON form as a value our encoder takes (quaternions stay [x, y, z])."""
    if ftype in (FieldType.FIXED, FieldType.VARIABLE):
        return bytes.fromhex(value)
    if ftype == FieldType.LLUUID:
        return uuid.UUID(value)
    if isinstance(value, list):
        return tuple(float(v) for v in value)
    if ftype in (FieldType.F32, FieldType.F64):
        return float(value)
    return value


@pytest.mark.parametrize("line", range(len(EMBEDDED)))
def test_embedded_vectors(codec: ModuleType, template: Template, line: int) -> None:
    check_record(codec, template, json.loads(EMBEDDED[line]))


def test_embedded_vectors_are_corpus_lines(corpus: list[dict[str, Any]]) -> None:
    for line in EMBEDDED:
        assert json.loads(line) in corpus


def test_corpus_messages(codec: ModuleType, template: Template, corpus: list[dict[str, Any]]):
    failures = []
    for rec in corpus:
        try:
            check_record(codec, template, rec)
        except (AssertionError, ValueError, TypeError) as exc:
            failures.append(f"{rec['name']}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


def test_corpus_covers_the_header_options(corpus: list[dict[str, Any]]) -> None:
    """The corpus reaches what the tests above claim to check."""
    assert {rec["frequency"] for rec in corpus} == {"High", "Medium", "Low", "Fixed"}
    assert any(rec["flags"] & 0x80 for rec in corpus)
    assert any(rec["template_zerocoded"] and not rec["flags"] & 0x80 for rec in corpus)
    assert any(not rec["template_zerocoded"] and rec["flags"] & 0x80 for rec in corpus)
    assert any(len(rec["acks"]) == 30 for rec in corpus)


def test_bench_packets_round_trip(codec: ModuleType, template: Template) -> None:
    data = json.loads(shared_path("corpus", "lludp", "bench_packets.json").read_text())
    assert len(data["packets"]) == 5
    for packet in data["packets"]:
        wire = bytes.fromhex(packet["wire"])
        assert len(wire) == packet["wire_bytes"]
        msg = codec.decode(wire, template, True, 8192)
        assert isinstance(msg, Message)
        assert msg.name == packet["name"]
        assert msg.flags == packet["flags"]
        assert len(msg.acks) == packet["appended_acks"]
        body_end = len(wire) - (4 * len(msg.acks) + 1 if msg.acks else 0)
        region = wire[6:body_end]
        if msg.flags & 0x80:
            region = codec.zero_decode(region, 8192)
        assert len(region) == packet["body_unzerocoded_bytes"]
        assert codec.encode(msg, template, "flag") == wire
    zc = data["zero_coding"]
    encoded, decoded = bytes.fromhex(zc["body_encoded"]), bytes.fromhex(zc["body_decoded"])
    assert codec.zero_decode(encoded, 8192) == decoded
    assert codec.zero_encode(decoded) == encoded
