"""Deterministic sample traffic: what one Avara peer sends during play.

The mix is that of a real game: one kpKeyAndMouse
per 16 ms frame to each other active player, sometimes with earlier unacked
frames packed behind it as retransmissions, kpPing keep-alives once a
second, kpLatencyVote every 3.84 s, an occasional ACK-only datagram, and the
sender byte whenever the serial is <= 100 in wrap-around order. The
bytes come from this package's own encoder; they are generated, not captured.
"""

from __future__ import annotations

import random

from gamecodec._public import public_dir
from gamecodec.avara import _codec_py
from gamecodec.avara._models import Command, CommandId
from gamecodec.avara.payloads import KeyAndMouse, encode_key_and_mouse

__all__ = ["capture_stream", "key_and_mouse_datagram", "sample_traffic"]

_FRAMES_PER_PING = 62
_FRAMES_PER_VOTE = 240


def _sender_on_wire(serial: int, own_id: int) -> int | None:
    """The writer's rule: sender is written while serial <= 100 (mod 2^16)."""
    return own_id if (100 - serial) & 0xFFFF <= 0x7FFF else None


def _input(rng: random.Random, frame: int) -> KeyAndMouse:
    held = rng.choice((0, 0, 1, 1 | 4, 8, 2))
    moving = rng.random() < 0.6
    return KeyAndMouse(
        frame=frame,
        buttons=1 if rng.random() < 0.1 else 0,
        down=rng.choice((0, 0, 0, 0, 16)),
        up=rng.choice((0, 0, 0, 0, 16)),
        held=held,
        mouse_v=rng.randint(-40, 40) if moving else 0,
        mouse_h=rng.randint(-40, 40) if moving else 0,
        msg_char=0,
    )


def key_and_mouse_datagram() -> bytes:
    """The typical 20-byte kpKeyAndMouse datagram of the benchmarks."""
    p1, p2, p3, data = encode_key_and_mouse(1234, held=1, mouse_h=5)
    cmd = Command.make(4, CommandId.kpKeyAndMouse, p1=p1, p2=p2, p3=p3, data=data, sender=1)
    return _codec_py.encode(2, [cmd])


def sample_traffic(count: int = 5000, *, seed: int = 18, peers: int = 3) -> list[bytes]:
    """``count`` datagrams one peer (slot 1) sends to ``peers`` others during play."""
    rng = random.Random(seed)
    serial = dict.fromkeys(range(peers), 31200)  # crosses the sender-byte boundary at 32870
    ack = dict.fromkeys(range(peers), 0xFFFE)
    unacked: dict[int, list[Command]] = {p: [] for p in range(peers)}
    out: list[bytes] = []
    frame = 60_000  # crosses the u16/i32 p3 boundary at 65536
    while len(out) < count:
        frame += 1
        state = _input(rng, frame)
        for peer in range(peers):
            ack[peer] = (ack[peer] + 2) & 0xFFFF
            if rng.random() < 0.03:  # nothing to send: an ACK-only datagram
                if rng.random() < 0.5:
                    out.append(_codec_py.encode(ack[peer] | 1, (), 0b110))
                else:
                    out.append(_codec_py.encode(ack[peer]))
            p1, p2, p3, data = encode_key_and_mouse(**state._asdict())
            cmds = [(CommandId.kpKeyAndMouse, p1, p2, p3, data)]
            if frame % _FRAMES_PER_PING == 0:
                cmds.append((CommandId.kpPing, 0, 0, 0, b""))
            if frame % _FRAMES_PER_VOTE == 0:
                cmds.append((CommandId.kpLatencyVote, 2, 40, rng.getrandbits(31), b""))
            fresh = []
            for cmd_id, c1, c2, c3, payload in cmds:
                s = serial[peer]
                serial[peer] = (s + 2) & 0xFFFF
                fresh.append(
                    Command.make(
                        s, cmd_id, p1=c1, p2=c2, p3=c3, data=payload, sender=_sender_on_wire(s, 1)
                    )
                )
            resend = [c._replace(send_count=c.send_count + 1) for c in unacked[peer][-2:]]
            packed = fresh + (resend if rng.random() < 0.15 else [])
            unacked[peer] = (unacked[peer] + fresh)[-4:]
            out.append(_codec_py.encode(ack[peer], packed))
    return out[:count]


def capture_stream(count: int = 200_000, *, seed: int = 33585, peers: int = 5) -> list[bytes]:
    """``count`` distinct datagrams as a capture of a game shows them: every
    player (slot 0 to ``peers``) sending to every other, each link with its
    own serials and acks (some with the ack bitmap of a lost packet), the
    mix of :func:`sample_traffic`, and a fresh input state per frame."""
    rng = random.Random(seed)
    links = [(a, b) for a in range(peers + 1) for b in range(peers + 1) if a != b]
    serial = {link: rng.randrange(0, 1 << 16, 2) for link in links}
    ack = {link: rng.randrange(0, 1 << 16, 2) for link in links}
    unacked: dict[tuple[int, int], list[Command]] = {link: [] for link in links}
    out: list[bytes] = []
    seen: set[bytes] = set()
    frame = rng.randrange(0, 1 << 20)
    while len(out) < count:
        frame += 1
        states = [_input(rng, frame) for _ in range(peers + 1)]
        for link in links:
            sender = link[0]
            ack[link] = (ack[link] + 2) & 0xFFFF
            bitmap = rng.random() < 0.05  # a gap behind the ack: base + 1 and a bitmap
            ack_field = ack[link] | 1 if bitmap else ack[link]
            bits = rng.getrandbits(31) if bitmap else None
            if rng.random() < 0.03:  # nothing to send: an ACK-only datagram
                datagram = _codec_py.encode(ack_field, (), bits)
                if datagram not in seen:  # the same ack again: a capture shows it once
                    seen.add(datagram)
                    out.append(datagram)
                continue
            p1, p2, p3, data = encode_key_and_mouse(**states[sender]._asdict())
            cmds = [(CommandId.kpKeyAndMouse, p1, p2, p3, data)]
            if frame % _FRAMES_PER_PING == sender:
                cmds.append((CommandId.kpPing, 0, 0, 0, b""))
            if frame % _FRAMES_PER_VOTE == sender:
                cmds.append((CommandId.kpLatencyVote, 2, 40, rng.getrandbits(31), b""))
            fresh = []
            for cmd_id, c1, c2, c3, payload in cmds:
                s = serial[link]
                serial[link] = (s + 2) & 0xFFFF
                on_wire = _sender_on_wire(s, sender)
                fresh.append(
                    Command.make(s, cmd_id, p1=c1, p2=c2, p3=c3, data=payload, sender=on_wire)
                )
            resend = [c._replace(send_count=c.send_count + 1) for c in unacked[link][-2:]]
            packed = fresh + (resend if rng.random() < 0.15 else [])
            unacked[link] = (unacked[link] + fresh)[-4:]
            out.append(_codec_py.encode(ack_field, packed, bits))
    return out[:count]


__dir__ = public_dir(__name__)
