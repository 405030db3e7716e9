"""LLUDP rows of ``gamecodec bench``: the speed-table packets through both twins.

When Hippolyzer (PyPI ``hippolyzer``, Python 3.12+) is importable, the
issue's ratios against it are measured on the same packets in the same run;
zero-expansion is always compared with copying the same buffer.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

from gamecodec._bench import Case, Target, measure_together
from gamecodec._bench import paired_ratio as ratio
from gamecodec.lludp import _codec_py
from gamecodec.lludp.sample import bench_messages
from gamecodec.lludp.template import Template, default_template

__all__ = ["bench_packets", "cases", "expand_buffers", "hippolyzer", "targets"]


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.lludp._codec_c")
    except ImportError:
        return None


def bench_packets() -> dict[str, bytes]:
    """The sample packets, encoded."""
    tpl = default_template()
    return {name: _codec_py.encode(m, tpl) for name, m in bench_messages().items()}


def _zero_body(packets: dict[str, bytes]) -> bytes:
    """The zero-coded body (number + blocks) of the ObjectUpdate x5 packet."""
    data = packets["ObjectUpdate x5"]
    return data[6:]


def expand_buffers(size: int = 65536) -> dict[str, bytes]:
    """Zero-coded buffers of ``size`` bytes: object-update-like, and random bytes."""
    body = _zero_body(bench_packets())
    rng = random.Random(64)
    return {
        "ObjectUpdate bodies": (body * (size // len(body) + 1))[:size],
        "random bytes": _codec_py.zero_encode(rng.randbytes(size))[:size],
    }


def hippolyzer() -> dict[str, Callable[..., Any]] | None:
    """Hippolyzer's decode, lazy decode, encode and zero-expand, if it is installed."""
    try:
        from hippolyzer.lib.base import settings
        from hippolyzer.lib.base.message.udpdeserializer import (
            UDPMessageDeserializer,
        )
        from hippolyzer.lib.base.message.udpserializer import (
            UDPMessageSerializer,
        )
    except Exception:
        return None
    eager = settings.Settings()
    eager.ENABLE_DEFERRED_PACKET_PARSING = False
    lazy = settings.Settings()
    lazy.ENABLE_DEFERRED_PACKET_PARSING = True
    return {
        "decode": UDPMessageDeserializer(settings=eager).deserialize,
        "peek": UDPMessageDeserializer(settings=lazy).deserialize,
        "encode": UDPMessageSerializer().serialize,
        "zero_decode": UDPMessageDeserializer.zero_code_expand,
    }


def _each(fn: Callable[..., object], *args: object) -> Callable[[], object]:
    return lambda: fn(*args)


def cases() -> list[Case]:
    tpl = default_template()
    c = _compiled()
    packets = bench_packets()
    out: list[Case] = []
    for name, data in packets.items():
        msg = _codec_py.decode(data, tpl)
        out.append(
            Case(
                "lludp", f"decode {name}", 1, len(data),
                None if c is None else _each(c.decode, data, tpl),
                _each(_codec_py.decode, data, tpl),
            )
        )  # fmt: skip
        out.append(
            Case(
                "lludp", f"encode {name}", 1, len(data),
                None if c is None else _each(c.encode, msg, tpl),
                _each(_codec_py.encode, msg, tpl),
            )
        )  # fmt: skip
    batch = list(packets.values()) * 20
    out.append(
        Case(
            "lludp", "peek (100 mixed packets)", len(batch), sum(map(len, batch)),
            None if c is None else _each(lambda: [c.peek(d, tpl) for d in batch]),
            _each(lambda: [_codec_py.peek(d, tpl) for d in batch]),
        )
    )  # fmt: skip
    body = _zero_body(packets)
    out.append(
        Case(
            "lludp", f"zero_decode ({len(body)} B body)", 1, len(body),
            None if c is None else _each(c.zero_decode, body),
            _each(_codec_py.zero_decode, body),
        )
    )  # fmt: skip
    return out


def _ratio_targets(c: ModuleType, tpl: Template, rounds: int, min_time: float) -> list[Target]:
    hip = hippolyzer()
    if hip is None:
        return []
    out: list[Target] = []
    for name, data in bench_packets().items():
        ours = c.decode(data, tpl)
        theirs = hip["decode"](data)
        t = measure_together(
            {
                "hd": _each(hip["decode"], data),
                "cd": _each(c.decode, data, tpl),
                "he": _each(hip["encode"], theirs),
                "ce": _each(c.encode, ours, tpl),
                "hp": _each(hip["peek"], data),
                "cp": _each(c.peek, data, tpl),
            },
            rounds=rounds,
            min_time=min_time,
        )
        out += [
            Target(
                "lludp", f"Hippolyzer / compiled decode, {name}", ratio(t, "hd", "cd"), 50, False
            ),
            Target(
                "lludp", f"Hippolyzer / compiled encode, {name}", ratio(t, "he", "ce"), 40, False
            ),
            Target(
                "lludp", f"Hippolyzer lazy / compiled peek, {name}", ratio(t, "hp", "cp"), 20, False
            ),
        ]
    body = _zero_body(bench_packets())
    t = measure_together(
        {"hz": _each(hip["zero_decode"], body), "cz": _each(c.zero_decode, body)},
        rounds=rounds,
        min_time=min_time,
    )
    out.append(
        Target(
            "lludp",
            f"Hippolyzer / compiled zero_decode, {len(body)} B",
            ratio(t, "hz", "cz"),
            100,
            False,
        )
    )
    return out


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """Ratios against Hippolyzer (when installed) and against a plain copy."""
    c = _compiled()
    if c is None:
        return []
    tpl = default_template()
    out = _ratio_targets(c, tpl, rounds, min_time)
    for label, buf in expand_buffers().items():
        t = measure_together(
            {
                "copy": _each(lambda b: bytes(memoryview(b)), buf),
                "zd": _each(c.zero_decode, buf, 1 << 24),
            },
            rounds=rounds,
            min_time=min_time,
        )
        out.append(
            Target("lludp", f"zero-expand 64 KiB ({label}) / copy", ratio(t, "zd", "copy"), 4, True)
        )
    return out
