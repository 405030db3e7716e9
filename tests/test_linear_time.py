"""Stream decoders cost O(bytes) whatever the chunking.

One big item (a ywindow blob, a long BZRC line, a long BZRC listing, a big
occgrid) is fed in 1-, 100- and 1,460-byte chunks at two sizes 16x apart;
the larger must take well under 256x (quadratic) the time of the smaller.
Times are CPU times of this process (a busy machine preempting the longer
run does not count), the best of a few repeats, with the cyclic GC paused.
The 1-byte runs use smaller totals (the ratio is what matters); the runs up
to 16 MiB (1 MiB in 1-byte chunks) are marked slow, the default runs go up to
4 MiB (256 KiB).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from gamecodec.ywindow import _encode as yw_encode
from tests.conftest import load_twin

KiB = 1024
MiB = 1024 * KiB
MAX_RATIO = 40.0
"""Allowed time ratio for 16x the bytes (linear: ~16, quadratic: ~256); about
6.3x per 4x, room for the cache and allocator effects of a 16x larger run."""
REPEATS = 5
ATTEMPTS = 3

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


Case = tuple[Callable[[int], bytes], Callable[[ModuleType, int], Any], int]

CASES: dict[str, Case] = {
    "ywindow-blob": (_blob_stream, lambda m, size: m.Decoder(), 1),
    "bzrc-line": (_line_stream, lambda m, size: m.Decoder(max_line=size), 1),
    # a quarter of the bytes: the pure twin decodes a listing at ~3 MB/s
    "bzrc-listing": (
        _listing_stream,
        lambda m, size: m.Decoder(max_response=2 * size, max_items=size),
        4,
    ),
    "bzrc-occgrid": (_grid_stream, lambda m, size: m.Decoder(max_line=size), 1),
}
"""name: (stream of about N bytes, its decoder, divisor of the sizes)."""


def _chunks(data: bytes, step: int) -> list[bytes]:
    return [data[i : i + step] for i in range(0, len(data), step)]


def _feed_time(module: ModuleType, case: str, size: int, step: int, repeats: int) -> float:
    """Best time to decode one ``size`` stream fed in ``step``-byte chunks."""
    build, make, _ = CASES[case]
    chunks = _chunks(build(size), step)
    best = float("inf")
    for _ in range(repeats):
        decoder = make(module, size)
        feed = decoder.feed
        out: list[Any] = []
        gc.collect()
        gc.disable()  # collections of the decoded objects are not the decoder's cost
        try:
            t0 = time.process_time()
            for chunk in chunks:
                out += feed(chunk)
            best = min(best, time.process_time() - t0)
        finally:
            gc.enable()
        out += decoder.close() or []
        assert len(out) == 1, f"{case}: {len(out)} results"
    return best


def _append_time(case: str, size: int, step: int, repeats: int) -> float:
    """Best time to append the same chunks to a ``bytearray`` and take its
    bytes: the floor of any decoder that must keep an item arriving in pieces."""
    chunks = _chunks(CASES[case][0](size), step)
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.process_time()
        kept = bytearray()
        for chunk in chunks:
            kept += chunk
        whole = bytes(kept)
        best = min(best, time.process_time() - t0)
        del kept, whole
    return best


def _twin(impl: str, case: str) -> ModuleType:
    """The twin under test (``impl``) of the case's protocol."""
    return load_twin(PACKAGES[case.split("-", maxsplit=1)[0]], "_codec", impl)


def _ratio(module: ModuleType, case: str, small: int, step: int) -> tuple[float, str]:
    """The time ratio for 16x the bytes, divided by how much worse than linear
    the same two streams decode in one chunk, or are merely appended chunk by
    chunk to a ``bytearray`` (at least 1): objects and buffers that outgrow the
    CPU caches, and fresh pages from the allocator, cost more per byte whatever
    the decoder does (on some machines a 16 MiB ``bytearray`` built in 1,460-byte
    appends takes 40x the time of a 1 MiB one), and that is not what is measured
    here. Returns it with a report line."""
    big = 16 * small
    chunked = [_feed_time(module, case, n, step, REPEATS) for n in (small, big)]
    whole = [_feed_time(module, case, n, 1 << 30, REPEATS) for n in (small, big)]
    appended = [_append_time(case, n, step, REPEATS) for n in (small, big)]
    memory = max(1.0, whole[1] / (16 * whole[0]), appended[1] / (16 * appended[0]))
    ratio = chunked[1] / chunked[0] / memory
    report = (
        f"{case} [{module.__name__}] {step}-byte chunks, {small} -> {big} bytes: "
        f"{chunked[0] * 1000:.2f}ms -> {chunked[1] * 1000:.2f}ms "
        f"(one chunk {whole[0] * 1000:.2f}ms -> {whole[1] * 1000:.2f}ms, "
        f"appended {appended[0] * 1000:.2f}ms -> {appended[1] * 1000:.2f}ms, "
        f"memory factor {memory:.2f}): x{ratio:.1f}"
    )
    return ratio, report


def _check_linear(module: ModuleType, case: str, small: int, step: int) -> None:
    """The larger stream must take well under 16 * 16 = 256 times as long
    (quadratic), and under ``MAX_RATIO``, in one of ``ATTEMPTS`` measurements
    (a busy machine can spoil one; a quadratic decoder fails them all)."""
    small //= CASES[case][2]
    reports = []
    for _ in range(ATTEMPTS):
        ratio, report = _ratio(module, case, small, step)
        print(report)
        reports.append(report)
        if ratio < MAX_RATIO:
            return
    raise AssertionError("not linear for 16x the bytes (linear is ~16):\n" + "\n".join(reports))


SIZES = [(1, 16 * KiB), (100, 256 * KiB), (1460, 256 * KiB)]
"""(chunk bytes, smaller total): up to 256 KiB in 1-byte chunks, 4 MiB in the others."""
SLOW_SIZES = [(1, 64 * KiB), (100, 1 * MiB), (1460, 1 * MiB)]
"""The same up to 1 MiB in 1-byte chunks and 16 MiB in the others."""


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(("step", "small"), SIZES, ids=[f"{s}B" for s, _ in SIZES])
def test_linear_in_bytes(impl: str, case: str, step: int, small: int) -> None:
    _check_linear(_twin(impl, case), case, small, step)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(("step", "small"), SLOW_SIZES, ids=[f"{s}B" for s, _ in SLOW_SIZES])
def test_linear_in_bytes_large(impl: str, case: str, step: int, small: int) -> None:
    _check_linear(_twin(impl, case), case, small, step)
