"""Avara session rows of ``gamecodec bench``: two peers playing, per packet.

Two connected peers each send one kpKeyAndMouse per 16 ms frame, a fresh
input state every frame; each datagram takes 4 ms to arrive, with no loss, and
carries the ack for the other side. One packet is one ``send`` +
``datagrams_to_send`` on one side and one ``receive_datagram`` on the other:
the session's whole per-packet work (receive, ack bookkeeping, send). The
public ``avara.Connection`` (the compiled twin where it is built) plays
against the pure twin doing the same.
"""

from __future__ import annotations

import random
from typing import Any

from gamecodec import avara
from gamecodec._bench import Config, Contest, Row, Side, pure_twin, run_all, skipped
from gamecodec.avara.payloads import encode_key_and_mouse

__all__ = ["contests", "rows"]

FRAME = 0.016
LATENCY = 0.004
KEY_AND_MOUSE = 17
WARMUP = 200  # frames: past the sender-byte serials (<= 100) and the first RTT samples


def _inputs(frames: int, seed: int = 17) -> list[tuple[int, int, bytes]]:
    rng = random.Random(seed)
    out = []
    for frame in range(frames):
        p1, p2, _, data = encode_key_and_mouse(
            frame,
            held=rng.choice((0, 1, 5, 8, 2)),
            mouse_h=rng.randint(-40, 40),
            mouse_v=rng.randint(-40, 40),
        )
        out.append((p1, p2, data))
    return out


def _play(label: str, connection: Any, inputs: list[tuple[int, int, bytes]]) -> Side:
    def prepare() -> object:
        a = connection(my_id=1, peer_id=2)
        b = connection(my_id=2, peer_id=1)
        return a, b, _run(a, b, inputs[:WARMUP], 0.0)[1]

    def run(state: Any) -> int:
        a, b, now = state
        return _run(a, b, inputs, now)[0]

    return Side(label, run, prepare)


def _run(a: Any, b: Any, inputs: list[tuple[int, int, bytes]], now: float) -> tuple[int, float]:
    a_send, a_out, a_in = a.send, a.datagrams_to_send, a.receive_datagram
    b_send, b_out, b_in = b.send, b.datagrams_to_send, b.receive_datagram
    received = 0
    for frame, (p1, p2, data) in enumerate(inputs):
        a_send(KEY_AND_MOUSE, p1=p1, p2=p2, p3=frame, data=data, now=now)
        later = now + LATENCY
        for datagram in a_out(now):
            b_in(datagram, later)
            received += 1
        b_send(KEY_AND_MOUSE, p1=p1, p2=p2, p3=frame, data=data, now=later)
        for datagram in b_out(later):
            a_in(datagram, later + LATENCY)
            received += 1
        now += FRAME
    return received, now


def contests(config: Config) -> list[Contest | Row]:
    title = "Connection per packet (send, receive, acks) vs its pure twin"
    pure, reason = pure_twin("avara.session", "gamecodec.avara._session_py")
    if pure is None:
        return [skipped("avara", title, reason, peer="pure twin", limit=10.0)]
    frames = config.size(1_000, 10_000)
    inputs = _inputs(frames)
    return [
        Contest(
            "avara",
            title,
            f"{frames:,} frames each way, a fresh input every frame",
            2 * frames,
            "packet",
            _play("avara.Connection", avara.Connection, inputs),
            _play("pure twin", pure.Connection, inputs),
            limit=10.0,
        )
    ]


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
