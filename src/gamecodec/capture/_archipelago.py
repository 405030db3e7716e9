"""Archipelago in a capture: WebSocket text messages decoded as lists of commands."""

from __future__ import annotations

from gamecodec import archipelago
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, Unit
from gamecodec.capture._websocket import (
    MAX_MESSAGE_SIZE,
    Event,
    Message,
    Opcode,
    PassiveWebSocket,
)
from gamecodec.errors import DecodeError

__all__ = ["ArchipelagoStream"]


class ArchipelagoStream:
    """The :class:`~gamecodec.capture.StreamDecoder` of an Archipelago connection.

    One :class:`Unit` per text message: ``value`` is :func:`gamecodec.archipelago.decode`
    of the inflated text, ``names`` each command's ``cmd``, ``size`` the bytes its
    frames took on the wire. Pings, pongs and the close give no unit. WebSocket
    problems become ``CaptureError(where="websocket")`` at their stream offset; a
    message the codec refuses, ``CaptureError(where="decode")`` at its offset in the
    message; either way the stream goes on.
    """

    def __init__(self, flow: Flow, *, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
        self.flow = flow
        self.websocket = PassiveWebSocket(max_message_size)

    def feed(self, direction: Direction, data: bytes, time: float, packet: int) -> list[Item]:
        """The units (and errors) that ``data`` completes."""
        return self._items(self.websocket.feed(direction, data), time, packet)

    def gap(self, direction: Direction, size: int, time: float, packet: int) -> list[Item]:
        """``size`` bytes of ``direction`` were never captured: resynchronise."""
        return self._items(self.websocket.gap(direction, size), time, packet)

    def close(self, time: float, packet: int) -> list[Item]:
        """The connection ended: what is left, as errors."""
        return self._items(self.websocket.close(), time, packet)

    def _items(self, events: list[Event], time: float, packet: int) -> list[Item]:
        items: list[Item] = []
        flow = self.flow
        for event in events:
            if not isinstance(event, Message):
                items.append(
                    CaptureError(
                        "websocket",
                        event.message,
                        time,
                        packet,
                        flow,
                        event.direction,
                        event.offset,
                    )
                )
            elif event.opcode == Opcode.TEXT:
                items.append(self._unit(event, time, packet))
            elif event.opcode == Opcode.BINARY:
                items.append(
                    CaptureError(
                        "decode",
                        f"binary message of {len(event.payload)} bytes (Archipelago sends text)",
                        time,
                        packet,
                        flow,
                        event.direction,
                        0,
                    )
                )
        return items

    def _unit(self, message: Message, time: float, packet: int) -> Item:
        try:
            value = archipelago.decode(message.payload)
        except DecodeError as exc:
            return CaptureError(
                "decode",
                f"message at stream offset {message.offset}: {exc}",
                time,
                packet,
                self.flow,
                message.direction,
                exc.offset,
            )
        names = tuple(_cmd(command) for command in value)
        return Unit(
            time,
            packet,
            self.flow,
            message.direction,
            "archipelago",
            names,
            value,
            message.size,
            message.payload,
        )


def _cmd(command: object) -> str:
    """A decoded command's ``cmd``: a typed command's tag, or an unknown one's key."""
    if isinstance(command, dict):
        return str(command["cmd"])
    return str(type(command).__struct_config__.tag)  # type: ignore[attr-defined]
