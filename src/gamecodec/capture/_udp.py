"""UDP datagrams to units: Avara and LLUDP, each with the protocol's own decoder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gamecodec import avara, lludp
from gamecodec._protocols import protocols, resolve
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, Unit
from gamecodec.errors import DecodeError

__all__ = [
    "AvaraDatagrams",
    "DatagramDecoder",
    "LludpDatagrams",
    "avara_datagrams",
    "datagram_decoder",
    "lludp_datagrams",
]


class _Names(dict[int, str]):
    """Known ids to their names; an unknown id reads as ``"<what> <id>"``."""

    def __init__(self, what: str, names: dict[int, str]) -> None:
        super().__init__(names)
        self.what = what

    def __missing__(self, key: int) -> str:
        name = f"{self.what} {key}"
        if len(self) < _MAX_NAMES:  # kept: an unknown id tends to come again and again
            self[key] = name
        return name


_MAX_NAMES = 1024


_COMMAND_NAMES = _Names("command", {c.value: c.name for c in avara.CommandId})
_PUNCH_NAMES = _Names("punch", {c.value: c.name for c in avara.PunchCommand})
_HOLE_PUNCH = avara.HolePunch


class _OneName(dict[int, tuple[str]]):
    """A command id to the names of a datagram holding just that command."""

    def __missing__(self, key: int) -> tuple[str]:
        names = (_COMMAND_NAMES[key],)
        if len(self) < _MAX_NAMES:
            self[key] = names
        return names


_ONE_COMMAND = _OneName()
_OPTIONS: dict[tuple[int, int], tuple[int, int]] = {}
"""One tuple per net version and layout, shared by every flow's units (the
tables tell a change of options by identity first)."""


class DatagramDecoder(Protocol):
    """Decodes one flow's datagrams, one unit (or error) each."""

    protocol: str

    def decode(
        self, payload: bytes, time: float, packet: int, flow: Flow, direction: Direction
    ) -> Item:
        """The unit ``payload`` makes, or the error decoding it gave."""
        ...


class AvaraDatagrams(DatagramDecoder):
    """Avara: :func:`gamecodec.avara.decode` with the flow's net version.

    A datagram whose checksum does not match is an error (the game drops it).
    """

    protocol = "avara"

    def __init__(self, version: int = avara.DEFAULT_VERSION, layout: int = 1) -> None:
        self.version = version
        self.layout = layout
        self.options = _OPTIONS.setdefault((version, layout), (version, layout))

    def decode(
        self, payload: bytes, time: float, packet: int, flow: Flow, direction: Direction
    ) -> Item:
        """The unit ``payload`` makes, or the error decoding it gave."""
        try:
            value = avara.decode(payload, version=self.version, layout=self.layout)
        except DecodeError as exc:
            return CaptureError("decode", str(exc), time, packet, flow, direction, exc.offset)
        names: tuple[str, ...]
        if value.crc_ok:  # a datagram (a hole punch's crc_ok is False)
            commands = value.commands
            if len(commands) == 1:  # most datagrams: no tuple to build
                names = _ONE_COMMAND[commands[0].command]
            else:
                names = tuple([_COMMAND_NAMES[c.command] for c in commands])
        elif value.__class__ is _HOLE_PUNCH:
            names = (_PUNCH_NAMES[value.command],)
        else:
            message = f"Avara checksum does not match net version {self.version}"
            return CaptureError("decode", message, time, packet, flow, direction, 0)
        return Unit(
            time,
            packet,
            flow,
            direction,
            "avara",
            names,
            value,
            len(payload),
            payload,
            self.options,
        )


class LludpDatagrams(DatagramDecoder):
    """LLUDP: :func:`gamecodec.lludp.decode` (tolerant, as the viewer reads)."""

    protocol = "lludp"

    def __init__(self) -> None:
        self.template = lludp.default_template()

    def decode(
        self, payload: bytes, time: float, packet: int, flow: Flow, direction: Direction
    ) -> Item:
        """The unit ``payload`` makes, or the error decoding it gave."""
        try:
            value = lludp.decode(payload, template=self.template)
        except DecodeError as exc:
            return CaptureError("decode", str(exc), time, packet, flow, direction, exc.offset)
        return Unit(
            time, packet, flow, direction, "lludp", (value.name,), value, len(payload), payload
        )


def avara_datagrams(version: int | None = None) -> DatagramDecoder:
    """Avara's decoder for a flow of net ``version`` (default 18), with its layout."""
    from gamecodec.capture._detect import avara_layout

    v = avara.DEFAULT_VERSION if version is None else version
    return AvaraDatagrams(v, avara_layout(v))


def lludp_datagrams(version: int | None = None) -> DatagramDecoder:
    """LLUDP's decoder (``version`` is Avara's only)."""
    return LludpDatagrams()


def datagram_decoder(protocol: str, version: int | None = None) -> DatagramDecoder | None:
    """The decoder of a UDP protocol (``version``: Avara's net version), else ``None``."""
    for p in protocols():
        if p.name == protocol and p.transport == "udp":
            factory: Callable[[int | None], DatagramDecoder] = resolve(p.capture_decoder)
            return factory(version)
    return None
