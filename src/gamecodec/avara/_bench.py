"""Avara rows of ``gamecodec bench``: bundled sample traffic through both twins."""

from __future__ import annotations

import importlib
import struct
from collections.abc import Callable
from types import ModuleType

from gamecodec._bench import Case, Target, measure
from gamecodec.avara import _bench_session, _codec_py
from gamecodec.avara.sample import key_and_mouse_datagram, sample_traffic

__all__ = ["cases", "targets"]

KM_STRUCT = struct.Struct("<HHHBBbHBbb6s")
"""One unpack_from of the typical 20-byte kpKeyAndMouse datagram: the baseline."""


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.avara._codec_c")
    except ImportError:
        return None


def _each(decode: Callable[[bytes], object], traffic: list[bytes]) -> Callable[[], object]:
    def run() -> object:
        for data in traffic:
            decode(data)
        return None

    return run


def cases(count: int = 5000) -> list[Case]:
    return _codec_cases(count) + _bench_session.cases()


def _codec_cases(count: int) -> list[Case]:
    traffic = sample_traffic(count)
    nbytes = sum(map(len, traffic))
    c = _compiled()
    decoded = [_codec_py.decode_datagram(d) for d in traffic]
    km = [key_and_mouse_datagram()] * 1000

    def encode_all(mod: ModuleType) -> Callable[[], object]:
        encode = mod.encode_datagram
        return lambda: [encode(d) for d in decoded]

    return [
        Case(
            "avara",
            "decode_datagram (sample traffic)",
            len(traffic),
            nbytes,
            None if c is None else _each(c.decode_datagram, traffic),
            _each(_codec_py.decode_datagram, traffic),
        ),
        Case(
            "avara",
            "decode_datagram (20 B kpKeyAndMouse)",
            len(km),
            20 * len(km),
            None if c is None else _each(c.decode_datagram, km),
            _each(_codec_py.decode_datagram, km),
        ),
        Case(
            "avara",
            "encode_datagram (sample traffic)",
            len(decoded),
            nbytes,
            None if c is None else encode_all(c),
            encode_all(_codec_py),
        ),
        Case(
            "avara",
            "decode_many (sample traffic)",
            len(traffic),
            nbytes,
            None if c is None else (lambda: c.decode_many(traffic)),
            lambda: _codec_py.decode_many(traffic),
        ),
    ]


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The codec's ratios and the session's (see ``_bench_session``)."""
    return _codec_targets(rounds, min_time) + _bench_session.targets(
        rounds=rounds, min_time=min_time
    )


def _codec_targets(rounds: int, min_time: float) -> list[Target]:
    """The issue's ratios, measured together: single decode against one
    ``unpack_from``, compiled against pure, and decode_many per command."""
    c = _compiled()
    if c is None:
        return []
    km = key_and_mouse_datagram()
    unpack = KM_STRUCT.unpack_from
    batch = [km] * 1000
    traffic = sample_traffic(5000)
    commands_in_traffic = len(c.decode_many(traffic).commands)
    t_unpack = measure(_each(unpack, batch), rounds=rounds, min_time=min_time) / len(batch)
    t_c = measure(_each(c.decode_datagram, batch), rounds=rounds, min_time=min_time) / len(batch)
    t_py = measure(_each(_codec_py.decode_datagram, batch), rounds=rounds, min_time=min_time) / len(
        batch
    )
    t_many = (
        measure(lambda: c.decode_many(traffic), rounds=rounds, min_time=min_time)
        / commands_in_traffic
    )
    return [
        Target(
            "avara",
            "compiled decode of a 20 B kpKeyAndMouse / one unpack_from",
            t_c / t_unpack,
            4.0,
            True,
        ),
        Target(
            "avara", "pure / compiled decode_datagram (20 B kpKeyAndMouse)", t_py / t_c, 15.0, False
        ),
        Target(
            "avara", "decode_many per command / one unpack_from", t_many / t_unpack, 1 / 3, True
        ),
    ]
