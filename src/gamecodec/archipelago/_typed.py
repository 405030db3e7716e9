"""The typed frame codec: one websocket text frame <-> a list of typed commands.

Decode: msgspec decodes the whole frame into :mod:`commands` Structs in one
native pass (``list[AnyCommand]``). When that fails on keys a command does not
declare (archipelago.js puts a ``uuid`` on every Get and Set), two more native
passes read it: the Structs with extra keys ignored, and the untyped JSON for the
extras. When that fails too (an unknown ``cmd``, an error), the frame is split into
the raw JSON of each command and decoded command by command: extra keys are kept in
:attr:`Command.extra`, an unknown command stays a plain dict, an error gets the
offset of its command. The :class:`Frame` returned remembers the frame's text,
so a frame that was not changed re-encodes to exactly the bytes that came in,
even where the sender's key order, spacing or number format differ from ours
(those commands are resolved one by one against their original text).

Encode: the compat writer (compiled or pure twin) writes Structs natively: tag
first, declared keys in order without ``UNSET`` ones, extras after, floats as
``float.__repr__`` (the reference's form), NamedTuples with their trailing
``"class"``, sets as arrays, plain dicts by the compat rules.

The whole algorithm is the Python code here. The compiled twin's
``decode_frame`` / ``encode_frame`` / ``encode_frame_bytes`` wrap the common
cases natively (the one-pass decode moved into a :class:`Frame` without a copy;
a plain list of commands; a decoded Frame whose fresh encoding is its own text)
and call the functions here for everything else; :class:`FrameCodec` binds them.
Its ``decode_frame`` first tries a small native reader that builds the same
Structs (extras, GC tracking included) for the commands it can read and declines
anything unusual to the path above, so it changes speed, never a result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Union

import msgspec

from gamecodec import _accel
from gamecodec.archipelago import _codec_py
from gamecodec.archipelago.commands import (
    COMMANDS,
    AnyCommand,
    Command,
    Connect,
    ConnectVersionCheck,
)
from gamecodec.errors import DecodeError

__all__ = ["Frame", "FrameCodec", "decode_frame", "encode_frame", "encode_frame_bytes"]

PROTOCOL = "archipelago"

_codec = _accel.load("gamecodec.archipelago", "_codec", "archipelago")

_split = msgspec.json.Decoder(list[msgspec.Raw]).decode
_all = msgspec.json.Decoder(list[AnyCommand]).decode
_plain = msgspec.json.Decoder().decode
# each command's top-level keys, values left as raw JSON (the extras pass)
_tops = msgspec.json.Decoder(list[dict[str, msgspec.Raw]]).decode
_connect_check = msgspec.json.Decoder(ConnectVersionCheck).decode
_BYTE = re.compile(r"\(byte (\d+)\)")


def _utf8(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")


# strings (an unterminated one runs to the end: one pass, however the text ends) and brackets
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)


def _deepest(raw: bytes) -> tuple[int, int]:
    """How deep the arrays and objects of ``raw`` nest (outside strings), and
    where the first bracket at that depth is: the offset of a too-deep frame
    (msgspec's own limit depends on the caller's stack, so it names none)."""
    depth = deepest = where = 0
    for token in _TOKENS.finditer(raw):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest, where = depth, token.start()
        elif bracket in (b"]", b"}"):
            depth -= 1
    return deepest, where


def _frame_error(data: str | bytes, exc: Exception) -> DecodeError:
    """A DecodeError with the byte offset of a frame msgspec could not read."""
    if isinstance(data, str):
        for index, char in enumerate(data):
            if 0xD800 <= ord(char) <= 0xDFFF:
                offset = len(data[:index].encode("utf-8", "surrogatepass"))
                return DecodeError("lone surrogate in the text", offset, PROTOCOL)
        raw = data.encode("utf-8")
    else:
        raw = data
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            return DecodeError(f"invalid UTF-8: {bad.reason}", bad.start, PROTOCOL)
    if isinstance(exc, RecursionError):
        depth, offset = _deepest(raw)
        return DecodeError(f"JSON document too deeply nested ({depth} levels)", offset, PROTOCOL)
    message = str(exc)
    if isinstance(exc, msgspec.ValidationError):
        return DecodeError(f"a frame must be a JSON array of commands: {message}", 0, PROTOCOL)
    found = _BYTE.search(message)
    offset = int(found.group(1)) if found else len(raw)
    return DecodeError(_BYTE.sub("", message).strip(), offset, PROTOCOL)


def _offset_of(data: str | bytes, raws: list[msgspec.Raw], index: int) -> int:
    """Where command ``index`` starts in the frame (error path only)."""
    raw = _utf8(data)
    position = 0
    for i in range(index + 1):
        piece = bytes(raws[i])
        position = raw.find(piece, position)
        if i < index:
            position += len(piece)
    return max(position, 0)


class Frame(list):  # type: ignore[type-arg]
    """The commands of one decoded frame (a list). It remembers the frame's text
    in :attr:`raw`, so encoding it again while its commands are unchanged gives
    back exactly the bytes that came in (key order, spacing, number forms)."""

    __slots__ = ("raw",)

    raw: str | bytes | None


_DECLARED = {
    name: frozenset({"cmd", *cls.__struct_encode_fields__}) for name, cls in COMMANDS.items()
}


def _version_fields(value: Any) -> dict[str, int] | None:
    """A class-tagged Version as the reference's hook reads it (keys in any case, so
    .NET's ``Major``/``Minor``/``Build`` work, values through ``int()``); None when
    it is not one or cannot be built (the Struct decode then reports it)."""
    if type(value) is not dict or value.get("class") != "Version":
        return None
    try:
        built = _codec_py.version_of(value)
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
    extra: dict[str, Any] = {}
    for key, value in obj.items():  # (a loop: a comprehension is a call before 3.12)
        if key not in declared:
            extra[key] = value
    known = obj
    if extra:
        known = {}
        for key, value in obj.items():
            if key in declared:
                known[key] = value
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


def _lenient(cls: type[Command]) -> Any:
    """A subclass of ``cls`` with the same layout that ignores keys it does not
    declare; its instances are re-classed to ``cls`` after decoding."""
    tag = cls.__struct_config__.tag
    namespace = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    meta: Any = type(cls)
    return meta(cls.__name__, (cls,), namespace, forbid_unknown_fields=False, tag=tag)


_STRICT_OF: dict[Any, type[Command]] = {_lenient(cls): cls for cls in COMMANDS.values()}
_DECLARED_OF = {cls: _DECLARED[name] for name, cls in COMMANDS.items()}
_all_lenient = msgspec.json.Decoder(list[Union[tuple(_STRICT_OF)]]).decode  # type: ignore[misc]  # noqa: UP007


_LENIENT_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, UnicodeError, RecursionError)


def _reclass_works() -> bool:
    """Whether a decoded lenient command can be re-classed (the layouts agree on this
    Python and msgspec); if not, the two-pass path is never taken."""
    try:
        (probe,) = _all_lenient('[{"cmd":"Sync","x":1}]')
        probe.__class__ = _STRICT_OF[type(probe)]
    except (TypeError, ValueError):  # pragma: no cover - a future layout change
        return False
    return True


_LENIENT_OK = _reclass_works()


def _decode_lenient(data: str | bytes) -> list[Command] | None:
    """The frame's commands, extra keys kept, in two native passes: the Struct
    decode ignoring extra keys, and one that reads each command's top-level keys
    (their values as raw JSON, only the extras' decoded). None when the
    frame holds an unknown command or a command that does not validate (the
    command-by-command path then gives the exact result or error)."""
    if not _LENIENT_OK:  # pragma: no cover
        return None
    try:
        items: list[Any] = _all_lenient(data)
        values = _tops(data)
        for command, value in zip(items, values, strict=True):
            cls = _STRICT_OF[type(command)]
            command.__class__ = cls
            declared = _DECLARED_OF[cls]
            extra = {}
            for key, raw in value.items():  # (a loop: a comprehension is a call before 3.12)
                if key not in declared:
                    extra[key] = _plain(raw)
            if extra:
                command.__dict__["_extra"] = extra
            if cls is Connect:
                given = value.get("version")
                version = None if given is None else _plain(given)
                if type(version) is not dict or version.get("class") != "Version":
                    return None
    except _LENIENT_ERRORS:
        return None
    return items


def _decode_one(raw: msgspec.Raw) -> Command | dict[str, Any]:
    return _from_plain(_plain(raw))


def _decode_each(data: str | bytes) -> list[Command | dict[str, Any]]:
    """Command by command (one untyped parse): extra keys, unknown commands, errors."""
    try:
        values = _plain(data)
    except (msgspec.DecodeError, UnicodeError, RecursionError) as exc:
        raise _frame_error(data, exc) from None
    if type(values) is not list:
        raise DecodeError("a frame must be a JSON array of commands", 0, PROTOCOL)
    out: list[Command | dict[str, Any]] = []
    for index, value in enumerate(values):
        try:
            out.append(_from_plain(value))
        except (ValueError, RecursionError) as exc:
            raise DecodeError(
                str(exc), _offset_of(data, _split(data), index), PROTOCOL, partial=out
            ) from None
    return out


_PEEK_FROM = 512
_EXTRA_PRONE: set[str] = set()
"""Leading commands whose last large frame carried extra keys (archipelago.js puts a
``uuid`` on every Get/Set, the server echoes it): such frames go straight to the
two-pass path instead of failing the one-pass Struct decode first, and back to the
one-pass decode when they turn out to carry none. Only speed
depends on it, never the result."""


def _lead(data: str | bytes) -> str | None:
    """The first command's name when the frame starts ``[{"cmd":"``, else None."""
    if isinstance(data, str):
        if data.startswith('[{"cmd":"'):
            end = data.find('"', 9, 48)
            return data[9:end] if end > 0 else None
        return None
    if data.startswith(b'[{"cmd":"'):
        end = data.find(b'"', 9, 48)
        return data[9:end].decode("ascii", "replace") if end > 0 else None
    return None


def _decode_declined(data: str | bytes) -> Frame:
    """Command by command, once the two-pass path declined ``data`` (str or bytes)."""
    frame = Frame(_decode_each(data))
    frame.raw = data
    return frame


def _has_extra(items: list[Any]) -> bool:
    return any(isinstance(c, Command) and c._extra for c in items)


def _decode_prone(data: str | bytes, lead: str | None) -> Frame:
    items = _decode_lenient(data)
    frame = Frame(_decode_each(data) if items is None else items)
    if lead is not None:
        if _has_extra(frame):
            _EXTRA_PRONE.add(lead)
        else:
            _EXTRA_PRONE.discard(lead)
    return frame


def _decode_general(data: str | bytes | bytearray | memoryview) -> Frame:
    """:func:`decode_frame`, the whole algorithm in Python (the reference for the
    twins' fast paths, which hand every unusual frame to it)."""
    if type(data) is not str and type(data) is not bytes:
        if isinstance(data, str):
            data = str(data)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data)
        else:
            raise TypeError(f"expected str or bytes, not {type(data).__name__}")
    if type(data) is bytes and not data.isascii():
        # msgspec skips the bytes of keys a Struct does not declare unchecked:
        # invalid UTF-8 there decoded, and the text could not be encoded again
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _decode_failed(data, exc)  # raises the DecodeError
    lead = _lead(data) if len(data) > _PEEK_FROM else None
    if lead is not None and lead in _EXTRA_PRONE:
        prone = _decode_lenient(data)
        if prone is not None and _has_extra(prone):
            frame = Frame(prone)
            frame.raw = data
            return frame
        # no extras after all: what the one-pass decode gives (a result that never
        # depends on which frames came before)
        _EXTRA_PRONE.discard(lead)
    try:
        items = _all(data)
    except Exception as exc:  # sorted out by _decode_failed
        return _decode_failed(data, exc)
    return _decoded(data, items)


def _decoded(data: str | bytes, items: list[Any]) -> Frame:
    """The Frame of a frame the one-pass Struct decode took (``data`` is str or bytes)."""
    frame = Frame(items)
    for command in items:
        if type(command) is Connect:
            _check_connects(data, frame)
            break
    frame.raw = data
    return frame


def _decode_failed(data: str | bytes, exc: Exception) -> Frame:
    """Go on after the one-pass Struct decode of ``data`` (str or bytes) raised ``exc``:
    per command (extra keys, unknown commands, a command's error), or a frame error."""
    if isinstance(exc, msgspec.ValidationError):
        frame = _decode_prone(data, _lead(data) if len(data) > _PEEK_FROM else None)
        frame.raw = data
        return frame
    if isinstance(exc, (msgspec.DecodeError, UnicodeError, RecursionError)):
        raise _frame_error(data, exc) from None
    raise exc


def _check_connects(data: str | bytes, frame: Frame) -> None:
    """A Connect decoded on the fast path must have had ``"class": "Version"``."""
    raws = None
    for index, command in enumerate(frame):
        if type(command) is Connect:
            raws = raws or _split(data)
            try:
                _connect_check(raws[index])
            except msgspec.ValidationError:
                raise DecodeError(
                    'a Connect\'s version must carry "class": "Version"',
                    _offset_of(data, raws, index),
                    PROTOCOL,
                    partial=frame[:index],
                ) from None


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


def _unchanged(command: Any, raw: msgspec.Raw) -> bool:
    if type(command) is dict:  # an unknown command: its plain JSON value
        try:
            return _same(_plain(raw), command)
        except (msgspec.DecodeError, RecursionError):
            return False
    if not isinstance(command, Command):
        return False
    try:
        again = _decode_one(raw)
    except (ValueError, msgspec.DecodeError, RecursionError):
        return False
    return bool(again == command) and isinstance(again, Command) and again.extra == command.extra


class FrameCodec:
    """The typed frame codec over one compat twin (``_codec_c`` or ``_codec_py``).

    The twin's ``decode_frame`` / ``encode_frame`` / ``encode_frame_bytes`` take
    the common cases (a frame the one-pass Struct decode reads; a plain list of
    commands; a decoded :class:`Frame` whose fresh encoding is its own text) and
    hand everything else to the Python code here, bound into the twin below.
    """

    def __init__(self, codec: Any) -> None:
        self.codec = codec
        self._encode_bytes = codec.encode_typed_bytes
        self._encode_text = codec.encode_typed
        codec.bind_typed(
            frame=Frame,
            decode_all=_all,
            general=_decode_general,
            failed=_decode_failed,
            check_connects=_check_connects,
            connect=Connect,
            prone=_EXTRA_PRONE,
            peek_from=_PEEK_FROM,
            resolve=self._resolve,
            encode_text=self._encode_frame_general,
            encode_bytes=self._encode_frame_bytes_general,
            lenient_all=_all_lenient if _LENIENT_OK else None,
            plain=_plain,
            tops=_tops,
            strict_of=_STRICT_OF,
            declared_of=_DECLARED_OF,
            invalid=msgspec.ValidationError,
            lenient_errors=_LENIENT_ERRORS,
            declined=_decode_declined,
        )
        self.decode_frame: Callable[[str | bytes | bytearray | memoryview], Frame]
        self.decode_frame = codec.decode_frame
        self.encode_frame: Callable[[Iterable[Any]], str] = codec.encode_frame
        self.encode_frame_bytes: Callable[[Iterable[Any]], bytes] = codec.encode_frame_bytes

    def _resolve(self, items: list[Any], raw: str | bytes) -> bytes:
        """A frame whose fresh encoding differs from its text: keep each
        command's original bytes where the command is unchanged."""
        raws = _split(raw)
        if len(raws) != len(items):
            return self._encode_bytes(items)  # type: ignore[no-any-return]
        pieces = []
        kept = 0
        for command, original in zip(items, raws, strict=True):
            piece: bytes = self._encode_bytes(command)
            original_bytes = bytes(original)
            if piece == original_bytes or _unchanged(command, original):
                piece = original_bytes
                kept += 1
            pieces.append(piece)
        if kept == len(items):  # nothing changed: the frame's own bytes, spacing included
            return raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
        return b"[" + b",".join(pieces) + b"]"

    def _encode_frame_bytes_general(self, commands: Iterable[Any]) -> bytes:
        """:meth:`encode_frame_bytes`, the whole algorithm in Python."""
        if type(commands) is list:
            plain: bytes = self._encode_bytes(commands)
            return plain
        raw = getattr(commands, "raw", None)
        items = list(commands)
        out: bytes = self._encode_bytes(items)
        if raw is None:
            return out
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogatepass")
        if out == raw:
            return out
        return self._resolve(items, raw)

    def _encode_frame_general(self, commands: Iterable[Any]) -> str:
        """:meth:`encode_frame`, the whole algorithm in Python."""
        if type(commands) is list:
            plain: str = self._encode_text(commands)
            return plain
        raw = getattr(commands, "raw", None)
        items = list(commands)
        text: str = self._encode_text(items)
        if raw is None:
            return text
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8")
        if text == raw:
            return text
        return self._resolve(items, raw).decode("utf-8")


_default = FrameCodec(_codec)
decode_frame = _default.decode_frame
"""The commands of one text frame: typed :class:`Command` objects, plain dicts
for unknown commands, in a :class:`Frame` (a list). Raises :class:`DecodeError`
for malformed JSON, a frame that is not an array, a command that is not an object
or lacks a string ``cmd``, a known command with missing or mistyped keys, and a
Connect whose version lacks its class."""
encode_frame = _default.encode_frame
"""One frame (text) holding ``commands`` (Structs, or dicts by compat rules). A
:class:`Frame` from :func:`decode_frame` comes back byte for byte while unchanged."""
encode_frame_bytes = _default.encode_frame_bytes
""":func:`encode_frame` as UTF-8 bytes."""
