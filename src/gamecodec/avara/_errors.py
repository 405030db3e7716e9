"""Avara's own decode errors, and the error builders both twins share.

The builders give both twins the same messages and offsets. Only error paths
call them; nothing here is on a hot path.
"""

from __future__ import annotations

from gamecodec.avara._models import MAX_DATA_LEN, MAX_DATAGRAM, Command, Datagram
from gamecodec.errors import (
    BadDataLengthError,
    DecodeError,
    EncodeError,
    NonCanonicalError,
    TruncatedError,
)

__all__ = ["CrcMismatchError", "OversizeDatagramError", "ShortDatagramError"]

PROTOCOL = "avara"


class ShortDatagramError(TruncatedError):
    """A datagram too short to hold its 4-byte header (``strict=True`` only)."""

    reason = "short_datagram"


class CrcMismatchError(DecodeError):
    """A datagram whose checksum does not match the net version (``strict=True`` only)."""

    reason = "crc_mismatch"


class OversizeDatagramError(DecodeError):
    """An input longer than ``MAX_DATAGRAM``, the game's receive buffer: refused
    at that offset before anything is decoded."""

    reason = "oversize"


def oversize(size: int) -> OversizeDatagramError:
    return OversizeDatagramError(
        f"datagram of {size} bytes is longer than the game's {MAX_DATAGRAM}-byte receive buffer",
        MAX_DATAGRAM,
        PROTOCOL,
    )


def so_far(crc_ok: bool | None, ack: int, bitmap: int | None, commands: list[Command]) -> Datagram:
    """The partial datagram attached to a decode error."""
    return Datagram(crc_ok, ack, bitmap, tuple(commands))


def truncated(what: str, need: int, have: int, at: int, partial: Datagram) -> TruncatedError:
    return TruncatedError(f"{what} needs {need} bytes, {have} remain", at, PROTOCOL, partial)


def bad_data_len(n: int, at: int, partial: Datagram) -> BadDataLengthError:
    return BadDataLengthError(f"dataLen {n} outside 0..{MAX_DATA_LEN}", at, PROTOCOL, partial)


FIELDS = ("command header", "distribution", "p3", "p2", "dataLen", "p1", "sender", "data")
"""A command's fields in wire order: ``parse_command``'s ``field`` codes 0-7."""
BAD_DATA_LEN = len(FIELDS)
"""``parse_command``'s ``field`` code for a dataLen outside 0..MAX_DATA_LEN."""


def unparsed(  # noqa: PLR0917
    field: int, flags: int, n: int, at: int, size: int, head: int, partial: Datagram
) -> TruncatedError | BadDataLengthError:
    """The error for a command that ``parse_command`` could not read: ``field``
    runs past ``size`` at ``at`` (``head`` is the command header's length), or
    is a dataLen ``n`` out of range."""
    if field == BAD_DATA_LEN:
        return bad_data_len(n, at, partial)
    need = (head, 2, 4 if flags & 0x04 else 2, 2, 2 if flags & 0x08 else 1, 1, 1, n)[field]
    return truncated(FIELDS[field], need, size - at, at, partial)


def short_datagram(size: int) -> ShortDatagramError:
    return ShortDatagramError(
        f"datagram of {size} bytes is shorter than its 4-byte header", 0, PROTOCOL
    )


def crc_mismatch(version: int) -> CrcMismatchError:
    return CrcMismatchError(f"checksum does not match net version {version}", 0, PROTOCOL)


def non_canonical_reason(flags: int, p1: int, p2: int, p3: int, n: int) -> str | None:
    """Why a decoded flag byte is one the game's writer would not produce."""
    if flags & 0x24 == 0x24:
        return "both p3 widths (0x04 and 0x20)"
    if flags & 0x18 == 0x18:
        return "both length widths (0x08 and 0x10)"
    if flags & 0x04 and 0 <= p3 <= 0xFFFF:
        return f"4-byte p3 for {p3}"
    if flags & 0x20 and p3 == 0:
        return "2-byte p3 for 0"
    if flags & 0x02 and p2 == 0:
        return "p2 present but 0"
    if flags & 0x08 and n <= 255:
        return f"2-byte length for {n}"
    if flags & 0x10 and n == 0:
        return "1-byte length for 0"
    if flags & 0x01 and p1 == 0:
        return "p1 present but 0"
    return None


def non_canonical(flags: int, why: str, at: int, partial: Datagram) -> NonCanonicalError:
    return NonCanonicalError(f"non-canonical flags 0x{flags:02x}: {why}", at, PROTOCOL, partial)


def bad_version(version: object) -> ValueError:
    return ValueError(f"version {version} outside 0..65535")


def bad_layout(layout: object) -> ValueError:
    return ValueError(f"layout {layout!r} is not Layout.CURRENT (1) or Layout.LEGACY (0)")


# -- encoding ---------------------------------------------------------------


def out_of_range(index: int, name: str, value: object, low: int, high: int) -> EncodeError:
    if not isinstance(value, int):
        return EncodeError(
            f"command {index}: {name} must be an int, not {type(value).__name__}", protocol=PROTOCOL
        )
    return EncodeError(f"command {index}: {name} {value} outside {low}..{high}", protocol=PROTOCOL)


def not_a_command(index: int) -> EncodeError:
    return EncodeError(f"command {index} is not a Command", protocol=PROTOCOL)


def data_not_bytes(index: int, data: object) -> EncodeError:
    return EncodeError(
        f"command {index}: data must be bytes, not {type(data).__name__}", protocol=PROTOCOL
    )


def data_too_long(index: int, n: int) -> EncodeError:
    return EncodeError(
        f"command {index}: {n} data bytes, more than {MAX_DATA_LEN}", protocol=PROTOCOL
    )


def flags_disagree(index: int, flags: int, what: str) -> EncodeError:
    return EncodeError(
        f"command {index}: flags 0x{flags:02x} cannot carry {what}", protocol=PROTOCOL
    )


def bad_ack(ack: object) -> EncodeError:
    return EncodeError(f"ack {ack} outside 0..65535", protocol=PROTOCOL)


def bad_encode_version(version: object) -> EncodeError:
    return EncodeError(f"version {version} outside 0..65535", protocol=PROTOCOL)


def missing_bitmap(ack: int) -> EncodeError:
    return EncodeError(f"odd ack {ack} needs an ack_bitmap", protocol=PROTOCOL)


def unwanted_bitmap(ack: int) -> EncodeError:
    return EncodeError(f"even ack {ack} cannot carry an ack_bitmap", protocol=PROTOCOL)


def bad_bitmap(bitmap: object) -> EncodeError:
    return EncodeError(f"ack_bitmap {bitmap} outside -2147483648..4294967295", protocol=PROTOCOL)


def too_big(size: int) -> EncodeError:
    return EncodeError(f"datagram of {size} bytes, more than {MAX_DATAGRAM}", protocol=PROTOCOL)


def punch_sized() -> EncodeError:
    return EncodeError("a 7-byte datagram would be read as a hole punch", protocol=PROTOCOL)
