"""Parser behaviour (decision 1 of the spec) and malformed input, on both twins."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from gamecodec.bzrc import (
    Ack,
    Error,
    Fail,
    Greeting,
    Help,
    Listing,
    MyTank,
    OccGrid,
    Ok,
    Shot,
    Team,
    Timer,
)
from gamecodec.errors import DecodeError, TruncatedError
from tests.bzrc import vectors


def feed_all(codec: ModuleType, data: bytes, **kwargs: int) -> list[object]:
    parser = codec.Decoder(**kwargs)
    out = parser.feed(data)
    return out + parser.close()


def test_vectors(codec: ModuleType) -> None:
    tanks = feed_all(codec, vectors.MYTANKS)[0]
    assert isinstance(tanks, Listing)
    assert tanks.items[1] == MyTank(
        2, "red2", "dead", 10, 0, "-", -999999, -999999, 2.64471006072, -0.0, 0.0, 0
    )
    assert feed_all(codec, vectors.TIMER) == [
        Timer(Ack(1.1092338562, "timer", ()), 1.580439, 300000)
    ]
    assert feed_all(codec, vectors.SPEED_BAD) == [
        Fail(Ack(2.78818297386, "speed", ("0",)), "Invalid parameter(s)", True)
    ]
    assert feed_all(codec, vectors.UNKNOWN) == [Fail(None, "invalid command", False)]
    grid = feed_all(codec, vectors.OCCGRID)[0]
    assert isinstance(grid, OccGrid) and (grid.x, grid.y) == (-400, -19)
    assert grid.grid.tolist() == [[0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]
    assert grid.grid.flags.writeable
    assert [t.ntanks for t in feed_all(codec, vectors.TEAMS)[0].items] == [10] * 4


def test_number_forms(codec: ModuleType) -> None:
    data = (
        b"ack 1 shots\nbegin\nshot 1e+16 -0.0 nan -inf\nshot 5.19573633741e-15 +2 .5 1E400\nend\n"
    )
    (listing,) = feed_all(codec, data)
    first, second = listing.items
    assert listing.ack == Ack(1, "shots", ()) and type(listing.ack.time) is int
    assert first.x == 1e16 and str(first.y) == "-0.0" and first.vx != first.vx
    assert first.vy == float("-inf")
    assert second == Shot(5.19573633741e-15, 2, 0.5, float("inf"))
    assert codec.parse_number(b"0x10") is None and codec.parse_number(b"1_0") is None
    assert codec.parse_number(b"1" * 19) is None and codec.parse_number(b"-" + b"9" * 18) == -(
        10**18 - 1
    )
    assert codec.parse_number(b"0.30000000000000004") == 0.30000000000000004
    assert codec.parse_number(b"Infinity") == float("inf")


def test_crlf_whitespace_and_blank_lines(codec: ModuleType) -> None:
    data = b"\r\n  \nack\t0.5  teams \r\n\nbegin\r\n team   red\t10 \r\n\x0b\nend\r\n"
    assert feed_all(codec, data) == [Listing(Ack(0.5, "teams", ()), [Team("red", 10)])]


def test_error_lines_anywhere(codec: ModuleType) -> None:
    data = (
        b"error agent expected\n"
        b"ack 1.000000 teams\n\nerror Connection Stalled.  RC stopped reading data!\n"
        b"begin\nteam red 2\n\nerror inside\nend\n"
        b"error Invalid request foo\n"
        b"ack 2.0 occgrid\nbegin\nat 0,0\nsize 2x2\n01\nerror mid grid\n10\nend\n"
    )
    out = feed_all(codec, data)
    assert out[0] == Error("agent expected")
    assert out[1] == Error("Connection Stalled.  RC stopped reading data!")
    assert out[2] == Error("inside")
    assert out[3] == Listing(Ack(1.0, "teams", ()), [Team("red", 2)])
    assert out[4] == Error("Invalid request foo")
    assert out[5] == Error("mid grid")
    assert out[6].grid.tolist() == [[0, 1], [1, 0]]


def test_double_fail_only_where_bzrflag_sends_it(codec: ModuleType) -> None:
    parser = codec.Decoder()
    out = parser.feed(b"ack 1 angvel 1\nfail Invalid parameter(s)\n")
    assert out == []  # the second fail may still come
    out = parser.feed(b"ack 2 shoot 0\nok\n")
    assert out == [
        Fail(Ack(1, "angvel", ("1",)), "Invalid parameter(s)", False),
        Ok(Ack(2, "shoot", ("0",))),
    ]
    parser.feed(b"ack 3 accelx 0\nfail Invalid parameter(s)\n")
    assert parser.flush() == [Fail(Ack(3, "accelx", ("0",)), "Invalid parameter(s)", False)]
    assert parser.feed(b"ack 1 speed 0 1\nfail Invalid parameter(s)\n\nfail\n") == [
        Fail(Ack(1, "speed", ("0", "1")), "Invalid parameter(s)", True)
    ]
    assert parser.feed(b"ack 1 shoot x\nfail Invalid parameter(s)\nfail\n") == [
        Fail(Ack(1, "shoot", ("x",)), "Invalid parameter(s)", False),
        Fail(None, "", False),
    ]


def test_help_output(codec: ModuleType) -> None:
    parser = codec.Decoder()
    assert parser.feed(b":angvel <id> <v>\n:bases\n") == []
    assert parser.feed(b"ack 1 timer\ntimer 2 3\n") == [
        Help((":angvel <id> <v>", ":bases")),
        Timer(Ack(1, "timer", ()), 2, 3),
    ]
    assert parser.feed(b":speed doc\n\n  more text\r\n") == []
    assert parser.flush() == [Help((":speed doc", "", "  more text\r"))]
    assert parser.feed(b'fail invalid command "nope"\n') == [
        Fail(None, 'invalid command "nope"', False)
    ]


def test_greeting_and_old_grid(codec: ModuleType) -> None:
    out = feed_all(codec, b"bzrobots 1\nack 1 occgrid\nat 1,2\nsize 1x3\n101\nend\nok\n")
    assert out[0] == Greeting("bzrobots", 1)
    assert out[1].grid.tolist() == [[1, 0, 1]] and (out[1].x, out[1].y) == (1, 2)
    assert out[2] == Ok(None)


def test_empty_and_zero_grids(codec: ModuleType) -> None:
    out = feed_all(codec, b"ack 1 occgrid\nbegin\nat 0,0\nsize 3x0\n\n\n\nend\n")
    assert out[0].grid.shape == (3, 0)
    out = feed_all(codec, b"ack 1 occgrid\nbegin\nat 0,0\nsize 0x5\nend\n")
    assert out[0].grid.shape == (0, 5)


def test_large_grid_in_chunks(codec: ModuleType) -> None:
    rng = np.random.default_rng(7)
    grid = (rng.random((300, 200)) < 0.3).astype(np.uint8)
    body = b"".join(bytes(row + 48) + b"\n" for row in grid)
    data = b"ack 9 occgrid\nbegin\nat -150,-100\nsize 300x200\n" + body + b"end\n"
    parser = codec.Decoder()
    out = []
    for i in range(0, len(data), 4093):
        out += parser.feed(data[i : i + 4093])
    assert len(out) == 1 and np.array_equal(out[0].grid, grid)
    crlf = data.replace(b"\n", b"\r\n")
    assert np.array_equal(feed_all(codec, crlf)[0].grid, grid)


MALFORMED = [
    # (stream, exception type, offset)
    (b"ack 1 teams\nbegin\nteam red 10\nack 2 teams\n", DecodeError, 30),  # unterminated
    (b"ack 1 teams\nbegin\nteam red 10\nok\n", DecodeError, 30),
    (b"ack 1 shots\nbegin\nshot 1 2 x 4\nend\n", DecodeError, 27),  # bad number
    (b"ack 1 shots\nbegin\nshot 1 2 0x1 4\nend\n", DecodeError, 27),
    (b"ack 1 shots\nbegin\nshot 1 2 1_0 4\nend\n", DecodeError, 27),
    (b"ack one teams\n", DecodeError, 4),
    (b"ack 1 teams\nbegin\nteam red ten\nend\n", DecodeError, 27),
    (b"ack 1 teams\nbegin\nteam red 10 extra\nend\n", DecodeError, 18),
    (b"ack 1 teams\nbegin\nwidget 1\nend\n", DecodeError, 18),  # unknown item
    (b"ack 1 mytanks\nbegin\nmytank 0 r a 10 0 -\nend\n", DecodeError, 20),
    (b"garbage here\n", DecodeError, 0),
    (b"ok\nack 1 teams\nteam red 1\n", DecodeError, 15),  # item without begin
    (b"ack 1 occgrid\nbegin\nat 0,0\nsize 2x3\n010\n0110\nend\n", DecodeError, 40),  # row len
    (b"ack 1 occgrid\nbegin\nat 0,0\nsize 2x3\n010\n0x0\nend\n", DecodeError, 41),  # bad cell
    (b"ack 1 occgrid\nbegin\nat 0,0\nsize 2x3\n010\nend\n", DecodeError, 40),  # too few rows
    (b"ack 1 occgrid\nbegin\nat 0,0\nsize 2x3\n010\n011\n111\n", DecodeError, 44),  # too many
    (b"ack 1 occgrid\nbegin\nat 0;0\n", DecodeError, 23),
    (b"ack 1 occgrid\nbegin\nat 0,0\nsize 3\n", DecodeError, 32),
    (b"ack 1 occgrid\nbegin\nat 0,0\nsize 99999x99999\n", DecodeError, 32),
    (b"ack 1 occgrid\nbegin\nat 0,0\nwidth 3\n", DecodeError, 27),
    (b"ack 1 timer\ntimer 1\n", DecodeError, 12),
    (b"bzrobots one\n", DecodeError, 9),
    (b"ack 1 teams\nbegin\n" + b"x" * 200, DecodeError, 18),  # line over the cap
]


@pytest.mark.parametrize(("data", "exc", "offset"), MALFORMED)
def test_malformed(codec: ModuleType, data: bytes, exc: type, offset: int) -> None:
    parser = codec.Decoder(max_line=100)
    with pytest.raises(exc) as info:
        parser.feed(data)
        parser.close()
    assert info.value.offset == offset
    assert info.value.protocol == "bzrc"
    assert str(info.value).endswith(f"(at byte {offset})")
    with pytest.raises(exc):  # the parser stays broken
        parser.feed(b"ok\n")


def test_malformed_byte_by_byte_same_offset(codec: ModuleType) -> None:
    for data, exc, offset in MALFORMED:
        parser = codec.Decoder(max_line=100)
        with pytest.raises(exc) as info:
            for i in range(len(data)):
                parser.feed(data[i : i + 1])
            parser.close()
        assert info.value.offset == offset, data


def test_partial_results_on_error(codec: ModuleType) -> None:
    parser = codec.Decoder()
    with pytest.raises(DecodeError) as info:
        parser.feed(b"ack 1 shoot 0\nok\nnonsense\n")
    assert info.value.partial == [Ok(Ack(1, "shoot", ("0",)))]


def test_truncated_at_close(codec: ModuleType) -> None:
    for data in (b"ack 1 teams\nbegin\nteam red 1\n", b"ok", b"ack 1 shoot 0\n"):
        parser = codec.Decoder()
        parser.feed(data)
        with pytest.raises(TruncatedError) as info:
            parser.close()
        assert info.value.offset == len(data)


def test_line_cap_without_newline(codec: ModuleType) -> None:
    parser = codec.Decoder(max_line=1000)
    parser.feed(b"ok\n" + b"1" * 1000)
    with pytest.raises(DecodeError) as info:
        parser.feed(b"1")
    assert info.value.offset == 3
    parser = codec.Decoder(max_line=10)
    assert parser.feed(b"ack 1.5 ab\nok\n") == [Ok(Ack(1.5, "ab", ()))]


def test_bad_arguments(codec: ModuleType) -> None:
    with pytest.raises(ValueError):
        codec.Decoder(max_line=0)
    assert codec.Decoder().offset == 0
    parser = codec.Decoder()
    parser.feed(b"ok\nfa")
    assert parser.offset == 3 and not parser.idle
    parser.feed(bytearray(b"il\n"))
    assert parser.idle
    assert parser.feed(memoryview(b"ok\n")) == [Ok(None)]


def test_records_are_the_model_classes(codec: ModuleType, impl: str) -> None:
    if impl == "c":
        assert codec._uses_fast_tuples()
    tanks = feed_all(codec, vectors.MYTANKS)[0].items
    assert all(type(t) is MyTank for t in tanks)
    assert hash(tanks[0]) == hash(tuple(tanks[0]))
    assert tanks[0]._asdict()["callsign"] == "red0"
