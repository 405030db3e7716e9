"""Hippolyzer's side of the LLUDP bench rows, in this process or in another Python.

Hippolyzer 0.17.6 needs Python 3.12+. When it imports here, ``gamecodec
bench`` calls :func:`sides` directly. When it does not, the bench runs this
file as a script under a second interpreter that has it
(``GAMECODEC_HIPPOLYZER_PYTHON``, else ``python3.12``/``python3.13`` on
``PATH`` when Hippolyzer imports there) and asks it, round by round, to time
one pass of a side: the parent times gamecodec's pass, then the worker times
Hippolyzer's, alternating as in one process. The worker imports only the
standard library and Hippolyzer (never gamecodec: the compiled twins are
built for the parent's Python).

Requests and answers are pickles on stdin/stdout: ``("refused", datagrams)``
answers the indices of ``datagrams`` Hippolyzer refuses; ``("setup",
datagrams, held, circuit)`` builds the sides of :func:`sides`; ``("time",
side, repeat)`` answers the seconds per pass; ``("info",)`` the versions.
"""

from __future__ import annotations

import asyncio
import gc
import pickle
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Pass", "load", "serve", "sides", "timed_pass"]

VERSION = "0.17.6"

Pass = tuple[Callable[[], Any], Callable[[Any], Any], Callable[[Any], None]]
"""A side's (prepare, run, release): ``run`` is timed, the others are not."""


def load() -> dict[str, Any] | str:
    """Hippolyzer's eager and lazy deserializers and its serializer, or why not."""
    try:
        from hippolyzer.lib.base import settings
        from hippolyzer.lib.base.message.udpdeserializer import UDPMessageDeserializer
        from hippolyzer.lib.base.message.udpserializer import UDPMessageSerializer
    except ImportError:
        return f"Hippolyzer is not installed (pip install hippolyzer=={VERSION}, Python 3.12+)"
    except Exception as exc:  # installed but broken
        return f"Hippolyzer does not import here ({type(exc).__name__}: {exc})"
    eager = settings.Settings()
    eager.ENABLE_DEFERRED_PACKET_PARSING = False
    lazy = settings.Settings()
    lazy.ENABLE_DEFERRED_PACKET_PARSING = True
    return {
        "decode": UDPMessageDeserializer(settings=eager).deserialize,
        "peek": UDPMessageDeserializer(settings=lazy).deserialize,
        "encode": UDPMessageSerializer().serialize,
    }


def refused(hip: dict[str, Any], datagrams: list[bytes]) -> list[int]:
    """The indices of the datagrams Hippolyzer's decoder refuses."""
    out = []
    for n, data in enumerate(datagrams):
        try:
            hip["decode"](data)
        except Exception:
            out.append(n)
    return out


def _nothing() -> None:
    return None


def _drop(_: Any) -> None:
    return None


def _each(fn: Callable[[Any], object], items: list[Any]) -> Pass:
    def run(_: object) -> None:
        for item in items:
            fn(item)

    return _nothing, run, _drop


def _kept(fn: Callable[[Any], object], items: list[Any]) -> Pass:
    def run(_: object) -> list[object]:
        held: list[object] = []
        append = held.append
        for item in items:
            append(fn(item))
        return held

    def release(held: Any) -> None:
        held.clear()

    return _nothing, run, release


def _encode(hip: dict[str, Any], data: list[bytes]) -> Pass:
    """Hippolyzer's serializer over its own decodes, built on the first pass."""
    messages: list[Any] = []

    def prepare() -> list[Any]:
        if not messages:
            messages.extend(hip["decode"](d) for d in data)
        return messages

    def run(items: list[Any]) -> None:
        encode = hip["encode"]
        for item in items:
            encode(item)

    return prepare, run, _drop


class _Wire:
    """Hippolyzer's transport interface, keeping what is sent."""

    def __init__(self) -> None:
        self.out: list[bytes] = []

    def send_packet(self, packet: Any) -> None:
        self.out.append(packet.data)

    def close(self) -> None:
        pass


def _circuit(hip: dict[str, Any], wanted: list[tuple[bytes, bool]]) -> Pass:
    """Two Hippolyzer Circuits carrying ``wanted`` ((datagram, goes up) pairs),
    acking as its client does (see ``gamecodec.lludp._bench_circuit``)."""
    from hippolyzer.lib.base.message.circuit import Circuit
    from hippolyzer.lib.base.network.transport import Direction

    deserialize = hip["decode"]

    def prepare() -> object:
        loop = asyncio.new_event_loop()  # its resend records hold asyncio Futures
        asyncio.set_event_loop(loop)
        messages = []
        for datagram, up in wanted:
            msg = deserialize(datagram)
            msg.packet_id = None
            msg.synthetic = True
            msg.acks = ()
            messages.append((msg, up))
        sim_wire, viewer_wire = _Wire(), _Wire()
        sim = Circuit(("127.0.0.1", 1), ("127.0.0.1", 2), sim_wire)
        viewer = Circuit(("127.0.0.1", 2), ("127.0.0.1", 1), viewer_wire)
        return loop, messages, (sim, sim_wire), (viewer, viewer_wire)

    def deliver(wire: _Wire, dst: Any) -> int:
        n = 0
        for datagram in wire.out:
            msg = deserialize(datagram)
            msg.direction = Direction.IN
            dst.collect_acks(msg)
            if msg.reliable:
                dst.send_acks((msg.packet_id,))
                dst.track_reliable(msg.packet_id)
            n += 1
        wire.out.clear()
        return n

    def run(state: Any) -> tuple[Any, int]:
        loop, messages, sim, viewer = state
        received = 0
        for i, (msg, up) in enumerate(messages):
            (src, src_wire), (dst, dst_wire) = (viewer, sim) if up else (sim, viewer)
            src.send(msg)
            received += deliver(src_wire, dst)
            received += deliver(dst_wire, src)
            if i % 50 == 0:
                src.resend_unacked()
                dst.resend_unacked()
        return loop, received

    def release(result: Any) -> None:
        asyncio.set_event_loop(None)
        result[0].close()

    return prepare, run, release


def sides(
    hip: dict[str, Any],
    datagrams: list[bytes],
    held: list[bytes],
    circuit: list[tuple[bytes, bool]],
) -> dict[str, Pass]:
    """Hippolyzer's side of each LLUDP row, by row name."""
    return {
        "decode": _each(hip["decode"], datagrams),
        "kept": _kept(hip["decode"], held),
        "encode": _encode(hip, datagrams),
        "peek": _each(hip["peek"], datagrams),
        "circuit": _circuit(hip, circuit),
    }


def timed_pass(side: Pass, repeat: int) -> float:
    """Seconds per pass over ``repeat`` passes, from a collected heap, each
    prepared and released untimed (as ``gamecodec._bench`` times a side)."""
    prepare, run, release = side
    total = 0.0
    gc.collect()
    for _ in range(repeat):
        arg = prepare()
        start = time.perf_counter()
        kept = run(arg)
        total += time.perf_counter() - start
        release(kept)
        del kept, arg
    return total / repeat


def serve() -> None:
    """Answer requests on stdin until it closes (see the module docstring)."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    hip = load()
    table: dict[str, Pass] = {}
    while True:
        try:
            request = pickle.load(inp)
        except EOFError:
            return
        try:
            if isinstance(hip, str):
                raise RuntimeError(hip)
            if request[0] == "info":
                answer: object = {"python": platform.python_version(), "hippolyzer": VERSION}
            elif request[0] == "refused":
                answer = refused(hip, request[1])
            elif request[0] == "setup":
                table = sides(hip, *request[1:])
                answer = sorted(table)
            elif request[0] == "time":
                answer = timed_pass(table[request[1]], request[2])
            else:
                raise ValueError(f"unknown request {request[0]!r}")
            reply: tuple[str, object] = ("ok", answer)
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, out, protocol=4)
        out.flush()


if __name__ == "__main__":
    serve()
