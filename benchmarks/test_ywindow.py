"""ywindow: the streaming decoder on small calls and events, py and c side by side."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest

from gamecodec.ywindow import _codec_py, _encode
from gamecodec.ywindow.sample import sample_messages, sample_stream

CHUNKS = sample_stream(5000)
SMALL = b"".join(sample_messages(200))
BYTES = [SMALL[i : i + 1] for i in range(len(SMALL))]
DECODED = _codec_py.decode(b"".join(CHUNKS))


@pytest.fixture(scope="module", params=["py", "c"])
def ywindow_codec(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(f"gamecodec.ywindow._codec_{request.param}")


def _stream(codec: ModuleType, chunks: list[bytes]) -> int:
    feed = codec.Decoder().feed
    n = 0
    for chunk in chunks:
        n += len(feed(chunk))
    return n


@pytest.mark.benchmark(group="ywindow: Decoder.feed, 5000 small calls/events in 4 KiB reads")
def test_stream_decode(benchmark: Any, ywindow_codec: ModuleType) -> None:
    assert benchmark(_stream, ywindow_codec, CHUNKS) == 5000


@pytest.mark.benchmark(group="ywindow: Decoder.feed, 200 messages one byte at a time")
def test_one_byte_feed(benchmark: Any, ywindow_codec: ModuleType) -> None:
    assert benchmark(_stream, ywindow_codec, BYTES) == 200


@pytest.mark.benchmark(group="ywindow: encode_message, 5000 small calls/events")
def test_encode(benchmark: Any) -> None:
    benchmark(lambda: [_encode.encode_message(m) for m in DECODED])
