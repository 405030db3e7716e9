"""Hypothesis: the compiled and the pure compat twins agree on everything."""

from __future__ import annotations

import json
import os
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.archipelago._models import Hint, NetworkItem, NetworkPlayer, NetworkSlot, Version
from gamecodec.errors import DecodeError
from tests.archipelago.typed_values import to_typed

SETTINGS = settings(
    max_examples=int(os.environ.get("AP_EXAMPLES", "250")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8")),
)
ints = st.integers(min_value=-(2**53), max_value=2**53)
named = st.one_of(
    st.builds(NetworkItem, ints, ints, ints, ints),
    st.builds(NetworkPlayer, ints, ints, st.text(), st.text()),
    st.builds(NetworkSlot, st.text(), st.text(), ints, st.lists(ints, max_size=3)),
    st.builds(Version, ints, ints, ints),
    st.builds(Hint, ints, ints, ints, ints, st.booleans()),
)
keys = st.one_of(st.text(max_size=8), st.integers(), st.sampled_from(["class", "Major", "item"]))
values = st.recursive(
    st.one_of(scalars, named),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.frozensets(st.integers(), max_size=3),
        st.dictionaries(keys, inner, max_size=4),
    ),
    max_leaves=20,
)


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        result = fn(*args, **kwargs)
    except DecodeError as exc:
        return ("error", (str(exc), exc.offset))
    except Exception as exc:  # the encoders' reference errors
        return ("exception", type(exc).__name__)
    if isinstance(result, (str, bytes)):
        return ("value", result)
    return ("value", json.dumps(to_typed(result)))


@SETTINGS
@given(values)
def test_encode_agrees(py_codec: ModuleType, c_codec: ModuleType, value: Any) -> None:
    assert _outcome(c_codec.encode, value) == _outcome(py_codec.encode, value)
    assert _outcome(c_codec.encode_bytes, value) == _outcome(py_codec.encode_bytes, value)


@SETTINGS
@given(values)
def test_encode_with_one_decode_with_the_other(
    py_codec: ModuleType, c_codec: ModuleType, value: Any
) -> None:
    text = py_codec.encode(value)
    assert _outcome(c_codec.decode, text) == _outcome(py_codec.decode, text)
    text = c_codec.encode(value)
    assert _outcome(py_codec.decode, text) == _outcome(c_codec.decode, text)


json_alphabet = st.sampled_from([*'[]{}",:0123456789-+.eE \\ntrufalsNIy\x01é/u', '"class"'])


@SETTINGS
@given(st.lists(json_alphabet, max_size=40).map("".join), st.integers(min_value=1, max_value=20))
def test_decode_agrees_on_jsonish_text(
    py_codec: ModuleType, c_codec: ModuleType, text: str, depth: int
) -> None:
    expected = _outcome(py_codec.decode, text, max_depth=depth)
    assert _outcome(c_codec.decode, text, max_depth=depth) == expected
    assert _outcome(c_codec.decode, text.encode("utf-8", "surrogatepass")) == _outcome(
        py_codec.decode, text.encode("utf-8", "surrogatepass")
    )
    assert expected[0] in ("value", "error")


@SETTINGS
@given(st.binary(max_size=60))
def test_random_bytes_only_raise_decode_error(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes
) -> None:
    expected = _outcome(py_codec.decode, data)
    assert expected[0] in ("value", "error")
    assert _outcome(c_codec.decode, data) == expected


@SETTINGS
@given(values, st.data())
def test_mutated_frames_agree(
    py_codec: ModuleType, c_codec: ModuleType, value: Any, data: st.DataObject
) -> None:
    text = py_codec.encode(value)
    if text:
        at = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
        replacement = data.draw(st.sampled_from(["", "[", "]", "{", "}", '"', ",", "\\", "x", "1"]))
        text = text[:at] + replacement + text[at + 1 :]
    assert _outcome(c_codec.decode, text) == _outcome(py_codec.decode, text)


# ------------------------------------------------------------------ typed commands

from gamecodec.archipelago import commands as C  # noqa: E402
from gamecodec.archipelago import frames  # noqa: E402

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        ints,
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=6),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        # a "class" key is compat's business (tested above): keep these plain
        st.dictionaries(st.text(max_size=5).filter(lambda k: k != "class"), inner, max_size=3),
    ),
    max_leaves=10,
)
items = st.builds(C.Item, ints, ints, ints, ints)
commands = st.one_of(
    st.builds(C.ReceivedItems, ints, st.lists(items, max_size=5)),
    st.builds(C.LocationInfo, st.lists(items, max_size=3)),
    st.builds(
        C.PrintJSON,
        st.lists(st.builds(C.MessagePart, st.text(max_size=8)), max_size=3),
        type=st.sampled_from(["ItemSend", "Chat"]),
        item=items,
        message=st.text(max_size=8),
    ),
    st.builds(C.Bounce, tags=st.lists(st.text(max_size=5), max_size=2), data=json_values),
    st.builds(C.SetReply, st.text(max_size=5), value=json_values, original_value=json_values),
    st.builds(
        C.RoomInfo,
        st.booleans(),
        st.lists(st.text(max_size=5), max_size=2),
        st.just(["AP"]),
        st.builds(C.VersionInfo, ints, ints, ints),
        time=st.floats(allow_nan=False, allow_infinity=False),
    ),
    st.builds(C.Say, st.text()),
)


@SETTINGS
@given(st.lists(commands, max_size=4))
def test_typed_encode_is_the_compat_writers_on_both_twins(
    py_codec: ModuleType, c_codec: ModuleType, frame: list[Any]
) -> None:
    """encode (msgspec where it writes alike) gives what either compat twin
    writes for the same commands as dicts, and that is the reference's wire form."""
    text = frames.encode(frame)
    assert text == py_codec.encode(frame, default=frames._struct_dict)
    assert text == c_codec.encode(frame, default=frames._struct_dict)
    assert frames.encode_bytes(frame) == c_codec.encode_bytes(frame, default=frames._struct_dict)
    # the wire form is the reference's: compat decode + encode gives the same text
    assert py_codec.encode(py_codec.decode(text)) == text
    again = frames.decode(text)
    assert list(again) == frame
    assert frames.encode(again) == text


structs = st.one_of(
    st.builds(C.Item, ints, ints, ints, ints),
    st.builds(C.Player, ints, ints, st.text(max_size=3), st.text(max_size=3)),
    st.builds(C.Say, st.text(max_size=3)),
    st.builds(C.SetReply, st.text(max_size=3), value=st.one_of(scalars, named)),
    st.builds(set),
)
values_with_structs = st.recursive(
    st.one_of(scalars, named, structs),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.builds(NetworkSlot, st.text(max_size=3), st.text(max_size=3), ints, inner),
    ),
    max_leaves=20,
)


@SETTINGS
@given(values_with_structs)
def test_encode_with_default_agrees(py_codec: ModuleType, c_codec: ModuleType, value: Any) -> None:
    """``default`` replaces what the writer does not know, anywhere (NamedTuple
    fields included), and its result is written by the pre-pass rules."""
    default = frames._struct_dict
    expected = _outcome(py_codec.encode, value, default=default)
    assert _outcome(c_codec.encode, value, default=default) == expected
    assert _outcome(c_codec.encode_bytes, value, default=default) == _outcome(
        py_codec.encode_bytes, value, default=default
    )


# ------------------------------------------------------------------ nesting limit, NaN


@SETTINGS
@given(st.lists(json_alphabet, max_size=60).map("".join), st.integers(min_value=1, max_value=20))
def test_the_nesting_scan_agrees(
    py_codec: ModuleType, c_codec: ModuleType, text: str, depth: int
) -> None:
    """Both twins find the same bracket where the reference's count passes the
    limit (the typed decoder refuses there), on text and on its bytes."""
    expected = py_codec.past_depth(text, depth)
    assert c_codec.past_depth(text, depth) == expected
    raw = text.encode("utf-8", "surrogatepass")
    assert c_codec.past_depth(raw, depth) == py_codec.past_depth(raw, depth) == expected


special_floats = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "1.5"])


@SETTINGS
@given(st.lists(special_floats, min_size=1, max_size=4), st.integers(min_value=1, max_value=16))
def test_nan_and_infinity_agree_at_every_depth(
    py_codec: ModuleType, c_codec: ModuleType, numbers: list[str], depth: int
) -> None:
    """NaN, Infinity and numbers past float range, nested to the limit and past it."""
    text = "[" * depth + ",".join(numbers) + "]" * depth
    for data in (text, text.encode()):
        assert _outcome(c_codec.decode, data) == _outcome(py_codec.decode, data)
    value = py_codec.decode(text) if depth < 16 else None
    if value is not None:
        assert _outcome(c_codec.encode, value) == _outcome(py_codec.encode, value)
