"""Archipelago's errors: the protocol on each, and where offsets come from."""

from __future__ import annotations

from types import ModuleType

import msgspec
import pytest

from gamecodec import archipelago
from gamecodec.archipelago import _errors
from gamecodec.archipelago._errors import msgspec_position
from gamecodec.errors import DecodeError, GameCodecError


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "JSON is malformed: invalid character (byte 1)",
            ("JSON is malformed: invalid character", 1),
        ),
        (
            "JSON is malformed: expected ',' or ']' (byte 3)",
            ("JSON is malformed: expected ',' or ']'", 3),
        ),
        # a reason that itself holds parentheses: the last "(byte N)" is the position
        (
            "JSON is malformed: odd (byte) thing (byte 7)",
            ("JSON is malformed: odd (byte) thing", 7),
        ),
        # a position past the input is clamped to its end
        (
            "JSON is malformed: trailing characters (byte 99)",
            ("JSON is malformed: trailing characters", 10),
        ),
    ],
)
def test_the_malformed_form_gives_its_byte(message: str, expected: tuple[str, int]) -> None:
    assert msgspec_position(message, 10) == expected


def test_the_truncated_form_is_the_end_of_the_input() -> None:
    assert msgspec_position("Input data was truncated", 10) == ("Input data was truncated", 10)


@pytest.mark.parametrize(
    "message",
    ["Something new happened", "JSON is malformed: no position", "(byte 3) out of place", ""],
)
def test_other_text_keeps_its_words_at_the_end_of_the_input(message: str) -> None:
    assert msgspec_position(message, 10) == (message, 10)


@pytest.mark.parametrize(
    ("frame", "offset"),
    [(b"[1 2]", 3), (b"[1]x", 3 + 1), (b"[x]", 1), (b"[", 1), (b'["abc', 5), (b"", 0)],
)
def test_msgspec_still_words_its_errors_so(frame: bytes, offset: int) -> None:
    """The forms msgspec_position reads are what the installed msgspec writes."""
    with pytest.raises(msgspec.DecodeError) as raised:
        msgspec.json.decode(frame)
    reason, at = msgspec_position(str(raised.value), len(frame))
    assert at == offset
    with pytest.raises(DecodeError) as decoded:
        archipelago.decode(frame)
    assert (decoded.value.message, decoded.value.offset) == (reason, at)


def test_a_frame_error_on_unknown_text_is_still_a_decode_error() -> None:
    error = _errors.frame_error(b"[1,2]", msgspec.DecodeError("a wording msgspec may adopt"))
    assert isinstance(error, DecodeError)
    assert (error.message, error.offset, error.protocol) == (
        "a wording msgspec may adopt",
        5,
        "archipelago",
    )


@pytest.mark.parametrize(
    "frame",
    [
        b"[1 2]",
        "[\ud800]",
        b"[\xff]",
        b"[" * 5000 + b"]" * 5000,
        "{}",
        "[1]",
        '[{"cmd":"Say"}]',
        "[1e400]",
    ],
)
def test_every_decode_error_names_the_protocol(frame: str | bytes) -> None:
    with pytest.raises(DecodeError) as typed:
        archipelago.decode(frame)
    assert typed.value.protocol == "archipelago"
    assert (
        0
        <= typed.value.offset
        <= len(frame if isinstance(frame, bytes) else frame.encode("utf-8", "surrogatepass"))
    )


@pytest.mark.parametrize(
    "frame",
    [
        b"[1 2]",
        b"[\xff]",
        b"[" * 40 + b"]" * 40,
        '[{"class":"NetworkItem"}]',
        "[" + "9" * 5000 + "]",
    ],
)
def test_every_compat_decode_error_names_the_protocol(
    frame: str | bytes, codec: ModuleType
) -> None:
    with pytest.raises(DecodeError) as raised:
        codec.decode(frame)
    assert raised.value.protocol == "archipelago"


def test_login_refused_names_the_protocol() -> None:
    error = _errors.LoginRefusedError(["InvalidSlot"])
    assert isinstance(error, GameCodecError)
    assert (error.protocol, error.errors, str(error)) == (
        "archipelago",
        ["InvalidSlot"],
        "login refused: InvalidSlot",
    )
    assert archipelago.LoginRefusedError is error.__class__
