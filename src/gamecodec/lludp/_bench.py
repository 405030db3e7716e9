"""LLUDP rows of ``gamecodec bench``: a region's stream of distinct packets.

The stream is :func:`gamecodec.lludp.sample.region_stream` (every packet
distinct, a region's mix, every template message among them), encoded once by
the public ``lludp.encode``. gamecodec runs through its public functions
(``lludp.decode``, ``encode``, ``peek``); the peer is Hippolyzer 0.17.6 (PyPI
``hippolyzer``, Python 3.12+): in this process when it imports here, else in a
second Python that has it (:mod:`gamecodec.lludp._bench_hippolyzer`), else
its rows are skipped with how to get them. The floor is msgspec's MessagePack
decoder building equivalent Structs from the same messages' values.
"""

from __future__ import annotations

import atexit
import itertools
import os
import pickle
import platform
import shutil
import statistics
import subprocess
import sys
import uuid
from collections.abc import Callable
from functools import cache, partial
from types import GenericAlias
from typing import Any

from gamecodec import lludp
from gamecodec._bench import (
    Config,
    Contest,
    Lazy,
    Row,
    Side,
    measure_together,
    pure_twin,
    run_all,
    skipped,
)
from gamecodec.lludp import _bench_hippolyzer
from gamecodec.lludp.sample import bench_messages, region_stream

__all__ = [
    "RemotePeer",
    "contests",
    "hippolyzer",
    "msgpack_floor",
    "peer",
    "peer_label",
    "peer_sides",
    "rows",
    "single_packet_rows",
    "stream",
]

PEER = "Hippolyzer 0.17.6"


hippolyzer = cache(_bench_hippolyzer.load)
"""Hippolyzer in this process: its deserializers and serializer, or why not."""

HIPPOLYZER_PYTHON = "GAMECODEC_HIPPOLYZER_PYTHON"
_CONTROL = {"PacketAck", "StartPingCheck", "CompletePingCheck"}


class RemotePeer:
    """:mod:`gamecodec.lludp._bench_hippolyzer` serving under another Python."""

    def __init__(self, python: str) -> None:
        self.python = python
        self._proc = subprocess.Popen(
            [python, "-I", _bench_hippolyzer.__file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        info = self.call("info")
        assert isinstance(info, dict)
        self.version = str(info["python"])

    def call(self, *request: object) -> Any:
        """Send one request, wait for its answer (a worker error raises RuntimeError)."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        pickle.dump(request, self._proc.stdin, protocol=4)
        self._proc.stdin.flush()
        try:
            status, answer = pickle.load(self._proc.stdout)
        except EOFError:
            raise RuntimeError(f"the Hippolyzer worker under {self.python} exited") from None
        if status != "ok":
            raise RuntimeError(f"the Hippolyzer worker under {self.python}: {answer}")
        return answer

    def close(self) -> None:
        """End the worker (it exits when its stdin closes)."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def _candidates() -> list[str]:
    named = os.environ.get(HIPPOLYZER_PYTHON)
    if named:
        return [named]
    found = (shutil.which(f"python3.{minor}") for minor in (12, 13, 14))
    return [p for p in found if p is not None]


def _has_hippolyzer(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-I", "-c", "import hippolyzer.lib.base.message.udpdeserializer"],
            check=False,
            capture_output=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _why_not(local: str) -> str:
    here = platform.python_version()
    if sys.version_info >= (3, 12):
        return local
    named = os.environ.get(HIPPOLYZER_PYTHON)
    if named:
        return (
            f"{PEER} does not import under {HIPPOLYZER_PYTHON}={named} "
            f"(python -m pip install hippolyzer==0.17.6 there)"
        )
    return (
        f"{PEER} needs Python 3.12+ (this is {here}) and no python3.12+ with it was "
        f"found. To time it: python3.12 -m venv hv && hv/bin/pip install "
        f"hippolyzer==0.17.6, then run with {HIPPOLYZER_PYTHON}=hv/bin/python: its side is "
        f"then timed there, round by round with gamecodec's here."
    )


@cache
def peer() -> dict[str, Any] | RemotePeer | str:
    """Hippolyzer here (its functions), in a second Python (a worker), or why not."""
    local = hippolyzer()
    if not isinstance(local, str):
        return local
    for python in _candidates():
        if _has_hippolyzer(python):
            try:
                remote = RemotePeer(python)
            except (OSError, RuntimeError, EOFError) as exc:
                return f"{PEER} under {python} did not start ({exc})"
            atexit.register(remote.close)
            return remote
    return _why_not(local)


def peer_label(base: str = PEER) -> str:
    """The peer's name in the table, with the Python it runs on when that is another."""
    found = peer()
    if isinstance(found, RemotePeer):
        return f"{base} on Python {found.version} (a 2nd process)"
    return base


@cache
def stream(count: int) -> tuple[list[bytes], int]:
    """The region stream's datagrams that every side decodes, and how many
    generated packets were left out because a decoder refused them."""
    datagrams = [lludp.encode(m) for m in region_stream(count)]
    ours = []
    for data in datagrams:
        try:
            lludp.decode(data, strict=True)
        except Exception:
            continue
        ours.append(data)
    found = peer()
    if isinstance(found, RemotePeer):
        bad = set(found.call("refused", ours))
    elif isinstance(found, dict):
        bad = set(_bench_hippolyzer.refused(found, ours))
    else:
        bad = set()
    kept = [d for n, d in enumerate(ours) if n not in bad]
    return kept, len(datagrams) - len(kept)


def _remote_only(_: object) -> object:
    raise RuntimeError("this side runs in a second Python: time it with gamecodec bench")


@cache
def peer_sides(count: int, held_count: int) -> dict[str, Side] | str:
    """Hippolyzer's side of each row (``decode``, ``kept``, ``encode``, ``peek``,
    ``circuit``) on the stream of ``count`` packets, or why there is none."""
    found = peer()
    if isinstance(found, str):
        return found
    data, _ = stream(count)
    held = list(itertools.islice(itertools.cycle(data), held_count))
    circuit = [
        (d, name == "AgentUpdate")
        for d, name in ((d, lludp.peek(d).name) for d in data)
        if name not in _CONTROL
    ]
    labels = {"peek": peer_label(PEER + " (lazy)"), "circuit": peer_label(PEER + " Circuit")}
    if isinstance(found, RemotePeer):
        names = found.call("setup", data, held, circuit)
        return {
            name: Side(
                labels.get(name, peer_label()),
                _remote_only,
                timed=partial(found.call, "time", name),
            )
            for name in names
        }
    out = {}
    for name, (prepare, run, release) in _bench_hippolyzer.sides(
        found, data, held, circuit
    ).items():
        out[name] = Side(labels.get(name, PEER), run, prepare, release)
    return out


def _workload(count: int, left_out: int) -> str:
    extra = f", {left_out} that a decoder refuses left out" if left_out else ""
    return f"{count:,} distinct packets{extra}"


def _loop(fn: Callable[[Any], object], items: list[Any]) -> Side:
    def run(_: object) -> None:
        for item in items:
            fn(item)

    return Side("", run)


def _side(label: str, fn: Callable[[Any], object], items: list[Any]) -> Side:
    return Side(label, _loop(fn, items).run)


def _each_of(label: str, fn: Callable[[Any], object], inputs: Lazy) -> Side:
    """``fn`` on each of the inputs, built when the contest starts."""

    def run(items: Any) -> None:
        for item in items:
            fn(item)

    return Side(label, run, inputs.get, finish=inputs.drop)


def _kept(label: str, fn: Callable[[Any], object], items: list[Any]) -> Side:
    """Decode every item and keep every result in one list (the GC on)."""

    def run(_: object) -> list[object]:
        held: list[object] = []
        append = held.append
        for item in items:
            append(fn(item))
        return held

    def release(held: object) -> None:
        assert isinstance(held, list)
        held.clear()

    return Side(label, run, release=release)


def contests(config: Config) -> list[Contest | Row]:
    """The LLUDP contests on the region stream (see the module docstring)."""
    count = config.size(2_000, 20_000)
    held_count = config.size(4_000, 100_000)
    config.say(f"lludp: generating a region stream of {count:,} distinct packets ...")
    data, left_out = stream(count)
    work = _workload(len(data), left_out)
    held = list(itertools.islice(itertools.cycle(data), held_count))
    held_work = f"{held_count:,} decoded messages kept, from the {len(data):,} distinct packets"
    out: list[Contest | Row] = []
    theirs = peer_sides(count, held_count)
    ours_decode = lludp.decode
    titles = [
        ("decode, results dropped", 30.0, work),
        ("decode, results kept in a list (GC on)", 15.0, held_work),
        ("encode", 15.0, work),
        ("peek (header and name) vs Hippolyzer's lazy deserialize", 15.0, work),
    ]
    if isinstance(theirs, str):
        out += [
            skipped("lludp", t, theirs, peer=PEER, limit=lim, workload=w) for t, lim, w in titles
        ]
    else:
        ours_messages = Lazy(lambda: [ours_decode(d) for d in data])
        ours = [
            _side("lludp.decode", ours_decode, data),
            _kept("lludp.decode", ours_decode, held),
            _each_of("lludp.encode", lludp.encode, ours_messages),
            _side("lludp.peek", lludp.peek, data),
        ]
        for (title, limit, workload), side, name in zip(
            titles, ours, ("decode", "kept", "encode", "peek"), strict=True
        ):
            items = held_count if "kept" in title else len(data)
            out.append(
                Contest("lludp", title, workload, items, "packet", side, theirs[name], limit=limit)
            )
    floor = msgpack_floor(data)
    out.append(
        Contest(
            "lludp",
            "decode vs a floor: msgspec.msgpack building equivalent Structs",
            work,
            len(data),
            "packet",
            _side("lludp.decode", ours_decode, data),
            _side("msgspec.msgpack", floor[0], floor[1]),
            kind="cost",
        )
    )
    return out


# ---- the floor: the same values as MessagePack, decoded into Structs ----------


def _python_type(ftype: lludp.FieldType) -> Any:
    t = lludp.FieldType
    if ftype in (t.F32, t.F64):
        return float
    if ftype == t.BOOL:
        return bool
    if ftype == t.LLUUID:
        return uuid.UUID
    if ftype in (t.LLVECTOR3, t.LLVECTOR3D):
        return tuple[float, float, float]
    if ftype in (t.LLVECTOR4, t.LLQUATERNION):
        return tuple[float, float, float, float]
    if ftype == t.IPADDR:
        return str
    if ftype in (t.FIXED, t.VARIABLE):
        return bytes
    return int


def _struct_types(names: set[str]) -> tuple[Any, dict[str, tuple[Any, list[Any]]]]:
    """A tagged union of one array-like Struct per message (its blocks as
    fields, each a tuple of array-like, untracked block Structs), and for each
    message its class and its block classes."""
    import msgspec

    template = lludp.default_template()
    classes: dict[str, tuple[Any, list[Any]]] = {}
    for name in sorted(names):
        spec = template[name]
        fields: list[tuple[str, Any]] = [
            ("flags", int),
            ("sequence", int),
            ("acks", tuple[int, ...]),
        ]
        blocks = []
        for block in spec.blocks:
            block_type = msgspec.defstruct(
                f"{name}_{block.name}",
                [(f.name, _python_type(f.type)) for f in block.fields],
                array_like=True,
                gc=False,
            )
            blocks.append(block_type)
            fields.append((block.name, GenericAlias(tuple, (block_type, ...))))
        classes[name] = (msgspec.defstruct(name, fields, array_like=True, tag=name), blocks)
    union: Any = None
    for cls, _ in classes.values():
        union = cls if union is None else union | cls
    return union, classes


def _as_struct(message: lludp.Message, cls: Any, blocks: list[Any]) -> Any:
    values = [
        [block_type(*b) for b in instances]
        for block_type, instances in zip(blocks, message.blocks.values(), strict=True)
    ]
    return cls(message.flags, message.sequence, message.acks, *values)


def msgpack_floor(data: list[bytes]) -> tuple[Callable[[bytes], object], list[bytes]]:
    """The floor's decode function and its inputs: each packet's decoded values
    (header, acks, every block's fields) encoded once as MessagePack."""
    import msgspec

    messages = [lludp.decode(d) for d in data]
    union, classes = _struct_types({m.name for m in messages})
    encode = msgspec.msgpack.Encoder(uuid_format="bytes").encode  # 16 bytes, as on the wire
    blobs = [encode(_as_struct(m, *classes[m.name])) for m in messages]
    return msgspec.msgpack.Decoder(union).decode, blobs


# ---- secondary table: single packets, one packet again and again ----------------


def single_packet_rows(config: Config) -> list[Row]:
    """The five sample packets (``sample.bench_messages``), each decoded and
    encoded again and again: gamecodec against the pure twin and (when
    present) Hippolyzer. No targets:
    a repeated packet is the best case of every cache, not traffic."""
    pure = pure_twin("lludp", "gamecodec.lludp._codec_py")[0]
    hip = hippolyzer()
    tpl = lludp.default_template()
    out: list[Row] = []
    for name, message in bench_messages().items():
        data = lludp.encode(message)
        msg = lludp.decode(data)
        fns: dict[str, Callable[[], object]] = {
            "decode": partial(lludp.decode, data),
            "encode": partial(lludp.encode, msg),
        }
        if pure is not None:
            fns["pure decode"] = partial(pure.decode, data, tpl)
            fns["pure encode"] = partial(pure.encode, msg, tpl)
        if not isinstance(hip, str):
            fns["peer decode"] = partial(hip["decode"], data)
            fns["peer encode"] = partial(hip["encode"], hip["decode"](data))
        config.say(f"lludp: single packet {name} ...")
        got = measure_together(fns, rounds=config.rounds)
        for op in ("decode", "encode"):
            for peer, label in (("pure", "pure twin"), ("peer", PEER)):
                key = f"{peer} {op}"
                if key not in got:
                    continue
                ratios = [p / o for o, p in zip(got[op], got[key], strict=True)]
                out.append(
                    Row(
                        "lludp",
                        f"{op} one {name} again and again",
                        "1 packet, repeated",
                        "packet",
                        f"lludp.{op}",
                        label,
                        "speedup",
                        None,
                        ours_us=statistics.median(got[op]) * 1e6,
                        peer_us=statistics.median(got[key]) * 1e6,
                        ratio=statistics.median(ratios),
                        low=min(ratios),
                        high=max(ratios),
                        rounds=ratios,
                    )
                )
    return out


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
