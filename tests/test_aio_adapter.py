"""gamecodec._aio.SessionProtocol with a session of the caller's own (no codec, no twins)."""

from __future__ import annotations

import asyncio
from typing import Any

from gamecodec._aio import SessionProtocol


class _Echo:
    """A minimal session: delivers every datagram, sends nothing, counts nothing."""

    unacked = 0

    def receive_datagram(self, data: bytes, now: float) -> list[bytes]:
        return [data]

    def datagrams_to_send(self, now: float) -> list[bytes]:
        return []

    def events(self) -> list[Any]:
        return []

    def next_deadline(self) -> float | None:
        return None


async def _first_sender() -> tuple[Any, bytes]:
    loop = asyncio.get_running_loop()
    protocol: SessionProtocol[Any, bytes] = SessionProtocol(_Echo())
    transport, _ = await loop.create_datagram_endpoint(
        lambda: protocol, local_addr=("127.0.0.1", 0)
    )
    try:
        protocol.datagram_received(b"hi", ("127.0.0.1", 9))
        return protocol.peer, await protocol.recv()
    finally:
        transport.close()


def test_a_session_without_a_taken_counter_takes_the_first_sender() -> None:
    """The peer rule needs the session's counter of datagrams taken; a session
    without one gets the plain rule (the first sender) instead of an error."""
    assert asyncio.run(_first_sender()) == (("127.0.0.1", 9), b"hi")
