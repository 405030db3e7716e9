"""Our asyncio client next to archipelago.js 2.1.0 (npm, under node) in one
testing.Room: PrintJSON rendered with names reads as archipelago.js renders
it, and DeathLink switched on and off at run time takes a JS player's deaths
only while on. Runs where test_js_interop runs (``$GAMECODEC_ARCHIPELAGO_JS_DIR``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from gamecodec.archipelago import aio
from gamecodec.archipelago import session as S
from tests.archipelago.rooms import make_room
from tests.archipelago.test_js_interop import HERE, node_modules

__all__ = ["node_modules"]  # the fixture, shared with test_js_interop


async def _until(
    client: aio.Client, done: Callable[[S.Event], bool], events: list[S.Event]
) -> None:
    """Read events (all kept in ``events``) until one is ``done``."""
    while True:
        event = await client.next_event()
        events.append(event)
        if done(event):
            return


async def _chat(client: aio.Client, text: str, events: list[S.Event]) -> None:
    """Read events until the chat line ``text`` arrives."""
    await _until(
        client,
        lambda e: isinstance(e, S.MessageReceived) and e.message.message == text,
        events,
    )


async def _play(modules: Path) -> tuple[dict[str, object], list[str], list[S.Event]]:
    events: list[S.Event] = []
    async with make_room() as room:
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest")
        process = await asyncio.create_subprocess_exec(
            "node",
            str(HERE / "js_peer_client.mjs"),
            room.url,
            str(modules),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(45):
                await _chat(buddy, "js:ready", events)
                await buddy.check_locations([2001, 2002])  # an item for JSPlayer, one for us
                await buddy.set_death_link(True)
                await buddy.say("py:dl-on")
                await _until(buddy, lambda e: isinstance(e, S.DeathLinkReceived), events)
                await buddy.set_death_link(False)
                await buddy.say("py:dl-off")
                # JSPlayer bounces "second", then says this: the room passes both on in order
                await _chat(buddy, "js:sent-both", events)
                await buddy.say("py:done")
                stdout, stderr = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            await buddy.close()
    rendered = [
        buddy.render(e.message)
        for e in events
        if isinstance(e, S.MessageReceived) and e.message.type == "ItemSend"
    ]
    lines = stdout.decode().strip().splitlines()
    assert lines, stderr.decode()
    return json.loads(lines[-1]), rendered, events


def test_rendering_and_death_link_switching_next_to_archipelago_js(node_modules: Path) -> None:
    result, rendered, events = asyncio.run(_play(node_modules))
    assert "error" not in result, result.get("error")
    # what archipelago.js renders for each ItemSend, we render the same
    assert sorted(rendered) == sorted(result["itemSent"]) and len(rendered) == 2
    assert "PyBuddy sent Button Activation to JSPlayer (Chest)" in rendered
    deaths = [(e.source, e.cause) for e in events if isinstance(e, S.DeathLinkReceived)]
    assert deaths == [("JSPlayer", "first")]  # "second" came after DeathLink was off
