"""Avara: decode/encode of sample traffic and the issue's ratio baselines."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from gamecodec.avara import _codec_py
from gamecodec.avara._bench import KM_STRUCT
from gamecodec.avara.sample import key_and_mouse_datagram, sample_traffic

TRAFFIC = sample_traffic(2000)
DECODED = [_codec_py.decode_datagram(d) for d in TRAFFIC]
KM = key_and_mouse_datagram()
KM_BATCH = [KM] * 1000


def _loop(fn: Any, items: list[Any]) -> None:
    for item in items:
        fn(item)


@pytest.mark.benchmark(group="avara: one 20 B kpKeyAndMouse datagram x1000")
def test_km_unpack_from_baseline(benchmark: Any) -> None:
    benchmark(_loop, KM_STRUCT.unpack_from, KM_BATCH)


@pytest.mark.benchmark(group="avara: one 20 B kpKeyAndMouse datagram x1000")
def test_km_decode(benchmark: Any, avara_codec: ModuleType) -> None:
    benchmark(_loop, avara_codec.decode_datagram, KM_BATCH)


@pytest.mark.benchmark(group="avara: decode_datagram, 2000 datagrams of sample traffic")
def test_decode_traffic(benchmark: Any, avara_codec: ModuleType) -> None:
    benchmark(_loop, avara_codec.decode_datagram, TRAFFIC)


@pytest.mark.benchmark(group="avara: encode_datagram, 2000 datagrams of sample traffic")
def test_encode_traffic(benchmark: Any, avara_codec: ModuleType) -> None:
    benchmark(_loop, avara_codec.encode_datagram, DECODED)


@pytest.mark.benchmark(group="avara: decode_many, 2000 datagrams of sample traffic")
def test_decode_many(benchmark: Any, avara_codec: ModuleType) -> None:
    batch = benchmark(avara_codec.decode_many, TRAFFIC)
    assert len(batch.datagrams) == len(TRAFFIC)


@pytest.mark.benchmark(group="avara: decode_many, 2000 datagrams of sample traffic")
def test_unpack_from_per_datagram_baseline(benchmark: Any) -> None:
    """One unpack_from per datagram (the ratio target counts per command)."""
    benchmark(_loop, KM_STRUCT.unpack_from, [KM] * len(TRAFFIC))
