"""The typed frame codec: one websocket text frame <-> a list of typed commands.

Decode is msgspec: the whole frame into :mod:`commands` Structs in one pass
(``list[AnyCommand]``). A frame that pass refuses for its content (keys a
command does not declare, such as archipelago.js's ``uuid``; an unknown
``cmd``; a command that does not validate) is read command by command from its
untyped JSON: extra keys are kept in :attr:`Command.extra`, an unknown command
stays a plain dict, an error carries the offset of its command. The returned
:class:`Frame` remembers the frame's text.

Encode is msgspec for every typed field whose declared type msgspec writes as
the reference does (ints, strings, bools, lists, string-keyed dicts, nested
Structs of those). Fields typed ``Any`` or ``float``, extra keys and plain
dicts go through the compat writer (NamedTuples with their trailing
``"class"``, sets as arrays, floats as ``float.__repr__``, bare ``NaN``). A
value of another type in a typed field is written as msgspec writes it. A
decoded :class:`Frame` whose commands are unchanged re-encodes to exactly its
text, even where the sender's key order, spacing or number format differ from
ours.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal

import msgspec
import msgspec.inspect as mi

from gamecodec import _accel
from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.archipelago import compat
from gamecodec.archipelago._errors import (
    PROTOCOL,
    decode_error,
    encode_error,
    frame_error,
    invalid_utf8,
)
from gamecodec.archipelago._models import DEFAULT_MAX_DEPTH, version_of
from gamecodec.archipelago._stack import on_fresh_stack, retrying
from gamecodec.archipelago.commands import COMMANDS, AnyCommand, Command, Connect
from gamecodec.errors import DecodeError

__all__ = ["Frame", "decode", "decode_many", "encode", "encode_bytes"]


class Frame(list[Any]):
    """The commands of one decoded frame (a list). It remembers the frame's text
    in :attr:`raw`, so encoding it again while its commands are unchanged gives
    back exactly the bytes that came in (key order, spacing, number forms)."""

    __slots__ = ("raw",)

    raw: str | bytes | None


class _StrictVersion(msgspec.Struct):
    cls: Literal["Version"] = msgspec.field(name="class")


class _ConnectVersionCheck(msgspec.Struct):
    version: _StrictVersion


_past_depth = _accel.load("gamecodec.archipelago", "_compat", PROTOCOL).past_depth
"""The reference's nesting scan, from the active compat twin."""

_decode_all = msgspec.json.Decoder(list[AnyCommand]).decode
_split_fast = msgspec.json.Decoder(list[msgspec.Raw]).decode
_plain = msgspec.json.Decoder().decode
_connect_check = msgspec.json.Decoder(_ConnectVersionCheck).decode
_encode = msgspec.json.Encoder().encode

# ------------------------------------------------------------------ decode


def _utf8(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")


def _offset_of(data: str | bytes, raws: list[bytes], index: int) -> int:
    """Where command ``index`` starts in the frame (error path only)."""
    raw = _utf8(data)
    position = 0
    for i in range(index + 1):
        piece = bytes(raws[i])
        position = raw.find(piece, position)
        if i < index:
            position += len(piece)
    return max(position, 0)


_DECLARED = {
    name: frozenset({"cmd", *cls.__struct_encode_fields__}) for name, cls in COMMANDS.items()
}


def _version_fields(value: Any) -> dict[str, int] | None:
    """A class-tagged Version as the reference's hook reads it (keys in any case, so
    .NET's ``Major``/``Minor``/``Build`` work, values through ``int()``); None when
    it is not one or cannot be built (the Struct conversion then reports it)."""
    if type(value) is not dict or value.get("class") != "Version":
        return None
    try:
        built = version_of(value)
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError):
        return None
    return {"major": built.major, "minor": built.minor, "build": built.build}


def _from_plain(obj: Any) -> Command | dict[str, Any]:
    """One command from its untyped JSON value: extra keys kept, unknown ``cmd`` as a dict."""
    if type(obj) is not dict:
        raise ValueError("a command must be a JSON object")
    name = obj.get("cmd")
    if type(name) is not str:
        raise ValueError("a command needs a string 'cmd'")
    cls = COMMANDS.get(name)
    if cls is None:
        return obj
    declared = _DECLARED[name]
    known = obj
    extra: dict[str, Any] = {}
    if not declared.issuperset(obj):
        known = {}
        for key, value in obj.items():  # (a loop: a comprehension is a call before 3.12)
            if key in declared:
                known[key] = value
            else:
                extra[key] = value
    if cls is Connect:
        fields = _version_fields(obj.get("version"))
        if fields is not None:
            known = {**known, "version": fields}
    try:
        command = msgspec.convert(known, cls)
    except msgspec.ValidationError as bad:
        raise ValueError(f"invalid {name}: {bad}") from None
    if cls is Connect:
        version = obj.get("version")
        if type(version) is not dict or version.get("class") != "Version":
            raise ValueError('a Connect\'s version must carry "class": "Version"')
    if extra:
        command.__dict__["_extra"] = extra
    return command


_SURROGATE = re.compile("[\ud800-\udfff]")
_lenient = json.JSONDecoder().decode
"""The reference's parser (no object hook: the typed conversion reads the tags):
it reads ``NaN``, ``Infinity``, ``-Infinity`` and ``1e400`` (as ``inf``)."""


def _plain_values(data: str | bytes) -> Any:
    """The frame's untyped JSON value. JSON msgspec refuses is read as the
    reference reads it (``NaN``, ``Infinity``, numbers past float range, escaped
    lone surrogates); what the reference refuses too is msgspec's error."""
    try:
        return _plain(data)
    except RecursionError as exc:
        if _past_depth(data, DEFAULT_MAX_DEPTH) >= 0:
            raise frame_error(data, exc) from None
        raise  # the caller's deep stack: decode retries on a fresh one
    except (msgspec.DecodeError, UnicodeError) as exc:
        if isinstance(exc, UnicodeError) or (
            isinstance(data, str) and _SURROGATE.search(data) is not None
        ):
            raise frame_error(data, exc) from None
        try:
            text = data if isinstance(data, str) else data.decode("utf-8")
            return _lenient(text)
        except (ValueError, UnicodeError):
            raise frame_error(data, exc) from None


_SPACE = re.compile(r"[ \t\n\r]*")


def _skip_space(text: str, at: int) -> int:
    return len(text) if (found := _SPACE.match(text, at)) is None else found.end()


def _split(data: str | bytes) -> list[bytes]:
    """The UTF-8 text of each element of a JSON array, as it stands in the frame
    (JSON only the reference reads, such as ``NaN``, split by its parser)."""
    try:
        return [bytes(raw) for raw in _split_fast(data)]
    except msgspec.DecodeError:
        text = data if isinstance(data, str) else data.decode("utf-8")
    scan = json.JSONDecoder().raw_decode
    pieces = []
    at = _skip_space(text, 1)
    while at < len(text) and text[at] != "]":
        _, end = scan(text, at)
        pieces.append(text[at:end].encode("utf-8", "surrogatepass"))
        at = _skip_space(text, end)
        if at < len(text) and text[at] == ",":
            at = _skip_space(text, at + 1)
    return pieces


def _decode_each(data: str | bytes) -> list[Command | dict[str, Any]]:
    """Command by command (one untyped parse): extra keys, unknown commands, errors."""
    values = _plain_values(data)
    if type(values) is not list:
        raise decode_error("a frame must be a JSON array of commands", 0)
    out: list[Command | dict[str, Any]] = []
    for index, value in enumerate(values):
        try:
            out.append(_from_plain(value))
        except ValueError as exc:
            raise decode_error(str(exc), _offset_of(data, _split(data), index), out) from None
    return out


def _check_connects(data: str | bytes, frame: Frame) -> None:
    """A Connect the one-pass decode took must have had ``"class": "Version"``."""
    raws = None
    for index, command in enumerate(frame):
        if type(command) is Connect:
            raws = raws or _split(data)
            try:
                _connect_check(raws[index])
            except msgspec.ValidationError:
                raise decode_error(
                    'a Connect\'s version must carry "class": "Version"',
                    _offset_of(data, raws, index),
                    frame[:index],
                ) from None


def _checked(data: object) -> str | bytes:
    """``data`` as str or bytes, its UTF-8 checked (msgspec skips the bytes of keys
    a Struct does not declare unchecked, and the text must encode again)."""
    if type(data) is not str and type(data) is not bytes:
        if isinstance(data, str):
            data = str(data)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data)
        else:
            raise TypeError(f"expected str or bytes, not {type(data).__name__}")
    if type(data) is bytes and not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise invalid_utf8(exc) from None
    return data


def decode(data: str | bytes | bytearray | memoryview) -> Frame:
    """The commands of one text frame, in a :class:`Frame` (a list).

    Known commands become their :class:`Command` class (keys they do not
    declare kept in :attr:`Command.extra`); unknown ones stay plain dicts.
    ``data`` is the frame's text, or its UTF-8 bytes.

    Raises :class:`~gamecodec.errors.DecodeError` (with the byte offset) for
    malformed JSON, a frame that is not an array, a command that is not an
    object or lacks a string ``cmd``, a known command with missing or mistyped
    keys, and a Connect whose version lacks ``"class": "Version"``.

    >>> decode('[{"cmd":"Say","text":"hi"}]')
    [Say(text='hi')]
    """
    if type(data) is not str:
        data = _checked(data)
    _refuse_too_deep(data)
    try:
        return _decode_frame(data)
    except RecursionError:
        return _retried(data)


def _refuse_too_deep(data: str | bytes) -> None:
    """The reference's nesting scan, done before any parsing (as NetUtils does)."""
    too_deep = _past_depth(data, DEFAULT_MAX_DEPTH)
    if too_deep >= 0:
        raise decode_error(
            f"JSON document too deeply nested (more than {DEFAULT_MAX_DEPTH - 1} levels)",
            too_deep,
        )


_NOT_AN_OBJECT = re.compile(r"Expected `object`, got `\w+` - at `\$\[(\d+)\]`")
_NOT_AN_ARRAY = re.compile(r"Expected `array`, got `\w+`")
_check_json = msgspec.json.Decoder(msgspec.Raw).decode
"""Checks a document's JSON syntax without building its values (fast, no copies)."""


def _refuse_early(data: str | bytes, invalid: msgspec.ValidationError) -> None:
    """When the one-pass decode stopped at a frame that is not an array, or at an
    element that is not an object, raise what :func:`_decode_each` would raise,
    without building the values of a (maybe huge) rest of the frame: the whole
    frame is checked to be JSON, and only the elements before the bad one are
    read. Returns when that does not apply (JSON only the reference reads...)."""
    message = str(invalid)
    element = _NOT_AN_OBJECT.fullmatch(message)
    if element is None and _NOT_AN_ARRAY.fullmatch(message) is None:
        return
    try:
        _check_json(data)
    except (msgspec.DecodeError, UnicodeError):
        return  # a syntax error or lenient JSON later on: the full path decides
    if element is None:
        raise decode_error("a frame must be a JSON array of commands", 0)
    text = data if isinstance(data, str) else data.decode("utf-8")
    scan = json.JSONDecoder().raw_decode
    out: list[Command | dict[str, Any]] = []
    at = _skip_space(text, _skip_space(text, 0) + 1)  # past the "["
    for _ in range(int(element.group(1))):
        _, end = scan(text, at)
        try:
            out.append(_from_plain(_plain(text[at:end])))
        except ValueError as exc:
            raise decode_error(str(exc), _byte_offset(text, at), out) from None
        at = _skip_space(text, _skip_space(text, end) + 1)  # past the comma
    raise decode_error("a command must be a JSON object", _byte_offset(text, at), out)


def _byte_offset(text: str, at: int) -> int:
    return at if text.isascii() else len(text[:at].encode("utf-8", "surrogatepass"))


def _decode_frame(data: str | bytes) -> Frame:
    try:
        frame = Frame(_decode_all(data))
    except msgspec.DecodeError as exc:  # a ValidationError, or JSON only the reference reads
        if isinstance(exc, msgspec.ValidationError):
            _refuse_early(data, exc)
        frame = Frame(_decode_each(data))
    except UnicodeError as exc:
        raise frame_error(data, exc) from None
    else:
        for command in frame:
            if type(command) is Connect:
                _check_connects(data, frame)
                break
    frame.raw = data
    return frame


def _retried(data: str | bytes) -> Frame:
    """:func:`decode` again on a fresh stack: the frame is within the nesting
    limit, so the parser's RecursionError came from the caller's deep stack."""
    if retrying():
        raise decode_error("JSON document too deeply nested for this stack", 0)
    return on_fresh_stack(decode, data)


def decode_many(
    frames: Iterable[str | bytes | bytearray | memoryview],
) -> list[Frame | DecodeError]:
    """:func:`decode` of each frame on its own: a frame that does not decode
    gives its :class:`~gamecodec.errors.DecodeError` in its place.

    >>> decode_many(['[{"cmd":"Sync"}]', "[{"])
    [[Sync()], DecodeError('Input data was truncated (at byte 2)')]
    """
    out: list[Frame | DecodeError] = []
    for data in frames:
        try:
            out.append(decode(data))
        except DecodeError as exc:
            out.append(exc)
    return out


# ------------------------------------------------------------------ encode


def _struct_dict(obj: Any) -> dict[str, Any]:
    """A Struct as the dict the compat writer writes: tag first, declared keys in
    order without ``UNSET`` ones, then a command's extra keys (``default`` hook)."""
    if not isinstance(obj, msgspec.Struct):
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
    config = obj.__struct_config__
    if config.array_like or config.omit_defaults:
        raise TypeError(
            f"{type(obj).__name__}: array_like / omit_defaults Structs are not supported"
        )
    out: dict[str, Any] = {}
    if isinstance(config.tag_field, str):
        out[config.tag_field] = config.tag
    for name, key in zip(obj.__struct_fields__, obj.__struct_encode_fields__, strict=True):
        value = getattr(obj, name)
        if value is not msgspec.UNSET:
            out[key] = value
    extra = getattr(obj, "_extra", None)
    if extra:
        out.update(extra)
    return out


def _plain_struct(info: mi.StructType) -> bool:
    """Whether msgspec writes the Struct as an object of all its set fields."""
    return not info.array_like and not info.cls.__struct_config__.omit_defaults


def _written_alike(t: mi.Type, known: dict[type, bool]) -> bool:
    """Whether msgspec writes every value of type ``t`` as the compat writer does
    (``known``: Struct types already answered, or in progress)."""
    if isinstance(t, (mi.IntType, mi.StrType, mi.BoolType, mi.NoneType, mi.LiteralType)):
        return True
    if isinstance(t, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        return _written_alike(t.item_type, known)
    if isinstance(t, mi.DictType):
        return isinstance(t.key_type, mi.StrType) and _written_alike(t.value_type, known)
    if isinstance(t, mi.UnionType):
        return all(_written_alike(member, known) for member in t.types)
    if isinstance(t, mi.StructType):
        if t.cls not in known:
            known[t.cls] = True  # a recursive Struct: its other fields decide
            known[t.cls] = (
                _plain_struct(t)
                and not issubclass(t.cls, Command)
                and all(_written_alike(f.type, known) for f in t.fields)
            )
        return known[t.cls]
    return False  # float (exponent form, NaN), Any and everything else


_SCALARS = frozenset({int, str, bool, type(None)})
"""Values msgspec writes as the compat writer does, whatever the field's type."""


class _Plan:
    """How to write one Struct type: whole by msgspec, or field by field."""

    __slots__ = ("fields", "opening", "whole")

    def __init__(self, cls: type[msgspec.Struct]) -> None:
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        known: dict[type, bool] = {cls: True}
        alike = [_written_alike(f.type, known) for f in info.fields]
        self.whole = _plain_struct(info) and all(alike)
        tag = b""
        if isinstance(info.tag_field, str):
            tag = _encode(info.tag_field) + b":" + _encode(info.tag)
        self.opening = b"{" + tag
        self.fields = [
            (f.name, b"," + _encode(f.encode_name) + b":", same)
            for f, same in zip(info.fields, alike, strict=True)
        ]

    def write(self, obj: Any) -> bytes:
        """The Struct's JSON object, field by field (extra keys not included)."""
        parts = [self.opening]
        first = self.opening == b"{"
        for name, key, same in self.fields:
            value = getattr(obj, name)
            if value is msgspec.UNSET:
                continue
            parts.append(key[1:] if first else key)
            first = False
            if same or type(value) in _SCALARS:
                parts.append(_encode(value))
            else:
                parts.append(_compat_bytes(value))
        parts.append(b"}")
        return b"".join(parts)


_PLANS: dict[type, _Plan | None] = {}


def _plan(cls: type) -> _Plan | None:
    try:
        return _PLANS[cls]
    except KeyError:
        pass
    plan = None
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
        info = mi.type_info(cls)
        if isinstance(info, mi.StructType) and _plain_struct(info):
            plan = _Plan(cls)
    if len(_PLANS) >= 512:
        _PLANS.clear()
    _PLANS[cls] = plan
    return plan


_WHOLE: frozenset[type] = frozenset(cls for cls in COMMANDS.values() if _Plan(cls).whole)
"""The commands msgspec writes whole (no ``Any`` or ``float`` anywhere in them)."""


def _compat_bytes(value: Any) -> bytes:
    out: bytes = compat.encode_bytes(value, default=_struct_dict)
    return out


def _command_bytes(command: Any) -> bytes:
    """One command as the reference writes it (a Struct, or a plain value)."""
    plan = _plan(type(command))
    if plan is None or plan.opening == b"{":
        return _compat_bytes(command)
    try:
        out = _encode(command) if plan.whole else plan.write(command)
    except (TypeError, ValueError, OverflowError, UnicodeError):  # not ours: the exact writer
        return _compat_bytes(command)
    extra = getattr(command, "_extra", None)
    if extra:
        return out[:-1] + b"," + _compat_bytes(extra)[1:]
    return out


def _items_bytes(items: list[Any]) -> bytes:
    for command in items:
        if type(command) not in _WHOLE or command._extra:
            break
    else:
        try:
            return _encode(items)
        except (TypeError, ValueError, OverflowError, UnicodeError):
            pass
    return b"[" + b",".join([_command_bytes(command) for command in items]) + b"]"


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1``, ``1.0`` and ``True``
    differ, as do ``0.0`` and ``-0.0``): plain JSON values that encode alike."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(map(_same, a, b))
    if type(a) is float:
        return repr(a) == repr(b)
    return bool(a == b)


def _unchanged(command: Any, raw: bytes) -> bool:
    """Whether ``command`` is what ``raw`` (its original JSON) decodes to."""
    if type(command) is dict:  # an unknown command: its plain JSON value
        try:
            return _same(_plain_values(raw), command)
        except ValueError:
            return False
    if not isinstance(command, Command):
        return False
    try:
        again = _from_plain(_plain_values(raw))
    except ValueError:
        return False
    return bool(again == command) and isinstance(again, Command) and again.extra == command.extra


def _resolve(items: list[Any], raw: bytes) -> bytes:
    """A frame whose fresh encoding differs from its text: keep each command's
    original bytes where the command is unchanged."""
    raws = _split(raw)
    if len(raws) != len(items):
        return _items_bytes(items)
    pieces = []
    kept = 0
    for command, original in zip(items, raws, strict=True):
        piece = _command_bytes(command)
        original_bytes = bytes(original)
        if piece == original_bytes or _unchanged(command, original):
            piece = original_bytes
            kept += 1
        pieces.append(piece)
    if kept == len(items):  # nothing changed: the frame's own bytes, spacing included
        return raw
    return b"[" + b",".join(pieces) + b"]"


def _encode_bytes(commands: Iterable[Any]) -> bytes:
    if type(commands) is list:
        return _items_bytes(commands)
    raw = getattr(commands, "raw", None)
    items = list(commands)
    out = _items_bytes(items)
    if raw is None:
        return out
    raw = _utf8(raw)
    if out == raw:
        return out
    return _resolve(items, raw)


def encode_bytes(commands: Iterable[Any]) -> bytes:
    """:func:`encode` as UTF-8 bytes.

    A value that cannot be written (an unsupported type, or a lone surrogate,
    which UTF-8 cannot hold) raises :class:`~gamecodec.EncodeError`.
    """
    try:
        return _encode_bytes(commands)
    except (TypeError, ValueError) as exc:
        raise encode_error(exc) from exc


def encode(commands: Iterable[Any]) -> str:
    """The text of one frame holding ``commands``: :class:`Command` objects, or
    plain dicts (written as the reference's ``NetUtils.encode`` writes them).

    A :class:`Frame` from :func:`decode` whose commands are unchanged comes
    back exactly as it was received. A value that cannot be written raises
    :class:`~gamecodec.EncodeError`.

    >>> from gamecodec.archipelago import Say
    >>> encode([Say(text="hi")])
    '[{"cmd":"Say","text":"hi"}]'
    """
    if type(commands) is not list:
        commands = commands if isinstance(commands, list) else list(commands)
    try:
        try:
            return _encode_bytes(commands).decode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the text the reference writes
            text: str = compat.encode(list(commands), default=_struct_dict)
            return text
    except (TypeError, ValueError) as exc:
        raise encode_error(exc) from exc


__getattr__ = deprecated_names(
    __name__,
    {
        "decode_frame": ("decode", lambda: decode),
        "encode_frame": ("encode", lambda: encode),
        "encode_frame_bytes": ("encode_bytes", lambda: encode_bytes),
    },
)

__dir__ = public_dir(__name__)
