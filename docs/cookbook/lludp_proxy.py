"""A proxy: sit between a viewer and a region, log every packet, pass it on unchanged.

``lludp.peek`` reads a datagram's header and message name without decoding
its body, so a proxy can log, count or filter the whole stream cheaply and
forward the bytes as they came (acks, resends and zero-coding untouched).
Here the viewer and the region are two ``lludp.aio`` endpoints on loopback;
point the viewer at the proxy's address and the proxy at a real simulator
(``UPSTREAM``) to use it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import cast

from gamecodec import DecodeError, lludp
from gamecodec.lludp import aio

Address = tuple[str, int]


class Proxy(asyncio.DatagramProtocol):
    """Forwards datagrams from the viewer to ``upstream`` and back, logging each."""

    def __init__(self, upstream: Address) -> None:
        self.upstream = upstream
        self.viewer: Address | None = None
        self.transport: asyncio.DatagramTransport | None = None
        self.seen: Counter[tuple[str, str]] = Counter()
        self.log: list[str] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: Address) -> None:
        assert self.transport is not None
        if addr == self.upstream:
            direction, target = "region -> viewer", self.viewer
        else:
            self.viewer = addr
            direction, target = "viewer -> region", self.upstream
        try:
            head = lludp.peek(data)
        except DecodeError as exc:  # not LLUDP: say so, pass it on anyway
            self.log.append(f"{direction}: {len(data)} bytes that do not decode ({exc})")
        else:
            name = head.name or f"message {head.number}"  # not in the template
            self.seen[direction, name] += 1
            flags = "reliable" if head.reliable else "unreliable"
            self.log.append(f"{direction}: {name} #{head.sequence} {flags}")
        if target is not None:
            self.transport.sendto(data, target)


def chat(text: str) -> lludp.Message:
    """A viewer's chat line."""
    return lludp.build(
        "ChatFromViewer",
        AgentData={"AgentID": bytes(16), "SessionID": bytes(16)},
        ChatData={"Message": text, "Type": 1, "Channel": 0},
    )


async def main() -> None:
    loop = asyncio.get_running_loop()
    region = await aio.open_endpoint(("127.0.0.1", 0))
    transport, proxy = await loop.create_datagram_endpoint(
        lambda: Proxy(region.local_address), local_addr=("127.0.0.1", 0)
    )
    viewer = await aio.open_endpoint(("127.0.0.1", 0), transport.get_extra_info("sockname"))
    for n in range(3):
        viewer.send(chat(f"hello {n}"), reliable=True)
    for _ in range(3):
        message = await region.recv()
        # (a strict=True endpoint may also return StrictDecodeFailed events)
        assert isinstance(message, lludp.Message)
        print("region got:", lludp.text(message.ChatData[0].Message))
    await viewer.drain(1)  # every chat line acknowledged, through the proxy
    for line in proxy.log:
        print("proxy:", line)
    counts = ", ".join(f"{name} x{n} ({way})" for (way, name), n in sorted(proxy.seen.items()))
    print("proxy forwarded:", counts)
    viewer.close()
    region.close()
    transport.close()


if __name__ == "__main__":
    asyncio.run(main())
