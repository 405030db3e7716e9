"""Zero-coding (spec §1.2, §4, §9.1-9.2): LL's rules, the cap, and the coded region; both twins."""

from __future__ import annotations

import random
import tracemalloc
import uuid
from collections.abc import Callable
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.errors import DecodeError
from gamecodec.lludp import Template, build

SETTINGS = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
zero_heavy = st.lists(
    st.one_of(st.just(b"\x00" * 255), st.binary(max_size=3), st.integers(0, 700).map(bytes)),
    max_size=12,
).map(b"".join)

AGENT = uuid.UUID("5801511b-c0a5-4f2d-281f-98f1b92abc6a")
SESSION = uuid.UUID("299a2f94-28f0-2ffc-4a4a-36685e8009fe")


def header(flags: int, sequence: int = 0x01020304, extra: int = 0) -> bytes:
    return bytes((flags,)) + sequence.to_bytes(4, "big") + bytes((extra,))


# --- decoding --------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 5, 127, 254, 255])
def test_pair_gives_count_zeros(codec: ModuleType, count: int) -> None:
    assert codec.zero_decode(bytes((0, count)), 8192) == bytes(count)
    assert (
        codec.zero_decode(b"ab" + bytes((0, count)) + b"cd", 8192) == b"ab" + bytes(count) + b"cd"
    )


@pytest.mark.parametrize("count", [1, 5, 255])
def test_wrap_form_adds_256(codec: ModuleType, count: int) -> None:
    """``00 00 c`` is 256 + c zeros (LL, Hippolyzer; LibreMetaverse reads 0)."""
    assert codec.zero_decode(bytes((0, 0, count)), 8192) == bytes(256 + count)
    assert codec.zero_decode(b"\x07" + bytes((0, 0, count)) + b"\x09", 8192) == (
        b"\x07" + bytes(256 + count) + b"\x09"
    )


@pytest.mark.parametrize("count", [1, 5, 255])
def test_double_wrap_form_adds_512(codec: ModuleType, count: int) -> None:
    assert codec.zero_decode(bytes((0, 0, 0, count)), 8192) == bytes(512 + count)


def test_trailing_lone_zero_is_one_zero(codec: ModuleType) -> None:
    assert codec.zero_decode(b"\x00", 8192) == b"\x00"
    assert codec.zero_decode(b"ab\x00", 8192) == b"ab\x00"
    assert codec.zero_decode(b"\x00\x03\x00", 8192) == bytes(4)


def test_trailing_double_zero_is_257(codec: ModuleType) -> None:
    assert codec.zero_decode(b"\x00\x00", 8192) == bytes(257)
    assert codec.zero_decode(b"z\x00\x00\x00", 8192) == b"z" + bytes(513)


def test_literals_and_empty(codec: ModuleType) -> None:
    assert codec.zero_decode(b"", 8192) == b""
    assert codec.zero_decode(bytes(range(1, 256)), 8192) == bytes(range(1, 256))
    assert codec.zero_decode(bytearray(b"\x01\x00\x02\x03"), 8192) == b"\x01\x00\x00\x03"


# --- encoding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("run", "coded"),
    [
        (1, "0001"),
        (2, "0002"),
        (255, "00ff"),
        (256, "00ff0001"),
        (510, "00ff00ff"),
        (511, "00ff00ff0001"),
        (600, "00ff00ff005a"),
    ],
)
def test_encode_runs(codec: ModuleType, run: int, coded: str) -> None:
    assert codec.zero_encode(bytes(run)).hex() == coded
    assert codec.zero_encode(b"\x01" + bytes(run) + b"\x02").hex() == "01" + coded + "02"
    assert codec.zero_decode(bytes.fromhex(coded), 8192) == bytes(run)


def test_encode_literals_and_empty(codec: ModuleType) -> None:
    assert codec.zero_encode(b"") == b""
    assert codec.zero_encode(b"\x01\x02\xff") == b"\x01\x02\xff"
    assert codec.zero_encode(b"\xff\xff\x00\x95") == b"\xff\xff\x00\x01\x95"


@SETTINGS
@given(data=zero_heavy)
def test_encoder_never_emits_the_wrap_form(codec: ModuleType, data: bytes) -> None:
    coded = codec.zero_encode(data)
    pairs = [coded[i + 1] for i, b in enumerate(coded) if b == 0]
    assert all(pairs)  # every 00 is followed by a non-zero count: no 00 00, no trailing 00
    assert b"\x00\x00" not in coded


@SETTINGS
@given(data=zero_heavy | st.binary(max_size=300))
def test_round_trip(codec: ModuleType, data: bytes) -> None:
    assert codec.zero_decode(codec.zero_encode(data), len(data) + 1) == data
    assert len(codec.zero_encode(data)) <= 2 * len(data)
    if data.endswith(b"\x00"):  # a zero run may not end at the cap (the viewer's check)
        with pytest.raises(DecodeError):
            codec.zero_decode(codec.zero_encode(data), len(data))
    else:
        assert codec.zero_decode(codec.zero_encode(data), len(data)) == data


def test_large_round_trip(codec: ModuleType) -> None:
    """Past the compiled twin's stack buffers (8 KiB)."""
    data = (b"\x00" * 3000 + bytes(range(256)) + b"\x05" * 5000) * 3
    coded = codec.zero_encode(data)
    assert codec.zero_decode(coded, len(data)) == data
    with pytest.raises(DecodeError):
        codec.zero_decode(coded, len(data) - 1)


# --- the cap -----------------------------------------------------------------------------------


def test_zero_run_bomb(codec: ModuleType) -> None:
    """Runs of ``00 00`` would expand to megabytes: DecodeError at the run, nothing allocated."""
    bomb = b"\x01" * 10 + b"\x00\x00" * 5000
    with pytest.raises(DecodeError) as info:
        codec.zero_decode(bomb, 8192)
    assert info.value.offset == 10
    assert "8192" in str(info.value)


def test_zero_run_bomb_in_a_packet(codec: ModuleType, template: Template) -> None:
    packet = header(0x80) + b"\x04" + b"\x00\x00" * 2000
    with pytest.raises(DecodeError) as info:
        codec.decode(packet, template, False, 8192)
    assert info.value.offset == 7  # the first 00 of the body (absolute)
    (got,) = codec.decode_many([packet], template, False, 8192)
    assert isinstance(got, DecodeError)
    assert got.offset == 7


def test_bomb_allocates_no_more_than_the_cap(codec: ModuleType, template: Template) -> None:
    """A 20-KB input that would expand to ~2.5 GB, with a 1 MB cap: memory stays near the cap."""
    bomb = b"\x00" * 10_000 + b"\x01"
    packet = header(0x80) + b"\x04" + bomb
    tracemalloc.start()
    try:
        for call in (
            lambda: codec.zero_decode(bomb, 1 << 20),
            lambda: codec.decode(packet, template, False, 1 << 20),
        ):
            with pytest.raises(DecodeError):
                call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (1 << 20) + (1 << 18)


@pytest.mark.parametrize("k", [1, 2, 31, 32])
def test_a_zero_run_must_end_before_the_cap(codec: ModuleType, k: int) -> None:
    """The viewer's ``zeroCodeExpand`` checks a run one byte early: ``00 FF`` x k
    (255 k zeros) needs max_size 255 k + 1, and fails at the last run at 255 k."""
    data = b"\x00\xff" * k
    assert codec.zero_decode(data, 255 * k + 1) == bytes(255 * k)
    with pytest.raises(DecodeError) as info:
        codec.zero_decode(data, 255 * k)
    assert info.value.offset == 2 * (k - 1)


@pytest.mark.parametrize(
    ("data", "fits"),
    [
        (b"\x07" * 8, True),  # literals may end at the cap
        (b"\x07" * 7 + b"\x00", True),  # so may a lone 00 ending the input (checked as one)
        (b"\x07" * 7 + b"\x00\x01", False),  # one zero as a run: one byte early
        (b"\x07" * 6 + b"\x00\x02", False),
        (b"\x07" * 6 + b"\x00\x01\x07", True),
        (b"\x07" * 5 + b"\x00\x02", True),
        (b"\x00\x00", False),  # 257 zeros: a wrap is a run
    ],
)
def test_where_the_cap_binds(codec: ModuleType, data: bytes, fits: bool) -> None:
    cap = 8 if data != b"\x00\x00" else 257
    if fits:
        assert len(codec.zero_decode(data, cap)) <= cap
    else:
        with pytest.raises(DecodeError):
            codec.zero_decode(data, cap)
        assert len(codec.zero_decode(data, cap + 1)) == cap


@pytest.mark.parametrize(
    ("data", "max_size", "offset"),
    [
        (b"\x01" * 100, 60, 60),  # a literal run crossing the cap: the first byte past it
        (b"\x00\x0a" + b"\x01" * 100, 50, 42),
        (b"\x02" * 9000, 8192, 8192),  # past the compiled twin's stack buffer
        (
            b"\x00\xff" * 40 + b"\x03" * 10,
            40 * 255 + 1,
            81,
        ),  # the cap reached by runs, then literals
    ],
)
def test_literal_run_crossing_the_cap(
    codec: ModuleType, data: bytes, max_size: int, offset: int
) -> None:
    with pytest.raises(DecodeError) as info:
        codec.zero_decode(data, max_size)
    assert info.value.offset == offset


def test_max_size_zero(codec: ModuleType, template: Template) -> None:
    assert codec.zero_decode(b"", 0) == b""
    for data in (b"\x01", b"\x00\x01", b"\x00"):
        with pytest.raises(DecodeError) as info:
            codec.zero_decode(data, 0)
        assert info.value.offset == 0
    ping = header(0x80) + b"\x01\x07\x00\x04"
    with pytest.raises(DecodeError) as info:
        codec.decode(ping, template, False, 0)
    assert info.value.offset == 6
    # the cap is about zero-decoding: a plain packet does not use it
    assert codec.decode(header(0) + b"\x01\x07" + bytes(4), template, False, 0).name == (
        "StartPingCheck"
    )


@pytest.mark.parametrize("bad", [-1, -8192, 1.5, "8192", None, True, 2**70 * -1])
def test_invalid_max_size(codec: ModuleType, template: Template, bad: object) -> None:
    ping = header(0x80) + b"\x01\x07\x00\x04"
    for call in (
        lambda: codec.zero_decode(b"\x00\x01", bad),
        lambda: codec.decode(ping, template, False, bad),
        lambda: codec.decode_many([ping], template, False, bad),
    ):
        with pytest.raises(ValueError, match="max_size") as info:
            call()
        assert not isinstance(info.value, DecodeError)


# --- the coded region of a packet ------------------------------------------------------------


def test_zero_coded_low_number(codec: ModuleType, template: Template) -> None:
    """Low 149 (RegionHandshakeReply) zero-coded: ``FF FF 00 01 95`` (spec §1.2)."""
    body = AGENT.bytes + SESSION.bytes + (7).to_bytes(4, "little")
    packet = header(0x80) + b"\xff\xff\x00\x01\x95" + codec.zero_encode(body)
    msg = codec.decode(packet, template, True, 8192)
    assert (msg.name, msg.number) == ("RegionHandshakeReply", 149)
    assert msg.AgentData[0].AgentID == AGENT
    assert msg.AgentData[0].SessionID == SESSION
    assert msg.RegionInfo[0].Flags == 7
    head = codec.peek(packet, template)
    assert (head.name, head.number, head.body_end) == ("RegionHandshakeReply", 149, len(packet))
    built = build("RegionHandshakeReply", sequence=0x01020304, **msg.to_dict())
    assert built.flags == 0x80
    assert codec.encode(built, template, "flag") == packet


def test_zero_coded_number_with_larger_low_numbers(codec: ModuleType, template: Template) -> None:
    """Low 387 (AgentDataUpdate) has a non-zero high byte: ``FF FF 01 83`` as is."""
    spec = template["AgentDataUpdate"]
    assert spec.number == 387
    values = {
        f.name: (AGENT if f.type == 15 else b"x\x00" if f.type == 20 else 0)
        for f in spec.blocks[0].fields
    }
    msg = build("AgentDataUpdate", AgentData=values)
    wire = codec.encode(msg, template, "flag")
    assert wire[6:10] == b"\xff\xff\x01\x83"
    assert codec.decode(wire, template, True, 8192) == msg


def test_zero_coding_follows_the_flag_not_the_template(
    codec: ModuleType, template: Template
) -> None:
    # RegionHandshakeReply is Zerocoded in the template; sent plain with the flag clear
    msg = build("RegionHandshakeReply", AgentData={"AgentID": AGENT, "SessionID": SESSION},
                RegionInfo={"Flags": 0})  # fmt: skip
    plain = codec.encode(msg._replace(flags=0), template, "flag")
    assert plain[6:] == b"\xff\xff\x00\x95" + AGENT.bytes + SESSION.bytes + bytes(4)
    assert codec.decode(plain, template, True, 8192)._replace(flags=0x80) == msg
    # StartPingCheck is Unencoded; with the flag set it is zero-coded anyway
    ping = build("StartPingCheck", PingID={"PingID": 0, "OldestUnacked": 0})
    assert ping.flags == 0
    assert codec.encode(ping, template, "flag") == header(0, 0) + b"\x01" + bytes(5)
    coded = codec.encode(ping._replace(flags=0x80), template, "flag")
    assert coded == header(0x80, 0) + b"\x01\x00\x05"
    assert codec.decode(coded, template, True, 8192) == ping._replace(flags=0x80)


def test_flag_mode_codes_even_when_larger(codec: ModuleType, template: Template) -> None:
    ping = build("StartPingCheck", flags=0x80, PingID={"PingID": 0, "OldestUnacked": 0x01010101})
    wire = codec.encode(ping, template, "flag")
    assert wire == header(0x80, 0) + b"\x01\x00\x01\x01\x01\x01\x01"  # one byte longer than plain


@pytest.mark.parametrize(
    ("ping_id", "oldest", "coded"),
    [
        (7, 0x01010101, False),  # no zeros: same length, not smaller
        (7, 0x01010000, False),  # one run of 2 becomes 00 02: same length
        (7, 0x01010100, False),  # a lone zero becomes 00 01: larger
        (0, 0x01000000, True),  # a run of 4 becomes 00 04: smaller
    ],
)
def test_smaller_mode(
    codec: ModuleType, template: Template, ping_id: int, oldest: int, coded: bool
) -> None:
    """LL's rule: zero-code only when strictly smaller, else plain with the flag cleared."""
    ping = build("StartPingCheck", flags=0xC0, PingID={"PingID": ping_id, "OldestUnacked": oldest})
    wire = codec.encode(ping, template, "smaller")
    flag_wire = codec.encode(ping, template, "flag")
    plain = codec.encode(ping._replace(flags=0x40), template, "flag")
    if coded:
        assert wire == flag_wire
        assert len(wire) < len(plain)
        assert wire[0] == 0xC0
    else:
        assert wire == plain
        assert wire[0] == 0x40
    assert codec.decode(wire, template, True, 8192).blocks == ping.blocks


def test_bad_zero_coding_mode(codec: ModuleType, template: Template) -> None:
    ping = build("StartPingCheck", PingID={"PingID": 7, "OldestUnacked": 0})
    with pytest.raises(ValueError, match="zero_coding"):
        codec.encode(ping, template, "always")


def test_appended_acks_are_never_zero_coded(codec: ModuleType, template: Template) -> None:
    acks = (0x00000100, 0, 0xFF000000)
    ping = build("StartPingCheck", flags=0x80, sequence=0, acks=acks,
                 PingID={"PingID": 0, "OldestUnacked": 0})  # fmt: skip
    wire = codec.encode(ping, template, "flag")
    tail = b"".join(a.to_bytes(4, "big") for a in reversed(acks)) + b"\x03"
    # the header (sequence 0) and the acks are raw; only the message is zero-coded
    assert wire == header(0x90, 0) + b"\x01\x00\x05" + tail
    got = codec.decode(wire, template, True, 8192)
    assert got.acks == acks
    assert got == ping._replace(flags=0x90)


def test_acks_are_stripped_before_expansion(codec: ModuleType, template: Template) -> None:
    """A hand-made zero-coded packet whose ack bytes hold 00 and 00 00 sequences."""
    body = codec.zero_encode(b"\x01\x09" + (5).to_bytes(4, "little"))  # StartPingCheck
    acks_wire = bytes.fromhex("000001000000ff0000000000") + b"\x03"
    packet = header(0x90, 0) + body + acks_wire
    msg = codec.decode(packet, template, True, 8192)
    assert msg.name == "StartPingCheck"
    assert msg.PingID[0].PingID == 9
    assert msg.PingID[0].OldestUnacked == 5
    assert msg.acks == (0, 0xFF00, 0x100)  # acks[0] nearest the count byte
    assert (msg.excess, msg.truncated) == (b"", False)
    assert codec.peek(packet, template).body_end == len(packet) - 13
    assert codec.encode(msg, template, "flag") == packet


def test_extra_header_bytes_are_inside_the_coded_region(
    codec: ModuleType, template: Template
) -> None:
    """Extra bytes follow the message number and are zero-coded with it (spec §9.3)."""
    packet = header(0x80, 0, extra=3) + b"\x01\x00\x02\x05\x07\x00\x04"
    msg = codec.decode(packet, template, True, 8192)
    assert msg.extra == b"\x00\x00\x05"
    assert (msg.PingID[0].PingID, msg.PingID[0].OldestUnacked) == (7, 0)
    assert codec.encode(msg, template, "flag") == packet


@pytest.mark.parametrize("huge", [2**63, 2**100])
def test_huge_max_size(codec: ModuleType, template: Template, huge: int) -> None:
    """Any non-negative int is a valid cap (regression: lludp_bugs.md BUG 1)."""
    assert codec.zero_decode(b"\x01\x00\x03", huge) == b"\x01\x00\x00\x00"
    ping = header(0x80) + b"\x01\x07\x00\x04"
    assert codec.decode(ping, template, True, huge).PingID[0] == (7, 0)


# --- long inputs: the compiled twin's block-at-a-time expander ----------------------------------


def reference_expand(data: bytes, max_size: int) -> bytes | int:
    """LL's expansion, one byte at a time (spec §1.2): the bytes, or the offset past the cap."""
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i]:
            if len(out) >= max_size:
                return i
            out.append(data[i])
            i += 1
            continue
        j = i + 1
        while j < len(data) and data[j] == 0:
            j += 1
        count = 256 * (j - i - 1) + (data[j] if j < len(data) else 1)
        lone = j == len(data) and j - i == 1  # a lone trailing 00 is checked as a literal
        if count > max_size - len(out) - (0 if lone else 1):  # the viewer's early check
            return i
        out += bytes(count)
        i = j + 1
    return bytes(out)


token = st.one_of(
    st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"\x00", b"\x07")),  # literals
    st.integers(1, 16).map(lambda c: bytes((0, c))),  # the common short runs
    st.one_of(st.sampled_from([16, 17, 31, 32, 33, 34]), st.integers(17, 255)).map(
        lambda c: bytes((0, c))
    ),  # longer runs, and those around the expander's 16- and 32-byte stores
    st.integers(0, 255).map(lambda c: bytes((0, 0, c))),  # the wrap form (and 00 00 00)
)
long_coded = st.builds(
    lambda head, tail, lone: b"".join(head) + b"".join(tail) + (b"\x00" if lone else b""),
    st.lists(token, min_size=1, max_size=60),
    st.lists(token, max_size=4),
    st.booleans(),
)


def check_caps(codec: ModuleType, data: bytes, caps: Callable[[bytes], set[int]]) -> None:
    """``data`` expands as the byte loop says, uncapped and at each of ``caps(full)``
    (negative ones skipped): the same bytes, or a DecodeError at the same offset."""
    full = reference_expand(data, 1 << 30)
    assert isinstance(full, bytes)
    assert codec.zero_decode(data, 1 << 30) == full
    for cap in caps(full):
        if cap < 0:
            continue
        expected = reference_expand(data, cap)
        if isinstance(expected, bytes):
            assert codec.zero_decode(data, cap) == expected
        else:
            with pytest.raises(DecodeError) as info:
                codec.zero_decode(data, cap)
            assert info.value.offset == expected


@SETTINGS
@given(data=long_coded, slack=st.integers(-300, 300))
def test_long_inputs_match_the_byte_loop(codec: ModuleType, data: bytes, slack: int) -> None:
    """Inputs of 80+ bytes with every token kind, caps on both sides of the output size."""
    check_caps(codec, data, lambda full: {len(full) + slack, len(full), len(full) - 1, 8192, 8193})


@pytest.mark.parametrize("pair", [bytes((0, c)) for c in (1, 16, 17, 32, 33, 255)])
@pytest.mark.parametrize("literals", [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 300])
def test_long_regular_inputs(codec: ModuleType, pair: bytes, literals: int) -> None:
    """Literal runs and zero runs around the 16/32-byte stores and 64-byte blocks, big caps."""
    data = (bytes(range(1, 256)) * 2)[:literals] + pair
    expected = (bytes(range(1, 256)) * 2)[:literals] + bytes(pair[1])
    data, expected = data * 300, expected * 300
    assert codec.zero_decode(data, 1 << 24) == expected
    assert codec.zero_decode(data, len(expected) + 1) == expected
    with pytest.raises(DecodeError) as info:
        codec.zero_decode(data, len(expected))  # its last run ends at the cap
    assert info.value.offset == reference_expand(data, len(expected))


def dense_coded(rng: random.Random, size: int) -> bytes:
    """Object-update-like zero-coding: short literal runs, a pair every few bytes,
    mostly small counts, some long ones and the odd wrap form."""
    out = bytearray()
    while len(out) < size:
        out += bytes(rng.randint(1, 255) for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4, 9))))
        roll = rng.random()
        if roll < 0.02:
            out += bytes((0, 0, rng.randint(0, 255)))
        elif roll < 0.12:
            out += bytes((0, rng.randint(32, 255)))
        else:
            out += bytes((0, rng.randint(1, 16)))
    return bytes(out[:size])


def test_dense_inputs_match_the_byte_loop(codec: ModuleType) -> None:
    """Seeded dense inputs (the compiled twin's 64-byte bulk walk), with
    caps that cut the output anywhere, cut a block, or leave exactly no room."""
    rng = random.Random(2026)
    for _ in range(150):
        data = dense_coded(rng, rng.randint(65, 1500))
        check_caps(
            codec,
            data,
            lambda full: {len(full), len(full) - 1, rng.randint(0, len(full)), len(full) - 64},
        )


def test_growing_result(codec: ModuleType) -> None:
    """Outputs far bigger than the input (the compiled twin grows its result as it goes)."""
    data = b"\x09" * 100 + b"\x00\xff" * 2000 + b"\x09" * 100
    expected = b"\x09" * 100 + bytes(255 * 2000) + b"\x09" * 100
    for cap in (len(expected), 1 << 24):
        assert codec.zero_decode(data, cap) == expected
    with pytest.raises(DecodeError) as info:
        codec.zero_decode(data, len(expected) - 1)
    assert info.value.offset == len(data) - 1  # the last literal, which does not fit


def test_long_packet_body(codec: ModuleType, template: Template) -> None:
    """A zero-coded packet whose body takes the long-input path, with a wrap in the middle."""
    data = bytes(range(1, 200)) * 2
    msg = build(
        "ImprovedInstantMessage",
        flags=0x80,
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        MessageBlock={
            "FromGroup": False, "ToAgentID": AGENT, "ParentEstateID": 0,
            "RegionID": uuid.UUID(int=0), "Position": (0.0, 0.0, 0.0), "Offline": 0, "Dialog": 0,
            "ID": SESSION, "Timestamp": 0, "FromAgentName": b"x\x00",
            "Message": data + bytes(300) + data, "BinaryBucket": b"",
        },
        EstateBlock={"EstateID": 7},
        MetaData=[{"Data": bytes(5) + data}],
    )  # fmt: skip
    packet = codec.encode(msg, template)
    assert b"\x00\xff\x00\x2d" in packet  # the 300 zeros: runs cut at 255
    assert codec.decode(packet, template, False, 8192) == msg


@pytest.mark.parametrize(
    ("data", "fits"),
    [
        (bytes(8181) + b"\x01", True),  # the packet ends with a literal at byte 8,192
        (bytes(8182), False),  # a zero run ending at byte 8,192: the viewer refuses it
        (bytes(8181), True),  # ... but not one ending a byte earlier
        (bytes(8182) + b"\x01", False),  # 8,193 bytes
    ],
)
def test_decode_caps_the_packet_as_the_viewer_buffer_holds_it(
    codec: ModuleType, template: Template, data: bytes, fits: bool
) -> None:
    """The viewer expands a packet, its 6 header bytes included, into its
    8,192-byte buffer (``zeroCodeExpand``): ``max_size`` caps that whole."""
    msg = build("LayerData", flags=0x80, LayerID={"Type": 1}, LayerData={"Data": data})
    wire = codec.encode(msg, template, "flag")
    assert 6 + len(codec.zero_decode(wire[6:], 1 << 20)) == 6 + 4 + len(data)
    if fits:
        assert codec.decode(wire, template, True, 8192).LayerData[0].Data == data
    else:
        with pytest.raises(DecodeError, match="8192-byte limit") as info:
            codec.decode(wire, template, True, 8192)
        assert 6 <= info.value.offset < len(wire)
        assert codec.decode(wire, template, True, 8193 + 1).LayerData[0].Data == data
