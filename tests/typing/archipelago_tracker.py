"""An item tracker on ``archipelago.aio``, checked with ``mypy --strict``."""

from __future__ import annotations

from gamecodec import archipelago as ap


async def new_items(url: str) -> tuple[int, list[ap.Item]]:
    """Wait for the first items: where they start, and what they are."""
    client = await ap.aio.connect(url, name="Alice", game="Clique")
    try:
        received = await client.wait_for(ap.session.ItemsReceived)
        return received.index, received.items
    finally:
        await client.close()


async def scouted(client: ap.aio.Client, locations: list[int]) -> dict[int, int]:
    """Location -> item id, from a scout and from the items so far."""
    found: list[ap.Item] = await client.scout(locations)
    have: list[ap.Item] = client.items
    return {item.location: item.item for item in [*found, *have]}


async def next_message(client: ap.aio.Client) -> ap.PrintJSON:
    """The next PrintJSON (a chat line, an item sent, a hint ...)."""
    event = await client.wait_for(ap.session.MessageReceived, timeout=None)
    return event.message
