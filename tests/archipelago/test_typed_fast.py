"""The compiled twin's specialised reader for frames of PrintJSON or DataPackage
commands: the same result (values, types, GC tracking, Frame text, extras) as
the msgspec path and the pure twin, and the same error when it declines."""

from __future__ import annotations

import gc
import json
import os
import sys
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
    if type(value) is float:
        return (float, repr(value))  # -0.0 == 0.0: the sign is compared too
    return type(value)


def _decode(c_codec: ModuleType, on: bool, data: Any) -> tuple[str, Any]:
    was = c_codec._reader_use(on)
    try:
        return _outcome(c_codec.decode_frame, data)
    finally:
        c_codec._reader_use(was)


def _agree(py_codec: ModuleType, c_codec: ModuleType, data: Any) -> tuple[str, Any]:
    fast = _decode(c_codec, True, data)
    assert fast == _decode(c_codec, False, data)
    assert fast == _outcome(py_codec.decode_frame, data)
    assert fast[0] != "exception", fast
    return fast


def test_the_reader_is_on_and_takes_the_common_frames(c_codec: ModuleType) -> None:
    for text in (SAMPLE, DATAPACKAGE):
        got = c_codec._reader_probe(text)
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
    texts = [
        SAMPLE,
        DATAPACKAGE,
        SAMPLE.replace("found", 'fo\\"und'),  # declined after a partial read
        '[{"cmd":"SetReply","key":"k","value":{"a":[1.5,null,"x"]},"uuid":"u"},'
        '{"cmd":"Connected","team":0,"slot":1,"players":[{"team":0,"slot":1,"alias":"a",'
        '"name":"n"}],"missing_locations":[],"checked_locations":[],"slot_info":{"1":'
        '{"name":"n","game":"g","type":1}},"slot_data":{"s":[1]}}]',
        '[{"cmd":"Get","keys":["a"],"uuid":"u"},{"cmd":"Set","key":"k","operations":'
        '[{"operation":"add","value":1}],"x":[1,2,{"y":3}]}]',
        '[{"cmd":"Get","keys":["a"],"uuid":"u","uuid":"v"}]',  # declined at the end
    ]
    for text in texts:
        assert c_codec._reader_probe(text) is not None or "\\" in text or '"v"' in text
    for text in texts * 200:  # warm the string table
        frames.decode_frame(text)
    unset_refs = sys.getrefcount(msgspec.UNSET)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts * 2000:
            frames.decode_frame(text)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20_000
    assert abs(sys.getrefcount(msgspec.UNSET) - unset_refs) <= 2  # not one per decode


def test_recorded_corpus(py_codec: ModuleType, c_codec: ModuleType) -> None:
    """Every recorded frame: the same result on every path; the reader takes the
    PrintJSON and DataPackage frames without escapes."""
    taken = 0
    for name in SESSIONS:
        path = shared_path("corpus", "archipelago", name, "session.jsonl")
        for line in path.open(encoding="utf-8"):
            text = json.loads(line)["raw"]
            _agree(py_codec, c_codec, text)
            if c_codec._reader_probe(text) is not None:
                taken += 1
    assert taken >= 100


# ------------------------------------------------------------ the table path

TABLE_SAMPLES = [
    '[{"cmd":"Sync"}]',
    '[{"cmd":"Sync","uuid":"u"}]',
    '[{"cmd":"Get","keys":["a"],"uuid":"u","request_id":3}]',
    '[{"cmd":"Get","keys":["a"],"uuid":"u","uuid":"v"}]',  # a duplicate extra key
    '[{"cmd":"Get","keys":["a"],"cmd":"Get"}]',
    '[{"cmd":"Get","keys":["a"],"\u00e9":1}]',  # a non-ASCII extra key
    '[{"cmd":"Get","keys":["a"],"a\\u00e9":1}]',  # an escaped one
    '[{"cmd":"Get","keys":["a"],"x":{"y":[1,2.5,null,true,false,"z",{}]}}]',
    '[{"cmd":"SetReply","key":"k","value":1.5e300,"original_value":-0.0,"slot":1}]',
    '[{"cmd":"SetReply","key":"k","value":1e400}]',
    '[{"cmd":"SetReply","key":"k","value":1e-400}]',
    '[{"cmd":"SetReply","key":"k","value":0e5}]',
    '[{"cmd":"SetReply","key":"k","value":-0e5,"default":-0.0e-400}]',
    '[{"cmd":"SetReply","key":"k","value":2.4703282292062328e-324}]',  # rounds up to 5e-324
    '[{"cmd":"SetReply","key":"k","value":9007199254740993.000000000000001}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],'
    '"version":{"major":0,"minor":1,"build":2},"time":-0.0}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],'
    '"version":{"major":0,"minor":1,"build":2},"time":9007199254740993}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],'
    '"version":{"major":0,"minor":1,"build":2},"time":-9007199254740992}]',
    '[{"cmd":"SetReply","key":"k","value":4.9e-324}]',
    '[{"cmd":"SetReply","key":"k","value":0.1,"default":12345678901234567890}]',
    '[{"cmd":"SetReply","key":"k","value":-0}]',
    '[{"cmd":"SetReply","key":"k","value":1.}]',
    '[{"cmd":"SetReply","key":"k","value":.5}]',
    '[{"cmd":"SetReply","key":"k","value":1e}]',
    '[{"cmd":"SetReply","key":"k","value":nul}]',
    '[{"cmd":"SetReply","key":"k","value":' + "[" * 40 + "]" * 40 + "}]",
    '[{"cmd":"SetReply","key":"k","value":' + "[" * 31 + "]" * 31 + "}]",
    '[{"cmd":"SetReply","key":"k","value":{"a":1,"a":2}}]',
    '[{"cmd":"SetReply","key":"k"}]',
    '[{"cmd":"SetReply","value":1}]',  # no key
    '[{"cmd":"SetReply","key":1}]',
    '[{"cmd":"Set","key":"k","operations":[{"operation":"add","value":1},{"operation":"x"}]}]',
    '[{"cmd":"Set","key":"k","operations":[{"operation":"add","value":1,"extra":2}]}]',
    '[{"cmd":"Set","key":"k","operations":[{"value":1}]}]',
    '[{"cmd":"Set","key":"k","want_reply":1}]',
    '[{"cmd":"Retrieved","keys":{"a":{"b":[1,{"c":null}]},"d":"\u00fc"},"request_id":42}]',
    '[{"cmd":"Retrieved","keys":[]}]',
    '[{"cmd":"ReceivedItems","index":0,"items":[{"item":1,"location":2,"player":3}]}]',
    '[{"cmd":"ReceivedItems","index":0,"items":[{"item":1,"location":2}]}]',
    '[{"cmd":"ReceivedItems","index":0,"items":[],"index":1}]',
    '[{"cmd":"RoomUpdate","players":[{"team":0,"slot":1,"alias":"a","name":"n"}],'
    '"permissions":{"release":1},"password":true,"hint_points":3}]',
    '[{"cmd":"RoomUpdate","players":[{"team":0,"slot":1,"alias":"a"}]}]',
    '[{"cmd":"RoomUpdate","players":[{"team":0,"slot":1,"alias":"a","name":"n","x":1}]}]',
    '[{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[],'
    '"checked_locations":[1,2],"slot_info":{"1":{"name":"n","game":"g","type":1,'
    '"group_members":[2]}},"slot_data":{"seed":"1","opts":[1,2]}},'
    '{"cmd":"ReceivedItems","index":0,"items":[]}]',
    '[{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[],'
    '"checked_locations":[]}]',
    '[{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[]}]',
    '[{"cmd":"Bounced","tags":["DeathLink"],"data":{"time":1795254750.22956,"cause":"x"}}]',
    '[{"cmd":"Bounce","slots":[1,2],"games":["g"],"data":null}]',
    '[{"cmd":"StatusUpdate","status":30},{"cmd":"Say","text":"hi"},{"cmd":"Future"}]',
    '[{"cmd":"Say","text":"hi"},{"cmd":"Connect","password":null,"name":"n","game":"g",'
    '"uuid":"u","tags":[],"items_handling":7,"version":{"major":0,"minor":6,"build":8,'
    '"class":"Version"}}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],"version":{"major":0,'
    '"minor":6,"build":8,"class":"Version"},"time":1.5}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],"version":{"major":0,'
    '"minor":6,"build":8},"time":9007199254740993}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],"version":{"major":0,'
    '"minor":6,"build":8},"time":-9007199254740992,"seed_name":null}]',
    '[{"cmd":"RoomInfo","password":false,"games":[],"tags":[],"version":null}]',
    '[{"cmd":"UpdateHint","player":1,"location":2,"status":null}]',
    '[{"cmd":"UpdateHint","player":1,"location":2,"status":nul}]',
    '[{"cmd":"InvalidPacket","type":"cmd","original_cmd":null,"text":"x"}]',
    '[{"cmd":"LocationScouts","locations":[1,2],"create_as_hint":2},{"cmd":"Sync"}]',
    '[{"cmd":"GetDataPackage","games":["A"]},{"cmd":"PrintJSON","data":[]},'
    '{"cmd":"DataPackage","data":{"games":{}}}]',
    '[{"cmd" : "Get" , "keys" : [ "a" ] , "uuid" : 1 } ]',
    '[{"cmd":"Get","keys":["a"]},]',
    '[{"cmd":"Get","keys":["a"]}',
    '[{"cmd":"Get","keys":["a"]}]]',
    '[{"cmd":"Get","keys":["a"],"x":1,}]',
    '[{"cmd":"Get","keys":["a"],"x":tru}]',
    '[{"cmd":"G\\u0065t","keys":["a"]}]',
    '[{"cmd":"Get\\"","keys":["a"]}]',
    '[{"cmd":5}]',
    '[{"keys":["a"],"cmd":"Get"}]',
    "[{}]",
    "[]",
]


@pytest.mark.parametrize("text", TABLE_SAMPLES)
def test_table_path_agrees_with_the_msgspec_path(
    py_codec: ModuleType, c_codec: ModuleType, text: str
) -> None:
    _agree(py_codec, c_codec, text)
    _agree(py_codec, c_codec, text.encode("utf-8", "surrogatepass"))


def test_the_table_path_takes_extras_and_untyped_values(c_codec: ModuleType) -> None:
    (get,) = c_codec._reader_probe('[{"cmd":"Get","keys":["a"],"uuid":"u","n":[1.5]}]')
    assert type(get) is C.Get
    assert get.extra == {"uuid": "u", "n": [1.5]}
    (reply,) = c_codec._reader_probe('[{"cmd":"SetReply","key":"k","value":1}]')
    assert not gc.is_tracked(reply)  # msgspec's rule: only atomic fields
    (reply,) = c_codec._reader_probe('[{"cmd":"SetReply","key":"k","value":[1]}]')
    assert gc.is_tracked(reply)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
str_lists = st.lists(texts, max_size=3)
int_lists = st.lists(ints, max_size=3)
player = _object(
    {"team": ints, "slot": ints, "alias": texts, "name": texts, "class": short},
    ("team", "slot", "alias", "name"),
)
slot = _object(
    {"name": texts, "game": texts, "type": ints, "group_members": int_lists, "class": short},
    ("name", "game", "type"),
)
operation = _object({"operation": short, "value": json_values}, ("operation",))
version = _object(
    {"major": ints, "minor": ints, "build": ints, "class": st.sampled_from(["Version", "x"])},
    ("major", "minor", "build"),
)


def _loose(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right type, now and then any JSON value (validation errors)."""
    return st.one_of(strategy, strategy, strategy, strategy, json_values)


TABLE_COMMANDS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "ReceivedItems": ({"index": ints, "items": st.lists(items, max_size=3)}, ("index", "items")),
    "LocationInfo": ({"locations": st.lists(items, max_size=3)}, ("locations",)),
    "RoomUpdate": (
        {
            "hint_points": ints,
            "checked_locations": int_lists,
            "players": st.lists(player, max_size=2),
            "permissions": st.dictionaries(texts, ints, max_size=2),
            "password": st.booleans(),
            "tags": str_lists,
        },
        (),
    ),
    "Connected": (
        {
            "team": ints,
            "slot": ints,
            "players": st.lists(player, max_size=2),
            "missing_locations": int_lists,
            "checked_locations": int_lists,
            "slot_info": st.dictionaries(texts, slot, max_size=2),
            "hint_points": ints,
            "slot_data": json_values,
        },
        ("team", "slot", "players", "missing_locations", "checked_locations"),
    ),
    "SetReply": (
        {
            "key": texts,
            "default": json_values,
            "want_reply": st.booleans(),
            "operations": st.lists(operation, max_size=2),
            "original_value": json_values,
            "slot": ints,
            "value": json_values,
        },
        ("key",),
    ),
    "Set": (
        {
            "key": texts,
            "default": json_values,
            "want_reply": st.booleans(),
            "operations": st.lists(operation, max_size=2),
        },
        ("key",),
    ),
    "Get": ({"keys": str_lists}, ("keys",)),
    "Retrieved": ({"keys": st.dictionaries(texts, json_values, max_size=3)}, ("keys",)),
    "Bounced": (
        {"games": str_lists, "slots": int_lists, "tags": str_lists, "data": json_values},
        (),
    ),
    "Say": ({"text": texts}, ("text",)),
    "StatusUpdate": ({"status": ints}, ("status",)),
    "Sync": ({}, ()),
    "LocationScouts": ({"locations": int_lists, "create_as_hint": ints}, ("locations",)),
    "InvalidPacket": ({"type": short, "text": texts, "original_cmd": st.none() | short}, ("type",)),
    "RoomInfo": (
        {
            "password": st.booleans(),
            "games": str_lists,
            "tags": str_lists,
            "version": version,
            "generator_version": version,
            "permissions": st.dictionaries(texts, ints, max_size=2),
            "datapackage_checksums": st.dictionaries(texts, texts, max_size=2),
            "seed_name": texts,
            "time": st.one_of(st.floats(allow_nan=False, allow_infinity=False), ints),
        },
        ("password", "games", "tags", "version"),
    ),
    "UpdateHint": ({"player": ints, "location": ints, "status": st.none() | ints}, ("player",)),
    "Future": ({"x": json_values}, ()),
}
extra_keys = st.sampled_from(
    ["uuid", "uuid", "request_id", "tag", "tag", "\u00e9t\u00e9", "cmd", "keys"]
)


@st.composite
def table_command(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(TABLE_COMMANDS)))
    fields, required = TABLE_COMMANDS[name]
    loose = {key: _loose(value) for key, value in fields.items()}
    body = draw(_object(loose, required)) if loose else {}
    extras = draw(st.dictionaries(extra_keys, json_values, max_size=2))
    for key, value in extras.items():
        body.setdefault(key, value)
    return {"cmd": name, **body}


table_frames = st.lists(st.one_of(table_command(), printjson), min_size=1, max_size=3)


@SETTINGS
@given(table_frames, spacing, st.booleans(), st.data())
def test_table_parity_on_generated_frames(
    py_codec: ModuleType,
    c_codec: ModuleType,
    value: list[Any],
    separators: tuple[str, str],
    ascii_only: bool,
    data: st.DataObject,
) -> None:
    text = json.dumps(value, separators=separators, ensure_ascii=ascii_only)
    _agree(py_codec, c_codec, text)
    _agree(py_codec, c_codec, text.encode())
    at = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    edit = data.draw(st.sampled_from(["", "[", "]", "{", "}", '"', ",", ":", "\\", "x", "1", "."]))
    _agree(py_codec, c_codec, text[:at] + edit + text[at + 1 :])


class _Node(msgspec.Struct):
    """A recursive Struct (the reader's setup must refuse it, not recurse)."""

    name: str
    children: list[_Node] = msgspec.field(default_factory=list)


def test_setup_refuses_a_recursive_struct(c_codec: ModuleType) -> None:
    import msgspec.inspect as mi

    assert c_codec._kind_of(mi.type_info(_Node), {}) == (None, 0)


def test_setup_turns_the_table_off_on_any_error(
    c_codec: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import msgspec.inspect as mi

    def broken(_: Any) -> Any:
        raise RuntimeError("a msgspec that changed")

    monkeypatch.setattr(mi, "type_info", broken)
    assert c_codec._specs_setup() is False
