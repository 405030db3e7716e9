"""Decoding from several threads at once, on both twins.

Separate decoders give what one thread gives. A shared decoder admits one
thread at a time: a call made while another thread is inside it raises
DecodeError and changes nothing, so every call that succeeds returns exactly
the messages its bytes complete.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from gamecodec.errors import DecodeError
from gamecodec.ywindow import Keyword
from gamecodec.ywindow import _encode as encode

MESSAGES = [
    encode.call("put", b"x" * 300_000, 7, "text"),
    encode.notify("event", Keyword("ok"), -1),
    encode.reply(1, 2, 3),
    encode.call("get", "é" * 1000),
]
STREAM = b"".join(MESSAGES) * 3


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
    expected = codec.decode(STREAM)
    done: list[int] = []

    def decode(index: int) -> None:
        rng = random.Random(index)
        for _ in range(5):
            decoder = codec.Decoder()
            out = []
            for chunk in chunked(STREAM, rng):
                out += decoder.feed(chunk)
            decoder.close()
            assert out == expected
        done.append(index)

    run_threads(decode, 4)
    assert sorted(done) == [0, 1, 2, 3]


def test_shared_decoder_whole_messages(codec: ModuleType, fast_switching: None) -> None:
    decoder = codec.Decoder()
    expected = {data: codec.decode(data) for data in MESSAGES}
    counts = {"ok": 0, "refused": 0}

    def feed(index: int) -> None:
        rng = random.Random(index)
        for _ in range(300):
            data = rng.choice(MESSAGES)
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
    assert decoder.at_boundary
    decoder.close()


def test_reset_while_feeding(codec: ModuleType, fast_switching: None) -> None:
    """One thread feeds a message in pieces between resets by another thread:
    a reset either waits for no one (between calls) or is refused (during
    one); a feed in flight never sees its buffer replaced."""
    decoder = codec.Decoder()
    data = MESSAGES[0]
    expected = codec.decode(data)
    done = threading.Event()
    resetting = threading.Event()
    stats = {"messages": 0, "resets": 0, "refused": 0}

    def decode(index: int) -> None:
        resetting.wait()
        try:
            for _ in range(400):
                if stats["messages"] >= 20 and stats["resets"] >= 5:
                    break
                try:
                    out = decoder.feed(data)
                except DecodeError as exc:
                    assert "another thread" in str(exc)
                    stats["refused"] += 1
                    time.sleep(0.0005)
                    continue
                assert out == expected
                stats["messages"] += 1
                time.sleep(0.0005)  # let the other thread in between messages too
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
    assert stats["messages"] > 0, stats
    assert stats["resets"] > 0, stats
