"""The one API on BZRC: verbs, old names, session shape, events, errors, stubs."""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

from gamecodec import bzrc
from gamecodec.bzrc import _impl
from gamecodec.errors import (
    DecodeError,
    EncodeError,
    GameCodecError,
    LocalProtocolError,
    RemoteProtocolError,
    TruncatedError,
)
from gamecodec.sessions import Event, StreamSession
from tests.conftest import PACKAGE_ROOT

ROOT = Path(__file__).resolve().parents[2]
GRID = b"ack 1 occgrid 0\nbegin\nat 1,2\nsize 2x3\n011\n100\nend\n"


@pytest.fixture
def verbs(codec: ModuleType, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``gamecodec.bzrc._impl`` running on the twin under test."""
    monkeypatch.setattr(_impl, "Decoder", codec.Decoder)
    return _impl


# -- old names -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"), [("ResponseParser", "Decoder"), ("encode_command", "encode")]
)
def test_old_names_warn_and_are_the_new_objects(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"use {new}"):
        value = getattr(bzrc, old)
    assert value is getattr(bzrc, new)
    with pytest.warns(DeprecationWarning):
        exec(f"from gamecodec.bzrc import {old}", {})
    assert old not in bzrc.__all__


def test_the_old_parser_name_still_works_as_a_class() -> None:
    with pytest.warns(DeprecationWarning):
        old = bzrc.ResponseParser
    assert isinstance(bzrc.Decoder(), old)
    assert old().feed(b"ok\n") == [bzrc.Ok(None)]


def test_unknown_names_still_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = bzrc.no_such_name  # type: ignore[attr-defined]


# -- decode ------------------------------------------------------------------------


def test_decode_returns_every_response_of_complete_input(verbs: ModuleType) -> None:
    out = verbs.decode(b"bzrobots 1\nack 1 shoot 0\nok\n" + GRID + b":help line\n")
    assert [type(r) for r in out] == [bzrc.Greeting, bzrc.Ok, bzrc.OccGrid, bzrc.Help]
    assert out[2].grid.tolist() == [[0, 1, 1], [1, 0, 0]]
    assert out[3] == bzrc.Help((":help line",))
    assert verbs.decode(b"") == []


def test_decode_of_a_partial_item_raises_truncated_with_its_offset(verbs: ModuleType) -> None:
    data = b"ack 1 shoot 0\nok\nack 2 teams\nbegin\nteam red 1\n"
    with pytest.raises(TruncatedError) as info:
        verbs.decode(data)
    assert info.value.offset == len(data)
    assert info.value.protocol == "bzrc"
    assert info.value.partial == [bzrc.Ok(bzrc.Ack(1, "shoot", ("0",)))]
    with pytest.raises(TruncatedError) as info:
        verbs.decode(b"ok\nok")  # a line without its newline
    assert info.value.offset == 5 and info.value.partial == [bzrc.Ok(None)]


def test_decode_reports_bad_bytes_at_their_offset(verbs: ModuleType) -> None:
    with pytest.raises(DecodeError) as info:
        verbs.decode(b"ok\nnonsense\n")
    assert type(info.value) is DecodeError
    assert (info.value.offset, info.value.protocol) == (3, "bzrc")
    assert info.value.partial == [bzrc.Ok(None)]


# -- decode_many: one item = one complete response ----------------------------------


def test_decode_many_gives_one_entry_per_item(verbs: ModuleType) -> None:
    out = verbs.decode_many([b"ok\n", bytearray(GRID), b"bogus\n", memoryview(b"fail nope\n")])
    assert out[0] == bzrc.Ok(None)
    assert isinstance(out[1], bzrc.OccGrid) and out[1].grid.shape == (2, 3)
    assert isinstance(out[2], DecodeError) and out[2].offset == 0
    assert out[3] == bzrc.Fail(None, "nope", False)


@pytest.mark.parametrize(
    ("item", "offset"),
    [
        (b"ok\nok\n", 3),
        (b"ok\n\n  ok\n", 6),  # where the second response starts
        (b":a\n:b\nfail x\n", 6),  # help ends where the next response starts
        (b"ack 1 speed 0 x\nfail Invalid parameter(s)\nok\n", 42),
        (b"ack 1 speed 0 x\nfail Invalid parameter(s)\nfail\nok\n", 47),
        (b"ack 1 teams\nbegin\nend\nerror late\n", 22),
    ],
)
def test_decode_many_refuses_an_item_of_several_responses(
    verbs: ModuleType, item: bytes, offset: int
) -> None:
    (error,) = verbs.decode_many([item])
    assert isinstance(error, DecodeError) and not isinstance(error, TruncatedError)
    assert error.offset == offset and error.protocol == "bzrc"
    assert "more than one response" in str(error)


def test_decode_many_empty_and_partial_items_are_truncated(verbs: ModuleType) -> None:
    empty, blank, partial = verbs.decode_many([b"", b"\n \n", b"ack 1 teams\nbegin\n"])
    assert isinstance(empty, TruncatedError) and empty.offset == 0
    assert isinstance(blank, TruncatedError) and blank.offset == 3
    assert isinstance(partial, TruncatedError) and partial.offset == 18
    assert {e.protocol for e in (empty, blank, partial)} == {"bzrc"}


def test_encode_is_the_command_encoder() -> None:
    assert bzrc.encode("speed", 0, 0.5) == b"speed 0 0.5\n"
    assert bzrc.encode_commands([("shoot", 1), ("timer",)]) == b"shoot 1\ntimer\n"


# -- sessions ----------------------------------------------------------------------


def test_sessions_follow_the_stream_session_protocol() -> None:
    assert isinstance(bzrc.ClientSession(), StreamSession)
    assert isinstance(bzrc.ServerSession(), StreamSession)


def test_timerless_sessions() -> None:
    for session in (bzrc.ClientSession(), bzrc.ServerSession()):
        assert session.next_deadline() is None
        assert session.handle_timeout(5.0) == []
        assert session.events() == []


def test_client_receive_data_without_now_warns_and_still_works() -> None:
    client = bzrc.ClientSession()
    with pytest.warns(DeprecationWarning, match="receive_data"):
        events = client.receive_data(b"bzrobots 1\n")
    assert events == [bzrc.Connected(bzrc.Greeting("bzrobots", 1))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert client.receive_data(b"", 1.0) == [bzrc.Closed(())]


def test_client_keeps_the_events_of_a_call_that_raised() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    shot = client.send("shoot", 0)
    with pytest.raises(RemoteProtocolError) as info:
        client.receive_data(b"ack 1 shoot 0\nok\nerror late\nnonsense\n", 1.0)
    assert info.value.protocol == "bzrc"
    ok = bzrc.Ok(bzrc.Ack(1, "shoot", ("0",)))
    assert client.events() == [bzrc.Answer(shot, ok), bzrc.Unsolicited(bzrc.Error("late"))]
    assert client.events() == []
    assert client.closed


def test_client_keeps_the_events_before_a_response_that_answers_nothing() -> None:
    client = bzrc.ClientSession()
    with pytest.raises(RemoteProtocolError, match="answers no command"):
        client.receive_data(b"bzrobots 1\nok\n", 0.0)
    assert client.events() == [bzrc.Connected(bzrc.Greeting("bzrobots", 1))]


def test_events_are_frozen_dataclasses_and_requests_stay_records() -> None:
    request = bzrc.Request(0, "shoot", (0,))
    events = [
        bzrc.Connected(bzrc.Greeting("bzrobots", 1)),
        bzrc.Answer(request, bzrc.Ok(None)),
        bzrc.Unsolicited(bzrc.Error("x")),
        bzrc.Closed((request,)),
    ]
    for event in events:
        assert isinstance(event, Event) and dataclasses.is_dataclass(event)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, dataclasses.fields(event)[0].name, 1)
    assert events[1].request.id == 0 and events[1].response == bzrc.Ok(None)
    assert tuple(request) == (0, "shoot", (0,))


# -- errors ------------------------------------------------------------------------


def test_every_error_carries_the_protocol(codec: ModuleType) -> None:
    raised: list[GameCodecError] = []
    for bad in (b"nonsense\n", b"x" * 20 + b"\n"):
        with pytest.raises(DecodeError) as info:
            codec.Decoder(max_line=10).feed(bad)
        raised.append(info.value)
    decoder = codec.Decoder()
    decoder.feed(b"ack 1 teams\n")
    with pytest.raises(TruncatedError) as trunc:
        decoder.close()
    raised.append(trunc.value)
    with pytest.raises(EncodeError) as enc:
        bzrc.encode("fly", 1)
    raised.append(enc.value)
    with pytest.raises(EncodeError) as enc2:
        bzrc.encode_response(bzrc.Timer(None, 1, 2))
    raised.append(enc2.value)
    client = bzrc.ClientSession()
    client.receive_data(b"", 0.0)
    with pytest.raises(LocalProtocolError) as local:
        client.send("shoot", 0)
    raised.append(local.value)
    server = bzrc.ServerSession(max_line=4)
    with pytest.raises(RemoteProtocolError) as remote:
        server.receive_data(b"agent 1", 0.0)
    raised.append(remote.value)
    with pytest.raises(LocalProtocolError) as local2:
        server.respond(bzrc.Request(7, "shoot", (0,)), bzrc.Ok(None), 0.0)
    raised.append(local2.value)
    raised.append(bzrc.CommandFailed("shoot", bzrc.Fail(None, "", False)))
    assert [e.protocol for e in raised] == ["bzrc"] * len(raised)


# -- stubs and import cost -------------------------------------------------------------


def test_the_compiled_twin_stub_names_what_the_module_has(c_codec: ModuleType) -> None:
    stub = ast.parse((ROOT / "src/gamecodec/bzrc/_codec_c.pyi").read_text())
    for node in stub.body:
        if isinstance(node, ast.FunctionDef):
            assert callable(getattr(c_codec, node.name))
        elif isinstance(node, ast.ClassDef):
            cls = getattr(c_codec, node.name)
            for member in node.body:
                if isinstance(member, ast.FunctionDef):
                    assert hasattr(cls, member.name), (node.name, member.name)


def test_importing_bzrc_does_not_import_numpy(impl: str) -> None:
    """numpy loads with the first occgrid, not with the package."""
    code = (
        "import sys\n"
        "import gamecodec.bzrc as bzrc\n"
        "from gamecodec import _accel\n"
        "print(_accel.active()['bzrc'], 'numpy' in sys.modules)\n"
        "bzrc.decode(b'ok\\n' + " + repr(b"ack 1 teams\nbegin\nteam red 1\nend\n") + ")\n"
        "print('numpy' in sys.modules)\n"
        "bzrc.decode(" + repr(GRID) + ")\n"
        "print('numpy' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_ROOT), str(ROOT)]))
    env.pop("GAMECODEC_NO_EXTENSIONS", None)
    if impl == "py":
        env["GAMECODEC_NO_EXTENSIONS"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [impl, "False", "False", "True"]
