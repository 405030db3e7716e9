"""Which protocol a flow speaks: its port, confirmed by its first bytes, or an override."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from gamecodec import avara, lludp
from gamecodec._protocols import protocols, resolve
from gamecodec.errors import DecodeError

__all__ = [
    "PORTS",
    "Guess",
    "Override",
    "parse_override",
    "port_guess",
    "sniff_archipelago",
    "sniff_avara",
    "sniff_bzrc",
    "sniff_lludp",
    "sniff_ywindow",
    "tcp_content",
    "udp_content",
    "verdict",
]

Transport = Literal["udp", "tcp"]

PORTS: tuple[tuple[Transport, int, int, str, str], ...] = tuple(
    (p.transport, port.first, port.last, p.name, port.what) for p in protocols() for port in p.ports
)
"""Well-known ports: (transport, first port, last port, protocol, what they are),
from each protocol's declaration."""

PROTOCOLS = tuple(p.name for p in protocols())
_TRANSPORTS: dict[str, Transport] = {p.name: p.transport for p in protocols()}

AVARA_VERSIONS = (18, *range(0, 18), *range(19, 64), 666)
"""Net versions tried when an Avara checksum does not match version 18."""


@dataclass(frozen=True, slots=True)
class Override:
    """``protocol:transport/port`` or ``protocol:transport/first-last`` (``lludp:udp/9000``)."""

    protocol: str
    transport: Transport
    first: int
    last: int

    def __str__(self) -> str:
        ports = str(self.first) if self.first == self.last else f"{self.first}-{self.last}"
        return f"{self.protocol}:{self.transport}/{ports}"


_OVERRIDE = re.compile(r"([a-z]+):(udp|tcp)/([0-9]{1,5})(?:-([0-9]{1,5}))?")


def parse_override(text: str) -> Override:
    """Parse ``protocol:transport/port[-port]``; ``ValueError`` says what is wrong."""
    match = _OVERRIDE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not PROTOCOL:udp/PORT or PROTOCOL:tcp/PORT[-PORT]")
    protocol, transport = match[1], match[2]
    if protocol not in PROTOCOLS:
        raise ValueError(
            f"unknown protocol {protocol!r} in {text!r} (known: {', '.join(PROTOCOLS)})"
        )
    if _TRANSPORTS[protocol] != transport:
        raise ValueError(
            f"{protocol} runs over {_TRANSPORTS[protocol]}, not {transport} ({text!r})"
        )
    first = int(match[3])
    last = int(match[4]) if match[4] else first
    if not 0 <= first <= last <= 65535:
        raise ValueError(f"bad port range in {text!r}")
    return Override(protocol, _TRANSPORTS[protocol], first, last)


@dataclass(frozen=True, slots=True)
class Guess:
    """What a port says: the protocol, the server's port, why, and whether an override said it."""

    protocol: str
    port: int
    why: str
    override: bool


def port_guess(
    transport: Transport, sport: int, dport: int, overrides: tuple[Override, ...]
) -> Guess | None:
    """The protocol the ports point to (the destination port first), or ``None``."""
    for port in (dport, sport):
        for o in overrides:
            if o.transport == transport and o.first <= port <= o.last:
                return Guess(o.protocol, port, f"override {o}", True)
    for port in (dport, sport):
        for t, first, last, protocol, what in PORTS:
            if t == transport and first <= port <= last:
                return Guess(protocol, port, f"port {transport}/{port} ({what})", False)
    return None


# -- content ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Content:
    """What the first bytes showed: the protocol, how, and its decoding parameters."""

    protocol: str
    why: str
    version: int | None = None
    """Avara's net version (the checksum's seed)."""
    from_server: bool | None = None
    """For TCP: whether those bytes can only have come from the server."""


Sniffer = Callable[[bytes, bool], "Content | None"]
"""A protocol's content sniffer: ``(data, exact)`` to what the bytes showed, or ``None``."""


def sniff_avara(payload: bytes, exact: bool = False) -> Content | None:
    """Avara if ``payload`` is a hole punch or its checksum matches a net version
    and it decodes (``exact`` changes nothing: a checksum is doubt enough)."""
    if len(payload) == avara.PUNCH_SIZE:
        if 1 <= payload[0] <= 4:
            return Content("avara", "a 7-byte Avara hole punch")
        return None
    if len(payload) < 4:
        return None
    crc = payload[0] | payload[1] << 8
    for version in AVARA_VERSIONS:
        if avara.datagram_crc(payload, version) == crc:
            try:
                avara.decode(payload, version=version, layout=avara_layout(version))
            except DecodeError:
                return None
            return Content("avara", f"an Avara checksum with net version {version}", version)
    return None


def avara_layout(version: int) -> int:
    """The command layout of an Avara net version (sendCount byte from version 11)."""
    return 1 if version >= 11 else 0


def sniff_lludp(payload: bytes, exact: bool = False) -> Content | None:
    """LLUDP if the header names a known message and the body decodes (``exact``:
    with no field cut short and no bytes left over)."""
    if len(payload) < 7 or payload[0] & 0x0F or 6 + payload[5] > len(payload):
        return None
    try:
        header = lludp.peek(payload)
        if header.name is None:
            return None
        message = lludp.decode(payload)
    except DecodeError:
        return None
    if exact and (message.truncated or message.excess):
        return None
    return Content("lludp", f"an LLUDP header with message {header.name}")


def udp_content(payload: bytes, expect: str | None = None) -> Content | None:
    """The UDP protocol ``payload`` shows (``expect``, the port's, is tried first), or ``None``.

    LLUDP's decoder reads on through anything (a field cut short is zero-filled,
    bytes past the blocks are kept), so where the port does not say LLUDP its
    first datagram must decode exactly: about 1 % of random datagrams
    (QUIC, media) otherwise pass for LLUDP.
    """
    order = [p for p in _sniffers("udp") if p[0] == expect]
    order += [p for p in _sniffers("udp") if p[0] != expect]
    for name, sniff in order:
        if found := sniff(payload, name != expect):
            return found
    return None


@functools.cache
def _sniffers(transport: Transport) -> tuple[tuple[str, Sniffer], ...]:
    """``(protocol, sniffer)`` of each protocol over ``transport``, in declaration order."""
    return tuple((p.name, resolve(p.sniffer)) for p in protocols() if p.transport == transport)


_BZRC_COMMANDS = re.compile(
    rb"(agent 1|shoot|speed|angvel|accelx|accely|occgrid|teams|obstacles|bases|flags|shots"
    rb"|mytanks|othertanks|constants|scores|timer|quit|endgame|taunt|help)( [^\n]*)?\n"
)
_BZRC_ACK = re.compile(rb"ack [-+0-9.eE]+( [^\n]*)?\n")
_YWINDOW_HEADER = frozenset(b"cvrCVR")


def tcp_content(data: bytes) -> Content | None:
    """The TCP protocol the first bytes of one direction show, or ``None``."""
    for _, sniff in _sniffers("tcp"):
        if found := sniff(data, False):
            return found
    return None


def sniff_archipelago(data: bytes, exact: bool = False) -> Content | None:
    """Archipelago if ``data`` opens with a WebSocket upgrade request or response."""
    head = data[:512]
    if head.startswith(b"GET ") and b"\r\n" in head:
        lower = head.lower()
        if b"upgrade: websocket" in lower or b"sec-websocket-key" in lower:
            return Content("archipelago", "a WebSocket upgrade request", from_server=False)
    if head.startswith(b"HTTP/1.1 101") and b"websocket" in head.lower():
        return Content("archipelago", "a WebSocket upgrade response", from_server=True)
    return None


def sniff_bzrc(data: bytes, exact: bool = False) -> Content | None:
    """BZRC if ``data`` opens with the greeting, a command line or an ack line."""
    head = data[:512]
    if head.startswith(b"bzrobots 1\n"):
        return Content("bzrc", "the 'bzrobots 1' greeting", from_server=True)
    if _BZRC_COMMANDS.match(head):
        return Content("bzrc", "a BZRC command line", from_server=False)
    if _BZRC_ACK.match(head):
        return Content("bzrc", "a BZRC ack line", from_server=True)
    return None


def sniff_ywindow(data: bytes, exact: bool = False) -> Content | None:
    """ywindow if ``data`` opens with a greeting or with whole typed words."""
    head = data[:512]
    if head.startswith(b"Yserver "):
        return Content("ywindow", "the 'Yserver' greeting", from_server=True)
    if head.startswith(b"Yclient "):
        return Content("ywindow", "the 'Yclient' greeting", from_server=False)
    if len(head) >= 5 and head[0] in _YWINDOW_HEADER and _ywindow_words(data):
        return Content("ywindow", "ywindow words")
    return None


def _ywindow_words(data: bytes) -> bool:
    from gamecodec import ywindow

    decoder = ywindow.Decoder()
    try:
        return bool(decoder.feed(data[:4096])) and decoder.at_boundary
    except DecodeError:
        return False


def verdict(guess: Guess | None, protocol: str | None, why: str | None) -> tuple[str | None, str]:
    """The protocol and reason from what the port and the content said."""
    if protocol is not None:
        if guess is None:
            return protocol, f"content: {why}"
        if guess.protocol == protocol:
            return protocol, f"{guess.why}, confirmed by {why}"
        return protocol, f"content: {why} (the port is {guess.protocol}'s)"
    if guess is None:
        return None, "no known port, content not recognised"
    return None, f"{guess.why}, but the content is not {guess.protocol}"
