"""The whole exception tree of gamecodec (never compiled).

Every decoder raises only :class:`DecodeError` subclasses on bad input. Each
carries the absolute byte offset where decoding failed and the protocol name;
its message ends with ``(at byte N)``.
"""

from __future__ import annotations

from typing import Any

from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir

__all__ = [
    "BadDataLengthError",
    "DecodeError",
    "EncodeError",
    "GameCodecError",
    "LocalProtocolError",
    "NonCanonicalError",
    "RemoteProtocolError",
    "SessionError",
    "TruncatedError",
]


class GameCodecError(Exception):
    """Base class of every error gamecodec raises on purpose.

    ``protocol`` names the protocol's package (``"lludp"``, ...); it is ``""``
    only for errors no protocol raised.
    """

    protocol: str = ""

    def __init__(self, *args: Any, protocol: str = "") -> None:
        super().__init__(*args)
        if protocol:
            self.protocol = protocol


class DecodeError(GameCodecError, ValueError):
    """Bytes that cannot be decoded.

    ``offset`` is the absolute byte offset of the problem, ``protocol`` the
    protocol's package name, ``partial`` whatever was decoded before the
    problem (or ``None``).
    """

    reason = "invalid"

    def __init__(
        self,
        message: str,
        offset: int,
        protocol: str = "",
        partial: Any = None,
    ) -> None:
        self.message = message
        self.offset = offset
        self.protocol = protocol
        self.partial = partial
        Exception.__init__(self, f"{message} (at byte {offset})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.offset, self.protocol, self.partial))


class TruncatedError(DecodeError):
    """The input ended inside a field."""

    reason = "truncated"


class BadDataLengthError(DecodeError):
    """A length field outside the range the protocol allows."""

    reason = "bad_data_len"


class NonCanonicalError(DecodeError):
    """An encoding the reference reader accepts but its writer never produces
    (strict mode only)."""

    reason = "non_canonical"


class EncodeError(GameCodecError, ValueError):
    """A value that cannot be put on the wire (out of range, too long)."""


class SessionError(GameCodecError):
    """A session used against its protocol."""


class LocalProtocolError(SessionError):
    """We misused the session (sent something the protocol forbids now)."""


class RemoteProtocolError(SessionError):
    """The peer broke the protocol."""


def _deprecated_avara_error(name: str) -> Any:
    from gamecodec.avara import _errors  # only when the old name is used

    return getattr(_errors, name)


__getattr__ = deprecated_names(
    __name__,
    {
        "CrcMismatchError": (
            "gamecodec.avara.CrcMismatchError",
            lambda: _deprecated_avara_error("CrcMismatchError"),
        ),
        "ShortDatagramError": (
            "gamecodec.avara.ShortDatagramError",
            lambda: _deprecated_avara_error("ShortDatagramError"),
        ),
    },
)

__dir__ = public_dir(__name__)
