"""Decoding from several threads at once, on both twins.

Separate decoders give what one thread gives. A shared decoder admits one
thread at a time: a call made while another thread is inside it raises
DecodeError and changes nothing, so it never crashes (the occgrid kernel
runs without the GIL and writes into the decoder's array) and every call
that succeeds returns exactly the responses its bytes complete.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from gamecodec.errors import DecodeError

TANK = b"mytank 0 red_tank alive 1 0.5 - -100.5 200.25 1.5 0.5 -0.25 0.125\n"
LISTING = b"ack 1.5 mytanks\nbegin\n" + TANK * 20 + b"end\n"
OK = b"ack 3 speed 0 1.0\nok\n"
FAIL = b"fail not now\n"


def grid(w: int, h: int) -> bytes:
    row = (b"01" * h)[:h] + b"\n"
    return b"ack 2 occgrid 0\nat -400,-400\nsize %dx%d\n" % (w, h) + row * w + b"end\n"


RESPONSES = [LISTING, grid(200, 200), OK, FAIL, grid(3, 5), LISTING]
STREAM = b"".join(RESPONSES)


def chunked(data: bytes, rng: random.Random) -> Iterator[bytes]:
    pos = 0
    while pos < len(data):
        step = rng.choice((1, 7, 100, 1460, 65536))
        yield data[pos : pos + step]
        pos += step


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads as often as the interpreter allows."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run_threads(target: Callable[[int], None], count: int) -> None:
    errors: list[BaseException] = []

    def wrapped(index: int) -> None:
        try:
            target(index)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def test_separate_decoders_match_one_thread(codec: ModuleType, fast_switching: None) -> None:
    expected = codec.Decoder().feed(STREAM)
    results: dict[int, list[Any]] = {}

    def decode(index: int) -> None:
        rng = random.Random(index)
        for _ in range(10):
            decoder = codec.Decoder()
            out = []
            for chunk in chunked(STREAM, rng):
                out += decoder.feed(chunk)
            out += decoder.close()
            assert out == expected
        results[index] = out

    run_threads(decode, 4)
    assert len(results) == 4


def test_shared_decoder_whole_responses(codec: ModuleType, fast_switching: None) -> None:
    decoder = codec.Decoder()
    expected = {data: codec.Decoder().feed(data) for data in RESPONSES}
    counts = {"ok": 0, "refused": 0}

    def feed(index: int) -> None:
        rng = random.Random(index)
        for _ in range(200):
            data = rng.choice(RESPONSES)
            try:
                out = decoder.feed(data)
            except DecodeError as exc:
                assert "another thread" in str(exc)
                counts["refused"] += 1
                continue
            assert out == expected[data]
            counts["ok"] += 1

    run_threads(feed, 4)
    assert counts["ok"] > 0
    assert decoder.close() == []


def test_reset_while_the_grid_kernel_runs(codec: ModuleType, fast_switching: None) -> None:
    """One thread decodes big occgrids (the kernel runs without the GIL, into
    the decoder's array); another re-initialises the decoder again and again,
    which would drop that array under the kernel. It must never land: the
    reset is refused while the feed is inside, and every grid comes out whole."""
    decoder = codec.Decoder()
    data = grid(2000, 2000)
    expected = codec.Decoder().feed(data)
    done = threading.Event()
    resetting = threading.Event()
    stats = {"grids": 0, "resets": 0, "refused": 0}

    def decode(index: int) -> None:
        resetting.wait()
        try:
            for _ in range(200):
                if stats["grids"] >= 10 and stats["resets"] >= 5:
                    break
                try:
                    out = decoder.feed(data)
                except DecodeError as exc:
                    assert "another thread" in str(exc)
                    stats["refused"] += 1
                    time.sleep(0.0005)
                    continue
                assert out == expected
                stats["grids"] += 1
                time.sleep(0.0005)  # let the other thread in between grids too
        finally:
            done.set()

    def reset(index: int) -> None:
        resetting.set()
        while not done.is_set():
            try:
                decoder.__init__()  # type: ignore[misc]
            except DecodeError as exc:
                assert "another thread" in str(exc)
                stats["refused"] += 1
            else:
                stats["resets"] += 1

    run_threads(lambda i: (decode if i == 0 else reset)(i), 2)
    assert stats["grids"] > 0, stats
    assert stats["resets"] > 0, stats
