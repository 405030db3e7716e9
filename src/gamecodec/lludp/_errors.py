"""LLUDP's errors: :class:`TemplateError` and the builders both twins share,
so their messages are identical.

Offsets are absolute: the header and ack trailer in wire bytes, the message
number and body in the zero-decoded packet (the wire bytes when the packet
is not zero-coded).
"""

from __future__ import annotations

from typing import Any

from gamecodec.errors import DecodeError, EncodeError, GameCodecError, TruncatedError

__all__ = ["PROTOCOL", "TemplateError"]

PROTOCOL = "lludp"


class TemplateError(GameCodecError, ValueError):
    """A message template that cannot be used.

    ``line`` is the 1-based line of template text where parsing failed, or
    ``None`` for a :class:`~gamecodec.lludp.Template` built from specs.
    """

    protocol = PROTOCOL

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"{message} (line {line})", protocol=PROTOCOL)
        self.message = message
        self.line = line

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.line))


def short_packet(size: int) -> DecodeError:
    return TruncatedError(
        f"LLUDP packet of {size} bytes is shorter than the 7-byte minimum", size, protocol=PROTOCOL
    )


def bad_ack_count(count: int, size: int) -> DecodeError:
    return DecodeError(
        f"appended ack count {count} does not fit a {size}-byte packet", size - 1, protocol=PROTOCOL
    )


def zero_run_too_long(offset: int, max_size: int) -> DecodeError:
    return DecodeError(
        f"zero-coded data expands past the {max_size}-byte limit", offset, protocol=PROTOCOL
    )


def packet_too_long(offset: int, max_size: int) -> DecodeError:
    return DecodeError(
        f"zero-coded packet expands past the {max_size}-byte limit (its 6 header bytes included)",
        offset,
        protocol=PROTOCOL,
    )


def short_number(offset: int) -> DecodeError:
    return TruncatedError("packet ends inside the message number", offset, protocol=PROTOCOL)


def short_extra(offset: int, length: int) -> DecodeError:
    return TruncatedError(
        f"packet ends inside the {length} extra header bytes", offset, protocol=PROTOCOL
    )


def missing_count(offset: int, message: str, block: str) -> DecodeError:
    return TruncatedError(
        f"{message}: packet ends before the count of block {block}", offset, protocol=PROTOCOL
    )


def short_field(offset: int, message: str, block: str, field: str) -> DecodeError:
    return TruncatedError(
        f"{message}: packet ends inside field {block}.{field}", offset, protocol=PROTOCOL
    )


def too_long_variable(offset: int, message: str, block: str, field: str, size: int) -> DecodeError:
    return DecodeError(
        f"{message}: field {block}.{field} claims {size} bytes, more than a packet can hold",
        offset,
        protocol=PROTOCOL,
    )


def excess_bytes(offset: int, message: str, count: int) -> DecodeError:
    return DecodeError(f"{message}: {count} bytes after the last block", offset, protocol=PROTOCOL)


def empty_message(offset: int, message: str) -> DecodeError:
    return DecodeError(f"{message}: message has no block", offset, protocol=PROTOCOL)


def bad_max_size(max_size: object) -> ValueError:
    return ValueError(f"max_size must be a non-negative int, not {max_size!r}")


def encode_error(message: str, where: str, problem: str) -> EncodeError:
    return EncodeError(f"{message}: {where}: {problem}", protocol=PROTOCOL)


def unknown_blocks(message: str, unknown: list[Any], own: list[str], template: Any) -> EncodeError:
    """The keys ``unknown`` of a message's blocks are not blocks of message
    ``message`` (which has ``own``) in ``template``."""
    names = ", ".join(k if type(k) is str and k.isidentifier() else repr(k) for k in unknown)
    return EncodeError(
        f"{message}: block{'s' if len(unknown) > 1 else ''} {names} not in {template!r} "
        f"(its {message} has {', '.join(own) or 'no block'})",
        protocol=PROTOCOL,
    )


def build_error(problem: str) -> EncodeError:
    return EncodeError(problem, protocol=PROTOCOL)
