"""Deterministic sample traffic: a ywindow session's small calls and events.

A client calls ``goto``/``resize``/``set_title`` and notifies ``goto``; the
server replies ``ok`` (FIFO) and sends ``mouse_moved``/``key_pressed``
events. The bytes come from this package's own encoder; generated, not
captured (no implementation of the protocol survives).
"""

from __future__ import annotations

import random

from gamecodec._public import public_dir
from gamecodec.ywindow._encode import call, notify, reply
from gamecodec.ywindow._models import Keyword

__all__ = ["sample_messages", "sample_stream"]

_OK = Keyword("ok")


def sample_messages(count: int = 5000, seed: int = 2001) -> list[bytes]:
    """``count`` encoded messages, mostly 10-40 bytes."""
    rng = random.Random(seed)
    out: list[bytes] = []
    while len(out) < count:
        roll = rng.random()
        if roll < 0.35:
            out.append(notify("mouse_moved", rng.randint(-40, 40), rng.randint(-40, 40)))
        elif roll < 0.5:
            out.append(notify("key_pressed", rng.randint(0, 255), chr(rng.randint(0x61, 0x7A))))
        elif roll < 0.65:
            out.append(call("goto", rng.randint(0, 1023), rng.randint(0, 767)))
            out.append(reply(_OK))
        elif roll < 0.75:
            out.append(notify("goto", rng.randint(0, 1023), rng.randint(0, 767)))
        elif roll < 0.85:
            out.append(call("resize", rng.randint(1, 1024), rng.randint(1, 768)))
            out.append(reply(_OK, rng.randint(0, 1 << 20)))
        elif roll < 0.95:
            out.append(call("set_title", f"window {rng.randint(0, 99)}"))
            out.append(reply(_OK))
        else:
            out.append(notify("damage", bytes(rng.getrandbits(8) for _ in range(16))))
    return out[:count]


def sample_stream(count: int = 5000, chunk: int = 4096) -> list[bytes]:
    """The sample messages as one stream, cut into ``chunk``-byte reads."""
    data = b"".join(sample_messages(count))
    return [data[i : i + chunk] for i in range(0, len(data), chunk)]


__dir__ = public_dir(__name__)
