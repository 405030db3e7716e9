"""The active decoder twin (compiled or pure), chosen once, and the verbs built on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gamecodec import _accel
from gamecodec.errors import DecodeError
from gamecodec.ywindow import _errors
from gamecodec.ywindow._models import MAX_MESSAGE, Message

__all__ = ["Decoder", "decode", "decode_many"]

Buffer = bytes | bytearray | memoryview

if TYPE_CHECKING:  # both twins have the pure twin's API
    from gamecodec.ywindow import _codec_py as _codec
else:
    _codec = _accel.load("gamecodec.ywindow", "_codec", "ywindow")

Decoder = _codec.Decoder
decode = _codec.decode


def decode_many(
    items: Iterable[Buffer], *, max_message: int = MAX_MESSAGE
) -> list[Message | DecodeError]:
    """Decode each item on its own: one item holds exactly one complete message.

    The result has one entry per item, in order: the :class:`Message`, or the
    :class:`~gamecodec.DecodeError` that item raised (offsets count from the
    item's first byte). An empty item gives a :class:`~gamecodec.TruncatedError`,
    an item holding more than one message a ``DecodeError`` at the offset where
    the first message ended.
    """
    out: list[Message | DecodeError] = []
    for item in items:
        try:
            messages = decode(item, max_message=max_message)
        except DecodeError as exc:
            out.append(exc)
            continue
        if len(messages) == 1:
            out.append(messages[0])
        elif not messages:
            out.append(_errors.no_message(0))
        else:
            out.append(_errors.extra_message(_first_end(bytes(item), max_message)))
    return out


def _first_end(item: bytes, max_message: int) -> int:
    """The length of the shortest prefix of ``item`` that completes a message."""
    lo, hi = 0, len(item)
    while lo < hi:
        mid = (lo + hi) // 2
        if Decoder(max_message=max_message).feed(item[:mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo
