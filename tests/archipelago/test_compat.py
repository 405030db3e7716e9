"""compat.encode / compat.decode behaviour on hand-written vectors (both twins)."""

from __future__ import annotations

import math
import sys
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from gamecodec.archipelago._models import (
    ClientStatus,
    Hint,
    HintStatus,
    JSONTypes,
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
    Permission,
    SlotType,
    Version,
)
from gamecodec.errors import DecodeError
from tests.archipelago.typed_values import to_typed


class Point(NamedTuple):
    x: int
    y: int


# ------------------------------------------------------------------ encode


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (
            NetworkItem(1, 2, 3),
            '{"item":1,"location":2,"player":3,"flags":0,"class":"NetworkItem"}',
        ),
        (
            NetworkPlayer(0, 1, "A", "B"),
            '{"team":0,"slot":1,"alias":"A","name":"B","class":"NetworkPlayer"}',
        ),
        (
            NetworkSlot("n", "g", SlotType.group, [1, 2]),
            '{"name":"n","game":"g","type":2,"group_members":[1,2],"class":"NetworkSlot"}',
        ),
        (Version(0, 6, 8), '{"major":0,"minor":6,"build":8,"class":"Version"}'),
        (
            Hint(1, 2, 3, 4, False, status=HintStatus.HINT_PRIORITY),
            '{"receiving_player":1,"finding_player":2,"location":3,"item":4,"found":false,'
            '"entrance":"","item_flags":0,"status":30,"class":"Hint"}',
        ),
        (Point(1, 2), '{"x":1,"y":2,"class":"Point"}'),
        # a NamedTuple's field values are not walked: a nested one is an array
        (Point(Point(1, 2), (3,)), '{"x":[1,2],"y":[3],"class":"Point"}'),
        ([(1, 2), {3}, frozenset({4})], "[[1,2],[3],[4]]"),
        ({1: "a", 2.5: "b", None: "c", False: "d"}, '{"1":"a","2.5":"b","null":"c","false":"d"}'),
        ({float("nan"): 1, float("inf"): 2, 1e16: 3}, '{"NaN":1,"Infinity":2,"1e+16":3}'),
        (
            [ClientStatus.CLIENT_GOAL, Permission.auto_enabled, JSONTypes.item_id],
            '[30,7,"item_id"]',
        ),
        (
            [float("nan"), float("-inf"), 1e16, 0.1 + 0.2, -0.0],
            "[NaN,-Infinity,1e+16,0.30000000000000004,-0.0]",
        ),
        (2**100, "1267650600228229401496703205376"),
        (-(2**63), "-9223372036854775808"),
        ('é\u2028/\x7f\n\r\t\b\f\x00\x1f"\\', '"é\u2028/\x7f\\n\\r\\t\\b\\f\\u0000\\u001f\\"\\\\"'),
        ({"k": [None, True, False, {}, []]}, '{"k":[null,true,false,{},[]]}'),
        ("\ud800", '"\ud800"'),
    ],
)
def test_encode(codec: ModuleType, value: object, wire: str) -> None:
    assert codec.encode(value) == wire


def test_encode_bytes(codec: ModuleType) -> None:
    assert codec.encode_bytes(["é", NetworkItem(1, 2, 3, 4)]) == (
        '["é",{"item":1,"location":2,"player":3,"flags":4,"class":"NetworkItem"}]'.encode()
    )
    with pytest.raises(UnicodeEncodeError):
        codec.encode_bytes("\udfff")


@pytest.mark.parametrize(
    ("value", "exc"),
    [
        (object(), TypeError),
        (Point({1}, 2), TypeError),  # a set inside a NamedTuple is not pre-passed
        ({(1, 2): 3}, TypeError),
        (10**5000, ValueError),
    ],
    ids=["object", "set-in-namedtuple", "tuple-key", "huge-int"],
)
def test_encode_errors_are_the_references(codec: ModuleType, value: object, exc: type) -> None:
    with pytest.raises(exc):
        codec.encode(value)


def test_encode_deep_nesting_raises_recursion_error(codec: ModuleType) -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(RecursionError):
        codec.encode(value)


# ------------------------------------------------------------------ decode


def test_decode_builds_the_allowlisted_namedtuples(codec: ModuleType) -> None:
    value = codec.decode(
        '[{"item":1,"location":2,"player":3,"class":"NetworkItem","extra":9},'
        '{"class":"NetworkSlot","name":"n","game":"g","type":1},'
        '{"team":0,"slot":1,"alias":"a","name":"n","class":"NetworkPlayer"}]'
    )
    assert value == [
        NetworkItem(1, 2, 3, 0),
        NetworkSlot("n", "g", 1, ()),
        NetworkPlayer(0, 1, "a", "n"),
    ]
    assert [type(v) for v in value] == [NetworkItem, NetworkSlot, NetworkPlayer]
    assert type(value[1].type) is int


def test_decode_version_is_case_insensitive_and_coerced(codec: ModuleType) -> None:
    value = codec.decode('{"Major":"0","MINOR":6.9,"build":true,"extra":[],"class":"Version"}')
    assert value == Version(0, 6, 1)
    assert type(value) is Version
    assert to_typed(value)["v"][2][1] == {"t": "int", "v": "1"}


def test_decode_leaves_other_classes_as_dicts(codec: ModuleType) -> None:
    text = (
        '[{"a":1,"class":"Hint"},{"class":5},{"class":null},'
        '{"class":{"major":1,"minor":2,"build":3,"class":"Version"}}]'
    )
    value = codec.decode(text)
    assert value[0] == {"a": 1, "class": "Hint"}
    assert value[1] == {"class": 5}
    assert value[2] == {"class": None}
    assert value[3] == {"class": Version(1, 2, 3)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NaN", "nan"),
        ("[Infinity,-Infinity]", "[inf, -inf]"),
        ("1e400", "inf"),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
        ('"\\ud800x"', "'\\ud800x'"),
        ('{"a":1,"a":2}', "{'a': 2}"),
        ('{"top":"level"}', "{'top': 'level'}"),
        (" 5 ", "5"),
        ('"\\ud83d\\ude00\\u00e9"', "'😀é'"),
    ],
)
def test_decode_stdlib_leniencies(codec: ModuleType, text: str, expected: str) -> None:
    assert repr(codec.decode(text)) == expected
    assert repr(codec.decode(text.encode())) == expected


def test_decode_nan_is_a_float(codec: ModuleType) -> None:
    assert math.isnan(codec.decode("[NaN]")[0])


def _nested(n: int) -> str:
    return "[" * n + "]" * n


def test_depth_limit_counts_like_the_reference(codec: ModuleType) -> None:
    assert codec.decode(_nested(15)) is not None
    with pytest.raises(DecodeError) as info:
        codec.decode(_nested(16))
    assert info.value.offset == 15
    assert "too complex" in str(info.value)
    assert codec.decode(_nested(16), max_depth=17) is not None
    # brackets inside strings (with escaped quotes) do not count
    assert codec.decode('["\\"[[[[[[[[[[[[[[[[[[[[[["]') == ['"[[[[[[[[[[[[[[[[[[[[[[']
    # objects count too, and a deep document is too complex even when malformed
    with pytest.raises(DecodeError, match="too complex"):
        codec.decode('{"a":' * 16 + "x")


@pytest.mark.parametrize("max_depth", [2**31, 2**40, -5, True, None, 2.5])
@pytest.mark.parametrize("data", ["[[1]]", "1"])
def test_any_max_depth_gives_the_pure_twins_result(
    codec: ModuleType, py_codec: ModuleType, max_depth: Any, data: str
) -> None:
    def outcome(module: ModuleType) -> object:
        try:
            return module.decode(data, max_depth=max_depth)
        except Exception as exc:  # compared between the twins
            return type(exc), getattr(exc, "offset", None)

    assert outcome(codec) == outcome(py_codec)


@pytest.mark.skipif(not hasattr(sys, "get_int_max_str_digits"), reason="no int digit limit")
def test_an_int_past_the_digit_limit_is_a_decode_error(codec: ModuleType) -> None:
    """The reference's int() fails too; here it is a DecodeError at the literal."""
    many = "9" * (sys.get_int_max_str_digits() + 1)
    fraction = "0." + many  # floats have no digit limit
    text = f'["{many}", {fraction}, 1e{many[:3]}, -{many}]'
    with pytest.raises(DecodeError, match="digits") as info:
        codec.decode(text)
    assert info.value.offset == text.index("-" + many)
    with pytest.raises(DecodeError) as info:
        codec.decode(("[" + many + "]").encode())
    assert info.value.offset == 1


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        # Python 3.13's json points at the trailing comma, earlier ones after it
        ("[1,]", 2 if sys.version_info >= (3, 13) else 3),
        ("", 0),
        ("[1] x", 4),
        ('["é", x]', 7),
        (b'["\xff"]', 2),
        (b'["\xc3\xa9",,', 6),
        ('{"a" 1}', 5),
        ("[", 1),
        ("]", 0),
        ('"\x01"', 1),
    ],
)
def test_malformed_json_gives_the_byte_offset(
    codec: ModuleType, data: str | bytes, offset: int
) -> None:
    with pytest.raises(DecodeError) as info:
        codec.decode(data)
    assert info.value.offset == offset
    assert isinstance(info.value, ValueError)
    assert str(info.value).endswith(f"(at byte {offset})")


@pytest.mark.parametrize(
    "text",
    [
        '{"item":1,"location":2,"class":"NetworkItem"}',
        '{"name":"n","class":"NetworkSlot"}',
        '{"major":1,"minor":2,"class":"Version"}',
        '{"major":"x","minor":2,"build":3,"class":"Version"}',
        '{"major":null,"minor":2,"build":3,"class":"Version"}',
        '{"major":1e400,"minor":2,"build":3,"class":"Version"}',
        '[{"class":["NetworkItem"]}]',
        '[{"class":{}}]',
    ],
)
def test_unbuildable_class_objects_are_decode_errors(codec: ModuleType, text: str) -> None:
    with pytest.raises(DecodeError) as info:
        codec.decode(text)
    assert info.value.offset == 0


@pytest.mark.parametrize(
    "text",
    [
        '[{"p":{"class":"Version"},"p":1}]',
        '[{"p":[{"class":"NetworkItem"}],"p":1}]',
        '[{"p" : {"class":"Version"}, "p" : 1}]',
        '[{"t":"a: b","p":{"cl\\u0061ss":"NetworkSlot"},"p":{"class":"X"}}]',
        '[{"é":{"class":"Version"},"é":1}]',
    ],
)
def test_an_unbuildable_object_under_a_repeated_key_still_fails(
    codec: ModuleType, text: str
) -> None:
    """The reference builds each tagged object as it parses, before a repeated key
    replaces it; the compiled twin kept only the last value and returned it
    (found by a fuzz campaign). Both raise, for str and bytes input."""
    for data in (text, text.encode()):
        with pytest.raises(DecodeError) as info:
            codec.decode(data)
        assert info.value.offset == 0


def test_repeated_keys_keep_the_last_value(codec: ModuleType) -> None:
    text = '[{"p":{"major":1,"minor":2,"build":3,"class":"Version"},"p":1,"t":"x: y"}]'
    assert codec.decode(text) == codec.decode(text.encode()) == [{"p": 1, "t": "x: y"}]


def test_decode_rejects_other_types(codec: ModuleType) -> None:
    with pytest.raises(TypeError):
        codec.decode(5)


def test_memoryview_and_bytearray_inputs(codec: ModuleType) -> None:
    raw = b'[{"cmd":"Sync"}]'
    assert codec.decode(bytearray(raw)) == codec.decode(memoryview(raw)) == [{"cmd": "Sync"}]


def test_escaped_class_key_is_still_a_class_key(codec: ModuleType) -> None:
    text = '[{"major":1,"minor":2,"build":3,"cl\\u0061ss":"Version"}]'
    assert codec.decode(text) == [Version(1, 2, 3)]
    assert type(codec.decode(text.encode())[0]) is Version


def test_sample_traffic_round_trips(codec: ModuleType) -> None:
    from gamecodec.archipelago.sample import received_items_frame, sample_session

    frames = [*sample_session(), received_items_frame(50)]
    for frame in frames:
        assert codec.encode(codec.decode(frame)) == frame


class _Unknown:
    """A value the encoder cannot write: ``default`` is called for it."""


@pytest.mark.parametrize("container", ["list", "dict"])
def test_default_that_empties_the_container_being_written(
    codec: ModuleType, container: str
) -> None:
    # default() runs in the middle of writing the container it clears: the
    # compiled writer must not read the freed items (it once crashed here)
    items: list[Any] = [_Unknown(), "s" * 50, 1, [2, 3], {"k": "v" * 40}]
    value: Any = list(items) if container == "list" else {str(i): v for i, v in enumerate(items)}

    def default(obj: object) -> int:
        value.clear()
        return 7

    text = codec.encode(value, default=default)
    assert isinstance(text, str) and text[0] in "[{"
    assert not value
