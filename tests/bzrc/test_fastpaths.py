"""The compiled twin's fast paths against the pure twin (hypothesis parity).

The compiled parser converts a ``mytank`` line in one pass (whitespace runs
skipped 8 bytes at a time, numbers scanned in place, words served from a
per-parser cache) and an ``occgrid`` body in one call (an AVX2 kernel for
rows of 32 cells or more, with an overlapping last step when H is not a
multiple of 32). These tests build inputs aimed at those paths and their
edges and require the same results, or the same exception and offset, from
both twins.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gamecodec.bzrc import MyTank
from tests.bzrc.test_parity import run

SEP = st.one_of(
    st.just(b" "),
    st.integers(1, 40).map(lambda n: b" " * n),
    st.lists(st.sampled_from([b" ", b"\t", b"\r", b"\x0b", b"\x0c"]), min_size=1, max_size=12).map(
        b"".join
    ),
)
DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=21)
NUMBER = st.one_of(
    st.integers(-(10**6), 10**6).map(lambda v: str(v).encode()),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda v: repr(v).encode()),
    st.tuples(st.sampled_from(["", "-", "+"]), DIGITS, st.sampled_from(["", "."]), DIGITS).map(
        lambda t: f"{t[0]}{t[1]}{t[2]}{t[3]}".encode()
    ),
    st.sampled_from(
        [
            b"0",
            b"-0",
            b"-0.0",
            b"0.0",
            b".5",
            b"5.",
            b"+3",
            b"1e5",
            b"1E-3",
            b"nan",
            b"-inf",
            b"1.2.3",
            b"0x1",
            b"1_0",
            b"-",
            b".",
            b"9007199254740993.5",
            b"123456789012345678",
            b"1234567890123456789",
            b"0.0000000000000000000001",
            b"1.00000000000000000000001",
        ]
    ),
    st.binary(min_size=1, max_size=6).filter(lambda b: not any(c in b for c in b" \t\n\r\x0b\x0c")),
)
WORD = st.one_of(
    st.sampled_from([b"red0", b"red1", b"alive", b"dead", b"-", b"blue", b"green"]),
    st.binary(min_size=1, max_size=24).filter(
        lambda b: not any(c in b for c in b" \t\n\r\x0b\x0c")
    ),
)
KINDS = "ISSINSNNNNNN"


@st.composite
def mytank_line(draw: st.DrawFn) -> bytes:
    fields = [draw(NUMBER if kind in "IN" else WORD) for kind in KINDS]
    count = draw(st.sampled_from([12, 12, 12, 12, 11, 13]))
    fields = [*fields, draw(NUMBER)][:count]
    parts = [draw(st.sampled_from([b"", b" ", b"\t", b"        "])) + b"mytank"]
    for field in fields:
        parts.append(draw(SEP) + field)
    parts.append(draw(st.sampled_from([b"", b" ", b"\r", b"   \r", b" " * 9])))
    return b"".join(parts)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(mytank_line(), min_size=1, max_size=5),
    st.lists(st.integers(1, 60), max_size=6),
)
def test_mytank_lines(
    py_codec: ModuleType, c_codec: ModuleType, lines: list[bytes], chunks: list[int]
) -> None:
    data = b"ack 1.5 mytanks\nbegin\n" + b"\n".join(lines) + b"\nend\n"
    py = run(py_codec, data, chunks)
    assert not py or py[0] != "BUG"
    assert py == run(c_codec, data, chunks)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=18), min_size=1, max_size=60))
def test_word_cache(py_codec: ModuleType, c_codec: ModuleType, words: list[bytes]) -> None:
    """Many distinct callsigns/flags (cache collisions, lengths around the
    16-byte cached limit) come back as the same strings."""
    words = [w.replace(b" ", b"_").replace(b"\n", b"_") for w in words]
    words = [w for w in words if w.split() == [w]] or [b"x"]
    lines = [
        b"mytank %d %s alive 10 0 %s                            -375 -10 0.5 0.0 0.0 0"
        % (i, w, words[(i + 1) % len(words)])
        for i, w in enumerate(words * 2)
    ]
    data = b"ack 1 mytanks\nbegin\n" + b"\n".join(lines) + b"\nend\n"
    py = run(py_codec, data, [])
    assert py[0] != "BUG"
    assert py == run(c_codec, data, [])


def test_mytank_fast_path_values(codec: ModuleType) -> None:
    line = (
        b"mytank 3 red3 alive 9 -0.00166 blue\t \r\x0b                             "
        b"-12 +7 0.72128152706 -0.0 1e-5 0.2120945\r"
    )
    (listing,) = codec.Decoder().feed(b"ack 2 mytanks\nbegin\n" + line + b"\nend\n")
    (tank,) = listing.items
    assert tank == MyTank(
        3, "red3", "alive", 9, -0.00166, "blue", -12, 7, 0.72128152706, -0.0, 1e-5, 0.2120945
    )
    assert [type(v) for v in tank] == [int, str, str, int, float, str, int, int] + [float] * 4
    assert str(tank.vx) == "-0.0"


@st.composite
def grid_reply(draw: st.DrawFn) -> bytes:
    w = draw(st.integers(1, 5))
    h = draw(st.one_of(st.integers(0, 100), st.sampled_from([31, 32, 33, 63, 64, 65, 800])))
    seed = draw(st.integers(0, 1000))
    rows = [
        bytearray(b"01"[c] for c in np.random.default_rng(seed + i).integers(0, 2, h))
        for i in range(w)
    ]
    if h and draw(st.booleans()):  # one bad cell, anywhere (often in a row's tail)
        r = draw(st.integers(0, w - 1))
        col = draw(st.one_of(st.integers(0, h - 1), st.just(h - 1)))
        rows[r][col] = draw(st.sampled_from(b"2/ \r\t\x00a\xb0\xb1\x70\x71"))
    ends = [draw(st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b" \n"])) for _ in rows]
    body = b"".join(bytes(row) + end for row, end in zip(rows, ends, strict=True))
    return b"ack 1 occgrid\nbegin\nat -400,-19\nsize %dx%d\n" % (w, h) + body + b"end\n"


@settings(max_examples=300, deadline=None)
@given(grid_reply(), st.lists(st.integers(1, 200), max_size=5))
def test_grid_rows(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes, chunks: list[int]
) -> None:
    py = run(py_codec, data, chunks)
    assert not py or py[0] != "BUG"
    assert py == run(c_codec, data, chunks)
    (grid,) = py_codec.Decoder().feed(data) if py[0] != "error" else (None,)
    if grid is not None:
        c_grid = c_codec.Decoder().feed(data)[0]
        assert np.array_equal(grid.grid, c_grid.grid)


def test_grid_wide_rows(codec: ModuleType) -> None:
    """Every width around the 32-cell step, clean and with the last cell bad."""
    rng = np.random.default_rng(7)
    for h in (1, 31, 32, 33, 47, 64, 95, 96, 97, 801):
        cells = rng.integers(0, 2, (3, h)).astype(np.uint8)
        rows = [bytes(b"01"[c] for c in row) for row in cells]
        head = b"ack 1 occgrid\nbegin\nat 0,0\nsize 3x%d\n" % h
        (grid,) = codec.Decoder().feed(head + b"\n".join(rows) + b"\nend\n")
        assert grid.grid.shape == (3, h) and grid.grid.dtype == np.uint8
        assert np.array_equal(grid.grid, cells) and grid.grid.flags.c_contiguous
        bad = rows[1][:-1] + b"2"
        data = head + rows[0] + b"\n" + bad + b"\n" + rows[2] + b"\nend\n"
        result = run(codec, data, [])
        assert result[:3] == ("error", "DecodeError", len(head) + h + 1 + h - 1)


def test_word_cache_collisions(py_codec: ModuleType, c_codec: ModuleType) -> None:
    """A thousand callsigns through a 128-slot cache: many share a slot,
    some differ only in their last character."""
    names = [b"red%d" % i for i in range(1000)] + [b"blue%d" % i for i in range(999, -1, -7)]
    lines = [
        b"mytank %d %s alive 10 0 -                            -375 -10 0.5 0.0 0.0 0" % (i, n)
        for i, n in enumerate(names)
    ]
    data = b"ack 1 mytanks\nbegin\n" + b"\n".join(lines) + b"\nend\n"
    (c_listing,) = c_codec.Decoder().feed(data)
    assert [t.callsign.encode() for t in c_listing.items] == names
    assert c_listing == py_codec.Decoder().feed(data)[0]


def test_grid_bad_cell_mid_row(py_codec: ModuleType, c_codec: ModuleType) -> None:
    """Wide rows with a bad cell in the middle of the second one: both twins
    refuse it at the same offset."""
    rng = np.random.default_rng(11)
    for h in (31, 32, 33, 97, 800):
        cells = rng.integers(0, 2, (4, h)).astype(np.uint8)
        rows = [bytes(b"01"[c] for c in row) for row in cells]
        head = b"ack 1 occgrid\nbegin\nat 0,0\nsize 4x%d\n" % h
        data = head + b"\n".join(rows) + b"\nend\n"
        (grid,) = c_codec.Decoder().feed(data)
        assert np.array_equal(grid.grid, cells)
        bad = data[: len(head) + h + 5] + b"x" + data[len(head) + h + 6 :]
        assert run(c_codec, bad, []) == run(py_codec, bad, [])
        assert run(c_codec, bad, [])[:3] == ("error", "DecodeError", len(head) + h + 5)
