"""The worked bytes of spec §1.2 and §1.4, byte for byte, on both twins."""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec import ywindow
from gamecodec.ywindow import Keyword, Message

GOTO_CALL = bytes.fromhex("63 04 00 00 00 03 6b 04 67 6f 74 6f 69 04 00 00 00 0a 69 04 00 00 00 0a")
OK_REPLY = bytes.fromhex("72 04 00 00 00 01 6b 02 6f 6b")
GOTO_NOTIFY = b"v" + GOTO_CALL[1:]
MOUSE_MOVED = (
    bytes.fromhex("76 04 00 00 00 03 6b 0b")
    + b"mouse_moved"
    + bytes.fromhex("69 04 ff ff ff ff 69 04 00 00 00 02")
)

CONVERSATION = [
    (GOTO_CALL, Message("c", (Keyword("goto"), 10, 10))),
    (OK_REPLY, Message("r", (Keyword("ok"),))),
    (GOTO_NOTIFY, Message("v", (Keyword("goto"), 10, 10))),
    (MOUSE_MOVED, Message("v", (Keyword("mouse_moved"), -1, 2))),
]

WORDS = [
    (Keyword("goto"), "6b 04 67 6f 74 6f"),
    (-1, "69 04 ff ff ff ff"),
    (1, "69 04 00 00 00 01"),
    (16273, "69 04 00 00 3f 91"),
    ("hé", "73 08 00 00 00 68 00 00 00 e9"),
]


def test_lengths_of_the_examples() -> None:
    assert len(GOTO_CALL) == 24
    assert len(OK_REPLY) == 10
    assert len(MOUSE_MOVED) == 31
    assert MOUSE_MOVED.startswith(bytes.fromhex("76 04 00 00 00 03 6b 0b 6d 6f"))


def test_encoders_give_the_worked_bytes() -> None:
    assert ywindow.call("goto", 10, 10) == GOTO_CALL
    assert ywindow.reply(Keyword("ok")) == OK_REPLY
    assert ywindow.notify("goto", 10, 10) == GOTO_NOTIFY
    assert ywindow.notify("mouse_moved", -1, 2) == MOUSE_MOVED


@pytest.mark.parametrize(("wire", "message"), CONVERSATION)
def test_decode_each_example(codec: ModuleType, wire: bytes, message: Message) -> None:
    (got,) = codec.decode(wire)
    assert got == message
    assert type(got) is Message
    assert type(got.words[0]) is Keyword
    assert ywindow.encode(got) == wire


def test_decode_the_conversation_as_one_stream(codec: ModuleType) -> None:
    stream = b"".join(wire for wire, _ in CONVERSATION)
    assert codec.decode(stream) == [m for _, m in CONVERSATION]


@pytest.mark.parametrize(("value", "hexa"), WORDS)
def test_word_examples(codec: ModuleType, value: object, hexa: str) -> None:
    wire = bytes.fromhex(hexa)
    assert ywindow.encode_word(value) == wire  # type: ignore[arg-type]
    (got,) = codec.decode(ywindow.encode("r", [value]))  # type: ignore[list-item]
    assert got.words == (value,)
    assert type(got.words[0]) is type(value)


def test_reply_16273_header() -> None:
    """The document's ``'r' 16273`` is carried like an int payload."""
    assert ywindow.encode("r", [0] * 16273)[:6] == bytes.fromhex("72 04 00 00 3f 91")


def test_message_accessors() -> None:
    call, reply = CONVERSATION[0][1], CONVERSATION[1][1]
    assert (call.method, call.args) == ("goto", (10, 10))
    assert (reply.method, reply.args) == (None, (Keyword("ok"),))
    assert Message("c", (1, 2)).method is None
