"""Archipelago rows of ``gamecodec bench``: bundled sample traffic through both twins.

The pure compat twin is the reference semantics (``NetUtils`` run from source),
so every ratio is "how many times faster than the reference": compat decode and
encode (compiled twin), and the typed codec (msgspec Structs, compiled writer).

Batches: one ReceivedItems frame with 1000 items, the bundled sample session,
and the recorded corpus (``$GAMECODEC_SHARED/corpus/archipelago``, default
``../shared`` beside the checkout; its rows appear only when it is there). The
typed rows run both sides on the frames the typed codec accepts (the corpus has
two frames with a bad ``cmd``: compat decodes them, the typed codec rejects
them). "typed encode_frame" encodes commands as a server builds them (plain
lists); the "re-encode decoded Frames" row encodes the Frames ``decode_frame``
returned (byte-exact re-encoding: fresh encoding compared with the frame's text,
per-command resolution where they differ), it is not a target.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gamecodec._bench import Case, Target, measure_together, paired_ratio
from gamecodec.archipelago import _codec_py, _typed
from gamecodec.archipelago.sample import received_items_frame, sample_session

__all__ = ["cases", "targets"]


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.archipelago._codec_c")
    except ImportError:
        return None


def _each(fn: Callable[[Any], object], batch: list[Any]) -> Callable[[], object]:
    def run() -> object:
        for item in batch:
            fn(item)
        return None

    return run


_SESSIONS = ("small", "js/ws", "js/native")


def corpus_frames() -> list[str]:
    """Every frame of the recorded corpus, in capture order ([] when it is absent)."""
    default = Path(__file__).resolve().parents[4] / "shared"
    root = Path(os.environ.get("GAMECODEC_SHARED", default)) / "corpus" / "archipelago"
    frames: list[str] = []
    for name in _SESSIONS:
        path = root / name / "session.jsonl"
        if not path.is_file():
            return []
        with path.open(encoding="utf-8") as lines:
            frames += [json.loads(line)["raw"] for line in lines]
    return frames


def _typed_ok(frame: str) -> bool:
    try:
        _typed.decode_frame(frame)
    except ValueError:
        return False
    return True


class _Batch:
    """One batch: its frames, their compat values, and the typed side's inputs."""

    def __init__(self, label: str, frames: list[str]) -> None:
        self.label = label
        self.frames = frames
        self.values = [_codec_py.decode(f) for f in frames]
        self.typed_frames = [f for f in frames if _typed_ok(f)]
        self.typed_values = [_codec_py.decode(f) for f in self.typed_frames]
        # typed commands as a server builds them (plain lists, no remembered text)
        self.commands = [list(_typed.decode_frame(f)) for f in self.typed_frames]
        # what decode_frame returns (Frames remembering their text)
        self.decoded = [_typed.decode_frame(f) for f in self.typed_frames]
        self.count = sum(len(v) if isinstance(v, list) else 1 for v in self.values)
        self.typed_count = sum(len(c) for c in self.commands)
        self.nbytes = sum(len(f.encode()) for f in frames)
        self.typed_nbytes = sum(len(f.encode()) for f in self.typed_frames)


def _batches() -> list[_Batch]:
    out = [
        _Batch("ReceivedItems x1000", [received_items_frame(1000)]),
        _Batch("sample session", sample_session()),
    ]
    corpus = corpus_frames()
    if corpus:
        out.append(_Batch(f"recorded corpus, {len(corpus)} frames", corpus))
    return out


def cases() -> list[Case]:
    c = _compiled()
    typed = _typed.FrameCodec(c if c is not None else _codec_py)
    out: list[Case] = []
    for b in _batches():
        label = b.label
        out += [
            Case(
                "archipelago",
                f"compat decode ({label})",
                b.count,
                b.nbytes,
                None if c is None else _each(c.decode, b.frames),
                _each(_codec_py.decode, b.frames),
            ),
            Case(
                "archipelago",
                f"compat encode ({label})",
                b.count,
                b.nbytes,
                None if c is None else _each(c.encode, b.values),
                _each(_codec_py.encode, b.values),
            ),
            Case(
                "archipelago",
                f"typed decode_frame vs pure compat decode ({label})",
                b.typed_count,
                b.typed_nbytes,
                _each(typed.decode_frame, b.typed_frames),
                _each(_codec_py.decode, b.typed_frames),
            ),
            Case(
                "archipelago",
                f"typed encode_frame vs pure compat encode ({label})",
                b.typed_count,
                b.typed_nbytes,
                _each(typed.encode_frame, b.commands),
                _each(_codec_py.encode, b.typed_values),
            ),
            Case(
                "archipelago",
                f"typed re-encode decoded Frames (exact bytes) vs pure compat encode ({label})",
                b.typed_count,
                b.typed_nbytes,
                _each(typed.encode_frame, b.decoded),
                _each(_codec_py.encode, b.typed_values),
            ),
        ]
    return out


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratios against the pure twin: compat >= 10x, typed >= 20x, on
    ReceivedItems x1000, the sample session and (when present) the recorded corpus
    (each pair timed round by round)."""
    c = _compiled()
    if c is None:
        return []
    typed = _typed.FrameCodec(c)
    out: list[Target] = []
    for b in _batches():
        rows = [
            (
                "pure / compiled compat decode",
                _each(_codec_py.decode, b.frames),
                _each(c.decode, b.frames),
                10.0,
            ),
            (
                "pure / compiled compat encode",
                _each(_codec_py.encode, b.values),
                _each(c.encode, b.values),
                10.0,
            ),
            (
                "pure compat decode / typed decode_frame",
                _each(_codec_py.decode, b.typed_frames),
                _each(typed.decode_frame, b.typed_frames),
                20.0,
            ),
            (
                "pure compat encode / typed encode_frame",
                _each(_codec_py.encode, b.typed_values),
                _each(typed.encode_frame, b.commands),
                20.0,
            ),
        ]
        for title, slow, fast, limit in rows:
            samples = measure_together(
                {"slow": slow, "fast": fast}, rounds=max(rounds, 3), min_time=min_time
            )
            ratio = paired_ratio(samples, "slow", "fast")
            out.append(Target("archipelago", f"{title} ({b.label})", ratio, limit, False))
    return out
