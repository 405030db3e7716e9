"""``Room.from_multidata``: a generated multiworld (an ``.archipelago`` file written
as Archipelago 0.6.8's ``Main.py`` writes it: tests/archipelago/multidata_file.py)
served with its spheres, precollected hints, entrances and embedded server
options; and a restricted reader that refuses everything a pickle could run."""

from __future__ import annotations

import asyncio
import os
import pickle
import pickletools
import re
import signal
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from gamecodec.archipelago._netutils import Hint, HintStatus
from gamecodec.archipelago.testing import MultidataError, Room, read_multidata
from gamecodec.errors import GameCodecError
from tests.archipelago import multidata_file
from tests.archipelago.room_peer import Peer, connect_command
from tests.conftest import PACKAGE_ROOT

PLAYER = multidata_file.SlotType.player


def _globals(pickle_bytes: bytes) -> set[tuple[str, str]]:
    """The globals a protocol-4 pickle names: the two strings before each
    STACK_GLOBAL, followed through the memo (the module name is memoized once)."""
    names: set[tuple[str, str]] = set()
    pushed: list[str | None] = []
    memo: list[str | None] = []
    for opcode, arg, _pos in pickletools.genops(pickle_bytes):
        if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE"):
            pushed.append(arg)
        elif opcode.name == "MEMOIZE":
            memo.append(pushed[-1] if pushed else None)
        elif opcode.name in ("BINGET", "LONG_BINGET"):
            pushed.append(memo[arg])
        elif opcode.name == "STACK_GLOBAL":
            module, name = pushed[-2], pushed[-1]
            assert module is not None and name is not None
            names.add((module, name))
            pushed.append(None)
        elif opcode.name not in ("PROTO", "FRAME"):
            pushed.append(None)
    return names


def test_the_file_is_shaped_as_the_generators(tmp_path: Path) -> None:
    """Main.py write_multidata: byte 3, zlib level 9, a protocol 4 pickle whose only
    globals are NetUtils classes (Utils.RestrictedUnpickler.find_class allows no
    others in a multidata)."""
    path = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    data = path.read_bytes()
    assert data[0] == 3 and data[1:3] == b"\x78\xda"  # zlib header of level 9
    raw = zlib.decompress(data[1:])
    assert raw[:2] == b"\x80\x04"  # PROTO 4
    assert _globals(raw) == {
        ("NetUtils", "NetworkSlot"),
        ("NetUtils", "SlotType"),
        ("NetUtils", "Hint"),
        ("NetUtils", "HintStatus"),
    }
    assert "NetUtils" not in sys.modules  # the stand-ins were there while pickling only


def test_a_multiworld_loads_with_its_generated_data(tmp_path: Path) -> None:
    path = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    room = Room.from_multidata(path)
    assert [(s.name, s.game, s.slot_type) for s in room.slots] == [
        ("Alice", "Clique", 1),
        ("Bob", "Quest", 1),
        ("Watcher", "Clique", 0),
    ]
    assert room.slots[0].locations == {10: (501, 2, 1), 11: (2, 1, 0), 12: (3, 1, 1)}
    assert room.slots[0].start_inventory == [2] and room.slots[0].slot_data == {"color": "red"}
    assert room.slots[0].minimum_client_version == (0, 5, 1)
    assert room.seed_name == "12345678901234567890" and room.generator_version == (0, 6, 8)
    assert room.spheres == [{1: {11}, 2: {2001}}, {1: {10}, 2: {2002}}, {1: {12}}]
    lamp = Hint(1, 2, 2002, 3, False, "", 1, HintStatus.HINT_PRIORITY)
    assert room.hints[1] == {lamp} and room.hints[2] == {lamp} and room.hints[3] == set()
    assert type(next(iter(room.hints[1]))) is Hint  # the package's own class
    assert room.entrances == {2: {2002: "Behind the Waterfall"}}
    # the embedded server options (MultiServer Context._set_options)
    assert (room.hint_cost, room.location_check_points) == (50, 2)
    assert (room.release_mode, room.collect_mode, room.remaining_mode) == (
        "enabled",
        "goal",
        "enabled",
    )
    assert room.item_cheat is False and room.password is None
    assert room.status[3] == 30  # a spectator's goal counts as reached (SlotType.always_goal)
    # the generator's checksums, not ones computed again
    assert {n: g.checksum for n, g in room.packages.items()} == {
        "Archipelago": "ac9141e9ad0318df2fa27da5f20c50a842afeecb",
        "Clique": "c" * 40,
        "Quest": "d" * 40,
    }
    plain = Room.from_multidata(path, use_embedded_options=False, hint_cost=7)
    assert (plain.hint_cost, plain.release_mode, plain.item_cheat) == (7, "auto", True)


def test_the_loaded_room_serves_the_multiworld(tmp_path: Path) -> None:
    path = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    room = Room.from_multidata(path)

    async def main() -> None:
        async with asyncio.timeout(30), room:
            peer = await Peer.open(room)
            old = {"major": 0, "minor": 5, "build": 0, "class": "Version"}
            await peer.send(connect_command("Alice", "Clique", version=old))
            refused = await peer.expect("ConnectionRefused")
            assert refused["errors"] == ["IncompatibleVersion"]  # the slot's world wants 0.5.1
            await peer.send(connect_command("Alice", "Clique"))
            connected = await peer.expect("Connected")
            assert connected["slot_data"] == {"color": "red"}
            assert connected["slot_info"]["3"] == {
                "name": "Watcher",
                "game": "Clique",
                "type": 0,
                "group_members": [],
                "class": "NetworkSlot",
            }
            start = await peer.expect("ReceivedItems")
            assert [i["item"] for i in start["items"]] == [2]
            await peer.send({"cmd": "Get", "keys": ["_read_hints_0_1", "_read_client_status_0_3"]})
            got = (await peer.expect("Retrieved"))["keys"]
            assert got["_read_client_status_0_3"] == 30
            assert got["_read_hints_0_1"] == [
                {
                    "receiving_player": 1,
                    "finding_player": 2,
                    "location": 2002,
                    "item": 3,
                    "found": False,
                    "entrance": "",
                    "item_flags": 1,
                    "status": 30,
                    "class": "Hint",
                }
            ]

    asyncio.run(main())


def test_the_room_info_carries_the_generators_checksums(tmp_path: Path) -> None:
    path = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    room = Room.from_multidata(path)
    info = room._room_info()
    assert info.datapackage_checksums == {
        "Archipelago": "ac9141e9ad0318df2fa27da5f20c50a842afeecb",
        "Clique": "c" * 40,
        "Quest": "d" * 40,
    }
    assert info.seed_name == "12345678901234567890"


def test_a_zip_of_the_generator_is_read(tmp_path: Path) -> None:
    """MultiServer Context.load: a .zip is searched for its .archipelago member."""
    import zipfile

    inner = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    archive = tmp_path / "AP_1.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("AP_1_Spoiler.txt", "spoiler")
        zf.write(inner, "AP_1.archipelago")
    assert [s.name for s in Room.from_multidata(archive).slots] == ["Alice", "Bob", "Watcher"]
    empty = tmp_path / "none.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("x.txt", "")
    with pytest.raises(MultidataError, match=r"No \.archipelago found"):
        Room.from_multidata(empty)


# ---------------------------------------------------------------------- refused


class _System:
    """Pickles as a call of os.system (what a malicious multiworld would hold)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (self.command,)


def _raw_file(tmp_path: Path, raw: bytes, version: int = 3) -> Path:
    path = tmp_path / "evil.archipelago"
    path.write_bytes(bytes([version]) + zlib.compress(raw, 9))
    return path


def test_a_pickle_calling_os_system_is_refused_without_running(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    evil = multidata_file.example(slot_data={1: {"x": _System(f"touch {marker}")}})
    path = multidata_file.write(tmp_path / "evil.archipelago", evil)
    assert b"system" in zlib.decompress(path.read_bytes()[1:])
    with pytest.raises(MultidataError, match=r"forbidden global (posix|nt)\.system"):
        Room.from_multidata(path)
    assert not marker.exists()
    assert issubclass(MultidataError, GameCodecError) and issubclass(MultidataError, ValueError)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (eval, "builtins.eval"),
        (getattr, "builtins.getattr"),
        (pickle.loads, "_pickle.loads"),
        (subprocess.Popen, "subprocess.Popen"),
    ],
)
def test_every_global_outside_the_allow_list_is_refused(
    tmp_path: Path, value: Any, name: str
) -> None:
    path = _raw_file(tmp_path, pickle.dumps({"x": value}, protocol=4))
    with pytest.raises(MultidataError, match=f"forbidden global {re.escape(name)}$"):
        read_multidata(path)


def test_a_netutils_name_outside_the_allow_list_is_refused(tmp_path: Path) -> None:
    """Utils.RestrictedUnpickler allows six NetUtils names, not e.g. Endpoint."""
    raw = b"\x80\x04\x8c\x08NetUtils\x8c\x08Endpoint\x93)R."
    with pytest.raises(MultidataError, match=r"forbidden global NetUtils\.Endpoint"):
        read_multidata(_raw_file(tmp_path, raw))


def test_a_refused_global_is_never_imported(tmp_path: Path) -> None:
    """find_class refuses by name: the module named is not even imported."""
    assert "antigravity" not in sys.modules
    raw = b"\x80\x04\x8c\x0bantigravity\x8c\x03fly\x93)R."
    with pytest.raises(MultidataError, match=r"forbidden global antigravity\.fly"):
        read_multidata(_raw_file(tmp_path, raw))
    assert "antigravity" not in sys.modules


def test_a_protocol_3_pickle_of_sets_is_read(tmp_path: Path) -> None:
    """builtins.set is allowed (Utils.safe_builtins): protocol 3 names it (protocols 0-2
    name ``__builtin__.set``, which the reference's find_class refuses too)."""
    raw = pickle.dumps({"seed_name": "s", "spheres": [{1: {10}}]}, protocol=3)
    assert b"cbuiltins\nset\n" in raw  # GLOBAL builtins set
    assert read_multidata(_raw_file(tmp_path, raw)) == {"seed_name": "s", "spheres": [{1: {10}}]}


@pytest.mark.parametrize("version", [4, 9, 255])
def test_a_format_the_reference_does_not_read_is_refused(tmp_path: Path, version: int) -> None:
    """MultiServer Context.decompress: a format byte over 3 is refused."""
    path = _raw_file(tmp_path, multidata_file.pickled(multidata_file.example()), version)
    with pytest.raises(MultidataError, match=f"unknown multiworld format {version}"):
        Room.from_multidata(path)


def test_a_zlib_bomb_stops_at_the_bound(tmp_path: Path) -> None:
    path = _raw_file(tmp_path, b"\x00" * (64 * 1024 * 1024))
    assert path.stat().st_size < 100_000
    with pytest.raises(MultidataError, match="decompresses to more than 1048576 bytes"):
        read_multidata(path, max_size=1024 * 1024)


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"", "is empty"),
        (b"\x03not zlib", "not a zlib stream"),
        (b"\x03" + zlib.compress(pickle.dumps({"a": 1}))[:-6], "truncated"),
        (b"\x03" + zlib.compress(b"\x80\x04garbage"), "pickle is broken"),
        (b"\x03" + zlib.compress(pickle.dumps([1, 2])), "is not a dict"),
    ],
)
def test_broken_files_are_refused_clearly(tmp_path: Path, data: bytes, text: str) -> None:
    path = tmp_path / "broken.archipelago"
    path.write_bytes(data)
    with pytest.raises(MultidataError, match=text):
        read_multidata(path)


def test_shared_references_cannot_explode(tmp_path: Path) -> None:
    """A list holding the same list twice, 40 deep, is 2**41 values once copied: refused
    at the default bound, each shared list counted once per reference but looked at once."""
    value: list[Any] = [0]
    for _ in range(40):
        value = [value, value]
    path = _raw_file(tmp_path, pickle.dumps({"slot_data": value}, protocol=4))
    assert path.stat().st_size < 1000
    with pytest.raises(MultidataError, match="more than 20000000 values"):
        read_multidata(path)
    small: list[Any] = [0]
    for _ in range(10):
        small = [small, small]  # 3 * 2**10 - 1 values: read, and copied out in full
    path = _raw_file(tmp_path, pickle.dumps({"slot_data": small}, protocol=4))
    copied = read_multidata(path, max_values=5000)["slot_data"]
    assert copied == small and copied[0] is not copied[1]
    with pytest.raises(MultidataError, match="more than 3000 values"):
        read_multidata(path, max_values=3000)


def test_a_cycle_is_refused(tmp_path: Path) -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    path = _raw_file(tmp_path, pickle.dumps({"slot_data": cycle}, protocol=4))
    with pytest.raises(MultidataError, match="contains itself"):
        read_multidata(path)


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    deep: list[Any] = []
    for _ in range(150):
        deep = [deep]
    path = _raw_file(tmp_path, pickle.dumps({"slot_data": deep}, protocol=4))
    with pytest.raises(MultidataError, match="nests deeper than 100 levels"):
        read_multidata(path)


@pytest.mark.parametrize(
    ("changes", "text"),
    [
        ({"minimum_versions": {"server": (0, 7, 0)}}, "requires a server of at least version"),
        ({"slot_info": {1: ("Alice", "Clique", 1)}}, "slot 1 is not a NetworkSlot"),
        (
            {
                "slot_info": {
                    **multidata_file.example()["slot_info"],
                    4: multidata_file.NetworkSlot(
                        "Link", "Clique", multidata_file.SlotType.group, [1, 3]
                    ),
                }
            },
            "item link group: not supported",
        ),
        ({"locations": {1: {10: (501, 2)}}}, "location 10 is malformed"),
        ({"seed_name": 5}, "seed_name is not a str"),
        (
            {
                "slot_info": {
                    1: multidata_file.NetworkSlot("Alice", "Clique", PLAYER),
                    2: multidata_file.NetworkSlot("Alice", "Quest", PLAYER),
                }
            },
            "slot names are not unique",
        ),
        ({"datapackage": {}}, "plays 'Clique', not in the datapackage"),
    ],
)
def test_a_malformed_multiworld_is_refused(
    tmp_path: Path, changes: dict[str, Any], text: str
) -> None:
    path = multidata_file.write(tmp_path / "bad.archipelago", multidata_file.example(**changes))
    with pytest.raises(MultidataError, match=text):
        Room.from_multidata(path)


# ---------------------------------------------------------------------- the CLI


def test_the_cli_can_leave_the_embedded_options_out(tmp_path: Path) -> None:
    from gamecodec.archipelago.testing.__main__ import _room, _serve_parser

    path = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    embedded = _room(_serve_parser().parse_args([str(path), "--port", "0"]))
    assert (embedded.hint_cost, embedded.release_mode) == (50, "enabled")
    argv = [str(path), "--port", "0", "--ignore-embedded-options", "--password", "pw"]
    plain = _room(_serve_parser().parse_args(argv))
    assert (plain.hint_cost, plain.release_mode, plain.password) == (10, "auto", "pw")


def test_the_cli_serves_a_generated_multiworld(tmp_path: Path) -> None:
    path = multidata_file.write(tmp_path / "AP_1.archipelago", multidata_file.example())
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    command = [sys.executable, "-m", "gamecodec.archipelago.testing", "serve"]
    server = subprocess.Popen(
        [*command, str(path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving 3 slots at ws://127.0.0.1:"), line
        url = line.split()[-1]

        async def play() -> None:
            from websockets.asyncio.client import connect

            async with connect(url, proxy=None) as socket:
                peer = Peer(socket)
                info = await peer.expect("RoomInfo")
                assert info["seed_name"] == "12345678901234567890"
                assert info["hint_cost"] == 50
                await peer.send(connect_command("Bob", "Quest"))
                assert (await peer.expect("Connected"))["slot"] == 2

        asyncio.run(asyncio.wait_for(play(), 20))
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(10) == 0
        assert server.stderr is not None and server.stderr.read() == ""

    evil = multidata_file.write(
        tmp_path / "evil.archipelago",
        multidata_file.example(slot_data={1: _System(f"touch {tmp_path / 'ran'}")}),
    )
    refused = subprocess.run(
        [*command, str(evil), "--port", "0"],
        capture_output=True,
        env=env,
        text=True,
        timeout=30,
        check=False,
    )
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: the multiworld names the forbidden global")
    assert not (tmp_path / "ran").exists()
