"""Stream decoders do O(bytes) work whatever the chunking.

One big item (a ywindow blob, a long BZRC line, a long BZRC listing, a big
occgrid) is fed in 1-, 100- and 1,460-byte chunks (and whole) at two sizes
16x apart, and the decoder's own count of its work (``bytes_scanned``: the
bytes it scanned, searched or copied again in its buffer, summed over the
feeds; kept identically by both twins) must stay within ``MAX_PER_BYTE``
times the bytes fed. A decoder that rescans what it holds back at each feed
does work quadratic in the item: fed a byte at a time, the 64 KiB item is
scanned about 32,000 times over. Counting work, not time: the sizes can be
small, and a busy machine changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from gamecodec.ywindow import _encode as yw_encode
from tests.conftest import load_twin

KiB = 1024
MAX_PER_BYTE = 3
"""Bytes of work allowed per byte fed: measured at most 2.0 (the compiled BZRC
twin searches a partial occgrid row for its newline, then converts it), 1.36
elsewhere; quadratic work is thousands of times the bytes fed here."""

PACKAGES = {"ywindow": "gamecodec.ywindow", "bzrc": "gamecodec.bzrc"}


def _blob_stream(size: int) -> bytes:
    """One ``c`` message of about ``size`` bytes, nearly all of it a blob."""
    head = yw_encode.call("put", b"")
    return yw_encode.call("put", b"x" * (size - len(head) - 4))


def _line_stream(size: int) -> bytes:
    """One ``fail`` line of ``size`` bytes."""
    return b"fail " + b"x" * (size - 6) + b"\n"


_TANK = b"mytank 0 red_tank alive 1 0.5 - -100.5 200.25 1.5 0.5 -0.25 0.125\n"


def _listing_stream(size: int) -> bytes:
    """An ``ack``/``begin``/mytank lines/``end`` listing of about ``size`` bytes."""
    return b"ack 1.5 mytanks\nbegin\n" + _TANK * (size // len(_TANK)) + b"end\n"


def _grid_stream(size: int) -> bytes:
    """An occgrid of ``size`` cells in four long rows."""
    w, h = 4, size // 4
    row = (b"01" * (h // 2)) + b"\n"
    return b"ack 2.0 occgrid 0\nat -400,-400\nsize %dx%d\n" % (w, h) + row * w + b"end\n"


Case = tuple[Callable[[int], bytes], Callable[[ModuleType, int], Any]]

CASES: dict[str, Case] = {
    "ywindow-blob": (_blob_stream, lambda m, size: m.Decoder()),
    "bzrc-line": (_line_stream, lambda m, size: m.Decoder(max_line=size)),
    "bzrc-listing": (
        _listing_stream,
        lambda m, size: m.Decoder(max_response=2 * size, max_items=size),
    ),
    "bzrc-occgrid": (_grid_stream, lambda m, size: m.Decoder(max_line=size)),
}
"""name: (stream of about N bytes, its decoder)."""


def _twin(impl: str, case: str) -> ModuleType:
    """The twin under test (``impl``) of the case's protocol."""
    return load_twin(PACKAGES[case.split("-", maxsplit=1)[0]], "_codec", impl)


def work_per_byte(module: ModuleType, case: str, size: int, step: int) -> float:
    """The decoder's work per byte for one ``size`` stream fed in ``step``-byte
    chunks (checking that it decodes to its one item)."""
    build, make = CASES[case]
    data = build(size)
    decoder = make(module, size)
    out: list[Any] = []
    for at in range(0, len(data), step):
        out += decoder.feed(data[at : at + step])
    out += decoder.close() or []
    assert len(out) == 1, f"{case}: {len(out)} results"
    return float(decoder.bytes_scanned) / len(data)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("step", [1, 100, 1460, 1 << 30], ids=["1B", "100B", "1460B", "whole"])
def test_work_is_linear_in_bytes(impl: str, case: str, step: int) -> None:
    module = _twin(impl, case)
    per_byte = [work_per_byte(module, case, size, step) for size in (4 * KiB, 64 * KiB)]
    assert max(per_byte) <= MAX_PER_BYTE, f"{case} in {step}-byte chunks: {per_byte}"
    assert min(per_byte) >= 1  # every byte fed is looked at: the count counts


def test_a_new_decoder_has_done_no_work(impl: str) -> None:
    for case in ("ywindow-blob", "bzrc-line"):
        assert _twin(impl, case).Decoder().bytes_scanned == 0
