"""Hypothesis: round trips, chunking independence, and twin parity."""

from __future__ import annotations

import itertools
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec import ywindow
from gamecodec.errors import DecodeError
from gamecodec.ywindow import Keyword, Message

SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

keywords = st.text(st.characters(min_codepoint=1, max_codepoint=127), max_size=20).map(Keyword)
values = st.one_of(
    st.integers(-(1 << 31), (1 << 31) - 1),
    keywords,
    st.text(max_size=8) | st.text(min_size=60, max_size=70),
    st.binary(max_size=8) | st.binary(min_size=250, max_size=300),
)
messages = st.builds(
    Message, st.sampled_from("cvr"), st.lists(values, max_size=5).map(tuple)
) | st.builds(
    lambda k, m, a: Message(k, (m, *a)),
    st.sampled_from("cv"),
    keywords,
    st.lists(values, max_size=4),
)

# Word-shaped garbage reaches past the first byte: a type letter (known,
# uppercase or unknown), a length byte (or four), and random payload bytes.
letters = st.sampled_from(b"cvrkisbCVRKISBxA\x00")
pieces = st.one_of(
    st.builds(
        lambda t, n: bytes((t, 4)) + n.to_bytes(4, signed=True),
        st.sampled_from(b"cvr"),
        st.integers(-3, 6),
    ),
    st.builds(lambda t, p: bytes((t, len(p))) + p, letters, st.binary(max_size=12)),
    st.builds(lambda t, p: bytes((t,)) + len(p).to_bytes(4) + p, letters, st.binary(max_size=12)),
    st.builds(
        lambda cps: b"s" + bytes((4 * len(cps),)) + b"".join(c.to_bytes(4) for c in cps),
        st.lists(st.sampled_from([0x41, 0xE9, 0xD800, 0xDFFF, 0x10FFFF, 0x110000]), max_size=3),
    ),
    st.binary(max_size=3),
)
value_words = values.map(ywindow.encode_word) | pieces
message_like = st.builds(
    lambda t, n, body: bytes((t, 4)) + (len(body) + n).to_bytes(4, signed=True) + b"".join(body),
    st.sampled_from(b"cvr"),
    st.sampled_from([0, 0, 0, -1, 1]),
    st.lists(values.map(ywindow.encode_word), max_size=3),
)


def _mutate(data: bytes, at: int, byte: int) -> bytes:
    if not data or byte < 0:
        return data
    at %= len(data)
    return data[:at] + bytes((byte,)) + data[at + 1 :]


streams = st.builds(
    lambda head, odd, tail, at, byte: _mutate(head + odd + tail, at, byte),
    st.lists(message_like, max_size=4).map(b"".join),
    st.just(b"") | pieces | st.lists(value_words, max_size=3).map(b"".join),
    st.lists(message_like, max_size=3).map(b"".join),
    st.integers(0, 500),
    st.integers(-256, 255),
)


def outcome(codec: ModuleType, data: bytes, **kwargs: Any) -> tuple[str, Any]:
    """The messages, or the error's type, message, offset and partial."""
    try:
        return ("ok", codec.decode(data, **kwargs))
    except DecodeError as exc:
        return ("error", (type(exc), str(exc), exc.offset, exc.partial))


def chunked(codec: ModuleType, data: bytes, cuts: list[int], **kwargs: Any) -> tuple[str, Any]:
    """Feed ``data`` cut at ``cuts``: all messages, then the error or close()."""
    decoder = codec.Decoder(**kwargs)
    got: list[Message] = []
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    try:
        for a, b in itertools.pairwise(bounds):
            got += decoder.feed(data[a:b])
        decoder.close()
    except DecodeError as exc:
        return ("error", (type(exc), str(exc), exc.offset, got + exc.partial))
    return ("ok", got)


@SETTINGS
@given(msgs=st.lists(messages, max_size=6))
def test_round_trip(codec: ModuleType, msgs: list[Message]) -> None:
    wire = b"".join(ywindow.encode(m) for m in msgs)
    got = codec.decode(wire)
    assert got == msgs
    for a, b in zip(got, msgs, strict=True):
        assert [type(w) for w in a.words] == [type(w) for w in b.words]
    assert b"".join(ywindow.encode(m) for m in got) == wire


@SETTINGS
@given(msgs=st.lists(messages, max_size=6), cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_any_chunking_gives_the_same_messages(
    codec: ModuleType, msgs: list[Message], cuts: list[int]
) -> None:
    wire = b"".join(ywindow.encode(m) for m in msgs)
    assert chunked(codec, wire, cuts) == ("ok", msgs)


@SETTINGS
@given(
    data=streams,
    cuts=st.lists(st.integers(0, 200), max_size=8),
    cap=st.sampled_from([6, 20, 1 << 24]),
)
def test_chunking_gives_the_same_error(
    codec: ModuleType, data: bytes, cuts: list[int], cap: int
) -> None:
    whole = outcome(codec, data, max_message=cap)
    assert chunked(codec, data, cuts, max_message=cap) == whole
    assert chunked(codec, data, list(range(len(data))), max_message=cap) == whole


@SETTINGS
@given(data=st.binary(max_size=60))
def test_random_bytes_agree(py_codec: ModuleType, c_codec: ModuleType, data: bytes) -> None:
    assert outcome(py_codec, data) == outcome(c_codec, data)


@SETTINGS
@given(data=streams, cap=st.sampled_from([6, 9, 20, 64, 1 << 24]))
def test_word_shaped_bytes_agree(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes, cap: int
) -> None:
    a = outcome(py_codec, data, max_message=cap)
    assert a == outcome(c_codec, data, max_message=cap)


@SETTINGS
@given(msgs=st.lists(messages, max_size=5), cuts=st.lists(st.integers(0, 3000), max_size=5))
def test_twins_agree_on_streams(
    py_codec: ModuleType, c_codec: ModuleType, msgs: list[Message], cuts: list[int]
) -> None:
    wire = b"".join(ywindow.encode(m) for m in msgs)
    assert chunked(py_codec, wire, cuts) == chunked(c_codec, wire, cuts)
