"""The typed frame codec: corpus round trips, extras, unknown commands, errors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from gamecodec.archipelago import _compat_py, _errors, compat, frames
from gamecodec.archipelago import commands as C
from gamecodec.archipelago._models import DEFAULT_MAX_DEPTH, HintStatus, NetworkItem, Version
from gamecodec.errors import DecodeError

Corpus = list[tuple[str, dict[str, Any], dict[str, Any]]]
BAD_CMD = ('[{"cmd": 5}]', '[{"nocmd": 1}]')


def test_corpus_round_trips_byte_for_byte(corpus: Corpus) -> None:
    typed = 0
    for session, frame, _ in corpus:
        raw = frame["raw"]
        if raw in BAD_CMD:
            continue
        for data in (raw, raw.encode()):
            commands = frames.decode(data)
            assert frames.encode(commands) == raw, (session, frame["seq"])
            assert frames.encode_bytes(commands) == raw.encode(), (session, frame["seq"])
        assert [c.__struct_config__.tag for c in commands] == frame["cmds"]
        typed += len(commands)
    assert typed > 600


def test_corpus_bad_cmd_frames_are_rejected(corpus: Corpus) -> None:
    rejected = [f["seq"] for _, f, _ in corpus if f["raw"] in BAD_CMD]
    assert rejected == [220, 223]
    for raw in BAD_CMD:
        with pytest.raises(DecodeError, match="string 'cmd'") as info:
            frames.decode(raw)
        assert info.value.offset == 1


def test_corpus_values_match_compat(corpus: Corpus, codec: ModuleType) -> None:
    """Typed fields hold the same values the reference decode gives."""
    for _, frame, _ in corpus:
        if frame["raw"] in BAD_CMD:
            continue
        pairs = zip(frames.decode(frame["raw"]), codec.decode(frame["raw"]), strict=True)
        for command, plain in pairs:
            if isinstance(command, C.ReceivedItems):
                assert [(i.item, i.location, i.player, i.flags) for i in command.items] == [
                    tuple(i) for i in plain["items"]
                ]
            if isinstance(command, C.RoomInfo):
                assert (
                    command.version.major,
                    command.version.minor,
                    command.version.build,
                ) == plain["version"]
                assert command.time == plain["time"]
            if isinstance(command, C.Connected):
                assert [p.name for p in command.players] == [p.name for p in plain["players"]]
                assert list(command.slot_info) == list(plain["slot_info"])


READ = (
    '[{"cmd":"SetReply","default":0,"key":"k","operations":[{"operation":"add","value":7}],'
    '"want_reply":true,"uuid":"u-1","original_value":0,"slot":4,"value":7}]'
)


def test_extra_keys_are_kept_and_key_order_reproduced() -> None:
    frame = frames.decode(READ)
    (reply,) = frame
    assert isinstance(reply, C.SetReply)
    assert reply.extra == {"uuid": "u-1"}
    assert reply.value == 7
    assert reply.operations == [C.DataStorageOperation("add", 7)]
    assert frames.encode(frame) == READ
    # a changed command is written fresh: declared keys in order, extras after
    reply.value = 8
    assert frames.encode(frame) == (
        '[{"cmd":"SetReply","key":"k","default":0,"want_reply":true,'
        '"operations":[{"operation":"add","value":7}],"original_value":0,"slot":4,"value":8,'
        '"uuid":"u-1"}]'
    )


def test_only_changed_commands_are_rewritten() -> None:
    text = '[{"cmd":"Say","text":"a"}, {"cmd":"LocationScouts","create_as_hint":0,"locations":[1]}]'
    frame = frames.decode(text)
    assert frames.encode(frame) == text
    frame[0].text = "b"
    assert frames.encode(frame) == (
        '[{"cmd":"Say","text":"b"},{"cmd":"LocationScouts","create_as_hint":0,"locations":[1]}]'
    )
    frame.append(C.Sync())
    assert frames.encode(frame).endswith(',{"cmd":"Sync"}]')


def test_unknown_commands_stay_dicts() -> None:
    text = '[{"cmd":"Future","x":[1,{"y":null}]},{"cmd":"Sync"}]'
    frame = frames.decode(text)
    assert frame[0] == {"cmd": "Future", "x": [1, {"y": None}]}
    assert isinstance(frame[1], C.Sync)
    assert frames.encode(frame) == text
    assert frames.encode(list(frame)) == text


def test_encode_built_commands() -> None:
    commands = [
        C.ReceivedItems(0, [C.Item(1, 2, 3), C.Item(4, 5, 6, 1)]),
        C.RoomUpdate(hint_points=3),
        C.Connect(password=None, name="P1", version=C.VersionInfo(0, 6, 8), tags=["AP"], game="G"),
        C.PrintJSON([C.MessagePart("hi")], type="Chat", team=0, slot=1, message="hi"),
        C.RoomInfo(False, ["G"], ["AP"], C.VersionInfo(0, 6, 8), time=1e16),
        # NamedTuples, sets and enums inside typed values follow the compat rules
        C.Bounce(
            tags=["DeathLink"], data={"items": [NetworkItem(1, 2, 3)], "s": {HintStatus.HINT_FOUND}}
        ),
    ]
    assert frames.encode(commands) == (
        '[{"cmd":"ReceivedItems","index":0,"items":['
        '{"item":1,"location":2,"player":3,"flags":0,"class":"NetworkItem"},'
        '{"item":4,"location":5,"player":6,"flags":1,"class":"NetworkItem"}]},'
        '{"cmd":"RoomUpdate","hint_points":3},'
        '{"cmd":"Connect","password":null,"name":"P1",'
        '"version":{"major":0,"minor":6,"build":8,"class":"Version"},"tags":["AP"],'
        '"items_handling":7,"uuid":"","game":"G"},'
        '{"cmd":"PrintJSON","data":[{"text":"hi"}],"type":"Chat","team":0,"slot":1,"message":"hi"},'
        '{"cmd":"RoomInfo","password":false,"games":["G"],"tags":["AP"],'
        '"version":{"major":0,"minor":6,"build":8,"class":"Version"},"permissions":{},'
        '"hint_cost":0,"location_check_points":0,"datapackage_checksums":{},"seed_name":"",'
        '"time":1e+16},'
        '{"cmd":"Bounce","tags":["DeathLink"],"data":{"items":[{"item":1,"location":2,'
        '"player":3,"flags":0,"class":"NetworkItem"}],"s":[40]}}]'
    )
    assert frames.encode_bytes(commands) == frames.encode(commands).encode()
    again = frames.decode(frames.encode(commands))
    assert again[:5] == commands[:5]


def test_set_extra() -> None:
    get = C.Get(["a"])
    get.set_extra({"request_id": 3})
    assert frames.encode([get]) == '[{"cmd":"Get","keys":["a"],"request_id":3}]'
    with pytest.raises(ValueError, match="clash"):
        get.set_extra({"keys": 1})


@pytest.mark.parametrize(
    ("data", "offset", "message"),
    [
        ('{"cmd":"Sync"}', 0, "array"),
        ("5", 0, "array"),
        ("[1]", 1, "object"),
        ('[{"cmd":"Sync"},{"text":"x"}]', 16, "string 'cmd'"),
        ('[{"cmd":"Say"}]', 1, "invalid Say"),
        ('[{"cmd":"Say","text":5}]', 1, "invalid Say"),
        (
            '[{"cmd":"Sync"},{"cmd":"Connect","password":"","name":"n","game":"g",'
            '"version":{"major":0,"minor":6,"build":8}}]',
            16,
            "class",
        ),
        (
            '[{"cmd":"Connect","password":"","name":"n","game":"g","uuid":"u",'
            '"version":{"major":0,"minor":6,"build":8,"class":"Hint"}}]',
            1,
            "class",
        ),
        ("[1,]", 3, "trailing comma"),
        ("[NaN]", 1, "a command must be a JSON object"),  # NaN itself reads, as in the reference
        ("[Nan]", 1, "malformed"),
        (b'[{"cmd":"Say","text":"\xff"}]', 22, "UTF-8"),
        ('["\ud800"]', 2, "surrogate"),
        # past any C recursion limit: the bracket where the reference refuses it
        ("[" * 100_000 + "]" * 100_000, 15, r"nested \(more than 15 levels\)"),
        # brackets inside strings do not count
        ('["' + "[{" * 5 + '\\"",' + "[" * 100_000 + "]" * 100_001, 30, "more than 15 levels"),
        ('[{"cmd":"Say","text":"a"}', 25, "truncated"),
        # past the limit, then an unterminated string of escaped quotes
        ("[" * 100_000 + '"' + '\\"' * 200_000, 15, "more than 15 levels"),
        ("[" * 100_000 + '"' + '\\"' * 200_000 + "\\", 15, "more than 15 levels"),
    ],
)
def test_typed_decode_errors(data: str | bytes, offset: int, message: str) -> None:
    with pytest.raises(DecodeError, match=message) as info:
        frames.decode(data)
    assert info.value.offset == offset


def _deep(levels: int) -> bytes:
    return b'[{"cmd":"Say","text":"[[[ in a string"},' + b"[" * levels + b"]" * (levels + 1)


def _refused(data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        frames.decode(data)
    return info.value


@pytest.mark.parametrize("levels", [100_000, 1_000_000])
def test_too_deep_is_refused_where_compat_refuses_it(levels: int) -> None:
    data = _deep(levels)
    with pytest.raises(DecodeError) as compat_info:
        compat.decode(data)
    for frame in (data, data.decode()):
        error = _refused(frame)  # type: ignore[arg-type]
        assert "too deeply nested" in str(error)
        assert error.offset == compat_info.value.offset == 54


class _CountingSteps(list[int]):
    """``_compat_py._STEP`` (the bracket -> +1/-1 table) counting its lookups:
    one per bracket the chunked depth count looks at."""

    looked_at = 0

    def __getitem__(self, index: Any) -> Any:
        self.looked_at += 1
        return super().__getitem__(index)


class _CountingTokens:
    """``_errors._TOKENS`` counting the tokens (brackets, strings) the exact
    scan steps through, a Python step each."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        self.stepped = 0

    def finditer(self, raw: bytes) -> Iterator[re.Match[bytes]]:
        for token in self.pattern.finditer(raw):
            self.stepped += 1
            yield token


def test_refusing_too_deep_steps_through_no_more_than_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pure twin's Python steps stop at the bracket past the limit: the same
    for 100,000 and 1,000,000 brackets (5604eb3: a step per bracket of the whole
    frame before). What precedes them is C passes over the frame (bytes.count,
    a regex substitution, bytes.translate); the compiled twin is one C loop that
    stops at that bracket."""
    steps = _CountingSteps(_compat_py._STEP)
    monkeypatch.setattr(_compat_py, "_STEP", steps)
    tokens = _CountingTokens(_errors._TOKENS)
    monkeypatch.setattr(_errors, "_TOKENS", tokens)
    counted = []
    for levels in (100_000, 1_000_000):
        steps.looked_at = tokens.stepped = 0
        assert _compat_py.past_depth(_deep(levels)) == 54
        counted.append((steps.looked_at, tokens.stepped))
    assert counted[0] == counted[1]
    looked_at, stepped = counted[0]
    assert looked_at <= _compat_py._CHUNK  # the first chunk of brackets only
    assert stepped <= DEFAULT_MAX_DEPTH + 8  # the Say command (7 tokens), then brackets


def test_connect_version_with_class_decodes() -> None:
    (connect,) = frames.decode(
        '[{"cmd":"Connect","password":null,"name":"n","game":"g","uuid":"u","tags":[],'
        '"items_handling":7,"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]'
    )
    assert isinstance(connect, C.Connect)
    assert (connect.version.major, connect.version.minor, connect.version.build) == Version(0, 6, 8)


def test_large_frames_with_and_without_extra_keys() -> None:
    big = {f"key{i}": list(range(i % 7)) for i in range(60)}
    with_extra = C.Retrieved(big)
    with_extra.set_extra({"uuid": "u-1"})
    texts = [
        frames.encode([with_extra]),
        frames.encode([C.Retrieved(big)]),
        frames.encode([with_extra]),
    ]
    assert all(len(t) > 512 for t in texts)
    for text in texts:
        frame = frames.decode(text)
        assert frame[0].keys == big
        assert frame[0].extra == ({"uuid": "u-1"} if "uuid" in text else {})
        assert frames.encode(frame) == text
