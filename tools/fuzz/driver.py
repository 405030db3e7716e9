"""The shared fuzz driver: the target registry, twin comparison, op-stream
input, the mutation engine, the seed corpus and the findings directory.

A target is ``run(data: bytes) -> None``; it raises :class:`Finding` when an
input crashes a decoder, lets an undocumented exception escape, or makes the
pure and the compiled twin disagree. Everything else is a pass.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import math
import random
import re
import struct
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec

from gamecodec._protocols import protocols
from gamecodec.errors import DecodeError

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
DATA = ROOT / "tests" / "data"
PROTOCOLS = tuple(p.name for p in protocols())
"""The protocols whose targets ``tools/fuzz/<name>.py`` registers (their declarations list them)."""


class Finding(Exception):
    """An input that broke a rule (crash, foreign exception, twin mismatch)."""


@dataclasses.dataclass
class Target:
    name: str
    run: Callable[[bytes], None]
    kind: str  # "decoder" or "session"
    seeds: Callable[[], Iterable[bytes]]
    tokens: tuple[bytes, ...] = ()  # spliced in whole by the mutator (structure-aware)
    mutate: Callable[[bytes, random.Random], bytes] | None = None


TARGETS: dict[str, Target] = {}


def target(
    name: str,
    seeds: Callable[[], Iterable[bytes]],
    *,
    kind: str = "decoder",
    tokens: tuple[bytes, ...] = (),
    mutate: Callable[[bytes, random.Random], bytes] | None = None,
) -> Callable[[Callable[[bytes], None]], Callable[[bytes], None]]:
    """Register ``run`` as the fuzz target ``name``."""

    def register(run: Callable[[bytes], None]) -> Callable[[bytes], None]:
        TARGETS[name] = Target(name, run, kind, seeds, tokens, mutate)
        return run

    return register


def load_targets() -> dict[str, Target]:
    """Import every protocol's target module; the registry."""
    for module in (*PROTOCOLS, "capture"):
        importlib.import_module(f"tools.fuzz.{module}")
    return TARGETS


def twins(package: str, module: str) -> tuple[ModuleType, ModuleType]:
    """``(pure, compiled)``: both twins imported directly, as the tests do."""
    return (
        importlib.import_module(f"{package}.{module}_py"),
        importlib.import_module(f"{package}.{module}_c"),
    )


# -- comparing the twins ---------------------------------------------------------------


def canon(value: Any) -> Any:
    """A comparable form of a result: floats bit for bit, structs and
    NamedTuples field by field, errors by type, message, offset and partial."""
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    if isinstance(value, (str, bytes, int, bool)) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, BaseException):
        return (
            "error",
            type(value).__name__,
            str(value),
            getattr(value, "offset", None),
            canon(getattr(value, "partial", None)),
        )
    if isinstance(value, (bytearray, memoryview)):
        return (type(value).__name__, bytes(value))
    if isinstance(value, dict):
        return ("dict", tuple((canon(k), canon(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return (type(value).__name__, tuple(canon(v) for v in items))
    if isinstance(value, msgspec.Struct):
        fields = msgspec.structs.asdict(value)
        return (type(value).__name__, canon(fields))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        return (type(value).__name__, tuple(canon(getattr(value, n)) for n in names))
    if hasattr(value, "dtype") and hasattr(value, "tobytes"):  # numpy arrays
        return ("array", str(value.dtype), getattr(value, "shape", None), value.tobytes())
    return (type(value).__name__, repr(value))


def outcome(
    allowed: tuple[type[BaseException], ...], fn: Callable[..., Any], *args: Any, **kw: Any
) -> Any:
    """``fn``'s result or error in :func:`canon` form; an exception outside
    ``allowed`` is a :class:`Finding`."""
    try:
        return ("ok", canon(fn(*args, **kw)))
    except allowed as exc:
        return ("raised", canon(exc))
    except Finding:
        raise
    except Exception as exc:
        name = getattr(fn, "__qualname__", repr(fn))
        raise Finding(
            f"{type(exc).__name__} escaped {fn.__module__}.{name}: {exc}\n"
            + "".join(traceback.format_exception(exc))
        ) from exc


DECODE_ONLY = (DecodeError,)


def same(what: str, pure: Any, compiled: Any) -> None:
    """Raise a :class:`Finding` when the twins' outcomes differ."""
    if pure != compiled:
        raise Finding(f"twin mismatch in {what}:\n  py: {_short(pure)}\n  c:  {_short(compiled)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 2000 else text[:2000] + "..."


def both(what: str, pair: tuple[Any, Any], call: Callable[[Any], Any]) -> Any:
    """Run ``call`` on each twin of ``pair``; compare; the pure twin's outcome."""
    pure, compiled = (call(t) for t in pair)
    same(what, pure, compiled)
    return pure


# -- reading structure out of the input bytes ------------------------------------------------


class Ops:
    """The input read as a stream of choices (op streams, options, blobs);
    an exhausted stream reads zeros and sets :attr:`done`."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    @property
    def done(self) -> bool:
        return self.pos >= len(self.data)

    def byte(self) -> int:
        if self.pos >= len(self.data):
            self.pos += 1
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def pick(self, n: int) -> int:
        return self.byte() % n if n < 256 else (self.byte() << 8 | self.byte()) % n

    def choice(self, items: tuple[Any, ...] | list[Any]) -> Any:
        return items[self.pick(len(items))]

    def u16(self) -> int:
        return self.byte() << 8 | self.byte()

    def u32(self) -> int:
        return self.u16() << 16 | self.u16()

    def blob(self, limit: int = 255) -> bytes:
        n = min(self.byte(), limit)
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def items_of(data: bytes) -> list[bytes]:
    """Length-prefixed items (one length byte each), for the batch decoders."""
    out, pos = [], 0
    while pos < len(data):
        n = data[pos]
        out.append(data[pos + 1 : pos + 1 + n])
        pos += 1 + n
    return out


def join_items(items: Iterable[bytes]) -> bytes:
    """The inverse of :func:`items_of` (items cut at 255 bytes)."""
    return b"".join(bytes([len(i[:255])]) + i[:255] for i in items)


def chunks_of(data: bytes) -> list[bytes]:
    """``data`` cut at positions drawn from its own hash (a deterministic chunking):
    1-byte feeds, small chunks, or a few large ones."""
    rng = random.Random(zlib.crc32(data))
    style = rng.randrange(4)
    out, pos = [], 0
    while pos < len(data):
        n = 1 if style == 0 else rng.randint(1, 8 if style == 1 else 64 if style == 2 else 4096)
        out.append(data[pos : pos + n])
        pos += n
    if rng.randrange(8) == 0:
        out.insert(rng.randint(0, len(out)), b"")  # an empty feed too
    return out


TIMES = (0.0, 0.001, 0.004, 0.016, 0.016, 0.041, 0.1, 0.3, 1.0, 2.0, 4.5, 30.0, 121.0, -0.5)
BAD_TIMES = (math.nan, math.inf, -math.inf, 1e18, -(2.0**41))


# -- the mutation engine ---------------------------------------------------------------

INTERESTING = (0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x0A, 0x20, 0x00)


def mutate(data: bytes, rng: random.Random, corpus: list[bytes], tgt: Target) -> bytes:
    """One to four random edits: bit flips, interesting bytes, inserts,
    deletes, duplicated ranges, splices from the corpus, target tokens."""
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        op = rng.randrange(10 if tgt.tokens else 9)
        n = len(buf)
        if op == 0 and n:
            buf[rng.randrange(n)] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            buf[rng.randrange(n)] = rng.choice(INTERESTING)
        elif op == 2 and n:
            buf[rng.randrange(n)] = rng.randrange(256)
        elif op == 3:
            at = rng.randint(0, n)
            buf[at:at] = rng.randbytes(rng.choice((1, 1, 2, 4, 16)))
        elif op == 4 and n:
            at = rng.randrange(n)
            del buf[at : at + rng.choice((1, 1, 2, 4, 16, 64))]
        elif op == 5 and n:
            at = rng.randrange(n)
            piece = buf[at : at + rng.randint(1, 64)]
            to = rng.randint(0, n)
            buf[to:to] = piece
        elif op == 6 and corpus:
            other = rng.choice(corpus)
            cut, cut2 = rng.randint(0, n), rng.randint(0, len(other))
            buf = bytearray(
                buf[:cut] + other[cut2:] if rng.randrange(2) else other[:cut2] + buf[cut:]
            )
        elif op == 7 and n:
            at = rng.randrange(n)
            del buf[at:]
        elif op == 8 and n >= 2:  # an arithmetic change of a 1- to 4-byte integer
            width = rng.choice((1, 2, 4))
            at = rng.randrange(max(1, n - width + 1))
            raw = int.from_bytes(buf[at : at + width], "little")
            raw = (raw + rng.choice((-1, 1, -16, 16, 255, 256))) % (1 << (8 * width))
            buf[at : at + width] = raw.to_bytes(width, "little")[: len(buf[at : at + width])]
        elif op == 9:
            at = rng.randint(0, n)
            buf[at:at] = rng.choice(tgt.tokens)
    out = bytes(buf)
    if tgt.mutate is not None and rng.randrange(3) == 0:
        out = tgt.mutate(out, rng)
    return out[:65536]


def seeds_of(tgt: Target) -> list[bytes]:
    """The checked-in corpus of ``tgt`` (else its seeds, built from the project's data)."""
    folder = CORPUS / tgt.name
    files = sorted(folder.glob("*")) if folder.is_dir() else []
    return [f.read_bytes() for f in files] or list(tgt.seeds()) or [b""]


def write_corpus(tgt: Target, limit_bytes: int) -> tuple[int, int]:
    """Regenerate ``corpus/<target>/`` from the target's seeds (deduplicated,
    smallest first, at most ``limit_bytes``); returns (files, bytes)."""
    folder = CORPUS / tgt.name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*"):
        old.unlink()
    unique = sorted(set(tgt.seeds()), key=lambda s: (len(s), s))
    files = total = 0
    for seed in unique:
        if total + len(seed) > limit_bytes:
            continue
        (folder / hashlib.sha1(seed).hexdigest()[:16]).write_bytes(seed)
        files += 1
        total += len(seed)
    return files, total


def signature(exc: BaseException) -> str:
    """What makes two findings the same bug: the first line, digits blanked."""
    return re.sub(r"\d+", "N", str(exc).splitlines()[0])[:200]


def save_finding(findings: Path, tgt: Target, data: bytes, exc: BaseException) -> Path:
    folder = findings / tgt.name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / hashlib.sha1(data).hexdigest()[:16]
    path.with_suffix(".bin").write_bytes(data)
    path.with_suffix(".txt").write_text(str(exc) + "\n")
    return path.with_suffix(".bin")


SLOW = 2.0  # seconds for one input (inputs are at most 64 KiB)


def check(tgt: Target, data: bytes) -> None:
    """Run ``tgt`` on ``data``; any exception that escapes it is a :class:`Finding`."""
    try:
        tgt.run(data)
    except Finding:
        raise
    except Exception as exc:
        raise Finding(
            f"{type(exc).__name__} escaped {tgt.name}: {exc}\n"
            + "".join(traceback.format_exception(exc))
        ) from exc


def fuzz(
    tgt: Target,
    *,
    seconds: float | None,
    inputs: int | None,
    rng: random.Random,
    findings: Path,
    max_findings: int = 5,
    progress: float = 0.0,
    report: Callable[[str], None] = print,
) -> tuple[int, list[Path]]:
    """Mutate the corpus of ``tgt`` for ``seconds`` or ``inputs`` (whichever
    ends first); returns the inputs run and the saved findings. An input
    slower than :data:`SLOW` in two runs is a finding; ``progress`` (seconds) reports
    the count that often."""
    corpus = seeds_of(tgt)
    saved: list[Path] = []
    seen: set[str] = set()
    deadline = None if seconds is None else time.monotonic() + seconds
    count = 0
    next_report = time.monotonic() + progress
    queue: Iterator[bytes] = iter(list(corpus))  # every seed once, first
    while (inputs is None or count < inputs) and (
        deadline is None or count % 16 or time.monotonic() < deadline
    ):
        data = next(queue, None)
        if data is None:
            data = mutate(rng.choice(corpus), rng, corpus, tgt)
        count += 1
        started = time.monotonic()
        try:
            check(tgt, data)
            spent = time.monotonic() - started
            if spent > SLOW:  # timed again: a stall of the host is not the input's
                again = time.monotonic()
                check(tgt, data)
                spent = min(spent, time.monotonic() - again)
            if spent > SLOW:
                raise Finding(f"slow input: {spent:.1f} s for {len(data)} bytes (twice)")
        except Finding as exc:
            sig = signature(exc)
            if sig not in seen:
                seen.add(sig)
                path = save_finding(findings, tgt, data, exc)
                saved.append(path)
                report(f"  FINDING {tgt.name}: {str(exc).splitlines()[0]} -> {path}")
            if len(saved) >= max_findings:
                break
            continue
        if progress and started >= next_report:
            next_report = started + progress
            report(f"  {tgt.name}: {count} inputs so far, findings {len(saved)}")
        if count % 64 == 0 and len(corpus) < 4096 and rng.randrange(4) == 0:
            corpus.append(data)  # keep some mutants: deeper mutation chains
    return count, saved
