"""Avara session rows of ``gamecodec bench``: the per-packet cost of Connection.

The steady state of play: two connected peers each send one kpKeyAndMouse per
frame and receive the other's (which carries the ack of theirs). One "packet"
is one ``send`` + ``datagrams_to_send`` on one side and one
``receive_datagram`` on the other, the session's whole per-packet work:
receive, ack bookkeeping, send. The baseline is the compiled
``decode_datagram`` of the same datagrams.
"""

from __future__ import annotations

import importlib
import statistics
from collections.abc import Callable
from types import ModuleType

from gamecodec._bench import Case, Target, measure
from gamecodec.avara import _codec_py
from gamecodec.avara.payloads import encode_key_and_mouse
from gamecodec.avara.session import Connection

__all__ = ["cases", "targets"]

FRAME = 0.016
LATENCY = 0.004
KM = 17


def _inputs() -> list[tuple[int, int, bytes]]:
    out = []
    for i in range(8):
        p1, p2, _, data = encode_key_and_mouse(1, held=1 + (i & 1), mouse_h=i)
        out.append((p1, p2, data))
    return out


_INPUTS = _inputs()


def _compiled() -> ModuleType | None:
    try:
        return importlib.import_module("gamecodec.avara._codec_c")
    except ImportError:
        return None


class _Play:
    """Two peers exchanging one kpKeyAndMouse each per frame, lossless."""

    def __init__(self, codec: ModuleType) -> None:
        self.a = Connection(my_id=1, peer_id=2, codec=codec)
        self.b = Connection(my_id=2, peer_id=1, codec=codec)
        self.now = 0.0
        self.frame = 0
        self.wire: list[bytes] = []
        self.run(200)  # past the sender-byte serials and the first RTT samples
        self.wire.clear()

    def run(self, frames: int) -> int:
        """Play ``frames`` frames; return the number of datagrams received.

        Each datagram takes 4 ms to arrive; the peers only look at their
        sessions when something arrives and once per frame, as the game does.
        """
        a, b = self.a, self.b
        now = self.now
        frame = self.frame
        wire = self.wire
        inputs = _INPUTS
        received = 0
        for _ in range(frames):
            frame += 1
            p1, p2, data = inputs[frame & 7]
            a.send(KM, p1=p1, p2=p2, p3=frame, data=data, now=now)
            later = now + LATENCY
            for dg in a.datagrams_to_send(now):
                if len(wire) < 2000:
                    wire.append(dg)
                b.receive_datagram(dg, later)
                received += 1
            b.send(KM, p1=p1, p2=p2, p3=frame, data=data, now=later)
            for dg in b.datagrams_to_send(later):
                if len(wire) < 2000:
                    wire.append(dg)
                a.receive_datagram(dg, later + LATENCY)
                received += 1
            now += FRAME
        self.now = now
        self.frame = frame
        return received


def cases(frames: int = 1000) -> list[Case]:
    c = _compiled()

    def play(codec: ModuleType) -> Callable[[], object]:
        game = _Play(codec)
        return lambda: game.run(frames)

    probe = _Play(_codec_py)
    probe.run(frames)
    nbytes = sum(map(len, probe.wire)) * frames * 2 // max(1, len(probe.wire))
    return [
        Case(
            "avara",
            "Connection: send + receive + ack, one kpKeyAndMouse each way per frame",
            2 * frames,
            nbytes,
            None if c is None else play(c),
            play(_codec_py),
        )
    ]


def targets(*, rounds: int = 7, min_time: float = 0.05) -> list[Target]:
    """The issue's ratio: per-packet session cost against the compiled decode
    of the same packets (session on the compiled codec)."""
    c = _compiled()
    if c is None:
        return []
    frames = 500
    game = _Play(c)
    packets = game.run(frames)
    sample = list(game.wire)
    game.wire.clear()
    decode = c.decode_datagram
    encode = c.encode_datagram
    decoded = [decode(d) for d in sample]

    def decode_all() -> None:
        for d in sample:
            decode(d)

    def encode_all() -> None:
        for d in decoded:
            encode(d.ack, d.commands, d.ack_bitmap)

    # interleaved rounds: this machine is shared, so compare like with like
    ratios_all: list[float] = []
    ratios_own: list[float] = []
    for _ in range(rounds):
        t_session = measure(lambda: game.run(frames), rounds=1, min_time=min_time) / packets
        t_decode = measure(decode_all, rounds=1, min_time=min_time) / len(sample)
        t_encode = measure(encode_all, rounds=1, min_time=min_time) / len(sample)
        # the session calls the codec twice a packet: decode on receive and
        # encode of the datagram (a command's size is only encoded when packing)
        ratios_all.append(t_session / t_decode)
        ratios_own.append((t_session - t_decode - t_encode) / t_decode)
    return [
        Target(
            "avara",
            "Connection per packet (send + receive + ack, codec calls included) / compiled decode",
            statistics.median(ratios_all),
            2.0,
            True,
        ),
        Target(
            "avara",
            "Connection per packet, session's own work (codec calls excluded) / compiled decode",
            statistics.median(ratios_own),
            2.0,
            True,
        ),
    ]
