"""The typed decode refuses a frame that is not an array of objects without
reading the rest of it (issue 35 item 7).

A 10 MB ``[1,1,1,...]`` used to be parsed whole, twice (values, then element
pieces to find the offset), before "a command must be a JSON object (at byte
1)": the error and its offset stay, the work on the rest of the frame goes.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from gamecodec.archipelago import frames
from gamecodec.archipelago.commands import Sync
from gamecodec.errors import DecodeError

HUGE = "[" + ",".join(["1"] * 5_000_000) + "]"

CASES = [
    "[1]",
    " [ null ,1]",
    '[{"cmd":"Sync"}, "x"]',
    '[{"cmd":"Sync"} ,\n{"cmd":"Say","text":"h\u00e9"}, [1], 2]',
    '[{"cmd":"Say","text":"\u00e9\u00e9"}, true]',
    b'[{"cmd":"Say","text":"\xc3\xa9"}, 1.5]',
    '[{"cmd":"Sync"},{"cmd":"Say"}, 1]',  # the bad Say comes first
    '[{"cmd":"Connect","password":"","game":"g","name":"n","uuid":"u",'
    '"version":{"major":0,"minor":5,"build":0},"items_handling":7,"tags":[],'
    '"slot_data":true}, 1]',  # a Connect without "class": "Version" first
    '[{"cmd":"Nope","x":1}, 1]',  # an unknown command kept, then the int
    '{"a":[1,1]}',
    "5",
    "[1, x]",  # not JSON: the syntax error, as before
    "[1, NaN]",  # JSON only the reference reads: the full path, as before
    "[1,",
]


def _outcome(fn: Any, data: Any) -> tuple[str, int, Any]:
    with pytest.raises(DecodeError) as info:
        fn(data)
    return (info.value.message, info.value.offset, info.value.partial)


def _full_path(data: Any) -> Any:
    """What decode raised before: the command-by-command reading of the whole frame."""
    if not isinstance(data, str):
        data = frames._checked(data)
    frames._refuse_too_deep(data)
    try:
        frames._decode_all(data)
    except Exception:  # the one-pass decode's refusal, whatever it is
        return frames._decode_each(data)
    raise AssertionError("the one-pass decode took it")


@pytest.mark.parametrize("data", CASES)
def test_the_same_error_as_the_full_reading(data: Any) -> None:
    assert _outcome(frames.decode, data) == _outcome(_full_path, data)


def test_a_huge_array_of_ints_is_refused_without_reading_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tracemalloc.start()
    try:
        assert _outcome(frames.decode, HUGE) == ("a command must be a JSON object", 1, [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # one copy of the text at most (the pure twins' syntax check reads it as bytes);
    # before: 517 MiB for these 10 MB
    assert peak < 2 * len(HUGE)
    monkeypatch.setattr(frames, "_decode_each", None)  # not reached at all
    assert _outcome(frames.decode, HUGE)[1] == 1
    assert _outcome(frames.decode, '[{"cmd":"Sync"},' + HUGE[1:])[1:] == (16, [Sync()])
