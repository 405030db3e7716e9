"""The compiled twin's specialised reader for frames of PrintJSON or DataPackage
commands: the same result (values, types, GC tracking, Frame text, extras) as
the msgspec path and the pure twin, and the same error when it declines."""

from __future__ import annotations

import gc
import json
import os
import tracemalloc
from types import ModuleType
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.archipelago import _typed
from gamecodec.archipelago import commands as C
from gamecodec.errors import DecodeError
from tests.archipelago.conftest import SESSIONS
from tests.conftest import shared_path

SETTINGS = settings(
    max_examples=int(os.environ.get("AP_EXAMPLES", "250")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SAMPLE = (
    '[{"cmd":"PrintJSON","data":[{"text":"1","type":"player_id"},{"text":" found their "},'
    '{"text":"16777217","player":1,"flags":1,"type":"item_id"},{"text":" ("},'
    '{"text":"16777370","player":1,"type":"location_id"},{"text":")"}],"type":"ItemSend",'
    '"receiving":1,"item":{"item":16777217,"location":16777370,"player":1,"flags":1,'
    '"class":"NetworkItem"}}]'
)
DATAPACKAGE = (
    '[{"cmd":"DataPackage","data":{"games":{"Archipelago":{"item_name_to_id":{"Nothing":-1},'
    '"location_name_to_id":{"Cheat Console":-1,"Server":-2},"checksum":"ac9141e9"}}}}]'
)


def _outcome(fn: Any, data: Any) -> tuple[str, Any]:
    try:
        result = fn(data)
    except DecodeError as exc:
        partial = exc.partial
        return ("error", (str(exc), exc.offset, None if partial is None else list(partial)))
    except Exception as exc:
        return ("exception", (type(exc).__name__, str(exc)))
    extras = [c.extra if isinstance(c, C.Command) else None for c in result]
    return ("frame", (type(result), list(result), extras, result.raw, _shape(list(result))))


def _shape(value: Any) -> Any:
    """Types and GC tracking all the way down (== alone takes 1 for True)."""
    if isinstance(value, msgspec.Struct):
        fields = tuple(_shape(getattr(value, name)) for name in value.__struct_fields__)
        return (type(value), gc.is_tracked(value), fields)
    if isinstance(value, list):
        return (list, [_shape(v) for v in value])
    if isinstance(value, dict):
        return (dict, gc.is_tracked(value), [(_shape(k), _shape(v)) for k, v in value.items()])
    return type(value)


def _decode(c_codec: ModuleType, on: bool, data: Any) -> tuple[str, Any]:
    was = c_codec._printjson_use(on)
    try:
        return _outcome(c_codec.decode_frame, data)
    finally:
        c_codec._printjson_use(was)


def _agree(py_codec: ModuleType, c_codec: ModuleType, data: Any) -> tuple[str, Any]:
    fast = _decode(c_codec, True, data)
    assert fast == _decode(c_codec, False, data)
    assert fast == _outcome(py_codec.decode_frame, data)
    assert fast[0] != "exception", fast
    return fast


def test_the_reader_is_on_and_takes_the_common_frames(c_codec: ModuleType) -> None:
    for text in (SAMPLE, DATAPACKAGE):
        got = c_codec._printjson_probe(text)
        assert got is not None
        assert got == msgspec.json.decode(text, type=list[C.AnyCommand])


@pytest.mark.parametrize(
    "text",
    [
        SAMPLE,
        DATAPACKAGE,
        SAMPLE.replace(",", " ,\n\t").replace(":", " : "),
        '[{"cmd":"PrintJSON","data":[]},{"cmd":"PrintJSON","data":[{}],"found":true}]',
        '[{"cmd":"PrintJSON","data":[{"text":"caf\u00e9 \U0001f600"}],"message":"\u00e9"}]',
        '[{"cmd":"PrintJSON","data":[{"text":"a\\"b"}]}]',  # an escape: declined
        '[{"cmd":"PrintJSON","data":[{"text":"a\\u00e9\\ud83d\\ude00"}]}]',
        '[{"cmd":"PrintJSON","data":[{"text":"\\ud800"}]}]',
        '[{"cmd":"PrintJSON","data":[{"text":"a","text":"b"}]}]',  # duplicate key
        '[{"cmd":"PrintJSON","data":[],"type":"a","type":"b"}]',
        '[{"cmd":"PrintJSON","data":[{"text":"a","x":1}]}]',  # MessagePart ignores it
        '[{"cmd":"PrintJSON","data":[],"uuid":"u"}]',  # an extra key
        '[{"cmd":"PrintJSON","type":"Chat"}]',  # no data
        '[{"cmd":"PrintJSON","data":[],"team":null}]',
        '[{"cmd":"PrintJSON","data":[],"team":1.0}]',
        '[{"cmd":"PrintJSON","data":[],"team":1e2}]',
        '[{"cmd":"PrintJSON","data":[],"team":-0}]',
        '[{"cmd":"PrintJSON","data":[],"team":01}]',
        '[{"cmd":"PrintJSON","data":[],"team":123456789012345678}]',
        '[{"cmd":"PrintJSON","data":[],"team":1234567890123456789012}]',
        '[{"cmd":"PrintJSON","data":[],"team":-9223372036854775809}]',
        '[{"cmd":"PrintJSON","data":[],"found":1}]',
        '[{"cmd":"PrintJSON","data":[],"found":tru}]',
        '[{"cmd":"PrintJSON","data":[],"item":{"item":1,"player":2}}]',
        '[{"cmd":"PrintJSON","data":[],"item":{"item":1,"location":2,"player":3,"class":"X"}}]',
        '[{"cmd":"PrintJSON","data":[],"tags":["a",1]}]',
        '[{"cmd":"PrintJSON","data":[]},{"cmd":"Sync"}]',
        '[{"cmd":"PrintJSON","data":[]}] x',
        '[{"cmd":"PrintJSON","data":[]},]',
        '[{"cmd":"PrintJSON","data":[],}]',
        '[{"cmd":"PrintJSON","data":[{"text":"a\tb"}]}]',  # a raw control character
        '[{"cmd":"PrintJSON","data":[{"text":"abcdefghijklmnopqrs',
        '[{"cmd":"PrintJSON","data":[{"text":"\ud800"}]}]',  # a lone surrogate in the str
        '[{"cmd":"PrintJSON","data":[{"text":"a"}]}]' + " " * 600,
        '[{"cmd":"DataPackage","data":{"games":{}}},{"cmd":"DataPackage","data":{"games":'
        '{"g":{"location_name_to_id":{},"item_name_to_id":{"a":1,"a":2}}}}}]',
        '[{"cmd":"DataPackage","data":{"games":{"g":{"item_name_to_id":{}}}}}]',
        '[{"cmd":"DataPackage","data":{"games":{"g":{"item_name_to_id":{"a":"1"},'
        '"location_name_to_id":{}}}}}]',
        '[{"cmd":"DataPackage","data":{"games":{},"x":1}}]',
        '[{"cmd":"DataPackage","data":{"games":{}},"uuid":1}]',
        '[{"cmd":"DataPackage","data":null}]',
    ],
)
def test_reader_agrees_with_the_msgspec_path(
    py_codec: ModuleType, c_codec: ModuleType, text: str
) -> None:
    _agree(py_codec, c_codec, text)
    raw = text.encode("utf-8", "surrogatepass")
    _agree(py_codec, c_codec, raw)


# ------------------------------------------------------------------ hypothesis

ints = st.one_of(
    st.integers(min_value=-(2**20), max_value=2**25),
    st.integers(min_value=-(2**64), max_value=2**64),
)
short = st.sampled_from(["1", " found their ", "item_id", "(", ")", "", "player_id", "\u00e9"])
texts = st.one_of(short, st.text(max_size=30))
part_keys = {"text": texts, "player": ints, "flags": ints, "hint_status": ints}
part_keys |= {"type": short, "color": texts}


@st.composite
def _object(draw: st.DrawFn, fields: dict[str, Any], required: tuple[str, ...] = ()) -> Any:
    keys = draw(st.lists(st.sampled_from(sorted(fields)), unique=True))
    keys = [k for k in required if k not in keys] + keys
    keys = draw(st.permutations(keys))
    return {k: draw(fields[k]) for k in keys}


item_fields = {"item": ints, "location": ints, "player": ints, "flags": ints}
item_fields["class"] = st.sampled_from(["NetworkItem", "x"])
items = _object(item_fields, ("item", "location", "player"))
pj_fields = {
    "data": st.lists(_object(part_keys), max_size=6),
    "type": short,
    "team": ints,
    "receiving": ints,
    "item": items,
    "found": st.booleans(),
    "slot": ints,
    "tags": st.lists(texts, max_size=3),
    "message": texts,
    "countdown": ints,
}
ids = st.dictionaries(texts, ints, max_size=5)
games = st.dictionaries(
    texts,
    _object(
        {"item_name_to_id": ids, "location_name_to_id": ids, "checksum": texts},
        ("item_name_to_id", "location_name_to_id"),
    ),
    max_size=3,
)
printjson = st.builds(lambda rest: {"cmd": "PrintJSON", **rest}, _object(pj_fields, ("data",)))
datapackage = st.builds(lambda g: {"cmd": "DataPackage", "data": {"games": g}}, games)
frames = st.one_of(st.lists(printjson, min_size=1, max_size=4), st.lists(datapackage, max_size=2))
spacing = st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")])


@SETTINGS
@given(frames, spacing, st.booleans(), st.data())
def test_reader_parity_on_generated_frames(
    py_codec: ModuleType,
    c_codec: ModuleType,
    value: list[Any],
    separators: tuple[str, str],
    ascii_only: bool,
    data: st.DataObject,
) -> None:
    text = json.dumps(value, separators=separators, ensure_ascii=ascii_only)
    got = _agree(py_codec, c_codec, text)
    assert got[0] in ("frame", "error")
    _agree(py_codec, c_codec, text.encode())
    # a mutated frame: the same result or the same DecodeError on every path
    at = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    edit = data.draw(st.sampled_from(["", "[", "]", "{", "}", '"', ",", ":", "\\", "x", "1", "-"]))
    _agree(py_codec, c_codec, text[:at] + edit + text[at + 1 :])
    raw = text.encode()
    at = data.draw(st.integers(min_value=0, max_value=len(raw)))
    _agree(py_codec, c_codec, raw[:at] + bytes([data.draw(st.integers(0, 255))]) + raw[at:])


@SETTINGS
@given(st.sampled_from(['[{"cmd":"PrintJSON",', '[{"cmd":"DataPackage",']), st.binary())
def test_garbage_after_the_lead_is_only_a_decode_error(
    py_codec: ModuleType, c_codec: ModuleType, lead: str, tail: bytes
) -> None:
    _agree(py_codec, c_codec, lead.encode() + tail)


def test_no_reference_leaks(c_codec: ModuleType) -> None:
    frames = _typed.FrameCodec(c_codec)
    texts = [SAMPLE, DATAPACKAGE, SAMPLE.replace("found", 'fo\\"und')]
    for text in texts * 200:  # warm the string table
        frames.decode_frame(text)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts * 2000:
            frames.decode_frame(text)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20_000


def test_recorded_corpus(py_codec: ModuleType, c_codec: ModuleType) -> None:
    """Every recorded frame: the same result on every path; the reader takes the
    PrintJSON and DataPackage frames without escapes."""
    taken = 0
    for name in SESSIONS:
        path = shared_path("corpus", "archipelago", name, "session.jsonl")
        for line in path.open(encoding="utf-8"):
            text = json.loads(line)["raw"]
            _agree(py_codec, c_codec, text)
            if c_codec._printjson_probe(text) is not None:
                taken += 1
    assert taken >= 100
