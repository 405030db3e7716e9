"""Archipelago: compat (both twins) and the typed codec against the pure twin (the reference).

Groups: the ReceivedItems frame with 1000 items, the bundled sample session, and the
recorded corpus (``../shared/corpus/archipelago``; skipped when absent). In each group
the pure twin is the baseline the issue's ratios are taken against: compat decode and
encode >= 10x, the typed codec >= 20x. The typed codec rejects two corpus frames (a
bad ``cmd``), so its benchmarks have their own pure baseline over the frames it
accepts ("pure (typed frames)"). ``typed_encode`` encodes commands as a server builds
them (plain lists); ``typed_reencode`` encodes the Frames ``decode_frame`` returned
(byte-exact re-encoding), which is not one of the issue's targets.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gamecodec.archipelago import _codec_py, _typed
from gamecodec.archipelago.sample import received_items_frame, sample_session

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("GAMECODEC_SHARED", ROOT.parent / "shared")) / "corpus" / "archipelago"


def _corpus() -> list[str]:
    frames = []
    for name in ("small", "js/ws", "js/native"):
        path = CORPUS / name / "session.jsonl"
        if not path.exists():
            return []
        frames += [json.loads(line)["raw"] for line in path.open(encoding="utf-8")]
    return frames


BATCHES: dict[str, list[str]] = {
    "ReceivedItems x1000": [received_items_frame(1000)],
    "sample session": sample_session(),
    "corpus": _corpus(),
}
TYPED_OK = {
    name: [f for f in frames if f not in ('[{"cmd": 5}]', '[{"nocmd": 1}]')]
    for name, frames in BATCHES.items()
}


@pytest.fixture(scope="module", params=["py", "c"])
def compat(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(f"gamecodec.archipelago._codec_{request.param}")


@pytest.fixture(params=list(BATCHES))
def batch(request: pytest.FixtureRequest) -> str:
    if not BATCHES[request.param]:
        pytest.skip("../shared/corpus/archipelago is not present")
    return str(request.param)


def _loop(fn: Callable[[Any], object], items: list[Any]) -> None:
    for item in items:
        fn(item)


def test_compat_decode(benchmark: Any, compat: ModuleType, batch: str) -> None:
    benchmark.group = f"archipelago decode: {batch}"
    benchmark(_loop, compat.decode, BATCHES[batch])


def test_compat_encode(benchmark: Any, compat: ModuleType, batch: str) -> None:
    benchmark.group = f"archipelago encode: {batch}"
    values = [_codec_py.decode(f) for f in BATCHES[batch]]
    benchmark(_loop, compat.encode, values)


def test_pure_baseline_typed_frames_decode(benchmark: Any, batch: str) -> None:
    """The pure twin on exactly the frames the typed benchmarks use."""
    benchmark.group = f"archipelago decode: {batch}"
    benchmark(_loop, _codec_py.decode, TYPED_OK[batch])


def test_pure_baseline_typed_frames_encode(benchmark: Any, batch: str) -> None:
    benchmark.group = f"archipelago encode: {batch}"
    values = [_codec_py.decode(f) for f in TYPED_OK[batch]]
    benchmark(_loop, _codec_py.encode, values)


def test_typed_decode(benchmark: Any, compat: ModuleType, batch: str) -> None:
    benchmark.group = f"archipelago decode: {batch}"
    codec = _typed.FrameCodec(compat)
    benchmark(_loop, codec.decode_frame, TYPED_OK[batch])


def test_typed_encode(benchmark: Any, compat: ModuleType, batch: str) -> None:
    """Commands as a server builds them (plain lists: no remembered frame text)."""
    benchmark.group = f"archipelago encode: {batch}"
    codec = _typed.FrameCodec(compat)
    commands = [list(_typed.decode_frame(f)) for f in TYPED_OK[batch]]
    benchmark(_loop, codec.encode_frame, commands)


def test_typed_reencode(benchmark: Any, compat: ModuleType, batch: str) -> None:
    """Decoded Frames re-encoded byte for byte (not a target: see the module doc)."""
    benchmark.group = f"archipelago re-encode decoded Frames: {batch}"
    codec = _typed.FrameCodec(compat)
    decoded = [codec.decode_frame(f) for f in TYPED_OK[batch]]
    benchmark(_loop, codec.encode_frame, decoded)
