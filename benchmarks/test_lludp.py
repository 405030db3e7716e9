"""LLUDP: the spec's speed-table packets through both twins and Hippolyzer.

The packets are ``../shared/corpus/lludp/bench_packets.json`` (Hippolyzer's
own bytes) when present, else the package's sample traffic of the same
shapes. The Hippolyzer rows run where it is importable (Python 3.12+).
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gamecodec.lludp import _bench, default_template

TEMPLATE = default_template()
_CORPUS = Path(
    os.environ.get("GAMECODEC_SHARED", Path(__file__).resolve().parents[2] / "shared")
).joinpath("corpus", "lludp", "bench_packets.json")


def _packets() -> dict[str, bytes]:
    if _CORPUS.exists():
        data = json.loads(_CORPUS.read_text())
        return {p["case"]: bytes.fromhex(p["wire"]) for p in data["packets"]}
    return _bench.bench_packets()


PACKETS = _packets()
HIPPOLYZER = _bench.hippolyzer()
IMPLS = ["py", "c"] + (["hippolyzer"] if HIPPOLYZER else [])
BUFFERS = _bench.expand_buffers()


@pytest.fixture(params=["py", "c"])
def codec(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(f"gamecodec.lludp._codec_{request.param}")


def _decoder(impl: str) -> Any:
    if impl == "hippolyzer":
        assert HIPPOLYZER is not None
        return HIPPOLYZER["decode"]
    mod = importlib.import_module(f"gamecodec.lludp._codec_{impl}")
    return lambda data: mod.decode(data, TEMPLATE)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", list(PACKETS))
def test_decode(benchmark: Any, case: str, impl: str) -> None:
    benchmark.group = f"lludp decode: {case}"
    benchmark(_decoder(impl), PACKETS[case])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", list(PACKETS))
def test_encode(benchmark: Any, case: str, impl: str) -> None:
    benchmark.group = f"lludp encode: {case}"
    data = PACKETS[case]
    if impl == "hippolyzer":
        assert HIPPOLYZER is not None
        benchmark(HIPPOLYZER["encode"], HIPPOLYZER["decode"](data))
        return
    mod = importlib.import_module(f"gamecodec.lludp._codec_{impl}")
    msg = mod.decode(data, TEMPLATE)
    assert benchmark(mod.encode, msg, TEMPLATE) == data


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", list(PACKETS))
def test_peek(benchmark: Any, case: str, impl: str) -> None:
    benchmark.group = f"lludp header-only peek: {case}"
    data = PACKETS[case]
    if impl == "hippolyzer":
        assert HIPPOLYZER is not None
        benchmark(HIPPOLYZER["peek"], data)
        return
    mod = importlib.import_module(f"gamecodec.lludp._codec_{impl}")
    benchmark(mod.peek, data, TEMPLATE)


@pytest.mark.parametrize("impl", IMPLS)
def test_zero_decode_body(benchmark: Any, impl: str) -> None:
    body = PACKETS[next(k for k in PACKETS if k.startswith("ObjectUpdate"))][6:]
    benchmark.group = f"lludp zero_decode: {len(body)} B ObjectUpdate x5 body"
    if impl == "hippolyzer":
        assert HIPPOLYZER is not None
        benchmark(HIPPOLYZER["zero_decode"], body)
        return
    mod = importlib.import_module(f"gamecodec.lludp._codec_{impl}")
    benchmark(mod.zero_decode, body)


@pytest.mark.parametrize("label", list(BUFFERS))
def test_expand_64k(benchmark: Any, codec: ModuleType, label: str) -> None:
    benchmark.group = f"lludp zero-expand 64 KiB ({label}) vs copy"
    benchmark(codec.zero_decode, BUFFERS[label], 1 << 24)


@pytest.mark.parametrize("label", list(BUFFERS))
def test_copy_64k_baseline(benchmark: Any, label: str) -> None:
    benchmark.group = f"lludp zero-expand 64 KiB ({label}) vs copy"
    buf = BUFFERS[label]
    benchmark(lambda: bytes(memoryview(buf)))
