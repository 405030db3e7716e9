"""Typed use of gamecodec.lludp, checked by ``mypy --strict`` in test_api.py.

Decoded messages and their blocks are read by attribute, as in the README.
"""

from __future__ import annotations

import asyncio

from gamecodec import lludp
from gamecodec.errors import DecodeError, EncodeError, GameCodecError
from gamecodec.lludp import aio
from gamecodec.sessions import DatagramSession, Event, PeerLost, Traffic

AGENT = bytes(range(16))


def chat(text: bytes | str) -> lludp.Message:
    return lludp.build(
        "ChatFromViewer",
        AgentData={"AgentID": AGENT, "SessionID": AGENT},
        ChatData={"Message": text, "Type": 1, "Channel": 0},
    )


def codec_round_trip() -> bytes:
    data = lludp.encode(chat(b"hi"))
    got = lludp.decode(data)
    message: bytes = got.ChatData[0].Message
    channel: int = got.ChatData[0]["Channel"]
    assert channel == 0 and got.name == "ChatFromViewer"
    assert lludp.peek(data).name == "ChatFromViewer"
    buf = bytearray()
    assert lludp.encode_into(got, buf, 0) == len(data)
    for item in lludp.decode_many([data, b"\x00"]):
        if isinstance(item, DecodeError):
            assert item.offset >= 0 and item.protocol == "lludp"
        else:
            assert item.ChatData[0].Message == message
    try:
        lludp.build("NoSuchMessage")
    except EncodeError as exc:
        assert exc.protocol == "lludp"
    opensim: lludp.Template = lludp.opensim_template()
    assert lludp.builtin_template("opensim") is opensim
    again = lludp.decode(lludp.encode(chat("text"), template="opensim"), template=opensim)
    flags: tuple[tuple[str, int, str, int], ...] = again.bool_bytes
    assert flags == ()
    try:
        lludp.parse_template("version 2.0 {")
    except lludp.TemplateError as exc:
        assert isinstance(exc, GameCodecError) and exc.line is not None
    return message


def circuit_exchange() -> int:
    a, b = lludp.Circuit(now=0.0), lludp.Circuit(now=0.0)
    session: DatagramSession = a
    a.send(chat(b"over"), reliable=True, now=0.0)
    delivered: list[lludp.Message] = []
    for datagram in session.datagrams_to_send(0.0):
        delivered += b.receive_datagram(datagram, 0.01)
    events: list[lludp.CircuitEvent] = a.events()
    for event in events:
        assert isinstance(event, Event)
        if isinstance(event, PeerLost):
            print(event.reason)
        elif isinstance(event, lludp.MessageDropped):
            print(event.sequence)
        elif isinstance(event, lludp.StrictDecodeFailed):
            print(event.name, event.error.offset, event.message.name)
        else:
            print(event.error.offset)
    strict = lludp.Circuit(now=0.0, strict=True, template="opensim")
    assert strict.strict_failures_dropped == 0
    lost: PeerLost | None = a.lost
    assert lost is None
    deadline: float | None = a.next_deadline()
    assert deadline is not None
    return len(delivered)


async def endpoints() -> int:
    seen: list[Traffic] = []
    server = await aio.open_endpoint(("127.0.0.1", 0))
    client: aio.Endpoint = await aio.open_endpoint(
        ("127.0.0.1", 0), server.local_address, tap=seen.append
    )
    try:
        client.send(chat(b"udp"), reliable=True)
        got = await asyncio.wait_for(server.recv(), 10)
        # a strict=True endpoint also returns StrictDecodeFailed events in its place
        message = got.message if isinstance(got, lludp.StrictDecodeFailed) else got
        assert message.ChatData[0].Message == b"udp"
        failed: list[lludp.StrictDecodeFailed] = list(server.strict_failures)
        assert not failed
    finally:
        client.close()
        server.close()
    return len(seen)


def main() -> bytes:
    message = codec_round_trip()
    assert circuit_exchange() == 1
    assert asyncio.run(endpoints()) >= 1
    return message


if __name__ == "__main__":
    print(main())
