"""Words and messages: every type, and every rule of decision 1, on both twins.

Each bad input sits behind a valid 10-byte reply, so the offsets checked are
absolute stream offsets, not offsets within a message.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec import ywindow
from gamecodec.errors import BadDataLengthError, DecodeError, EncodeError, TruncatedError
from gamecodec.ywindow import Keyword, Message

OK = bytes.fromhex("72 04 00 00 00 01 6b 02 6f 6b")  # r 1, k ok
OK_MSG = Message("r", (Keyword("ok"),))
P = len(OK)


def hdr(letter: str, count: int) -> bytes:
    return letter.encode() + b"\x04" + count.to_bytes(4, signed=True)


def wide(letter: str, payload: bytes) -> bytes:
    return letter.encode() + len(payload).to_bytes(4) + payload


# -- every type -------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "value"),
    [
        (b"k\x00", Keyword("")),
        (b"k\x03abc", Keyword("abc")),
        (b"i\x04\x80\x00\x00\x00", -(1 << 31)),
        (b"i\x04\x7f\xff\xff\xff", (1 << 31) - 1),
        (b"s\x00", ""),
        (b"s\x04\x00\x01\xf6\x00", "\U0001f600"),
        (b"s\x04\x00\x10\xff\xff", "\U0010ffff"),
        (b"b\x00", b""),
        (b"b\x03\x00\xff\x0a", b"\x00\xff\n"),
    ],
)
def test_lowercase_words(codec: ModuleType, word: bytes, value: object) -> None:
    (msg,) = codec.decode(hdr("r", 1) + word)
    assert msg.words == (value,)
    assert type(msg.words[0]) is type(value)
    assert ywindow.encode_word(value) == word  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("word", "value"),
    [
        (wide("K", b"ok"), Keyword("ok")),
        (wide("I", b"\xff\xff\xff\xfe"), -2),
        (wide("S", "hé".encode("utf-32-be")), "hé"),
        (wide("B", b"xyz"), b"xyz"),
    ],
)
def test_uppercase_words_are_accepted(codec: ModuleType, word: bytes, value: object) -> None:
    (msg,) = codec.decode(hdr("r", 1) + word)
    assert msg.words == (value,)
    assert type(msg.words[0]) is type(value)


@pytest.mark.parametrize("letter", ["C", "V", "R"])
def test_uppercase_headers_are_accepted(codec: ModuleType, letter: str) -> None:
    wire = wide(letter, (1).to_bytes(4)) + b"k\x02hi"
    assert codec.decode(wire) == [Message(letter.lower(), (Keyword("hi"),))]


def test_encoder_uses_uppercase_only_over_255_bytes(codec: ModuleType) -> None:
    assert ywindow.encode_word(b"x" * 255)[:2] == b"b\xff"
    assert ywindow.encode_word(b"x" * 256)[:5] == b"B\x00\x00\x01\x00"
    assert ywindow.encode_word("y" * 63)[:2] == b"s\xfc"
    assert ywindow.encode_word("y" * 64)[:5] == b"S\x00\x00\x01\x00"
    big = ywindow.reply(b"x" * 70000, "y" * 100)
    assert codec.decode(big) == [Message("r", (b"x" * 70000, "y" * 100))]


def test_buffer_types_encode_as_blobs(codec: ModuleType) -> None:
    wire = ywindow.reply(bytearray(b"ab"), memoryview(b"cd"))
    assert codec.decode(wire) == [Message("r", (b"ab", b"cd"))]


def test_empty_messages(codec: ModuleType) -> None:
    assert codec.decode(hdr("r", 0) + hdr("v", 0)) == [Message("r", ()), Message("v", ())]
    assert ywindow.reply() == hdr("r", 0)


def test_decode_accepts_bytearray_and_memoryview(codec: ModuleType) -> None:
    assert codec.decode(bytearray(OK)) == [OK_MSG]
    assert codec.Decoder().feed(memoryview(OK)) == [OK_MSG]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1 << 31, "outside int32"),
        (-(1 << 31) - 1, "outside int32"),
        (True, "bool"),
        (1.5, "float has no word type"),
        (None, "NoneType has no word type"),
        (Keyword("é"), "not ASCII"),
        (Keyword("a\0b"), "not ASCII"),
        (Keyword("k" * 256), "more than 255"),
        ("\ud800", "surrogate"),
    ],
)
def test_encode_errors(value: object, text: str) -> None:
    with pytest.raises(EncodeError, match=text):
        ywindow.encode_word(value)  # type: ignore[arg-type]


def test_encode_message_errors() -> None:
    with pytest.raises(EncodeError, match="kind"):
        ywindow.encode("k", [])
    with pytest.raises(EncodeError, match="method must be a str"):
        ywindow.call(5)  # type: ignore[arg-type]
    buf = bytearray(b"??")
    assert ywindow.encode_into(OK_MSG, buf, 1) == P
    assert buf == b"?" + OK


# -- decision 1: every rule, with its offset ---------------------------------

BAD = [
    # (id, bytes after OK, error type, offset after OK, text)
    ("unknown type as header", b"x", DecodeError, 0, "unknown word type 'x'"),
    ("unknown type in body", hdr("c", 1) + b"\x00", DecodeError, 6, "unknown word type 0x00"),
    ("unknown uppercase type", hdr("c", 1) + b"X", DecodeError, 6, "unknown word type 'X'"),
    ("value where header expected", b"i\x04\x00\x00\x00\x01", DecodeError, 0, "header was"),
    ("header inside a message", hdr("c", 2) + b"k\x01a" + hdr("r", 0), DecodeError, 9, "inside"),
    ("i payload of 3", hdr("r", 1) + b"i\x03\x00\x00\x00", BadDataLengthError, 7, "not 4"),
    ("i payload of 5", hdr("r", 1) + b"i\x05", BadDataLengthError, 7, "of 5 bytes, not 4"),
    ("I payload of 8", hdr("r", 1) + wide("I", bytes(8)), BadDataLengthError, 7, "not 4"),
    ("c payload of 2", b"c\x02\x00\x01", BadDataLengthError, 1, "'c' payload of 2"),
    ("v payload of 0", b"v\x00", BadDataLengthError, 1, "'v' payload of 0"),
    ("R payload of 5", wide("R", bytes(5)), BadDataLengthError, 1, "'R' payload of 5"),
    ("s length 6", hdr("r", 1) + b"s\x06" + bytes(6), BadDataLengthError, 7, "multiple of 4"),
    ("S length 5", hdr("r", 1) + wide("S", bytes(5)), BadDataLengthError, 7, "multiple of 4"),
    (
        "surrogate code point",
        hdr("r", 1) + b"s\x08\x00\x00\x00a\x00\x00\xdc\x00",
        DecodeError,
        12,
        "0xdc00 is a surrogate",
    ),
    (
        "code point above U+10FFFF",
        hdr("r", 1) + b"s\x04\x00\x11\x00\x00",
        DecodeError,
        8,
        "0x110000 is above",
    ),
    ("code point 0xffffffff", hdr("r", 1) + b"s\x04\xff\xff\xff\xff", DecodeError, 8, "above"),
    ("negative count", hdr("c", -1), DecodeError, 2, "announces -1 words"),
    ("negative count, wide", wide("V", (-5).to_bytes(4, signed=True)), DecodeError, 5, "-5"),
    ("keyword byte 0x80", hdr("c", 1) + b"k\x03ab\x80", DecodeError, 10, "0x80 is not ASCII"),
    ("keyword NUL", hdr("c", 1) + b"k\x02\x00a", DecodeError, 8, "0x00 is not ASCII"),
]


@pytest.mark.parametrize(
    ("wire", "exc", "at", "text"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_decision_1_rules(
    codec: ModuleType, wire: bytes, exc: type[DecodeError], at: int, text: str
) -> None:
    with pytest.raises(exc, match=text) as info:
        codec.decode(OK + wire)
    assert type(info.value) is exc
    assert info.value.offset == P + at
    assert info.value.protocol == "ywindow"
    assert info.value.partial == [OK_MSG]
    assert str(info.value).endswith(f"(at byte {P + at})")


@pytest.mark.parametrize(
    ("wire", "exc", "at", "text"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_decision_1_rules_streamed(
    codec: ModuleType, wire: bytes, exc: type[DecodeError], at: int, text: str
) -> None:
    """Fed one byte at a time, the error is the same and comes as soon as
    the offending bytes are in."""
    decoder = codec.Decoder()
    stream = OK + wire
    got: list[Message] = []
    for i in range(len(stream)):
        try:
            got += decoder.feed(stream[i : i + 1])
        except DecodeError as error:
            assert type(error) is exc
            assert error.offset == P + at
            assert text in str(error)
            break
    else:
        pytest.fail("no error")
    assert got == [OK_MSG]
    with pytest.raises(exc) as again:
        decoder.feed(b"r\x04\x00\x00\x00\x00")
    assert again.value.offset == P + at


def test_length_over_cap_fails_before_the_payload(codec: ModuleType) -> None:
    decoder = codec.Decoder(max_message=64)
    assert decoder.feed(OK) == [OK_MSG]
    with pytest.raises(BadDataLengthError, match="over max_message 64") as info:
        decoder.feed(hdr("r", 1) + b"B\xff\xff\xff\xff")
    assert info.value.offset == P + 7
    assert decoder.buffered <= 64


def test_lowercase_length_over_cap(codec: ModuleType) -> None:
    with pytest.raises(BadDataLengthError, match="makes a message of 68 bytes") as info:
        codec.decode(OK + hdr("r", 2) + b"b\x00b\x3a", max_message=67)
    assert info.value.offset == P + 9
    assert codec.decode(hdr("r", 2) + b"b\x00b\x3a" + bytes(58), max_message=68)


def test_count_over_cap(codec: ModuleType) -> None:
    with pytest.raises(BadDataLengthError, match="announces 1000 words") as info:
        codec.decode(OK + hdr("c", 1000), max_message=1000)
    assert info.value.offset == P + 2
    codec.Decoder(max_message=2006).feed(hdr("c", 1000))  # 1000 empty words fit


def test_truncated_at_close(codec: ModuleType) -> None:
    for cut in (1, 5, 6, 7, 9):
        decoder = codec.Decoder()
        assert decoder.feed(OK + OK[:cut]) == [OK_MSG]
        assert not decoder.at_boundary
        with pytest.raises(TruncatedError) as info:
            decoder.close()
        assert info.value.offset == 2 * P - (P - cut)
        with pytest.raises(TruncatedError):
            decoder.feed(b"")
    with pytest.raises(TruncatedError):
        codec.decode(OK[:-1])


def test_max_message_and_offset_arguments(codec: ModuleType) -> None:
    for bad in (5, 0, -1, 6.0, None):
        with pytest.raises(ValueError, match="max_message"):
            codec.Decoder(max_message=bad)
    for bad in (-1, 2**62 + 1, 2**63):  # past a C long long was OverflowError on one twin
        with pytest.raises(ValueError, match="offset"):
            codec.Decoder(offset=bad)
    for huge in (2**62, 2**63, 2**100):  # a cap past any buffer is just no cap
        assert codec.Decoder(max_message=huge, offset=2**62).feed(OK) != []
    decoder = codec.Decoder(offset=1000)
    with pytest.raises(DecodeError) as info:
        decoder.feed(OK + b"?")
    assert info.value.offset == 1000 + P


# -- streaming -----------------------------------------------------------------


def test_one_byte_at_a_time(codec: ModuleType) -> None:
    stream = ywindow.call("goto", 10, 10) + ywindow.notify("e", "x" * 80, b"y" * 300) + OK
    decoder = codec.Decoder()
    got = []
    for i in range(len(stream)):
        got += decoder.feed(stream[i : i + 1])
        assert decoder.offset == i + 1
        assert decoder.buffered < 325  # the longest word: S, 320 bytes
    assert got == codec.decode(stream)
    assert len(got) == 3
    assert decoder.at_boundary
    decoder.close()


def test_buffer_never_exceeds_the_cap(codec: ModuleType) -> None:
    decoder = codec.Decoder(max_message=300)
    stream = ywindow.reply(*([b"z" * 40] * 6))
    for i in range(0, len(stream), 7):
        decoder.feed(stream[i : i + 7])
        assert decoder.buffered <= 300
    assert decoder.at_boundary


def test_keyword_cache_keeps_values_distinct(codec: ModuleType) -> None:
    names = [f"m{i}" for i in range(600)] + ["m1", "", "m599"]
    stream = b"".join(ywindow.notify(n) for n in names)
    assert [m.method for m in codec.decode(stream)] == names
