"""A ywindow client through ``gamecodec.ywindow`` alone, checked with ``mypy --strict``."""

from __future__ import annotations

from gamecodec import ywindow


async def answer(method: str, args: tuple[ywindow.Value, ...]) -> tuple[ywindow.Value, ...]:
    """Answer the server's calls: who we are."""
    return ("viewer-1",)


async def goto(port: int, x: int, y: int) -> tuple[ywindow.Value, ...] | str:
    """Ask the server to move; the refusal's text if it does not know our authority."""
    try:
        client = await ywindow.aio.connect("127.0.0.1", port, on_call=answer)
    except ywindow.AuthenticationError as exc:
        return str(exc)
    try:
        return await client.call("goto", x, y)
    finally:
        await client.close()
