"""ywindow rows of ``gamecodec bench``: bundled sample traffic through both twins."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from gamecodec._bench import Case, Target, measure
from gamecodec.ywindow import _codec_py, _encode
from gamecodec.ywindow.sample import sample_messages, sample_stream

__all__ = ["cases", "targets"]


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.ywindow._codec_c")
    except ImportError:
        return None


def _stream(mod: ModuleType, chunks: list[bytes]) -> Callable[[], object]:
    def run() -> object:
        feed = mod.Decoder().feed
        for chunk in chunks:
            feed(chunk)
        return None

    return run


def _one_byte(mod: ModuleType, data: bytes) -> Callable[[], object]:
    pieces = [data[i : i + 1] for i in range(len(data))]
    return _stream(mod, pieces)


def cases(count: int = 5000) -> list[Case]:
    chunks = sample_stream(count)
    nbytes = sum(map(len, chunks))
    messages = sample_messages(count)
    decoded = _codec_py.decode(b"".join(messages))
    small = b"".join(messages[:200])
    c = _compiled()

    def encode_all() -> object:
        return [_encode.encode_message(m) for m in decoded]

    return [
        Case(
            "ywindow",
            "Decoder.feed (4 KiB reads of small calls/events)",
            count,
            nbytes,
            None if c is None else _stream(c, chunks),
            _stream(_codec_py, chunks),
        ),
        Case(
            "ywindow",
            "Decoder.feed (one byte at a time)",
            200,
            len(small),
            None if c is None else _one_byte(c, small),
            _one_byte(_codec_py, small),
        ),
        Case("ywindow", "encode_message (pure only)", count, nbytes, None, encode_all),
    ]


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratio: compiled streaming decoder against the pure one."""
    c = _compiled()
    if c is None:
        return []
    chunks = sample_stream(5000)
    t_c = measure(_stream(c, chunks), rounds=rounds, min_time=min_time)
    t_py = measure(_stream(_codec_py, chunks), rounds=rounds, min_time=min_time)
    return [
        Target(
            "ywindow",
            "pure / compiled streaming decode (small calls and events)",
            t_py / t_c,
            10.0,
            False,
        )
    ]
