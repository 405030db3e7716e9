"""The typed codec's two ways through a frame: the one-pass msgspec decode against
the command-by-command reading, and the msgspec writer against the compat writer
(both twins) writing the same commands as dicts."""

from __future__ import annotations

import gc
import os
from types import ModuleType
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.archipelago import commands as C
from gamecodec.archipelago import frames
from gamecodec.archipelago._models import NetworkItem
from gamecodec.errors import DecodeError, EncodeError

SETTINGS = settings(
    max_examples=int(os.environ.get("AP_EXAMPLES", "250")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    """A comparable summary of a decode or encode call."""
    try:
        result = fn(*args)
    except DecodeError as exc:
        partial = exc.partial
        return ("error", (str(exc), exc.offset, None if partial is None else list(partial)))
    except Exception as exc:
        return ("exception", (type(exc).__name__, str(exc)))
    if isinstance(result, frames.Frame):
        extras = [c.extra if isinstance(c, C.Command) else None for c in result]
        return ("frame", (list(result), extras, result.raw))
    return ("value", result)


# ------------------------------------------------------------------ examples


SAMPLES = [
    '[{"cmd":"Sync"}]',
    b'[{"cmd":"Say","text":"h\xc3\xa9"}]',
    '[{"cmd":"Say","text":"caf\u00e9 \\u00e9"}]',
    "[]",
    '[{"cmd":"Future","x":1},{"cmd":"Sync"}]',
    '[{"cmd":"Get","keys":["a"],"uuid":"u-1"}]',
    '[{"cmd":"Get","keys":["a"],"uuid":"u-1","keys":["b"]},{"cmd":"Sync","n":{"x":[1]}}]',
    '[{"cmd":"Set","key":"k","operations":[{"operation":"add","value":1}],"tag":[1]}]',
    '[{"cmd":"Connect","password":null,"name":"n","game":"g","uuid":"u","tags":[],"x":1,'
    '"items_handling":7,"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]',
    '[{"cmd":"Connect","password":"","name":"n","game":"g","uuid":"u","x":1,'
    '"version":{"major":0,"minor":6,"build":8}}]',
    '[{"cmd":"Get","keys":["a"],"uuid":"u"},{"cmd":"Future"}]',
    '[{"cmd":"Get","keys":"a","uuid":"u"}]',
    b'[{"cmd":"Say","text":"h\xc3\xa9","uuid":"\xc3\xa9"}]',
    b'[{"cmd":"Say","uuid":1,"text":"\xff"}]',  # an extra key before bad UTF-8
    b'[{"cmd":"Say","text":"\xff"}]',
    '[{"cmd":"Say","text":"a"}]',
    '[{"cmd":"Connect","password":null,"name":"n","game":"g","uuid":"u","tags":[],'
    '"items_handling":7,"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]',
    '[{"cmd":"Sync"},{"cmd":"Connect","password":"","name":"n","game":"g",'
    '"version":{"major":0,"minor":6,"build":8}}]',
    '[{"cmd":"Say"}]',
    '{"cmd":"Sync"}',
    "[1,]",
    b'[{"cmd":"Say","text":"\xff"}]',
    '["\ud800"]',
    "[" * 3000 + "]" * 3000,
    '[{"cmd": 5}]',
]


def _by_command(data: Any) -> frames.Frame:
    """decode the slow way: the reference's nesting scan, then every command from
    the untyped JSON (whether a deep frame reaches the parser's recursion limit
    depends on the Python version)."""
    checked = frames._checked(data)
    frames._refuse_too_deep(checked)
    frame = frames.Frame(frames._decode_each(checked))
    frame.raw = checked
    return frame


def _agree(data: Any) -> tuple[str, Any]:
    """decode's outcome, which the command-by-command reading must share
    (for malformed JSON the typed parser words its message its own way)."""
    got = _outcome(frames.decode, data)
    slow = _outcome(_by_command, data)
    if got[0] == slow[0] == "error" and got[1][0].startswith("JSON is malformed"):
        assert slow[1][0].startswith("JSON is malformed")
        got, slow = (got[0], got[1][1:]), (slow[0], slow[1][1:])
    assert got == slow
    assert got[0] != "exception" or got[1][0] == "TypeError", got
    return got


@pytest.mark.parametrize("data", SAMPLES)
def test_decode_is_the_command_by_command_reading(data: Any) -> None:
    _agree(data)
    if isinstance(data, (str, bytes)):
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        assert _outcome(frames.decode, bytearray(raw)) == _outcome(frames.decode, raw)
        assert _outcome(frames.decode, memoryview(raw)) == _outcome(frames.decode, raw)


@pytest.mark.parametrize(
    "data",
    [
        b'[{"cmd":"PrintJSON","data":[{"text":"","\xff":0}]}]',
        b'[{"cmd":"Say","text":"a","t":"\x84","t":1}]',
        b'[{"cmd":"Sync","\xae":1}]',
    ],
)
def test_invalid_utf8_anywhere_is_a_decode_error(data: bytes) -> None:
    """msgspec skips the bytes of keys a Struct does not declare unchecked: without
    the UTF-8 check such a frame would decode and fail to encode again."""
    with pytest.raises(DecodeError, match="invalid UTF-8") as info:
        frames.decode(data)
    assert info.value.offset == next(i for i, b in enumerate(data) if b >= 0x80)


def test_decode_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="expected str or bytes"):
        frames.decode(5)  # type: ignore[arg-type]


def test_decoded_frame_is_a_working_list() -> None:
    text = '[{"cmd":"Say","text":"a"},{"cmd":"Sync"}]'
    frame = frames.decode(text)
    assert type(frame) is frames.Frame
    assert frame.raw == text
    assert frame == [C.Say("a"), C.Sync()]
    frame.append(C.Sync())
    frame.extend([C.Sync()] * 100)
    assert len(frame) == 103
    del frame[2:]
    gc.collect()
    assert frames.encode(frame) == text
    assert frames.encode_bytes(frame) == text.encode()
    assert list(reversed(frame)) == [C.Sync(), C.Say("a")]


def test_frames_from_bytes_re_encode_exactly() -> None:
    raw = b'[{"cmd":"Say", "text":"h\xc3\xa9"}]'
    frame = frames.decode(raw)
    assert frame.raw == raw
    assert frames.encode_bytes(frame) == raw
    assert frames.encode(frame) == raw.decode()
    frame[0].text = "x"
    assert frames.encode_bytes(frame) == b'[{"cmd":"Say","text":"x"}]'


@pytest.mark.parametrize(
    "text",
    [
        '[{"cmd":"Custom","t":1E5}]',
        '[{"cmd": "Custom"}]',
        '[{"cmd":"Sync"},{"cmd":"Custom","x":"\\u00e9","n":[1.0,-0.0,true]}]',
        '[{"cmd":"Custom","t":1e-7}, {"cmd":"Say","text":"a"}]',
    ],
)
def test_unknown_commands_re_encode_exactly_until_changed(text: str) -> None:
    frame = frames.decode(text)
    assert frames.encode(frame) == text
    assert frames.encode_bytes(frames.decode(text.encode())) == text.encode()
    custom = next(c for c in frame if isinstance(c, dict))
    custom["cmd"] = "Other"
    assert '"cmd":"Other"' in frames.encode(frame)


def test_a_changed_type_in_an_unknown_command_is_written() -> None:
    for before, after, written in ((1, True, "true"), (1, 1.0, "1.0"), (0.0, -0.0, "-0.0")):
        frame = frames.decode(f'[{{"cmd":"Custom", "v":{before}}}]')
        frame[0]["v"] = after
        assert frames.encode(frame) == f'[{{"cmd":"Custom","v":{written}}}]'


@pytest.mark.parametrize(
    "version",
    [
        '{"Major":0,"Minor":6,"Build":8,"class":"Version"}',  # .NET's spelling
        '{"major":"0","minor":6.0,"BUILD":8,"class":"Version"}',  # through int()
    ],
)
def test_connect_version_is_read_as_the_reference_reads_it(version: str) -> None:
    text = (
        '[{"cmd":"Connect","password":null,"game":"G","name":"n","uuid":"u",'
        f'"version":{version},"items_handling":7,"tags":[]}}]'
    )
    (connect,) = frames.decode(text)
    assert isinstance(connect, C.Connect) and connect.version == C.VersionInfo(0, 6, 8)
    assert frames.encode(frames.decode(text)) == text
    with pytest.raises(DecodeError):  # without its class it is refused, as before
        frames.decode(text.replace(',"class":"Version"', ""))


def test_a_user_built_frame_without_text() -> None:
    frame = frames.Frame([C.Sync()])
    assert frames.encode(frame) == '[{"cmd":"Sync"}]'
    frame.raw = None
    assert frames.encode_bytes(frame) == b'[{"cmd":"Sync"}]'
    assert frames.encode(iter([C.Sync()])) == '[{"cmd":"Sync"}]'


def _exact(codec: ModuleType, commands: list[Any]) -> str:
    """The commands written by a compat twin as the dicts they stand for."""
    return codec.encode(commands, default=frames._struct_dict)  # type: ignore[no-any-return]


def test_structs_and_namedtuples_in_untyped_values(
    py_codec: ModuleType, c_codec: ModuleType
) -> None:
    item, player = C.Item(1, 2, 3), C.Player(0, 1, "a", "b")
    batches = [
        [C.SetReply("k", value=item), C.SetReply("k", value=player)],
        [C.SetReply("k", value=[item, player, item]), C.SetReply("k", value=[player, 5])],
        [C.Bounce(data=item), C.Bounce(data={"x": [player, item]}), C.Bounce(data=item)],
        [C.SetReply("k", value=NetworkItem(1, 2, 3)), C.SetReply("k", value=item)],
        [C.PrintJSON([C.MessagePart("a"), C.MessagePart("b", type="color")], item=item)] * 3,
        [C.RoomInfo(False, [], [], C.VersionInfo(0, 6, 8), time=t) for t in (1e-5, 1e16, 0.5)],
        [C.SetReply("k", value=[float("nan"), float("-inf"), 2**80, {1: True, 2.5: None}])],
    ]
    for commands in batches:
        text = frames.encode(commands)
        assert text == _exact(py_codec, commands) == _exact(c_codec, commands)
        assert frames.encode_bytes(commands) == text.encode()
    assert '"value":{"team":0,"slot":1,"alias":"a","name":"b","class":"NetworkPlayer"}' in (
        frames.encode(batches[0])
    )
    assert '"time":1e-05}' in frames.encode(batches[5])
    assert '"value":[NaN,-Infinity,' in frames.encode(batches[6])


def test_extra_keys_are_written_after_the_declared_ones() -> None:
    get = C.Get(["a"])
    get.set_extra({"request_id": 3, "uuid": "u"})
    sync = C.Sync()
    sync.__dict__["other"] = 1  # an instance dict without extras
    reply = C.SetReply("k", value=1.5)
    reply.set_extra({"n": [1e16]})
    assert frames.encode([get, sync, get, reply]) == (
        '[{"cmd":"Get","keys":["a"],"request_id":3,"uuid":"u"},{"cmd":"Sync"},'
        '{"cmd":"Get","keys":["a"],"request_id":3,"uuid":"u"},'
        '{"cmd":"SetReply","key":"k","value":1.5,"n":[1e+16]}]'
    )


def test_which_commands_msgspec_writes_whole() -> None:
    whole = {cls.__name__ for cls in frames._WHOLE}
    assert {"ReceivedItems", "PrintJSON", "LocationChecks", "RoomUpdate", "Say"} <= whole
    untyped = {"RoomInfo", "Connected", "Bounce", "Bounced", "Retrieved", "SetReply", "Set"}
    assert not whole & untyped


def test_a_lone_surrogate_is_written_to_text_not_bytes() -> None:
    commands = [C.Say("a\udc80"), C.ReceivedItems(0, [C.Item(1, 2, 3)])]
    assert frames.encode(commands) == (
        '[{"cmd":"Say","text":"a\udc80"},{"cmd":"ReceivedItems","index":0,"items":'
        '[{"item":1,"location":2,"player":3,"flags":0,"class":"NetworkItem"}]}]'
    )
    with pytest.raises(EncodeError, match="surrogates") as caught:
        frames.encode_bytes(commands)
    assert caught.value.protocol == "archipelago"
    assert isinstance(caught.value.__cause__, UnicodeEncodeError)


def test_a_value_the_writer_cannot_take_is_an_encode_error() -> None:
    for encode in (frames.encode, frames.encode_bytes):
        with pytest.raises(EncodeError, match="not JSON serializable") as caught:
            encode([{"cmd": "Set", "key": "k", "default": object()}])
        assert caught.value.protocol == "archipelago"


def test_structs_the_writer_does_not_take() -> None:
    class Pair(msgspec.Struct, array_like=True):
        a: int

    with pytest.raises(EncodeError, match="array_like"):
        frames.encode([C.Bounce(data=Pair(1))])
    with pytest.raises(EncodeError, match="not JSON serializable"):
        frames.encode([C.Bounce(data=object())])
    with pytest.raises(EncodeError, match="array_like"):
        frames.encode([Pair(1)])


# ------------------------------------------------------------------ hypothesis

ints = st.integers(min_value=-(2**53), max_value=2**53)
texts = st.text(max_size=6)
items = st.builds(C.Item, ints, ints, ints, ints)
commands = st.one_of(
    st.builds(C.ReceivedItems, ints, st.lists(items, max_size=4)),
    st.builds(
        C.PrintJSON,
        st.lists(st.builds(C.MessagePart, texts, type=st.just("color")), max_size=3),
        type=st.sampled_from(["ItemSend", "Chat"]),
        item=items,
    ),
    st.builds(C.Say, texts),
    st.builds(C.Get, st.lists(texts, max_size=2)),
    st.builds(C.StatusUpdate, ints),
    st.builds(C.Sync),
    st.builds(
        C.Connect,
        password=st.none(),
        name=texts,
        version=st.builds(C.VersionInfo, ints, ints, ints),
        game=texts,
    ),
    st.builds(
        C.SetReply,
        texts,
        value=st.one_of(ints, st.floats(allow_nan=False, allow_infinity=False), texts, st.none()),
    ),
)
extras = st.dictionaries(st.sampled_from(["request_id", "zz", "tag"]), ints, max_size=2)


def _with_extra(command: C.Command, extra: dict[str, int]) -> C.Command:
    if extra:
        command.set_extra(extra)
    return command


frames_strategy = st.lists(st.builds(_with_extra, commands, extras), max_size=4)
edits = st.sampled_from(["", "[", "]", "{", "}", '"', ",", "\\", "x", "1", " ", "\u00e9"])


@SETTINGS
@given(frames_strategy, st.data())
def test_both_ways_agree_on_frames_and_mutations(
    py_codec: ModuleType, c_codec: ModuleType, commands: list[Any], data: st.DataObject
) -> None:
    text = frames.encode(commands)
    assert text == _exact(py_codec, commands) == _exact(c_codec, commands)
    assert frames.encode_bytes(commands) == text.encode()
    for raw in (text, text.encode()):
        kind, (decoded, extra, _) = _agree(raw)
        assert kind == "frame"
        assert decoded == commands
        assert extra == [c.extra for c in commands]
        assert frames.encode(frames.decode(raw)) == text
    # a mutated frame: the same value or the same error (message, offset, partial)
    at = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    _agree(text[:at] + data.draw(edits) + text[at + 1 :])
    # a byte inserted into the UTF-8 (0x80-0xff: invalid UTF-8): a DecodeError at worst
    raw_bytes = text.encode()
    at_byte = data.draw(st.integers(min_value=0, max_value=len(raw_bytes)))
    _agree(raw_bytes[:at_byte] + bytes([data.draw(st.integers(0, 255))]) + raw_bytes[at_byte:])
    # spacing the sender chose survives an unchanged re-encode
    spaced = text.replace(",", ", ")
    assert frames.encode(frames.decode(spaced)) == spaced


class _Inner(msgspec.Struct):
    x: Any


class _Outer(msgspec.Struct, tag_field="cmd", tag="Outer"):
    a: _Inner
    b: _Inner
    n: list[int]


def test_a_struct_type_used_twice_is_judged_once_for_both() -> None:
    assert frames.encode([_Outer(_Inner(1e16), _Inner(NetworkItem(1, 2, 3)), [1])]) == (
        '[{"cmd":"Outer","a":{"x":1e+16},"b":{"x":{"item":1,"location":2,"player":3,'
        '"flags":0,"class":"NetworkItem"}},"n":[1]}]'
    )
