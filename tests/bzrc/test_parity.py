"""Hypothesis: the compiled and pure parsers agree on everything."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamecodec import bzrc
from gamecodec.errors import DecodeError

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-:é", min_size=1, max_size=8)
NUM = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 0.0, -0.0, 1e16, 5e-15, 0.1]),
)
ACK = st.builds(bzrc.Ack, NUM, WORD, st.lists(WORD, max_size=3).map(tuple))
PAIRS = st.lists(st.tuples(NUM, NUM), min_size=1, max_size=5).map(tuple)
ITEM = st.one_of(
    st.builds(bzrc.Team, WORD, st.integers(0, 99)),
    st.builds(bzrc.Obstacle, PAIRS),
    st.builds(bzrc.Base, WORD, PAIRS),
    st.builds(bzrc.Flag, WORD, WORD, NUM, NUM),
    st.builds(bzrc.Shot, NUM, NUM, NUM, NUM),
    st.builds(
        bzrc.MyTank,
        st.integers(0, 30),
        WORD,
        WORD,
        st.integers(0, 10),
        NUM,
        WORD,
        st.integers(-999999, 999999),
        st.integers(-999999, 999999),
        NUM,
        NUM,
        NUM,
        NUM,
    ),
    st.builds(bzrc.OtherTank, WORD, WORD, WORD, WORD, NUM, NUM, NUM),
    st.builds(bzrc.Constant, WORD, WORD),
    st.builds(bzrc.Score, WORD, WORD, NUM),
)
GRID = st.builds(
    lambda w, h, seed: (np.random.default_rng(seed).random((w, h)) < 0.5).astype(np.uint8),
    st.integers(0, 6),
    st.integers(0, 6),
    st.integers(0, 100),
)
COMMENT = st.text(alphabet="abc ()XYZ:", max_size=12).map(str.strip)
RESPONSE = st.one_of(
    st.builds(bzrc.Ok, st.none() | ACK),
    st.builds(bzrc.Fail, st.none() | ACK, COMMENT, st.just(False)),
    st.builds(bzrc.Listing, ACK, st.lists(ITEM, max_size=4)),
    st.builds(bzrc.Timer, ACK, NUM, NUM),
    st.builds(bzrc.OccGrid, ACK, st.integers(-400, 400), st.integers(-400, 400), GRID),
    st.builds(bzrc.Error, COMMENT.filter(bool)),
    st.just(bzrc.Greeting("bzrobots", 1)),
)


def run(codec: ModuleType, data: bytes, chunks: list[int], **kw: int) -> Any:
    parser = codec.Decoder(**kw)
    out: list[Any] = []
    pos = 0
    try:
        for size in chunks or [len(data)]:
            out += parser.feed(data[pos : pos + size])
            pos += size
        out += parser.feed(data[pos:])
        out += parser.close()
    except DecodeError as exc:
        # the state left behind too (the pure twin used to move past the bad line)
        state = (parser.offset, parser.idle)
        return ("error", type(exc).__name__, exc.offset, repr(exc.partial), state)
    except Exception as exc:
        return ("BUG", repr(exc))
    return [repr(r) for r in out]


@settings(max_examples=250, deadline=None)
@given(
    st.lists(RESPONSE, max_size=6),
    st.sampled_from(["bzrflag", "cpp"]),
    st.lists(st.integers(1, 40), max_size=8),
)
def test_encode_parse_parity(
    py_codec: ModuleType,
    c_codec: ModuleType,
    responses: list[Any],
    dialect: str,
    chunks: list[int],
) -> None:
    data = b"".join(bzrc.encode_response(r, dialect=dialect) for r in responses)  # type: ignore[arg-type]
    py = run(py_codec, data, chunks)
    assert py == run(c_codec, data, chunks)
    assert not py or py[0] not in ("error", "BUG")
    parsed = py_codec.Decoder().feed(data)
    assert len(parsed) == len(responses)
    assert [type(p) for p in parsed] == [type(r) for r in responses]
    if dialect == "bzrflag":  # idempotent: bytes -> values -> the same bytes
        assert b"".join(bzrc.encode_response(p) for p in parsed) == data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.lists(st.integers(1, 30), max_size=6))
def test_garbage(py_codec: ModuleType, c_codec: ModuleType, data: bytes, chunks: list[int]) -> None:
    py = run(py_codec, data, chunks, max_line=64)
    assert not py or py[0] != "BUG"
    assert py == run(c_codec, data, chunks, max_line=64)


@pytest.mark.parametrize("data", [b"ok\nbogus\nok\n", b"ok\nack 1 teams\nbegin\nteam red x\nend\n"])
def test_a_broken_parser_stays_at_the_bad_line(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes
) -> None:
    for codec in (py_codec, c_codec):
        parser = codec.Decoder()
        with pytest.raises(DecodeError):
            parser.feed(data)
        start = data.index(b"bogus") if b"bogus" in data else data.index(b"team red")
        assert (parser.offset, parser.idle) == (start, False)


LINES = st.sampled_from(
    [
        b"ack 1 teams",
        b"ack 0.5 speed 0",
        b"begin",
        b"end",
        b"ok",
        b"fail",
        b"fail x y",
        b"fail Invalid parameter(s)",
        b"team red 10",
        b"shot 1 2 3 4",
        b"timer 1 2",
        b"at 0,0",
        b"size 2x2",
        b"01",
        b"10",
        b"0x",
        b"error e",
        b"",
        b" ",
        b":help",
        b":speed [tankid] [speed]",
        b"        fail",
        b"            ok [comment]",
        b"\t>>> args",
        b"bzrobots 1",
        b"mytank 0 a b 1 0 - 1 2 3 4 5 6",
        b"constant a b",
        b"obstacle 1 2 3 4",
        b"\r",
        b"end\r",
        b"score a b 1e5",
        b"flag a none 1 2",
        b"othertank a b c d 1 2 3",
        b"ack",
        b"nan",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=14), st.lists(st.integers(1, 12), max_size=10))
def test_line_soup(
    py_codec: ModuleType, c_codec: ModuleType, lines: list[bytes], chunks: list[int]
) -> None:
    data = b"\n".join(lines) + b"\n"
    py = run(py_codec, data, chunks, max_line=40)
    assert not py or py[0] != "BUG"
    assert py == run(c_codec, data, chunks, max_line=40)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=30))
def test_number_parity(py_codec: ModuleType, c_codec: ModuleType, token: bytes) -> None:
    assert repr(py_codec.parse_number(token)) == repr(c_codec.parse_number(token))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(), st.integers(-(10**18) + 1, 10**18 - 1)))
def test_number_text_parity(py_codec: ModuleType, c_codec: ModuleType, value: float) -> None:
    for text in (
        repr(value),
        bzrc.py2_str(float(value)),
        bzrc.c_f(float(value)),
    ):
        token = text.encode()
        assert repr(py_codec.parse_number(token)) == repr(c_codec.parse_number(token))
