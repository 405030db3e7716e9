"""Archipelago rows of ``gamecodec bench``: recorded frames and a large room's session.

The recorded frames are every frame of the corpus of real sessions
(``tests/data/archipelago`` in a checkout, else ``corpus/archipelago`` under
``$GAMECODEC_SHARED``); without them the package's
sample session stands in (the workload column says which). The large room is
:func:`gamecodec.archipelago.sample.large_room_session`.

gamecodec runs through its public functions: ``decode`` (typed) and
``compat.decode`` / ``compat.encode``. The peers: ``msgspec.json`` decoding the
same frames into the same command Structs (the floor the typed codec is built
on), what a user writes with the standard library (``json.loads`` with an
object hook that turns ``"class"`` objects into the NetUtils NamedTuples), and
the pure compat twin (the reference semantics, run as Python).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gamecodec import archipelago as ap
from gamecodec._bench import Config, Contest, Lazy, Row, Side, pure_twin, run_all, skipped
from gamecodec.archipelago import compat
from gamecodec.archipelago.sample import large_room_session, sample_session

__all__ = ["contests", "corpus_frames", "rows", "user_decode"]

_SESSIONS = ("small", "js/ws", "js/native")


def _corpus_roots() -> list[Path]:
    checkout = Path(__file__).resolve().parents[3]
    shared = Path(os.environ.get("GAMECODEC_SHARED", checkout.parent / "shared"))
    return [checkout / "tests" / "data" / "archipelago", shared / "corpus" / "archipelago"]


def corpus_frames() -> tuple[list[str], str]:
    """Every recorded frame in capture order, and where they came from
    (``[]`` and a reason when no copy of the corpus is found)."""
    for root in _corpus_roots():
        paths = [root / name / "session.jsonl" for name in _SESSIONS]
        if all(p.is_file() for p in paths):
            frames: list[str] = []
            for path in paths:
                with path.open(encoding="utf-8") as lines:
                    frames += [json.loads(line)["raw"] for line in lines]
            return frames, str(root)
    return [], "no copy of the recorded corpus found"


_NAMED: dict[str, type[ap.NetworkItem] | type[ap.NetworkPlayer] | type[ap.NetworkSlot]] = {
    "NetworkItem": ap.NetworkItem,
    "NetworkPlayer": ap.NetworkPlayer,
    "NetworkSlot": ap.NetworkSlot,
}


def _user_hook(obj: dict[str, Any]) -> Any:
    kind = obj.get("class")
    if kind is None:
        return obj
    if kind == "Version":
        return ap.Version(int(obj["major"]), int(obj["minor"]), int(obj["build"]))
    cls = _NAMED.get(kind)
    if cls is None:
        return obj
    fields = cls._fields
    return cls(**{k: v for k, v in obj.items() if k in fields})


def user_decode(frame: str) -> Any:
    """What a user writes: the standard library's ``json`` with an object hook
    that makes the NetUtils NamedTuples of ``"class"`` objects."""
    return json.loads(frame, object_hook=_user_hook)


def _msgspec_decoder() -> Callable[[str], Any]:
    import msgspec

    return msgspec.json.Decoder(list[ap.AnyCommand]).decode


def _accepted(frames: list[str], *fns: Callable[[str], object]) -> list[str]:
    out = []
    for frame in frames:
        try:
            for fn in fns:
                fn(frame)
        except Exception:
            continue
        out.append(frame)
    return out


def _loop(label: str, fn: Callable[[Any], object], items: list[Any]) -> Side:
    def run(_: object) -> None:
        for item in items:
            fn(item)

    return Side(label, run)


def _loop_lazy(label: str, fn: Callable[[Any], object], inputs: Lazy) -> Side:
    def run(items: Any) -> None:
        for item in items:
            fn(item)

    return Side(label, run, inputs.get, finish=inputs.drop)


def _batch(name: str, frames: list[str]) -> list[Contest | Row]:
    pure, reason = pure_twin(
        "archipelago", "gamecodec.archipelago._compat_py", "gamecodec.archipelago._codec_py"
    )
    floor = _msgspec_decoder()
    typed = _accepted(frames, ap.decode, floor)
    nbytes = sum(len(f.encode()) for f in frames)
    every = f"{name}: {len(frames):,} frames, {nbytes / 1e3:,.0f} kB"
    some = f"{name}: the {len(typed):,} of {len(frames):,} frames msgspec takes"
    out: list[Contest | Row] = [
        Contest(
            "archipelago",
            "decode (typed) vs msgspec.json.decode into the same Structs",
            some,
            len(typed),
            "frame",
            _loop("decode", ap.decode, typed),
            _loop("msgspec.json", floor, typed),
            kind="cost",
            limit=1.15,
        ),
        Contest(
            "archipelago",
            "decode (typed) vs stdlib json + NetUtils object hook",
            every,
            len(frames),
            "frame",
            _loop("decode", ap.decode, _accepted(frames, ap.decode)),
            _loop("json.loads + hook", user_decode, _accepted(frames, ap.decode)),
            limit=5.0,
        ),
        Contest(
            "archipelago",
            "compat.decode vs stdlib json + NetUtils object hook",
            every,
            len(frames),
            "frame",
            _loop("compat.decode", compat.decode, frames),
            _loop("json.loads + hook", user_decode, frames),
            limit=2.5,
        ),
    ]
    title_d = "compat.decode vs the pure compat twin (reference semantics)"
    title_e = "compat.encode vs the pure compat twin (reference semantics)"
    if pure is None:
        out += [
            skipped("archipelago", title_d, reason, peer="pure twin", limit=10.0),
            skipped("archipelago", title_e, reason, peer="pure twin", limit=10.0),
        ]
        return out
    values = Lazy(lambda: [compat.decode(f) for f in frames])
    out += [
        Contest(
            "archipelago",
            title_d,
            every,
            len(frames),
            "frame",
            _loop("compat.decode", compat.decode, frames),
            _loop("pure twin", pure.decode, frames),
            limit=10.0,
        ),
        Contest(
            "archipelago",
            title_e,
            every,
            len(frames),
            "frame",
            _loop_lazy("compat.encode", compat.encode, values),
            _loop_lazy("pure twin", pure.encode, values),
            limit=10.0,
        ),
    ]
    return out


def contests(config: Config) -> list[Contest | Row]:
    """Every contest on the recorded frames, then on the large room's session."""
    recorded, source = corpus_frames()
    if recorded:
        name = "recorded frames"
        config.say(f"archipelago: recorded frames from {source}")
    else:
        recorded, name = sample_session(), "sample session"
        config.say(f"archipelago: {source}; the sample session stands in")
    out = _batch(name, recorded)
    players, turns = config.size((20, 60), (120, 600))
    room = large_room_session(players, turns)
    return out + _batch(f"large room ({players} players, {turns} turns)", room)


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
