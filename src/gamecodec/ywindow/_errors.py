"""Error builders shared by both ywindow twins, the encoders and the peer.

Every error ywindow raises on purpose is built here, so each carries
``protocol="ywindow"`` and both twins give the same messages and offsets.
Only error paths call these; nothing here is on a hot path.
"""

from __future__ import annotations

from typing import Any

from gamecodec.errors import (
    BadDataLengthError,
    DecodeError,
    EncodeError,
    LocalProtocolError,
    RemoteProtocolError,
    TruncatedError,
)

PROTOCOL = "ywindow"


def _letter(t: int) -> str:
    return repr(chr(t)) if 0x20 < t < 0x7F else f"0x{t:02x}"


def unknown_type(t: int, at: int, partial: Any) -> DecodeError:
    """A type byte that names no word type."""
    return DecodeError(f"unknown word type {_letter(t)}", at, PROTOCOL, partial)


def header_expected(t: int, at: int, partial: Any) -> DecodeError:
    """A value word where a message must start."""
    return DecodeError(
        f"word {_letter(t)} where a 'c', 'v' or 'r' header was expected", at, PROTOCOL, partial
    )


def value_expected(t: int, at: int, partial: Any) -> DecodeError:
    """A header word inside a message."""
    return DecodeError(f"header word {_letter(t)} inside a message", at, PROTOCOL, partial)


def bad_fixed_length(t: int, n: int, at: int, partial: Any) -> BadDataLengthError:
    """An ``i`` (or header) word whose payload is not 4 bytes."""
    return BadDataLengthError(f"{_letter(t)} payload of {n} bytes, not 4", at, PROTOCOL, partial)


def bad_string_length(t: int, n: int, at: int, partial: Any) -> BadDataLengthError:
    """An ``s`` word whose payload is not whole UCS-4 code points."""
    return BadDataLengthError(
        f"{_letter(t)} payload of {n} bytes is not a multiple of 4", at, PROTOCOL, partial
    )


def over_cap(t: int, n: int, total: int, at: int, partial: Any, *, cap: int) -> BadDataLengthError:
    """A word that would make its message longer than ``max_message``."""
    return BadDataLengthError(
        f"{_letter(t)} payload of {n} bytes makes a message of {total} bytes, "
        f"over max_message {cap}",
        at,
        PROTOCOL,
        partial,
    )


def negative_count(t: int, count: int, at: int, partial: Any) -> DecodeError:
    """A header announcing a negative number of words."""
    return DecodeError(f"{_letter(t)} header announces {count} words", at, PROTOCOL, partial)


def count_over_cap(t: int, count: int, cap: int, at: int, partial: Any) -> BadDataLengthError:
    """A header announcing more words than ``max_message`` can hold."""
    return BadDataLengthError(
        f"{_letter(t)} header announces {count} words, more than max_message {cap} can hold",
        at,
        PROTOCOL,
        partial,
    )


def bad_code_point(cp: int, at: int, partial: Any) -> DecodeError:
    """An ``s`` code point that is a surrogate or above U+10FFFF."""
    what = "a surrogate" if 0xD800 <= cp <= 0xDFFF else "above U+10FFFF"
    return DecodeError(f"code point 0x{cp:x} is {what}", at, PROTOCOL, partial)


def bad_keyword_byte(b: int, at: int, partial: Any) -> DecodeError:
    """A ``k`` byte outside ASCII 0x01..0x7f."""
    return DecodeError(f"keyword byte 0x{b:02x} is not ASCII 0x01..0x7f", at, PROTOCOL, partial)


def truncated(buffered: int, at: int) -> TruncatedError:
    """The stream ended inside a message."""
    return TruncatedError(
        f"stream ended inside a message ({buffered} bytes unread)", at, PROTOCOL, []
    )


def again(exc: DecodeError) -> DecodeError:
    """The error a failed decoder raises on every later call (no partial)."""
    return type(exc)(exc.message, exc.offset, exc.protocol, [])


def bad_max_message(value: object) -> ValueError:
    """A ``max_message`` that is not an int of at least 6."""
    return ValueError(f"max_message {value!r} is not an int >= 6")


MAX_OFFSET = 1 << 62
"""The largest stream offset a decoder starts at (a C long long in the compiled twin)."""


def bad_offset(value: object) -> ValueError:
    """A start ``offset`` that is not an int in 0..2**62."""
    return ValueError(f"offset {value!r} is not an int in 0..2**62")


def encode_error(message: str) -> EncodeError:
    """A value that cannot be written as ywindow words."""
    return EncodeError(message, protocol=PROTOCOL)


def remote_error(message: str) -> RemoteProtocolError:
    """The other side broke the protocol."""
    return RemoteProtocolError(message, protocol=PROTOCOL)


class AuthenticationError(RemoteProtocolError, ConnectionError):
    """The handshake failed: the other side does not know our authority (it
    closed the connection on our digest, or its digest does not match), or it
    sent our own cookie back. Also a :class:`ConnectionError`, what a refused
    login raised before."""

    def __init__(self, message: str) -> None:
        super().__init__(message, protocol=PROTOCOL)


def local_error(message: str) -> LocalProtocolError:
    """The peer was used against the protocol."""
    return LocalProtocolError(message, protocol=PROTOCOL)


def no_message(at: int) -> TruncatedError:
    """An item of :func:`decode_many` that holds no message."""
    return TruncatedError("no message in the item", at, PROTOCOL, [])


def extra_message(at: int) -> DecodeError:
    """An item of :func:`decode_many` that holds more than one message."""
    return DecodeError("more than one message in the item", at, PROTOCOL, [])


def in_use(at: int) -> DecodeError:
    """A decoder called while another thread is inside it (nothing changed)."""
    return DecodeError(
        "decoder in use by another thread (share one only under a lock)", at, PROTOCOL, []
    )
