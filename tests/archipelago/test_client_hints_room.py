"""The hint API against testing.Room over a real websocket: CreateHints,
UpdateHint, the ``_read_hints_`` key read and watched, hint messages
rendered with names; an alias set with !alias, in names and messages."""

from __future__ import annotations

import asyncio

import pytest

from gamecodec.archipelago import aio, testing
from gamecodec.archipelago import session as S
from gamecodec.archipelago._models import Hint, HintStatus
from tests.archipelago.rooms import make_room

# the room's text lists the commands it answers; one that does not answer
# hints cannot host this test
pytestmark = pytest.mark.skipif(
    "CreateHints" not in (testing.__doc__ or ""), reason="this testing.Room answers no hints"
)


def test_hints_created_watched_read_and_reprioritised() -> None:
    async def main() -> None:
        async with asyncio.timeout(20), make_room() as room:
            js = await aio.connect(room.url, name="JSPlayer", game="Clique")
            buddy = await aio.connect(room.url, name="PyBuddy", game="Quest")
            await buddy.watch_hints()
            await js.create_hints([1002])  # our location, PyBuddy's Sword
            hint = Hint(2, 1, 1002, 501, False, "", 1, HintStatus.HINT_UNSPECIFIED)
            changed = await buddy.wait_for(S.HintsChanged)
            assert changed.request_id is None and changed.hints == [hint]
            assert await js.hints() == [hint]
            assert await buddy.hints() == [hint]
            message = await buddy.wait_for(S.MessageReceived)
            while message.message.type != "Hint":
                message = await buddy.wait_for(S.MessageReceived)
            text = buddy.render(message.message)
            assert "PyBuddy's Sword is at The Item on the Desk in JSPlayer's World" in text
            await buddy.update_hint(1, 1002, HintStatus.HINT_PRIORITY)
            changed = await buddy.wait_for(S.HintsChanged)
            assert [h.status for h in changed.hints] == [HintStatus.HINT_PRIORITY]
            assert buddy.session.hints == changed.hints
            await js.close()
            await buddy.close()

    asyncio.run(main())


@pytest.mark.skipif("!alias" not in (testing.__doc__ or ""), reason="no !alias in this room")
def test_an_alias_reaches_names_and_rendered_messages() -> None:
    async def main() -> None:
        async with asyncio.timeout(20), make_room() as room:
            js = await aio.connect(room.url, name="JSPlayer", game="Clique")
            buddy = await aio.connect(room.url, name="PyBuddy", game="Quest")
            await js.say("!alias Jay")
            while js.names.player_name(1) == "JSPlayer":
                await js.next_event(timeout=5.0)
            assert js.names.player_name(1) == "Jay (JSPlayer)"
            while buddy.names.player_name(1) == "JSPlayer":
                await buddy.next_event(timeout=5.0)
            await js.check_locations([1002])
            message = await buddy.wait_for(S.MessageReceived)
            while message.message.type != "ItemSend":
                message = await buddy.wait_for(S.MessageReceived)
            assert buddy.render(message.message).startswith("Jay (JSPlayer) sent Sword to PyBuddy")
            await js.close()
            await buddy.close()

    asyncio.run(main())
