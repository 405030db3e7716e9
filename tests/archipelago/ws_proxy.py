"""A TCP proxy between a websocket client and server that drops the client's
pings (so pongs never come) and passes everything else through; it can also
swallow every client frame for a while (``deaf``) and cut every connection."""

from __future__ import annotations

import asyncio
import contextlib


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


async def _client_frames(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, proxy: PingDroppingProxy
) -> None:
    """Forward the client's handshake, then its frames except pings (opcode 9)
    and, while the proxy is ``deaf``, except any."""
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        writer.write(await reader.readuntil(b"\r\n\r\n"))
        while True:
            head = await reader.readexactly(2)
            length = head[1] & 0x7F
            extra = b""
            if length == 126:
                extra = await reader.readexactly(2)
                length = int.from_bytes(extra, "big")
            elif length == 127:
                extra = await reader.readexactly(8)
                length = int.from_bytes(extra, "big")
            mask = await reader.readexactly(4) if head[1] & 0x80 else b""
            payload = await reader.readexactly(length)
            if head[0] & 0x0F == 0x9:
                proxy.pings_dropped.append(length)
                continue
            if proxy.deaf:
                continue
            writer.write(head + extra + mask + payload)
            await writer.drain()
    writer.close()


class PingDroppingProxy:
    """``async with PingDroppingProxy(port) as proxy:`` listens on ``proxy.url``."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.pings_dropped: list[int] = []
        self.deaf = False
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None
        self.url = ""

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers += [writer, up_writer]
        await asyncio.gather(_client_frames(reader, up_writer, self), _pipe(up_reader, writer))

    def cut(self) -> None:
        """Close every connection through the proxy at once (no close handshake)."""
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()

    async def __aenter__(self) -> PingDroppingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2.0)
