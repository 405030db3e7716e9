"""The typed decoder's nesting limit is the reference's on both twins, from any
caller stack depth; NaN and Infinity decode to floats and encode back."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from gamecodec.archipelago import commands as C
from gamecodec.archipelago import frames
from gamecodec.archipelago._models import DEFAULT_MAX_DEPTH
from gamecodec.errors import DecodeError


@pytest.fixture
def typed(codec: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """frames with the nesting scan of the twin under test."""
    monkeypatch.setattr(frames, "_past_depth", codec.past_depth)
    yield frames


def _nested(levels: int) -> str:
    """A Bounce frame whose brackets nest ``levels`` containers deep in all
    (the frame's array and the command's object count)."""
    inner = "1"
    for _ in range(levels - 3):
        inner = "[" + inner + "]"
    return '[{"cmd":"Bounce","data":{"x":' + inner + "}}]"


def test_fifteen_levels_decode_and_sixteen_are_refused_at_the_bracket(
    typed: ModuleType, codec: ModuleType
) -> None:
    """The reference counts from 1 and refuses a count past 16: 15 containers."""
    assert DEFAULT_MAX_DEPTH == 16
    (bounce,) = typed.decode(_nested(15))
    assert isinstance(bounce, C.Bounce)
    text = _nested(16)
    with pytest.raises(DecodeError, match="more than 15 levels") as info:
        typed.decode(text)
    with pytest.raises(DecodeError) as compat_info:
        codec.decode(text)
    assert info.value.offset == compat_info.value.offset == text.index("[[") + 12


@pytest.mark.parametrize("levels", [16, 17, 40, 900, 5000])
def test_every_depth_past_the_limit_is_refused_alike(typed: ModuleType, levels: int) -> None:
    """Before, the typed decoder read up to msgspec's recursion limit (~1000)."""
    with pytest.raises(DecodeError, match="more than 15 levels"):
        typed.decode(_nested(levels))


def _stack_depth() -> int:
    frame = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


def _call_at(depth: int, call: Callable[[], Any]) -> Any:
    if _stack_depth() < depth:
        return _call_at(depth, call)
    return call()


@pytest.mark.parametrize("decoder", ["typed", "compat"])
def test_the_limit_does_not_depend_on_the_callers_stack(
    typed: ModuleType, codec: ModuleType, decoder: str
) -> None:
    """Called from a deep recursion the parsers ran out of stack and refused a
    frame within the limit, each twin at a different depth. Now a frame within
    the limit decodes wherever the call can start at all."""
    text = _nested(15)
    call = (lambda: typed.decode(text)) if decoder == "typed" else (lambda: codec.decode(text))
    expected = call()
    limit = sys.getrecursionlimit()
    decoded = 0
    for spare in range(2, 100):
        try:
            result = _call_at(limit - spare, call)
        except RecursionError:  # no room left for the decoder's own Python calls
            assert spare < 40
            continue
        assert result == expected  # never a DecodeError
        decoded += 1
    assert decoded > 60


def _reference_scan(text: str, limit: int = DEFAULT_MAX_DEPTH) -> int:
    """The reference's check, character by character (its UTF-8 offset)."""
    depth, in_string, escaped = 1, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return len(text[:index].encode())
        elif char in "]}":
            depth -= 1
    return -1


@pytest.mark.parametrize(
    "text",
    [
        "[" * 16,
        '["[[[[[[[[[[[[[[[[[[",' + "[" * 15,
        '["\\"[[[[[[[[[[[[[[[[[[",' + "[" * 15,
        "]]]" + "[" * 18,
        "]]]" + "[" * 19,
        '"é"' + "{" * 16,
        '"unterminated \\" [[[[[[[[[[[[[[[[[[[[[[',
        "[" * 15,
        '"\\\\"' + "[" * 16,
    ],
)
def test_the_scan_is_the_references(codec: ModuleType, text: str) -> None:
    expected = _reference_scan(text)
    assert codec.past_depth(text) == expected
    assert codec.past_depth(text.encode()) == expected
    assert codec.past_depth(text, 18) == _reference_scan(text, 18)


# ------------------------------------------------------------------ NaN, Infinity


NAN_FRAMES = [
    '[{"cmd":"Bounced","tags":["DeathLink"],"data":{"time":NaN,"cause":"x","source":"a"}}]',
    '[{"cmd":"SetReply","key":"k","value":Infinity,"original_value":-Infinity,"slot":1}]',
    '[{"cmd":"Retrieved","keys":{"k":[NaN,1e400,-1e400]},"request_id":7}]',
    '[{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[],'
    '"checked_locations":[],"slot_info":{},"hint_points":0,"slot_data":{"speed":Infinity}}]',
]


@pytest.mark.parametrize("text", NAN_FRAMES)
def test_nan_and_infinity_decode_typed_and_encode_back(typed: ModuleType, text: str) -> None:
    """Before, these frames were refused by the typed decoder."""
    frame = typed.decode(text)
    assert isinstance(frame[0], C.Command)
    assert typed.encode(frame) == text  # the frame's own text
    again = typed.encode(list(frame))  # written fresh, as the reference writes floats
    assert "NaN" in again or "Infinity" in again
    assert typed.encode(typed.decode(again)) == again


def test_nan_values_are_floats(typed: ModuleType) -> None:
    (bounced,) = typed.decode(NAN_FRAMES[0])
    assert isinstance(bounced, C.Bounced) and math.isnan(bounced.data["time"])
    (retrieved,) = typed.decode(NAN_FRAMES[2])
    assert isinstance(retrieved, C.Retrieved)
    value = retrieved.keys["k"]
    assert math.isnan(value[0]) and value[1:] == [math.inf, -math.inf]
    assert retrieved.extra == {"request_id": 7}


@pytest.mark.parametrize(
    "text",
    ["[NaN", '[{"cmd":"Say","text":NaN}]', "[Nan]", '[{"cmd":"Say","text":"\ud800"}]'],
)
def test_what_the_reference_refuses_is_still_refused(typed: ModuleType, text: str) -> None:
    with pytest.raises(DecodeError):
        typed.decode(text)
