"""The errors Archipelago raises, built in one place so that every one carries
``protocol="archipelago"`` and both compat twins word them alike.

Only error paths call these; nothing here is on a hot path.
"""

from __future__ import annotations

import re

import msgspec

from gamecodec.archipelago._models import DEFAULT_MAX_DEPTH
from gamecodec.errors import (
    DecodeError,
    EncodeError,
    LocalProtocolError,
    RemoteProtocolError,
    SessionError,
)

__all__ = [
    "PROTOCOL",
    "LoginRefusedError",
    "NotConnectedError",
    "RequestRefusedError",
    "decode_error",
    "deepest",
    "encode_error",
    "frame_error",
    "invalid_utf8",
    "local",
    "msgspec_position",
    "past_depth",
    "remote",
    "too_deep",
    "utf8_offset",
]

PROTOCOL = "archipelago"


class LoginRefusedError(SessionError):
    """The server answered Connect with ConnectionRefused; ``errors`` are its reasons."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(
            f"login refused: {', '.join(errors) or 'no reason given'}", protocol=PROTOCOL
        )

    def __reduce__(self) -> tuple[type[LoginRefusedError], tuple[list[str]]]:
        return (type(self), (self.errors,))


class NotConnectedError(SessionError, ConnectionError):
    """A call made while the client is not logged in (it is reconnecting, or
    closed), or a request whose connection was lost before its reply."""

    def __init__(self, message: str) -> None:
        super().__init__(message, protocol=PROTOCOL)


class RequestRefusedError(RemoteProtocolError):
    """The server refused a request (an InvalidPacket naming it: ``kind`` is the
    command, ``text`` the server's words), e.g. a Set of a read-only key."""

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.text = text
        super().__init__(f"the server refused {kind}: {text}", protocol=PROTOCOL)

    def __reduce__(self) -> tuple[type[RequestRefusedError], tuple[str, str]]:
        return (type(self), (self.kind, self.text))


def decode_error(message: str, offset: int, partial: object = None) -> DecodeError:
    """A :class:`DecodeError` of this protocol at byte ``offset``."""
    return DecodeError(message, offset, PROTOCOL, partial)


def invalid_utf8(exc: UnicodeDecodeError) -> DecodeError:
    """Bytes that are not UTF-8 (``exc.start`` is the first bad byte)."""
    return DecodeError(f"invalid UTF-8: {exc.reason}", exc.start, PROTOCOL)


def encode_error(exc: Exception) -> EncodeError:
    """A value :func:`~gamecodec.archipelago.encode` cannot write."""
    return EncodeError(f"cannot encode this frame: {exc}", protocol=PROTOCOL)


def local(message: str) -> LocalProtocolError:
    """We misused the session."""
    return LocalProtocolError(message, protocol=PROTOCOL)


def remote(message: str) -> RemoteProtocolError:
    """The server broke the protocol."""
    return RemoteProtocolError(message, protocol=PROTOCOL)


def utf8_offset(text: str, index: int) -> int:
    """The byte offset in the UTF-8 form of ``text`` of its character ``index``
    (lone surrogates count three bytes, as the reference writes them)."""
    return len(text[:index].encode("utf-8", "surrogatepass"))


# strings (an unterminated one runs to the end: one pass, however the text ends) and brackets
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)


def deepest(raw: bytes) -> tuple[int, int]:
    """How deep the arrays and objects of ``raw`` nest (outside strings), and
    where the first bracket at that depth is."""
    depth = most = where = 0
    for token in _TOKENS.finditer(raw):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > most:
                most, where = depth, token.start()
        elif bracket in (b"]", b"}"):
            depth -= 1
    return most, where


def past_depth(raw: bytes, max_depth: int) -> int:
    """The offset of the bracket where the reference's count (1, plus one per
    ``[``/``{`` outside strings, minus one per ``]``/``}``) first exceeds
    ``max_depth``, or -1. The scan stops there: its cost is that of the text
    before it, whatever follows."""
    depth = 1
    for token in _TOKENS.finditer(raw):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return token.start()
        elif bracket in (b"]", b"}"):
            depth -= 1
    return -1


_MALFORMED = re.compile(
    r"\AJSON is malformed: (?P<reason>.+) \(byte (?P<offset>\d+)\)\Z", re.DOTALL
)


def msgspec_position(message: str, size: int) -> tuple[str, int]:
    """The reason and byte offset a ``msgspec.DecodeError`` message gives for a
    JSON document of ``size`` bytes.

    msgspec reports the position of a JSON syntax error only in its message
    text (the exception has no attribute for it), in one of two forms:

    * ``"JSON is malformed: <reason> (byte <N>)"``: ``("JSON is malformed:
      <reason>", N)``;
    * ``"Input data was truncated"``: the document ended early, so the offset
      is its end, ``size``.

    Any other text (a form a later msgspec may add) is kept whole, at offset
    ``size``: still a valid position in the input, if a less precise one.
    """
    found = _MALFORMED.match(message)
    if found is not None:
        return f"JSON is malformed: {found['reason']}", min(int(found["offset"]), size)
    return message, size


_SURROGATE = re.compile("[\ud800-\udfff]")


def too_deep(raw: bytes) -> DecodeError:
    """The error for a frame nested deeper than msgspec reads: at the bracket
    where the reference refuses it (:func:`past_depth` at
    ``DEFAULT_MAX_DEPTH``, the offset ``compat.decode`` gives), found in one
    pass that stops there. msgspec's own limit follows the caller's stack: a
    frame it refuses within the reference's limit gets the deepest bracket."""
    offset = past_depth(raw, DEFAULT_MAX_DEPTH)
    if offset >= 0:
        return DecodeError(
            f"JSON document too deeply nested (more than {DEFAULT_MAX_DEPTH - 1} levels)",
            offset,
            PROTOCOL,
        )
    depth, offset = deepest(raw)
    return DecodeError(f"JSON document too deeply nested ({depth} levels)", offset, PROTOCOL)


def frame_error(data: str | bytes, exc: Exception) -> DecodeError:
    """The :class:`DecodeError` for a frame msgspec could not read as JSON
    (``exc`` is what it raised: a ``msgspec.DecodeError``, a ``UnicodeError``
    or a ``RecursionError``)."""
    if isinstance(data, str):
        surrogate = _SURROGATE.search(data)
        if surrogate is not None:
            offset = utf8_offset(data, surrogate.start())
            return DecodeError("lone surrogate in the text", offset, PROTOCOL)
        raw = data.encode("utf-8")
    else:
        raw = data
    if isinstance(exc, RecursionError):
        return too_deep(raw)
    message = str(exc)
    if isinstance(exc, msgspec.ValidationError):  # a number past float range (no position)
        return DecodeError(f"a frame must be a JSON array of commands: {message}", 0, PROTOCOL)
    reason, offset = msgspec_position(message, len(raw))
    return DecodeError(reason, offset, PROTOCOL)
