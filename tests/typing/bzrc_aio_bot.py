"""An asyncio bot and its test server through ``gamecodec.bzrc`` alone (no
``import gamecodec.bzrc.aio``), checked with ``mypy --strict``."""

from __future__ import annotations

from gamecodec import bzrc


async def first_tank_x(port: int) -> float:
    """Where our first tank is."""
    bot = await bzrc.aio.connect("127.0.0.1", port)
    try:
        tanks = await bot.mytanks()
        return tanks[0].x
    finally:
        await bot.close()


def keep(bot: bzrc.aio.Bot) -> bzrc.aio.Bot:
    """A bot passed around by its type."""
    return bot


def answer(request: bzrc.Request) -> bzrc.Response:
    """A test server's handler: ``ok`` to everything."""
    return bzrc.Ok(ack=None)


def mistaken(request: bzrc.Request) -> str:
    """A handler mistake: a string is no answer."""
    return "ok"


async def servers() -> None:
    """The test server: a right handler, and a wrong one mypy refuses."""
    good = await bzrc.aio.serve(answer, "127.0.0.1", 0)
    bad = await bzrc.aio.serve(mistaken, "127.0.0.1", 0)  # type: ignore[arg-type]
    good.close()
    bad.close()
