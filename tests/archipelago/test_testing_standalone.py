"""``python -m gamecodec.archipelago.testing --multiworld FILE.json --port N``:
the documented example multiworld served in a subprocess, a real client logs in."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago.testing import room_from_json
from tests.conftest import PACKAGE_ROOT, ROOT

EXAMPLE = ROOT / "docs" / "examples" / "multiworld.json"


def test_the_example_multiworld_loads() -> None:
    room = room_from_json(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    assert [s.name for s in room.slots] == ["Alice", "Bob"]
    assert room.slots[0].locations == {1001: (3, 1, 0), 1002: (501, 2, 1), 1003: (502, 2, 0)}
    assert room.slots[1].locations == {2001: (1, 1, 1), 2002: (503, 2, 0), 2003: (2, 1, 4)}
    assert room.slots[0].start_inventory == [2]
    assert room.games["Clique"].item_name_groups == {"Food": ["Cake"]}
    assert (room.seed_name, room.hint_cost, room.release_mode) == ("gamecodec-example", 10, "auto")


def test_a_bad_multiworld_is_refused() -> None:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    data["slots"][0]["game"] = "Nope"
    with pytest.raises(ValueError, match="unknown game 'Nope'"):
        room_from_json(data)


def test_standalone_room_serves_a_real_client(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    command = [sys.executable, "-m", "gamecodec.archipelago.testing"]
    server = subprocess.Popen(
        [*command, "--multiworld", str(EXAMPLE), "--port", "0", "--password", "pw"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving 2 slots at ws://127.0.0.1:"), line
        url = line.split()[-1]

        async def play() -> None:
            client = await aio.connect(url, name="Alice", game="Clique", password="pw")
            assert client.connected is not None
            assert client.connected.slot_data == {"color": "red", "hard_mode": False}
            assert [i.item for i in client.items] == [2]  # the start inventory
            await client.check_locations([1001])
            got = await client.get(["_read_item_name_groups_Clique"])
            groups = got["_read_item_name_groups_Clique"]
            assert groups["Food"] == ["Cake"] and groups.keys() == {"Food", "Everything"}
            await client.close()

        asyncio.run(asyncio.wait_for(play(), 20))
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(10) == 0
        assert server.stderr is not None and server.stderr.read() == ""

    missing = subprocess.run(
        [*command, "--multiworld", str(tmp_path / "none.json"), "--port", "0"],
        capture_output=True,
        env=env,
        text=True,
        timeout=30,
        check=False,
    )
    assert missing.returncode == 1 and missing.stderr.startswith("error: ")
