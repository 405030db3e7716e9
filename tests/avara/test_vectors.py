"""The spec's worked examples (§8) and the shared corpus vectors, on both twins."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from gamecodec.avara import Command, Datagram, HolePunch
from gamecodec.errors import BadDataLengthError, DecodeError, TruncatedError
from tests.conftest import shared_path

# Spec §8, copied as facts: (id, wire hex, ack, bitmap, commands).
SPEC_EXAMPLES: list[tuple[str, str, int, int | None, list[Command]]] = [
    (
        "V1",
        "2686feff000000b0f83c0001ff00",
        0xFFFE,
        None,
        [Command(0, 0, 0xB0, -8, None, 60, 0, 0, -1, b"\x00")],
    ),
    (
        "V5",
        "7ab00200040000b111d20406d001000000010005",
        2,
        None,
        [Command(4, 0, 0xB1, 17, None, 1234, 0, -48, 1, bytes.fromhex("000000010005"))],
    ),
    (
        "V10",
        "cba60400060001b111d30404d80100000002080001a111d404f8010a0001a311d5047800f901",
        4,
        None,
        [
            Command(6, 1, 0xB1, 17, None, 1235, 0, -40, 1, bytes.fromhex("00000002")),
            Command(8, 1, 0xA1, 17, None, 1236, 0, -8, 1, b""),
            Command(10, 1, 0xA3, 17, None, 1237, 120, -7, 1, b""),
        ],
    ),
    ("V11", "04260f0006000000", 0x000F, 6, []),
]


@pytest.mark.parametrize("example", SPEC_EXAMPLES, ids=[e[0] for e in SPEC_EXAMPLES])
def test_spec_example(codec: ModuleType, example: tuple[Any, ...]) -> None:
    _, wire_hex, ack, bitmap, commands = example
    wire = bytes.fromhex(wire_hex)
    assert codec.decode(wire) == Datagram(True, ack, bitmap, tuple(commands))
    assert codec.encode(ack, commands, bitmap) == wire
    assert codec.encode(codec.decode(wire)) == wire


def _vectors() -> list[dict[str, Any]]:
    path = shared_path("corpus", "avara", "vectors.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _expected_commands(expect: dict[str, Any]) -> tuple[Command, ...]:
    return tuple(
        Command(
            c["serial"],
            c["send_count"],
            c["flags"],
            c["command"],
            c["distribution"],
            c["p3"],
            c["p2"],
            c["p1"],
            c["sender"],
            bytes.fromhex(c["data"]),
        )
        for c in expect["commands"]
    )


_ERRORS = {"bad_data_len": BadDataLengthError, "truncated": TruncatedError}


def test_corpus_vectors(codec: ModuleType) -> None:
    """Every vector of ../shared/corpus/avara decodes to the recorded values and
    re-encodes to the recorded bytes (canonical flags for what the game wrote,
    kept flags for crafted datagrams fed to its reader)."""
    vectors = _vectors()
    assert vectors
    for vec in vectors:
        wire = bytes.fromhex(vec["wire"])
        expect = vec["expect"]
        version = vec["version"]
        if expect["punch"] is not None:
            punch = codec.decode(wire, version=version)
            assert isinstance(punch, HolePunch), vec["id"]
            want = expect["punch"]
            assert (punch.command, punch.connection_id, punch.host, punch.port, punch.handled) == (
                want["command"],
                want.get("connection_id"),
                want.get("host"),
                want.get("port"),
                want["handled"],
            ), vec["id"]
            continue
        if expect["error"] in _ERRORS:
            with pytest.raises(_ERRORS[expect["error"]]) as info:
                codec.decode(wire, version=version)
            partial = info.value.partial
            assert isinstance(partial, Datagram)
            assert partial.ack == expect["ack"], vec["id"]
            assert partial.commands == _expected_commands(expect), vec["id"]
            continue
        got = codec.decode(wire, version=version)
        assert got.crc_ok is expect["crc_ok"], vec["id"]
        assert got.ack == expect["ack"], vec["id"]
        assert got.ack_bitmap == expect["ack_bitmap"], vec["id"]
        assert got.commands == _expected_commands(expect), vec["id"]
        if not got.crc_ok:
            continue
        keep = vec["source"] == "read"
        assert codec.encode(got, version=version, keep_flags=keep) == wire, vec["id"]


def test_corpus_vectors_strict_agrees(codec: ModuleType) -> None:
    """strict=True accepts every datagram the game's writer produced."""
    for vec in _vectors():
        if vec["source"] != "send" or vec["expect"]["error"] or vec["expect"]["punch"]:
            continue
        wire = bytes.fromhex(vec["wire"])
        try:
            codec.decode(wire, version=vec["version"], strict=True)
        except DecodeError as exc:  # pragma: no cover - reported below
            pytest.fail(f"{vec['id']}: {exc}")
