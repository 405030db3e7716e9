"""The typed codec's entry points on both twins: the compiled fast paths
(decode_frame, encode_frame, encode_frame_bytes) against the Python algorithm."""

from __future__ import annotations

import gc
import os
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.archipelago import _typed
from gamecodec.archipelago import commands as C
from gamecodec.archipelago._models import NetworkItem
from gamecodec.errors import DecodeError

SETTINGS = settings(
    max_examples=int(os.environ.get("AP_EXAMPLES", "250")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(scope="session")
def frames(codec: ModuleType) -> _typed.FrameCodec:
    return _typed.FrameCodec(codec)


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    """A comparable summary of a decode or encode call."""
    try:
        result = fn(*args)
    except DecodeError as exc:
        partial = exc.partial
        return ("error", (str(exc), exc.offset, None if partial is None else list(partial)))
    except Exception as exc:
        return ("exception", (type(exc).__name__, str(exc)))
    if isinstance(result, _typed.Frame):
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
    # extra keys: the compiled twin's two-pass path (small frames) against the Python one
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
    b'[{"cmd":"Say","text":"\xff"}]',  # bad UTF-8 once Say is a prone lead
    '[{"cmd":"Say","text":"a"}]',  # and without extras again
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


@pytest.mark.parametrize("data", SAMPLES)
def test_decode_frame_twins_agree(py_codec: ModuleType, c_codec: ModuleType, data: Any) -> None:
    expected = _outcome(py_codec.decode_frame, data)
    assert _outcome(c_codec.decode_frame, data) == expected
    if isinstance(data, (str, bytes)):
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        as_other = bytearray(raw)
        assert _outcome(c_codec.decode_frame, as_other) == _outcome(py_codec.decode_frame, as_other)


@pytest.mark.parametrize(
    "data",
    [
        b'[{"cmd":"PrintJSON","data":[{"text":"","\xff":0}]}]',
        b'[{"cmd":"Say","text":"a","t":"\x84","t":1}]',
        b'[{"cmd":"Sync","\xae":1}]',
    ],
)
def test_invalid_utf8_anywhere_is_a_decode_error(frames: _typed.FrameCodec, data: bytes) -> None:
    """msgspec skips undeclared keys' bytes unchecked: such a frame decoded, and
    encode_frame then raised UnicodeDecodeError (found by a fuzz campaign)."""
    with pytest.raises(DecodeError, match="invalid UTF-8") as info:
        frames.decode_frame(data)
    assert info.value.offset == next(i for i, b in enumerate(data) if b >= 0x80)


def test_decode_frame_rejects_other_types(codec: ModuleType) -> None:
    with pytest.raises(TypeError, match="expected str or bytes"):
        codec.decode_frame(5)


def test_decoded_frame_is_a_working_list(frames: _typed.FrameCodec) -> None:
    text = '[{"cmd":"Say","text":"a"},{"cmd":"Sync"}]'
    frame = frames.decode_frame(text)
    assert type(frame) is _typed.Frame
    assert frame.raw == text
    assert frame == [C.Say("a"), C.Sync()]
    frame.append(C.Sync())
    frame.extend([C.Sync()] * 100)
    assert len(frame) == 103
    del frame[2:]
    gc.collect()
    assert frames.encode_frame(frame) == text
    assert frames.encode_frame_bytes(frame) == text.encode()
    assert list(reversed(frame)) == [C.Sync(), C.Say("a")]


def test_frames_from_bytes_re_encode_exactly(frames: _typed.FrameCodec) -> None:
    raw = b'[{"cmd":"Say", "text":"h\xc3\xa9"}]'
    frame = frames.decode_frame(raw)
    assert frame.raw == raw
    assert frames.encode_frame_bytes(frame) == raw
    assert frames.encode_frame(frame) == raw.decode()
    frame[0].text = "x"
    assert frames.encode_frame_bytes(frame) == b'[{"cmd":"Say","text":"x"}]'


@pytest.mark.parametrize(
    "text",
    [
        '[{"cmd":"Custom","t":1E5}]',
        '[{"cmd": "Custom"}]',
        '[{"cmd":"Sync"},{"cmd":"Custom","x":"\\u00e9","n":[1.0,-0.0,true]}]',
        '[{"cmd":"Custom","t":1e-7}, {"cmd":"Say","text":"a"}]',
    ],
)
def test_unknown_commands_re_encode_exactly_until_changed(
    frames: _typed.FrameCodec, text: str
) -> None:
    frame = frames.decode_frame(text)
    assert frames.encode_frame(frame) == text
    assert frames.encode_frame_bytes(frames.decode_frame(text.encode())) == text.encode()
    custom = next(c for c in frame if isinstance(c, dict))
    custom["cmd"] = "Other"
    assert '"cmd":"Other"' in frames.encode_frame(frame)


def test_a_changed_type_in_an_unknown_command_is_written(frames: _typed.FrameCodec) -> None:
    for before, after, written in ((1, True, "true"), (1, 1.0, "1.0"), (0.0, -0.0, "-0.0")):
        frame = frames.decode_frame(f'[{{"cmd":"Custom", "v":{before}}}]')
        frame[0]["v"] = after
        assert frames.encode_frame(frame) == f'[{{"cmd":"Custom","v":{written}}}]'


@pytest.mark.parametrize(
    "version",
    [
        '{"Major":0,"Minor":6,"Build":8,"class":"Version"}',  # .NET's spelling
        '{"major":"0","minor":6.0,"BUILD":8,"class":"Version"}',  # through int()
    ],
)
def test_connect_version_is_read_as_the_reference_reads_it(
    frames: _typed.FrameCodec, version: str
) -> None:
    text = (
        '[{"cmd":"Connect","password":null,"game":"G","name":"n","uuid":"u",'
        f'"version":{version},"items_handling":7,"tags":[]}}]'
    )
    (connect,) = frames.decode_frame(text)
    assert isinstance(connect, C.Connect) and connect.version == C.VersionInfo(0, 6, 8)
    assert frames.encode_frame(frames.decode_frame(text)) == text
    with pytest.raises(DecodeError):  # without its class it is refused, as before
        frames.decode_frame(text.replace(',"class":"Version"', ""))


def test_a_user_built_frame_without_text(frames: _typed.FrameCodec) -> None:
    frame = _typed.Frame([C.Sync()])
    assert frames.encode_frame(frame) == '[{"cmd":"Sync"}]'
    frame.raw = None
    assert frames.encode_frame_bytes(frame) == b'[{"cmd":"Sync"}]'
    assert frames.encode_frame(iter([C.Sync()])) == '[{"cmd":"Sync"}]'


def test_struct_types_change_between_calls(py_codec: ModuleType, c_codec: ModuleType) -> None:
    """The compiled writer remembers the Struct type of a field / list: a different
    one next time (or mixed in one list) must still be written right."""
    py_frames, c_frames = _typed.FrameCodec(py_codec), _typed.FrameCodec(c_codec)
    item, player = C.Item(1, 2, 3), C.Player(0, 1, "a", "b")
    batches = [
        [C.SetReply("k", value=item), C.SetReply("k", value=player)],
        [C.SetReply("k", value=[item, player, item]), C.SetReply("k", value=[player, 5])],
        [C.Bounce(data=item), C.Bounce(data={"x": [player, item]}), C.Bounce(data=item)],
        [C.SetReply("k", value=NetworkItem(1, 2, 3)), C.SetReply("k", value=item)],
        [C.PrintJSON([C.MessagePart("a"), C.MessagePart("b", type="color")], item=item)] * 3,
    ]
    for commands in batches:
        for _ in range(2):
            text = c_frames.encode_frame(commands)
            assert text == py_frames.encode_frame(commands)
            assert c_frames.encode_frame_bytes(commands) == text.encode()
    assert '"value":{"team":0,"slot":1,"alias":"a","name":"b","class":"NetworkPlayer"}' in (
        c_frames.encode_frame(batches[0])
    )


def test_extra_keys_on_the_compiled_writer(py_codec: ModuleType, c_codec: ModuleType) -> None:
    get = C.Get(["a"])
    get.set_extra({"request_id": 3, "uuid": "u"})
    sync = C.Sync()
    sync.__dict__["other"] = 1  # an instance dict without extras
    for codec in (py_codec, c_codec):
        assert _typed.FrameCodec(codec).encode_frame([get, sync, get]) == (
            '[{"cmd":"Get","keys":["a"],"request_id":3,"uuid":"u"},{"cmd":"Sync"},'
            '{"cmd":"Get","keys":["a"],"request_id":3,"uuid":"u"}]'
        )


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
def test_typed_twins_agree_on_frames_and_mutations(
    py_codec: ModuleType, c_codec: ModuleType, commands: list[Any], data: st.DataObject
) -> None:
    py_frames, c_frames = _typed.FrameCodec(py_codec), _typed.FrameCodec(c_codec)
    text = py_frames.encode_frame(commands)
    assert c_frames.encode_frame(commands) == text
    for raw in (text, text.encode()):
        expected = _outcome(py_codec.decode_frame, raw)
        assert _outcome(c_codec.decode_frame, raw) == expected
    decoded_py, decoded_c = py_codec.decode_frame(text), c_codec.decode_frame(text)
    assert list(decoded_c) == commands
    assert c_frames.encode_frame(decoded_c) == py_frames.encode_frame(decoded_py) == text
    assert c_frames.encode_frame_bytes(decoded_c) == text.encode()
    # a mutated frame: same value or same error (message, offset, partial) on both
    at = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    mutated = text[:at] + data.draw(edits) + text[at + 1 :]
    got = _outcome(c_codec.decode_frame, mutated)
    assert got == _outcome(py_codec.decode_frame, mutated)
    assert got[0] != "exception", got
    # a byte inserted into the UTF-8 (0x80-0xff: invalid UTF-8): a DecodeError at worst
    raw_bytes = text.encode()
    at_byte = data.draw(st.integers(min_value=0, max_value=len(raw_bytes)))
    garbled = raw_bytes[:at_byte] + bytes([data.draw(st.integers(0, 255))]) + raw_bytes[at_byte:]
    got = _outcome(c_codec.decode_frame, garbled)
    assert got == _outcome(py_codec.decode_frame, garbled)
    assert got[0] != "exception", got
    # spacing the sender chose survives an unchanged re-encode on both twins
    spaced = text.replace(",", ", ")
    for frame_codec in (py_frames, c_frames):
        frame = frame_codec.decode_frame(spaced)
        assert frame_codec.encode_frame(frame) == spaced


def _typed_summary(commands: list[Any]) -> list[tuple[type, Any, dict[str, Any] | None]]:
    return [(type(c), c, c.extra if isinstance(c, C.Command) else None) for c in commands]


@SETTINGS
@given(frames_strategy, st.data())
def test_lenient_pass_matches_the_command_by_command_path(
    commands: list[Any], data: st.DataObject
) -> None:
    """The two-pass decode of frames with extra keys (Struct decode ignoring them,
    untyped decode to find them) gives exactly the per-command result, or declines."""
    text = _typed.encode_frame(commands)
    at = data.draw(st.integers(0, len(text)))
    edited = text[:at] + data.draw(edits) + text[at:]
    for raw in (text, edited, '[{"cmd":"Future","x":1}]' if not commands else text):
        lenient = _typed._decode_lenient(raw)
        try:
            exact = _typed._decode_each(raw)
        except DecodeError:
            assert lenient is None
            continue
        if lenient is not None:
            assert _typed_summary(lenient) == _typed_summary(exact)
    if commands:
        decoded = _typed._decode_lenient(text)
        assert decoded is not None
        assert _typed_summary(decoded) == _typed_summary(commands)


@pytest.mark.parametrize(
    "text",
    [
        '[{"cmd":"Get","keys":["a"],"uuid":"u","keys":["b"]}]',  # a repeated key: the last wins
        '[{"cmd":"Get","uuid":{"deep":[1,{"class":"Version"}]},"keys":[]}]',
        '[{"cmd":"Set","key":"k","operations":[{"operation":"add","value":1}],"tag":[1]}]',
        '[{"cmd":"Connect","password":"","name":"n","game":"g","uuid":"u","x":1,'
        '"version":{"major":0,"minor":6,"build":8}}]',  # no class: declined, then an error
        '[{"cmd":"Get","keys":["a"],"uuid":"u"},{"cmd":"Future"}]',  # unknown: declined
        '[{"cmd":"Get","keys":"a","uuid":"u"}]',  # invalid: declined
        b'[{"cmd":"Say","uuid":1,"text":"\xff"}]',  # bad UTF-8 after an extra key
    ],
)
def test_lenient_pass_edge_cases(frames: _typed.FrameCodec, text: str) -> None:
    lenient = _typed._decode_lenient(text)
    try:
        exact = _typed._decode_each(text)
    except DecodeError as exc:
        assert lenient is None
        with pytest.raises(DecodeError) as info:
            frames.decode_frame(text)
        assert (str(info.value), info.value.offset) == (str(exc), exc.offset)
        return
    if lenient is not None:
        assert _typed_summary(lenient) == _typed_summary(exact)
    frame = frames.decode_frame(text)
    assert _typed_summary(list(frame)) == _typed_summary(exact)
    assert frames.encode_frame(frame) == text


def test_prone_leads_change_speed_not_results(py_codec: ModuleType, c_codec: ModuleType) -> None:
    """The compiled twin sends small frames whose lead command last carried extra
    keys straight to the two-pass path; every step must still match the pure twin."""
    get_extra = '[{"cmd":"Get","keys":["a"],"uuid":"u-1"}]'
    steps = [
        get_extra,  # Get becomes prone
        '[{"cmd":"Get","keys":["a"]}]',  # no extras: two passes, then Get is dropped
        get_extra,
        get_extra.encode(),
        '[{"cmd":"Get","keys":["a"],"uuid":"u"},{"cmd":"Future"}]',  # declined: per command
        '[{"cmd":"Get","keys":"a","uuid":"u"}]',  # invalid: the error, as before
        b'[{"cmd":"Get","keys":["\xff"],"uuid":"u"}]',  # bad UTF-8: the frame error
        '[{"cmd":"Get","keys":["a"]},{"cmd":"Sync","n":1}]',  # extras on a later command
        '[{"cmd":"Get","keys":["\u00e9"],"uuid":"u"}]',  # non-ASCII text: no table lookup
        '[{"cmd":"Get"}]',
    ]
    steps += [f'[{{"cmd":"C{k}","x":1}}]' for k in range(12)]  # unknown: never prone
    steps += ['[{"cmd":"%s","x":1}]' % name for name in sorted(C.COMMANDS)]  # noqa: UP031
    for _ in range(2):
        for data in steps:
            assert _outcome(c_codec.decode_frame, data) == _outcome(py_codec.decode_frame, data)


@pytest.mark.parametrize("pad", [0, 600], ids=["small", "large"])
def test_a_prone_lead_never_changes_a_result(
    py_codec: ModuleType, c_codec: ModuleType, pad: int
) -> None:
    """A Connect with a repeated version (the first without its class) is refused by
    the one-pass path; marking Connect as a lead with extras must not change that."""
    name = "n" * pad
    head = f'[{{"cmd":"Connect","password":"","name":"{name}","game":"g","uuid":"u",'
    version = '"version":{"major":0,"minor":6,"build":8'
    with_extra = head + '"x":1,' + version + ',"class":"Version"}}]'
    repeated = head + version + "}," + version + ',"class":"Version"}}]'
    for codec in (py_codec, c_codec):
        fresh = _outcome(codec.decode_frame, repeated)
        assert fresh[0] == "error"
        assert _outcome(codec.decode_frame, with_extra)[0] == "frame"  # Connect is prone now
        assert _outcome(codec.decode_frame, repeated) == fresh
        assert _outcome(codec.decode_frame, with_extra)[0] == "frame"
        assert _outcome(codec.decode_frame, repeated.encode()) == _outcome(
            py_codec.decode_frame, repeated.encode()
        )
