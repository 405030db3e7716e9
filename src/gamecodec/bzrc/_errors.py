"""Error builders shared by both BZRC parser twins, the encoders and the sessions.

Every error BZRC raises on purpose is built here, so each carries
``protocol="bzrc"``. Only error paths call these; nothing here is on a hot path.
"""

from __future__ import annotations

from typing import Any

from gamecodec.errors import (
    DecodeError,
    EncodeError,
    LocalProtocolError,
    RemoteProtocolError,
    TruncatedError,
)

__all__ = [
    "PROTOCOL",
    "decode_error",
    "encode_error",
    "in_use",
    "local_error",
    "remote_error",
    "truncated",
]

PROTOCOL = "bzrc"


def decode_error(message: str, offset: int) -> DecodeError:
    """Bad bytes at absolute stream offset ``offset``."""
    return DecodeError(message, offset, PROTOCOL)


def in_use(offset: int) -> DecodeError:
    """A decoder called while another thread is inside it (nothing changed)."""
    return DecodeError(
        "decoder in use by another thread (share one only under a lock)", offset, PROTOCOL
    )


def truncated(message: str, offset: int, partial: Any = None) -> TruncatedError:
    """The input ended inside a response (or before one) at ``offset``."""
    return TruncatedError(message, offset, PROTOCOL, partial)


def encode_error(message: str) -> EncodeError:
    """A value that cannot be written as BZRC."""
    return EncodeError(message, protocol=PROTOCOL)


def remote_error(message: str) -> RemoteProtocolError:
    """The other side broke the protocol."""
    return RemoteProtocolError(message, protocol=PROTOCOL)


def local_error(message: str) -> LocalProtocolError:
    """The session was used against the protocol."""
    return LocalProtocolError(message, protocol=PROTOCOL)
