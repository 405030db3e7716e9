"""Passive WebSocket: the messages of a captured connection, read from both byte streams.

An observer sees the client's bytes (``to_server``: the HTTP upgrade request, then
masked frames) and the server's (``to_client``: the ``101`` response, then unmasked
frames). :class:`PassiveWebSocket` takes both, in capture order, and gives every
message (text, binary, ping, pong, close) with the stream offset of its first frame,
undoing permessage-deflate (RFC 7692) with the window bits and context takeover the
response accepted.

Nothing here answers, validates a key, or closes: bad bytes become a :class:`Problem`
located by stream offset, and reading goes on. After a gap, or garbage, the reader
finds the next frame again: exactly, when the gap ended inside a frame whose length
it knew; otherwise by scanning for a header that starts five well-formed frames in a
possible order whose payloads check (text: UTF-8 without control characters;
compressed: inflatable; close: a valid code), so that it skips what it cannot be
sure of rather than misread it.

With context takeover, a gap loses the sender's deflate history. Later messages
are still inflated, each from where the last failure left off: zlib refuses any
back-reference beyond the history it holds, so a message either inflates exactly
as sent or fails. The first failure is a problem saying why; the close counts the
rest. When the upgrade was not captured, frames are read with the widest window
(15 bits) and a compressed bit means compressed.

Memory is bounded: a message larger than ``max_message_size`` (compressed or
inflated; :data:`MAX_MESSAGE_SIZE` by default) is dropped with a problem, inflation
never produces more than that, and a scan never waits for more than that to confirm
a frame, so a direction holds a few times ``max_message_size`` at most (the frame
being read, the message being assembled, its inflation); an HTTP head longer than
:data:`MAX_HEAD_SIZE` ends the connection's reading.
"""

from __future__ import annotations

import codecs
import re
import zlib
from dataclasses import dataclass, field, replace

from gamecodec.capture._records import Direction

__all__ = [
    "MAX_HEAD_SIZE",
    "MAX_MESSAGE_SIZE",
    "Deflate",
    "Event",
    "Handshake",
    "Message",
    "Opcode",
    "PassiveWebSocket",
    "Problem",
    "parse_deflate",
]

MAX_MESSAGE_SIZE = 64 << 20
"""Default bound on one message, in bytes, both as sent and inflated (64 MiB)."""
MAX_HEAD_SIZE = 64 << 10
"""Bound on the HTTP request or response head, in bytes (64 KiB)."""


class Opcode:
    """The frame opcodes of RFC 6455."""

    CONTINUATION = 0
    TEXT = 1
    BINARY = 2
    CLOSE = 8
    PING = 9
    PONG = 10


_KNOWN_OPCODES = frozenset({0, 1, 2, 8, 9, 10})
_CHAIN = 5
"""Frames in a row that must be well formed before a scan takes a header for one."""
_CHECKABLE = frozenset({Opcode.TEXT, Opcode.BINARY, Opcode.CLOSE})
"""Where a scan may start: frames whose payload can be checked (a binary one only
when compressed). A ping, a pong or a plain binary frame right after a gap is lost."""
_CONTROL_CHARACTER = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_DEFLATE_TAIL = b"\x00\x00\xff\xff"
_HEAD_START: dict[Direction, bytes] = {"to_server": b"GET ", "to_client": b"HTTP/"}


@dataclass(frozen=True, slots=True)
class Deflate:
    """The permessage-deflate parameters a response accepted (RFC 7692 section 7.1)."""

    client_max_window_bits: int = 15
    server_max_window_bits: int = 15
    client_no_context_takeover: bool = False
    server_no_context_takeover: bool = False


@dataclass(frozen=True, slots=True)
class Handshake:
    """What the HTTP upgrade showed: ``target`` of the request, the response's
    ``status``, the extensions offered and accepted, and the deflate they agreed."""

    target: str | None = None
    status: int | None = None
    offered: str = ""
    accepted: str = ""
    deflate: Deflate | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One whole message: ``payload`` inflated (a close frame's payload holds its code
    and reason); ``size`` is what its frames took on the wire, headers included;
    ``offset`` is where its first frame starts in ``direction``'s stream."""

    direction: Direction
    opcode: int
    payload: bytes
    size: int
    offset: int
    compressed: bool = False


@dataclass(frozen=True, slots=True)
class Problem:
    """Bytes that could not be read as WebSocket, at ``offset`` of ``direction``'s stream."""

    direction: Direction
    offset: int
    message: str


Event = Message | Problem


def _number(text: str) -> bool:
    """Whether ``text`` is a number in ASCII digits (``str.isdigit`` also takes
    ``²``, a latin-1 byte that ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def _params(text: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """``name; key=value; key, name2`` as ``[(name, [(key, value), ...]), ...]``."""
    out: list[tuple[str, list[tuple[str, str | None]]]] = []
    for element in text.split(","):
        parts = [part.strip() for part in element.split(";")]
        if not parts[0]:
            continue
        params: list[tuple[str, str | None]] = []
        for part in parts[1:]:
            key, eq, value = part.partition("=")
            value = value.strip().strip('"')
            params.append((key.strip().lower(), value if eq else None))
        out.append((parts[0].lower(), params))
    return out


def parse_deflate(accepted: str) -> Deflate | None:
    """The permessage-deflate a response's ``Sec-WebSocket-Extensions`` accepted, or
    ``None``. Raises ValueError for a parameter RFC 7692 does not allow."""
    for name, params in _params(accepted):
        if name != "permessage-deflate":
            continue
        values: dict[str, int | bool] = {}
        for key, value in params:
            if key in ("client_no_context_takeover", "server_no_context_takeover"):
                values[key] = True
            elif key in ("client_max_window_bits", "server_max_window_bits"):
                if value is None or not _number(value) or not 8 <= int(value) <= 15:
                    raise ValueError(f"permessage-deflate {key}={value} is not 8..15")
                values[key] = int(value)
            else:
                raise ValueError(f"unknown permessage-deflate parameter {key!r}")
        return Deflate(
            client_max_window_bits=int(values.get("client_max_window_bits", 15)),
            server_max_window_bits=int(values.get("server_max_window_bits", 15)),
            client_no_context_takeover=bool(values.get("client_no_context_takeover", False)),
            server_no_context_takeover=bool(values.get("server_no_context_takeover", False)),
        )
    return None


def _unmask(payload: bytes, key: bytes) -> bytes:
    size = len(payload)
    if not size:
        return payload
    pad = (key * (size // 4 + 1))[:size]
    value = int.from_bytes(payload, "little") ^ int.from_bytes(pad, "little")
    return value.to_bytes(size, "little")


class _BadHeader(Exception):
    """A frame header that cannot be one (the message says why)."""


@dataclass(slots=True)
class _Header:
    fin: bool
    rsv1: bool
    opcode: int
    key: bytes | None
    length: int
    size: int
    """Header bytes, mask key included."""


def _parse_header(
    buf: bytearray, pos: int, end: int, masked: bool, limit: int | None = None
) -> _Header | None:
    """The frame header at ``buf[pos:end]``, or None when more bytes are needed."""
    if end - pos < 2:
        return None
    first, second = buf[pos], buf[pos + 1]
    opcode = first & 0x0F
    if first & 0x30:
        raise _BadHeader(f"reserved bits 0x{first & 0x30:02x} set")
    if opcode not in _KNOWN_OPCODES:
        raise _BadHeader(f"unknown opcode 0x{opcode:x}")
    fin = bool(first & 0x80)
    length = second & 0x7F
    if opcode >= 8:
        if not fin:
            raise _BadHeader("fragmented control frame")
        if length > 125:
            raise _BadHeader("control frame longer than 125 bytes")
        if first & 0x40:
            raise _BadHeader("compressed control frame")
    if bool(second & 0x80) != masked:
        raise _BadHeader("unmasked client frame" if masked else "masked server frame")
    size = 2
    if length == 126:
        if end - pos < 4:
            return None
        length = int.from_bytes(buf[pos + 2 : pos + 4], "big")
        size = 4
        if length < 126:
            raise _BadHeader("length not in its shortest form")
    elif length == 127:
        if end - pos < 10:
            return None
        length = int.from_bytes(buf[pos + 2 : pos + 10], "big")
        size = 10
        if length < 1 << 16 or length >> 63:
            raise _BadHeader("length not in its shortest form" if length < 1 << 16 else "length")
    if limit is not None and length > limit:
        raise _BadHeader(f"frame of {length} bytes is over the {limit}-byte message limit")
    key = None
    if masked:
        if end - pos < size + 4:
            return None
        key = bytes(buf[pos + size : pos + size + 4])
        size += 4
    return _Header(fin, bool(first & 0x40), opcode, key, length, size)


@dataclass(slots=True)
class _Inflation:
    """One direction's inflater: persistent with context takeover, else per message."""

    window_bits: int = 15
    takeover: bool = True
    inflater: zlib._Decompress | None = None
    lost_at: int | None = None
    """Stream offset of the gap that lost the sender's context (takeover only)."""
    failed_after_loss: int = 0

    def inflate(self, data: bytes, limit: int) -> bytes:
        """``data`` inflated; ValueError when it cannot be, or inflates past ``limit``.

        After a failure the next message starts a fresh inflater: a message that
        refers to lost history then fails (zlib checks every distance against the
        history it has), one that does not inflates exactly as sent.
        """
        inflater = self.inflater if self.takeover else None
        if inflater is None:
            inflater = zlib.decompressobj(-max(self.window_bits, 9))
        self.inflater = None
        try:
            out = inflater.decompress(data + _DEFLATE_TAIL, limit + 1)
        except zlib.error as exc:
            raise ValueError(f"cannot inflate: {exc}") from None
        if len(out) > limit or inflater.unconsumed_tail:
            raise ValueError(f"message inflates past the {limit}-byte limit")
        if inflater.eof and self.takeover:
            # a final block ended the sender's deflate stream; its window goes on
            # (what came before this message is lost: referring to it fails)
            bits = max(self.window_bits, 9)
            inflater = zlib.decompressobj(-bits, zdict=out[-(1 << bits) :])
        if self.takeover:
            self.inflater = inflater
        return out


@dataclass(slots=True)
class _Stream:
    """One direction: its unread bytes, the message being assembled, its inflater."""

    direction: Direction
    masked: bool
    buffer: bytearray = field(default_factory=bytearray)
    base: int = 0
    """Stream offset of ``buffer[0]``."""
    started: bool = False
    in_head: bool = False
    ready: bool = False
    """Frames can be read (the negotiation is known, or known to be unknown)."""
    dead: bool = False
    skip: int = 0
    searching: bool = False
    closed: bool = False
    deflate_known: bool = False
    deflate_on: bool = True
    inflation: _Inflation = field(default_factory=_Inflation)
    opcode: int | None = None
    dropping: bool = False
    parts: list[bytes] = field(default_factory=list)
    length: int = 0
    compressed: bool = False
    start: int = 0
    wire: int = 0
    chain: tuple[int, bool, int, int, bool] | None = None
    """Where a scan's unconfirmed chain got to: its first frame's stream offset and
    whether compressed frames may be, then the stream offset, depth and open message
    of the frame that waits for bytes (the frames before it are checked once)."""


class PassiveWebSocket:
    """Reads one captured WebSocket connection from its two byte streams.

    Feed each direction's bytes as they become contiguous (:meth:`feed`), report
    what was never captured (:meth:`gap`), and :meth:`close` at the end; each call
    returns the :class:`Message` and :class:`Problem` events it completed (a call for
    one direction may complete the other's frames, held until the response showed
    the negotiation).
    """

    def __init__(self, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
        self.max_message_size = max_message_size
        self.handshake = Handshake()
        self._streams = {
            "to_server": _Stream("to_server", masked=True),
            "to_client": _Stream("to_client", masked=False),
        }

    # ------------------------------------------------------------------ input

    def feed(self, direction: Direction, data: bytes) -> list[Event]:
        """The events that ``data``, the next bytes of ``direction``, completes."""
        stream = self._streams[direction]
        out: list[Event] = []
        if stream.dead or not data:
            return out
        searched = len(stream.buffer)  # where this feed's bytes start (the head end may span)
        stream.buffer += data
        if not stream.started:
            if len(stream.buffer) < 5:
                return out
            stream.started = True
            searched = 0
            self._start(stream, out)
        if stream.in_head:
            self._read_head(stream, out, max(0, searched - 3))
            if stream.in_head or stream.dead:
                return out
        if stream.ready:
            self._read_frames(stream, out)
        elif len(stream.buffer) > self.max_message_size + 14:
            self._negotiated(None, "no upgrade response", out, direction)
        return out

    def gap(self, direction: Direction, size: int) -> list[Event]:
        """``size`` bytes of ``direction`` were lost: drop what they cut, find the next frame."""
        stream = self._streams[direction]
        out: list[Event] = []
        if stream.dead or size <= 0:
            return out
        gap_at = stream.base + len(stream.buffer)
        if not stream.started or stream.in_head:
            stream.started = True
            stream.in_head = False
            out.append(Problem(direction, gap_at, f"{size} bytes lost in the HTTP upgrade"))
            stream.buffer.clear()
            stream.base = gap_at + size
            stream.searching = True
            if direction == "to_client":
                self._negotiated(None, "upgrade response lost", out)
            else:
                stream.ready = self._streams["to_client"].ready
            return out
        if not stream.ready:  # frames held for the response: read them as they are
            self._negotiated(None, "a gap before any upgrade response", out, direction)
            if stream.dead:
                return out
            gap_at = stream.base + len(stream.buffer)
        known = None
        if not stream.searching and not stream.skip:
            try:
                known = _parse_header(stream.buffer, 0, len(stream.buffer), stream.masked)
            except _BadHeader:
                known = None
        if stream.skip:
            end = gap_at + stream.skip
        elif known is not None:
            end = stream.base + known.size + known.length
        else:
            end = -1  # the next frame header is in the gap or after it
        stream.buffer.clear()
        stream.base = gap_at + size
        if end >= gap_at + size:
            stream.skip = end - (gap_at + size)
            if known is not None and known.opcode >= 8:
                out.append(Problem(direction, gap_at, f"{size} bytes lost in a control frame"))
                return out
            compressed = stream.compressed or (known is not None and known.rsv1)
            what = "a message" if known is not None else "a frame"
            out.append(Problem(direction, gap_at, f"{size} bytes lost in {what}"))
            self._drop_message(stream)
            if compressed or known is None:
                self._lose_context(stream, gap_at)
            return out
        stream.skip = 0
        stream.searching = True
        out.append(Problem(direction, gap_at, f"{size} bytes lost; looking for the next frame"))
        self._drop_message(stream)
        self._lose_context(stream, gap_at)
        return out

    def close(self) -> list[Event]:
        """The connection ended: what was left unread, as problems."""
        out: list[Event] = []
        client = self._streams["to_server"]
        if client.started and not (client.ready or client.in_head or client.dead):
            self._negotiated(None, "no upgrade response", out, "to_server")
        for stream in self._streams.values():
            if stream.dead:
                continue
            if stream.ready and not stream.in_head and stream.searching and stream.buffer:
                self._read_frames(stream, out, final=True)
            end = stream.base + len(stream.buffer)
            if stream.in_head and stream.buffer:
                out.append(Problem(stream.direction, stream.base, "HTTP head never ended"))
            elif stream.buffer and not stream.closed:
                out.append(Problem(stream.direction, stream.base, "the stream ends inside a frame"))
            elif stream.skip:
                out.append(Problem(stream.direction, end, "the stream ends inside a frame"))
            if stream.opcode is not None and not stream.dropping:
                out.append(
                    Problem(stream.direction, stream.start, "the stream ends inside a message")
                )
            failed = stream.inflation.failed_after_loss
            if failed > 1:
                out.append(
                    Problem(
                        stream.direction,
                        stream.inflation.lost_at or 0,
                        f"{failed} messages could not be inflated: they refer to data "
                        "before this offset, which was not captured (context takeover)",
                    )
                )
            stream.dead = True
        return out

    # ------------------------------------------------------------------ HTTP

    def _start(self, stream: _Stream, out: list[Event]) -> None:
        if stream.buffer.startswith(_HEAD_START[stream.direction]):
            stream.in_head = True
            return
        out.append(
            Problem(
                stream.direction,
                stream.base,
                "the HTTP upgrade was not captured; reading frames from here",
            )
        )
        stream.searching = True
        stream.inflation.lost_at = stream.base
        if stream.direction == "to_client":
            self._negotiated(None, "", out)
        else:
            stream.ready = self._streams["to_client"].ready

    def _read_head(self, stream: _Stream, out: list[Event], search_from: int = 0) -> None:
        """Read the HTTP head if its end has come (searched for from ``search_from``:
        the bytes before it were searched already)."""
        end = stream.buffer.find(b"\r\n\r\n", search_from)
        if end < 0:
            if len(stream.buffer) > MAX_HEAD_SIZE:
                self._give_up(stream, stream.base, f"HTTP head over {MAX_HEAD_SIZE} bytes", out)
            return
        head = bytes(stream.buffer[:end]).decode("latin-1")
        offset = stream.base
        del stream.buffer[: end + 4]
        stream.base += end + 4
        stream.in_head = False
        start, *lines = head.split("\r\n")
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        words = start.split(" ", 2)
        if stream.direction == "to_server":
            if "websocket" not in headers.get("upgrade", "").lower():
                self._give_up(stream, offset, f"not a WebSocket upgrade: {start[:80]!r}", out)
                return
            self.handshake = replace(
                self.handshake,
                target=words[1] if len(words) > 1 else "",
                offered=headers.get("sec-websocket-extensions", ""),
            )
            stream.ready = self._streams["to_client"].ready
            return
        status = int(words[1]) if len(words) > 1 and _number(words[1]) else 0
        accepted = headers.get("sec-websocket-extensions", "")
        self.handshake = replace(self.handshake, status=status, accepted=accepted)
        if status != 101:
            self._give_up(stream, offset, f"upgrade refused: {start[:80]!r}", out)
            self._give_up(self._streams["to_server"], None, "", out)
            return
        try:
            deflate = parse_deflate(accepted)
        except ValueError as exc:
            out.append(Problem(stream.direction, offset, f"{exc}; inflating with 15 bits"))
            self._negotiated(None, "", out)
            return
        self._negotiated(deflate, None, out)

    def _negotiated(
        self,
        deflate: Deflate | None,
        unknown: str | None,
        out: list[Event],
        told: Direction = "to_client",
    ) -> None:
        """Set both directions' inflation: from ``deflate``, or, when ``unknown`` is not
        None, as a sender with any parameters (15 bits, rsv1 means compressed); a
        non-empty ``unknown`` is a problem of ``told``'s stream."""
        self.handshake = replace(self.handshake, deflate=deflate)
        for stream in self._streams.values():
            if unknown is not None:
                stream.deflate_known = False
            else:
                stream.deflate_known = True
                stream.deflate_on = deflate is not None
                if deflate is not None:
                    client = stream.direction == "to_server"
                    stream.inflation.window_bits = (
                        deflate.client_max_window_bits if client else deflate.server_max_window_bits
                    )
                    stream.inflation.takeover = not (
                        deflate.client_no_context_takeover
                        if client
                        else deflate.server_no_context_takeover
                    )
        if unknown:
            told_stream = self._streams[told]
            out.append(Problem(told, told_stream.base + len(told_stream.buffer), unknown))
        for stream in self._streams.values():
            if not stream.ready and not stream.in_head and stream.started:
                stream.ready = True
                if stream.direction == "to_server" and stream.buffer:
                    self._read_frames(stream, out)
        self._streams["to_client"].ready = True

    def _give_up(self, stream: _Stream, offset: int | None, why: str, out: list[Event]) -> None:
        if offset is not None:
            out.append(Problem(stream.direction, offset, why))
        stream.dead = True
        stream.buffer.clear()

    # ------------------------------------------------------------------ frames

    def _read_frames(self, stream: _Stream, out: list[Event], final: bool = False) -> None:
        buf = stream.buffer
        end = len(buf)
        pos = 0
        limit = self.max_message_size
        while pos < end:
            if stream.skip:
                step = min(stream.skip, end - pos)
                pos += step
                stream.skip -= step
                continue
            if stream.closed:
                out.append(Problem(stream.direction, stream.base + pos, "bytes after the close"))
                stream.dead = True
                pos = end
                break
            if stream.searching:
                pos, confirmed = self._search(stream, buf, pos, end, final)
                if not confirmed:
                    break
                stream.searching = False
            try:
                header = _parse_header(buf, pos, end, stream.masked)
            except _BadHeader as exc:
                self._drop_message(stream)
                out.append(
                    Problem(
                        stream.direction,
                        stream.base + pos,
                        f"bad frame header: {exc}; looking for the next frame",
                    )
                )
                self._lose_context(stream, stream.base + pos)
                stream.searching = True
                pos += 1
                continue
            if header is not None and header.length > limit:
                out.append(
                    Problem(
                        stream.direction,
                        stream.base + pos,
                        f"frame of {header.length} bytes over the {limit}-byte limit; skipped",
                    )
                )
                compressed = stream.compressed or header.rsv1
                self._drop_message(stream)
                if compressed:
                    self._lose_context(stream, stream.base + pos)
                stream.skip = header.size + header.length
                continue
            if header is None or end - pos < header.size + header.length:
                break
            payload = bytes(buf[pos + header.size : pos + header.size + header.length])
            if header.key is not None:
                payload = _unmask(payload, header.key)
            self._frame(stream, header, payload, stream.base + pos, out)
            pos += header.size + header.length
        if pos:
            del buf[:pos]
            stream.base += pos

    def _search(
        self, stream: _Stream, buf: bytearray, pos: int, end: int, final: bool = False
    ) -> tuple[int, bool]:
        """The first offset from ``pos`` that may hold a frame, and whether the frames
        after it confirm it (False: more bytes are needed to tell)."""
        for at in range(pos, end - 1):
            first = buf[at]
            if first & 0x0F not in _CHECKABLE or (first & 0x40 and first & 0x0F > 2):
                continue  # not a frame whose payload can confirm it
            if first & 0x0F == Opcode.BINARY and not first & 0x40:
                continue
            confirmed = self._chain(stream, buf, at, end, final)
            if confirmed is None:
                return at, False
            if confirmed:
                return at, True
        return max(pos, end - 1), False

    def _chain(
        self, stream: _Stream, buf: bytearray, at: int, end: int, final: bool
    ) -> bool | None:
        """Whether ``_CHAIN`` frames in a row from ``at`` are well formed and in a
        possible order (None: the bytes end before that is known; at the ``final``
        end of the stream, a chain ending exactly there is enough)."""
        in_message = False
        compressed_ok = not stream.deflate_known or stream.deflate_on
        reach = at + self.max_message_size + _CHAIN * 14  # what a scan may hold
        first, base, resume = at, stream.base, 0
        if stream.chain is not None and stream.chain[:2] == (base + at, compressed_ok):
            # the frames before where it waited were checked: bytes only come after them
            at, resume, in_message = stream.chain[2] - base, stream.chain[3], stream.chain[4]
        stream.chain = None
        for depth in range(resume, _CHAIN):
            if final and at == end and depth:
                return True
            try:
                header = _parse_header(buf, at, end, stream.masked, self.max_message_size)
            except _BadHeader:
                return False
            if header is None:
                if final:
                    return False
                stream.chain = (base + first, compressed_ok, base + at, depth, in_message)
                return None
            if header.opcode == Opcode.CONTINUATION:
                if not in_message or header.rsv1:
                    return False
            elif header.opcode < 8 and in_message:
                return False
            if header.rsv1 and not compressed_ok:
                return False
            if depth == _CHAIN - 1:
                return True
            after = at + header.size + header.length
            if after > reach:
                return False
            if after > end:
                if final:
                    return False
                stream.chain = (base + first, compressed_ok, base + at, depth, in_message)
                return None
            if not self._plausible_payload(buf, at, header):
                return False
            if header.opcode < 8:
                in_message = not header.fin
            at = after
        return True

    def _plausible_payload(self, buf: bytearray, at: int, header: _Header) -> bool:
        """Whether a frame's payload may be what its header claims: a compressed one
        inflatable (or referring to history a fresh inflater lacks), a text one valid
        UTF-8 without control characters (what a mask guessed from masked text
        gives), a close one a valid code and a UTF-8 reason."""
        if header.opcode not in (Opcode.TEXT, Opcode.BINARY, Opcode.CLOSE):
            return True
        start = at + header.size
        payload = bytes(buf[start : start + header.length])
        if header.key is not None:
            payload = _unmask(payload, header.key)
        if header.opcode == Opcode.CLOSE:
            if not payload:
                return True
            code = int.from_bytes(payload[:2], "big")
            if len(payload) < 2 or not 1000 <= code <= 4999:
                return False
            payload = payload[2:]
        elif header.rsv1:
            inflater = zlib.decompressobj(-15)
            try:
                payload = inflater.decompress(
                    payload + (_DEFLATE_TAIL if header.fin else b""), self.max_message_size + 1
                )
            except zlib.error as exc:
                return "too far back" in str(exc)
        if header.opcode == Opcode.BINARY:
            return True
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(payload, header.fin)
        except UnicodeDecodeError:
            return False
        return _CONTROL_CHARACTER.search(text) is None

    def _frame(
        self, stream: _Stream, header: _Header, payload: bytes, offset: int, out: list[Event]
    ) -> None:
        direction = stream.direction
        wire = header.size + header.length
        if header.opcode >= 8:
            if header.opcode == Opcode.CLOSE:
                stream.closed = True
            out.append(Message(direction, header.opcode, payload, wire, offset))
            return
        if header.opcode == Opcode.CONTINUATION:
            if stream.opcode is None:
                out.append(Problem(direction, offset, "continuation frame outside a message"))
                return
            if header.rsv1:
                out.append(Problem(direction, offset, "compressed continuation frame"))
                self._drop_message(stream)
                return
        else:
            if stream.opcode is not None and not stream.dropping:
                out.append(
                    Problem(direction, stream.start, "message never finished; a new one began")
                )
            self._drop_message(stream)
            stream.opcode = header.opcode
            stream.compressed = header.rsv1
            stream.start = offset
            if header.rsv1 and stream.deflate_known and not stream.deflate_on:
                out.append(Problem(direction, offset, "compressed frame, but no deflate agreed"))
                stream.dropping = True
        stream.wire += wire
        if not stream.dropping:
            stream.length += len(payload)
            if stream.length > self.max_message_size:
                out.append(
                    Problem(
                        direction,
                        stream.start,
                        f"message over the {self.max_message_size}-byte limit",
                    )
                )
                stream.dropping = True
                stream.parts.clear()
                if stream.compressed:
                    self._lose_context(stream, offset)
            else:
                stream.parts.append(payload)
        if header.fin:
            self._finish(stream, out)

    def _finish(self, stream: _Stream, out: list[Event]) -> None:
        if stream.dropping:
            self._drop_message(stream)
            return
        data = b"".join(stream.parts)
        direction, opcode, start, wire = stream.direction, stream.opcode, stream.start, stream.wire
        compressed = stream.compressed
        self._drop_message(stream)
        assert opcode is not None
        if compressed:
            inflation = stream.inflation
            try:
                data = inflation.inflate(data, self.max_message_size)
            except ValueError as exc:
                if inflation.lost_at is not None and inflation.takeover:
                    inflation.failed_after_loss += 1
                    if inflation.failed_after_loss == 1:
                        out.append(
                            Problem(
                                direction,
                                start,
                                f"{exc}: the message refers to data before offset "
                                f"{inflation.lost_at}, which was not captured (context "
                                "takeover); later such messages are counted at the close",
                            )
                        )
                    return
                out.append(Problem(direction, start, str(exc)))
                return
        out.append(Message(direction, opcode, data, wire, start, compressed))

    def _drop_message(self, stream: _Stream) -> None:
        stream.opcode = None
        stream.dropping = False
        stream.parts.clear()
        stream.length = 0
        stream.compressed = False
        stream.wire = 0

    def _lose_context(self, stream: _Stream, offset: int) -> None:
        """The sender's deflate history may be lost (context takeover): later messages
        that refer to it cannot be inflated (the first failure says so, the close
        counts them)."""
        inflation = stream.inflation
        if not inflation.takeover or (stream.deflate_known and not stream.deflate_on):
            return
        inflation.inflater = None
        if inflation.lost_at is None:
            inflation.lost_at = offset
