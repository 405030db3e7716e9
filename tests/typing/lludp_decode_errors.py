"""Bad LLUDP input, caught by its documented error class (``mypy --strict``)."""

from __future__ import annotations

from gamecodec import lludp


def offset_of_problem(datagram: bytes) -> int | None:
    """Where ``datagram`` goes wrong, or None when it decodes."""
    try:
        lludp.decode(datagram)
    except lludp.DecodeError as exc:
        return exc.offset
    return None
