"""The ``gamecodec`` command: ``decode`` for every protocol, ``--version``, ``--help``."""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import math
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import numpy as np
import pytest

import gamecodec
from gamecodec import lludp, ywindow
from gamecodec.archipelago.sample import sample_session
from gamecodec.bzrc.sample import occgrid_response
from gamecodec.cli import build_parser, main, to_json
from gamecodec.lludp.sample import bench_messages
from gamecodec.ywindow.sample import sample_messages
from tests.bzrc import vectors as bzrc_vectors
from tests.conftest import PACKAGE_ROOT

SRC = PACKAGE_ROOT

# spec vector V10 (three packed retransmissions) and what it decodes to
AVARA_V10 = "cba60400060001b111d30404d80100000002080001a111d404f8010a0001a311d5047800f901"
AVARA_V10_COMMANDS = [
    {"serial": 6, "send_count": 1, "flags": 177, "command": 17, "distribution": None,
     "p1": -40, "p2": 0, "p3": 1235, "data": "00000002", "sender": 1},
    {"serial": 8, "send_count": 1, "flags": 161, "command": 17, "distribution": None,
     "p1": -8, "p2": 0, "p3": 1236, "data": "", "sender": 1},
    {"serial": 10, "send_count": 1, "flags": 163, "command": 17, "distribution": None,
     "p1": -7, "p2": 120, "p3": 1237, "data": "", "sender": 1},
]  # fmt: skip
LLUDP_PING = "40 00000007 00 01 09 05000000"  # StartPingCheck 9, 5
YWINDOW_GOTO = "63 04 00 00 00 03 6b 04 67 6f 74 6f 69 04 00 00 00 0a 69 04 00 00 00 0a"
YWINDOW_OK = "72 04 00 00 00 01 6b 02 6f 6b"


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, stdin: bytes | None = None
) -> tuple[int, list[Any], str]:
    """``gamecodec argv...`` in this process: status, the JSON lines, stderr."""
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        status = main(list(argv))
    finally:
        sys.stdin = saved
    out, err = capsys.readouterr()
    return status, [json.loads(line) for line in out.splitlines()], err


def without_type(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: without_type(v) for k, v in obj.items() if k != "type"}
    if isinstance(obj, list):
        return [without_type(v) for v in obj]
    return obj


# ---- decode: one real packet per protocol ------------------------------------------


def test_decode_avara_spec_vector(capsys: pytest.CaptureFixture[str]) -> None:
    status, (datagram,), err = run(capsys, "decode", "avara", AVARA_V10)
    assert status == 0 and err == ""
    assert datagram["type"] == "Datagram"
    assert datagram["crc_ok"] is True and datagram["ack"] == 4
    assert [c["type"] for c in datagram["commands"]] == ["Command"] * 3
    assert without_type(datagram["commands"]) == AVARA_V10_COMMANDS


def test_decode_lludp_packets(capsys: pytest.CaptureFixture[str]) -> None:
    status, (ping,), _ = run(capsys, "decode", "lludp", LLUDP_PING)
    assert status == 0
    assert ping["type"] == "Message" and ping["name"] == "StartPingCheck"
    assert ping["sequence"] == 7 and ping["frequency"] == "HIGH"
    assert ping["blocks"] == {
        "PingID": [{"type": "PingID", "PingID": 9, "OldestUnacked": 5}],
    }
    message = bench_messages()["AgentUpdate"]
    status, (update,), _ = run(capsys, "decode", "lludp", lludp.encode(message).hex())
    agent = update["blocks"]["AgentData"][0]
    expected = lludp.decode(lludp.encode(message)).blocks["AgentData"][0]
    assert agent["SessionID"] == str(expected.SessionID)  # a UUID, as text
    assert agent["CameraAtAxis"] == list(expected.CameraAtAxis)


def test_decode_archipelago_frame(capsys: pytest.CaptureFixture[str]) -> None:
    frame = sample_session()[0]
    status, (room,), _ = run(capsys, "decode", "archipelago", frame)
    assert status == 0
    assert room["type"] == "RoomInfo"
    assert room["games"] == json.loads(frame)[0]["games"]
    assert room["version"]["type"] == "VersionInfo"
    two = '[{"cmd": "Say", "text": "hi"}, {"cmd": "StatusUpdate", "status": 30}]'
    status, units, _ = run(capsys, "decode", "archipelago", two)
    assert units == [
        {"type": "Say", "text": "hi"},
        {"type": "StatusUpdate", "status": 30},
    ]


def test_decode_bzrc_replies(capsys: pytest.CaptureFixture[str]) -> None:
    stream = bzrc_vectors.MYTANKS + bzrc_vectors.TIMER + bzrc_vectors.OCCGRID
    status, units, _ = run(capsys, "decode", "bzrc", stream.hex())
    assert status == 0
    assert [u["type"] for u in units] == ["Listing", "Timer", "OccGrid"]
    tanks = units[0]["items"]
    assert [t["type"] for t in tanks] == ["MyTank", "MyTank"]
    assert tanks[0]["callsign"] == "red0" and tanks[1]["status"] == "dead"
    assert units[2]["grid"] == [[0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]  # numpy, as lists
    grid = occgrid_response(8)
    status, (big,), _ = run(capsys, "decode", "bzrc", "-", stdin=grid)
    assert status == 0 and big["type"] == "OccGrid"


def test_decode_ywindow_stream(capsys: pytest.CaptureFixture[str]) -> None:
    status, units, _ = run(capsys, "decode", "ywindow", YWINDOW_GOTO + YWINDOW_OK)
    assert status == 0
    assert units == [
        {"type": "Message", "kind": "c", "words": [{"type": "Keyword", "value": "goto"}, 10, 10]},
        {"type": "Message", "kind": "r", "words": [{"type": "Keyword", "value": "ok"}]},
    ]
    stream = b"".join(sample_messages(50))
    status, units, _ = run(capsys, "decode", "ywindow", "-", stdin=stream)
    assert status == 0
    decoded = ywindow.decode(stream)
    assert len(units) == len(decoded) == 50
    for unit, message in zip(units, decoded, strict=True):
        assert unit["kind"] == message.kind
        assert unit["words"] == [
            {"type": "Bytes", "hex": w.hex()} if isinstance(w, bytes) else to_json(w)
            for w in message.words
        ]
    assert any(isinstance(w, bytes) for m in decoded for w in m.words)  # bytes words tagged


# ---- decode: where the input comes from ---------------------------------------------


def test_decode_from_a_file_stdin_and_hex_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    raw = bytes.fromhex(AVARA_V10)
    path = tmp_path / "datagram.bin"
    path.write_bytes(raw)
    expected = run(capsys, "decode", "avara", AVARA_V10)[1]
    assert run(capsys, "decode", "avara", "-f", str(path))[1] == expected
    assert run(capsys, "decode", "avara", "-", stdin=raw)[1] == expected
    lines = tmp_path / "datagrams.txt"
    lines.write_text(f"{LLUDP_PING}\n\n{LLUDP_PING.replace('09', '0a')}\n")
    status, units, _ = run(capsys, "decode", "lludp", "--hex", "-f", str(lines))
    assert status == 0
    assert [u["blocks"]["PingID"][0]["PingID"] for u in units] == [9, 10]
    frame = b'[{"cmd": "Sync"}]'
    path.write_bytes(frame)
    assert run(capsys, "decode", "archipelago", "-f", str(path))[1] == [{"type": "Sync"}]
    stream = bzrc_vectors.TIMER + bzrc_vectors.TEAMS
    status, units, _ = run(capsys, "decode", "bzrc", "--hex", "-", stdin=stream.hex().encode())
    assert status == 0 and [u["type"] for u in units] == ["Timer", "Listing"]


def test_pretty_output_is_indented(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--pretty", "archipelago", '[{"cmd": "Say", "text": "x"}]']) == 0
    out = capsys.readouterr().out
    assert out == '{\n  "type": "Say",\n  "text": "x"\n}\n'


# ---- decode: errors ------------------------------------------------------------------

BAD = [
    ("avara", ["--strict", AVARA_V10[:-4]], "checksum does not match"),
    ("lludp", ["40 0000"], "(at byte"),
    ("archipelago", ['{"cmd": "Say"}'], "(at byte 0)"),
    ("bzrc", [(bzrc_vectors.MYTANKS[:-4]).hex()], "stream ended inside a response"),
    ("ywindow", [YWINDOW_OK + YWINDOW_GOTO[:-3]], "stream ended inside a message"),
]


@pytest.mark.parametrize(("protocol", "args", "reason"), BAD, ids=[b[0] for b in BAD])
def test_decode_error_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], protocol: str, args: list[str], reason: str
) -> None:
    status, _, err = run(capsys, "decode", protocol, *args)
    assert status == 2
    assert err.endswith("\n") and err.count("\n") == 1
    assert err.startswith("gamecodec: decode error: ")
    assert reason in err


def test_units_before_an_error_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    status, units, err = run(capsys, "decode", "ywindow", YWINDOW_OK + YWINDOW_GOTO[:-3])
    assert status == 2 and [u["kind"] for u in units] == ["r"]
    assert "at byte 33" in err  # the end of the stream
    cut = bzrc_vectors.TIMER + bzrc_vectors.MYTANKS[:-4]
    status, units, err = run(capsys, "decode", "bzrc", cut.hex())
    assert status == 2 and [u["type"] for u in units] == ["Timer"]
    assert f"at byte {len(cut)}" in err


def test_unreadable_input_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for argv in (
        ["decode", "avara", "not hex"],
        ["decode", "avara", "-f", str(tmp_path / "missing")],
    ):
        status, units, err = run(capsys, *argv)
        assert status == 2 and units == []
        assert err.startswith("gamecodec: error: ") and err.count("\n") == 1
    lines = tmp_path / "lines.txt"
    lines.write_text(f"{LLUDP_PING}\n\nzz\n")
    status, units, err = run(capsys, "decode", "lludp", "--hex", "-f", str(lines))
    assert status == 2 and units == []  # the input is read whole before decoding
    assert err.startswith("gamecodec: error: line 3 is not hex")


@pytest.mark.parametrize(
    "argv",
    [
        ["decode", "avara"],  # no input
        ["decode", "avara", "00", "-f", "x"],  # two inputs
        ["decode", "bzrc", "--strict", "00"],
        ["decode", "ywindow", "--net-version", "17", "00"],
        ["decode", "archipelago", "--hex", "-"],
        ["decode", "nosuchprotocol", "00"],
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "usage: gamecodec decode" in capsys.readouterr().err


def test_options_may_follow_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    status, (datagram,), _ = run(capsys, "decode", "avara", "--net-version", "18", AVARA_V10)
    assert status == 0 and datagram["crc_ok"] is True
    status, _, err = run(capsys, "decode", "avara", "--strict", "--net-version", "17", AVARA_V10)
    assert status == 2 and "net version 17" in err


def _gamecodec(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "gamecodec.cli", *argv],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_command_decodes_and_fails_without_a_traceback() -> None:
    done = _gamecodec("decode", "ywindow", "-", stdin=bytes.fromhex(YWINDOW_GOTO))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["words"][1:] == [10, 10]
    done = _gamecodec("decode", "bzrc", "-", stdin=b"ack 1.5 mytanks\nbegin\nmytank 0")
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr == b"gamecodec: decode error: stream ended inside a response (at byte 30)\n"


# ---- to_json ---------------------------------------------------------------------------


class Colour(enum.IntEnum):
    RED = 1


class Pair(NamedTuple):
    type: str
    colour: Colour


@dataclasses.dataclass(frozen=True)
class Event:
    at: float
    ids: tuple[uuid.UUID, ...]


class Item(msgspec.Struct):
    name: str
    count: int | msgspec.UnsetType = msgspec.UNSET


def test_to_json_models() -> None:
    some = uuid.UUID(int=1)
    assert to_json(Pair("x", Colour.RED)) == {"type": "Pair", "type_": "x", "colour": "RED"}
    assert to_json(Event(1.5, (some,))) == {"type": "Event", "at": 1.5, "ids": [str(some)]}
    assert to_json(Item("a")) == {"type": "Item", "name": "a"}  # unset fields left out
    assert to_json(Item("a", 2)) == {"type": "Item", "name": "a", "count": 2}
    assert to_json(np.arange(4, dtype=np.uint8).reshape(2, 2)) == [[0, 1], [2, 3]]
    assert to_json(np.float32(0.5)) == 0.5
    assert to_json([math.nan, math.inf, -math.inf]) == ["NaN", "Infinity", "-Infinity"]
    assert to_json({b"\x01": bytearray(b"\xff"), 2: memoryview(b"\x00")}) == {"01": "ff", "2": "00"}
    assert to_json(object())["type"] == "object"  # unknown: its repr, never a crash


def test_every_model_of_a_session_has_a_json_form(capsys: pytest.CaptureFixture[str]) -> None:
    for frame in sample_session(players=2, turns=4):
        status, units, _ = run(capsys, "decode", "archipelago", frame)
        assert status == 0 and units
        assert '"repr"' not in json.dumps(units)


# ---- --version and --help ------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out == f"gamecodec {gamecodec.__version__}\n"
    assert re.fullmatch(r"gamecodec \d+\.\d+\.\d+\n", out)


MARKUP = re.compile(r"``|:(?:class|func|meth|mod|data|attr):|\*\*|`[^`\n]+`")


def test_help_has_no_markup(capsys: pytest.CaptureFixture[str]) -> None:
    texts = []
    for argv in (["--help"], ["decode", "--help"], ["bench", "--help"], ["info", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        texts.append(capsys.readouterr().out)
    assert "decode" in texts[0] and "bench" in texts[0] and "--version" in texts[0]
    for text in texts:
        assert text.startswith("usage: gamecodec")
        assert not MARKUP.search(text), MARKUP.search(text)
    assert build_parser().prog == "gamecodec"
