"""Avara rows of ``gamecodec bench``: a capture-like stream of distinct datagrams.

The stream is :func:`gamecodec.avara.sample.capture_stream` (every player
sending to every other, each link with its own serials and acks, a fresh input
state per frame). ``decode_array`` (public) decodes it in one call; the floor
is the least a Python parser does per command: one ``struct.unpack_from`` of
a command's fixed fields (serial, send count, flags, command id), one call per
command in the stream, in a plain loop.
"""

from __future__ import annotations

import struct
from functools import cache

from gamecodec import avara
from gamecodec._bench import Config, Contest, Row, Side, run_all
from gamecodec.avara import _bench_session
from gamecodec.avara.sample import capture_stream

__all__ = ["contests", "rows", "stream"]

COMMAND_HEAD = struct.Struct("<HBBb")
"""A command's fixed fields: serial, send count, flags, command id."""


@cache
def stream(count: int) -> list[bytes]:
    """The first ``count`` datagrams of the capture-like stream (cached)."""
    return capture_stream(count)


def contests(config: Config) -> list[Contest | Row]:
    """The Avara contests of ``gamecodec bench`` (codec and session)."""
    count = config.size(10_000, 200_000)
    config.say(f"avara: generating a capture-like stream of {count:,} datagrams ...")
    data = stream(count)
    commands = sum(len(avara.decode(d).commands) for d in data)
    unpack = COMMAND_HEAD.unpack_from
    per_command = [d for d in data for _ in range(len(avara.decode(d).commands))]

    def many(_: object) -> object:
        return avara.decode_array(data)

    def floor(_: object) -> None:
        for d in per_command:
            unpack(d, 2)

    return [
        Contest(
            "avara",
            "decode_array per command vs one struct.unpack_from per command",
            f"{len(data):,} distinct datagrams, {commands:,} commands",
            commands,
            "command",
            Side("decode_array", many),
            Side("unpack_from", floor),
            kind="cost",
            limit=0.5,
        ),
        *_bench_session.contests(config),
    ]


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
