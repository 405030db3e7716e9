"""archipelago.js 2.1.0 (npm, under node) plays against testing.Room next to our asyncio client.

The test installs nothing: it runs when ``$GAMECODEC_ARCHIPELAGO_JS_DIR`` names
a directory where ``npm install --prefix "$GAMECODEC_ARCHIPELAGO_JS_DIR"
archipelago.js@2.1.0 ws@8`` ran (``.ci/run`` does that), and skips, saying
why, otherwise or when node is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago import session as S
from tests.archipelago.rooms import make_room

HERE = Path(__file__).resolve().parent
VERSION = "2.1.0"
INSTALL = f"npm install --prefix DIR archipelago.js@{VERSION} ws@8"


def _installed(modules: Path) -> bool:
    manifest = modules / "archipelago.js" / "package.json"
    if not manifest.exists() or not (modules / "ws" / "package.json").exists():
        return False
    return bool(json.loads(manifest.read_text()).get("version") == VERSION)


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The ``node_modules`` holding archipelago.js and ws (else the test skips)."""
    if shutil.which("node") is None:
        pytest.skip("node is needed for the archipelago.js interop test")
    root = os.environ.get("GAMECODEC_ARCHIPELAGO_JS_DIR")
    if not root:
        pytest.skip(f"GAMECODEC_ARCHIPELAGO_JS_DIR is not set (to a DIR where `{INSTALL}` ran)")
    modules = Path(root) / "node_modules"
    if not _installed(modules):
        pytest.skip(f"no archipelago.js {VERSION} and ws in {modules} (run `{INSTALL}`)")
    return modules


async def _play(modules: Path) -> tuple[dict[str, object], dict[str, object]]:
    seen: dict[str, object] = {}
    async with make_room() as room:
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest", death_link=True)
        process = await asyncio.create_subprocess_exec(
            "node",
            str(HERE / "js_client.mjs"),
            room.url,
            str(modules),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(45):
                chats: list[str] = []
                while "js:ready" not in chats:
                    event = await buddy.wait_for(S.MessageReceived)
                    chats.append(event.message.message or "")
                # now that JSPlayer is in: send it an item, change a key it watches, die
                await buddy.check_locations([2001])
                await buddy.set("shared", [("replace", 5)], default=0)
                await buddy.death_link("PyBuddy was squished.")
                death = await buddy.wait_for(S.DeathLinkReceived)
                seen["death"] = (death.source, death.cause)
                while "js:done" not in chats:
                    event = await buddy.wait_for(S.MessageReceived)
                    chats.append(event.message.message or "")
                seen["chats"] = chats
                seen["buddy_items"] = [(i.item, i.location, i.player) for i in buddy.items]
                stdout, stderr = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            await buddy.close()
        seen["extensions"] = room.extensions
        seen["js_frames"] = [text for direction, text in room.frames if direction == "c2s"]
    lines = stdout.decode().strip().splitlines()
    assert lines, stderr.decode()
    return json.loads(lines[-1]), seen


def test_archipelago_js_plays_against_the_room(node_modules: Path) -> None:
    result, seen = asyncio.run(_play(node_modules))
    assert "error" not in result, result.get("error")
    assert result["login"]["slotData"] == {"color": "red", "hard_mode": False}
    assert result["login"]["slot"] == 1
    # checked 1001 (Cake for itself) and 1002 (Sword for PyBuddy); PyBuddy's Chest gave it item 1
    assert sorted((i["id"], i["location"]) for i in result["items"]) == [(1, 2001), (3, 1001)]
    assert (501, 1002, 1) in seen["buddy_items"]
    assert result["scouted"] == [{"id": 502, "receiver": "PyBuddy"}]
    assert result["committed"] == 42
    assert result["fetched"] == {"js_counter": 42, "_read_race_mode": 0}
    assert result["shared_initial"] is None
    assert result["notified"] == [{"key": "shared", "value": 5, "old": 0}]
    assert result["deaths"] == [{"source": "PyBuddy", "cause": "PyBuddy was squished."}]
    assert seen["death"] == ("JSPlayer", "JSPlayer tripped.")
    assert {"message": "js:ready", "from": "JSPlayer"} in result["chat"]
    assert "js:done" in seen["chats"]
    # both clients negotiated permessage-deflate with the reference server's parameters
    assert (
        seen["extensions"]
        == ["permessage-deflate; server_max_window_bits=11; client_max_window_bits=11"] * 2
    )
    # what archipelago.js sent decodes with the typed codec (Connect carries the Version class)
    assert any('"cmd":"Connect"' in f and '"class":"Version"' in f for f in seen["js_frames"])
