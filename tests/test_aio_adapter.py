"""gamecodec._aio.SessionProtocol with a session of the caller's own (no codec, no twins)."""

from __future__ import annotations

import asyncio
from typing import Any

from gamecodec._aio import SessionProtocol
from gamecodec.sessions import Traffic


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


class _Resender(_Echo):
    """Sends one datagram at every deadline, 10 ms apart (a resend timer)."""

    def __init__(self) -> None:
        self.at = 0.0
        self.sent = 0

    def datagrams_to_send(self, now: float) -> list[bytes]:
        if now < self.at:
            return []
        self.at = now + 0.01
        self.sent += 1
        return [b"again"]

    def next_deadline(self) -> float | None:
        return self.at


async def _failing_tap() -> tuple[int, int, list[dict[str, Any]]]:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda loop, context: reported.append(context))
    calls = 0

    def tap(record: Traffic) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("the log is full")

    session = _Resender()
    protocol: SessionProtocol[Any, bytes] = SessionProtocol(session, ("127.0.0.1", 9), tap=tap)
    transport, _ = await loop.create_datagram_endpoint(
        lambda: protocol, local_addr=("127.0.0.1", 0)
    )
    try:
        protocol.datagram_received(b"hi", ("127.0.0.1", 9))
        assert await protocol.recv() == b"hi"  # the datagram the tap failed on is delivered
        await asyncio.sleep(0.2)
        return session.sent, calls, reported
    finally:
        transport.close()


def test_a_tap_that_raises_is_reported_and_stops_nothing() -> None:
    sent, calls, reported = asyncio.run(_failing_tap())
    assert sent >= 5  # the timer kept firing after the tap's first failure
    assert calls == sent + 1
    assert len(reported) == calls
    assert all(isinstance(c["exception"], RuntimeError) for c in reported)
