"""Stream decoders of the TCP protocols (BZRC, ywindow) and the registry of all of them."""

from __future__ import annotations

import importlib
from typing import Any

from gamecodec import bzrc, ywindow
from gamecodec.bzrc.session import _py_float, _py_int
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, StreamDecoder, Unit
from gamecodec.errors import DecodeError, GameCodecError

__all__ = ["STREAM_DECODERS", "BzrcStream", "YwindowStream", "stream_decoder"]

STREAM_DECODERS: dict[str, str] = {
    "archipelago": "gamecodec.capture._archipelago:ArchipelagoStream",
    "bzrc": "gamecodec.capture._streams:BzrcStream",
    "ywindow": "gamecodec.capture._streams:YwindowStream",
}
"""Each TCP protocol's :class:`StreamDecoder`, as ``module:class`` (imported when first needed)."""


def stream_decoder(protocol: str, flow: Flow) -> StreamDecoder | str:
    """A new stream decoder of ``protocol`` for ``flow``, or why there is none."""
    target = STREAM_DECODERS.get(protocol)
    if target is None:
        return f"no stream decoder for {protocol}"
    module_name, _, class_name = target.partition(":")
    try:
        cls: Any = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        return f"the {protocol} stream decoder is not available ({exc})"
    decoder: StreamDecoder = cls(flow)
    return decoder


# -- BZRC ---------------------------------------------------------------------

_RESPONSE_STARTS = (b"ack ", b"fail", b"error", b"bzrobots ")
_INT_ARGS = frozenset({"agent", "shoot", "occgrid"})
_TANK_VALUE = frozenset({"speed", "angvel", "accelx", "accely"})


def command_args(verb: str, args: list[str]) -> tuple[Any, ...]:
    """A command's arguments as the server parses them (ints, floats), else as sent."""
    if verb in _INT_ARGS and len(args) == 1:
        tank = _py_int(args[0])
        if tank is not None:
            return (tank,)
    elif verb in _TANK_VALUE and len(args) == 2:
        tank, value = _py_int(args[0]), _py_float(args[1])
        if tank is not None and value is not None:
            return (tank, value)
    return tuple(args)


class BzrcStream:
    """BZRC: command lines from the client, responses from the server.

    A client line is a unit whose ``value`` is a :class:`gamecodec.bzrc.Request`
    (``id`` counts the lines after the ``agent 1`` handshake, which has id -1, as
    the server numbers them; ``args`` parsed as the server parses them). A server
    response is a unit whose ``value`` is what :class:`gamecodec.bzrc.Decoder`
    gives and whose ``names`` is its kind (``("Listing",)``). After a gap or a
    response the decoder refuses, the server side skips to the next line that
    starts a response (``ack``, ``fail``, ``error``), the client side to the next line.
    """

    def __init__(self, flow: Flow, *, max_line: int = bzrc.DEFAULT_MAX_LINE) -> None:
        self.flow = flow
        self.max_line = max_line
        self._line = bytearray()
        self._client_skip = False
        self._client_pos = 0
        self._next_id = -1
        self._decoder = bzrc.Decoder()
        self._base = 0
        self._server_pos = 0
        self._response = bytearray()
        self._skipping = False
        self._at_line_start = True

    def feed(self, direction: Direction, data: bytes, time: float, packet: int) -> list[Item]:
        """The units (and errors) that ``data`` completes."""
        if direction == "to_server":
            return self._client(data, time, packet)
        return self._server(data, time, packet)

    def gap(self, direction: Direction, size: int, time: float, packet: int) -> list[Item]:
        """``size`` bytes of ``direction`` were never captured: resynchronise."""
        if direction == "to_server":
            self._client_pos += size
            self._client_skip = True  # the rest of the line the gap cut (or an unknown line)
            self._line.clear()
        else:
            self._server_pos += size
            self._restart(skipping=True)
            self._at_line_start = False
        return []

    def close(self, time: float, packet: int) -> list[Item]:
        """The connection ended: a response left incomplete, as an error."""
        items: list[Item] = []
        if self._skipping:
            return items
        try:
            for response in self._decoder.close():
                items.append(self._response_unit(response, bytes(self._response), time, packet))
        except DecodeError as exc:
            items.append(self._error(exc, "to_client", time, packet))
        return items

    # -- client side --

    def _client(self, data: bytes, time: float, packet: int) -> list[Item]:
        items: list[Item] = []
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            if nl < 0:
                if not self._client_skip:
                    self._line += data[start:]
                    if len(self._line) > self.max_line:
                        message = f"a command line longer than {self.max_line} bytes"
                        offset = self._client_pos + start - (len(self._line) - (len(data) - start))
                        items.append(
                            CaptureError(
                                "decode", message, time, packet, self.flow, "to_server", offset
                            )
                        )
                        self._line.clear()
                        self._client_skip = True
                break
            if self._client_skip:
                self._client_skip = False
            else:
                self._line += data[start : nl + 1]
                unit = self._command(bytes(self._line), time, packet)
                if unit is not None:
                    items.append(unit)
            self._line.clear()
            start = nl + 1
        self._client_pos += len(data)
        return items

    def _command(self, line: bytes, time: float, packet: int) -> Unit | None:
        tokens = [t.decode("latin-1") for t in line.split()]
        if not tokens:
            return None
        verb, args = tokens[0], tokens[1:]
        if self._next_id == -1 and tokens != ["agent", "1"]:
            self._next_id = 0  # no handshake captured: number from here
        request = bzrc.Request(self._next_id, verb, command_args(verb, args))
        self._next_id += 1
        return Unit(time, packet, self.flow, "to_server", "bzrc", (verb,), request, len(line), line)

    # -- server side --

    def _restart(self, skipping: bool) -> None:
        self._decoder = bzrc.Decoder()
        self._base = self._server_pos
        self._response.clear()
        self._skipping = skipping

    def _server(self, data: bytes, time: float, packet: int) -> list[Item]:
        items: list[Item] = []
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            end = len(data) if nl < 0 else nl + 1
            chunk = data[start:end]
            line_start = self._at_line_start
            self._at_line_start = nl >= 0
            start = end
            if self._skipping:
                if not (line_start and chunk.startswith(_RESPONSE_STARTS)):
                    self._server_pos += len(chunk)
                    continue
                self._restart(skipping=False)
            self._server_pos += len(chunk)
            try:
                responses = self._decoder.feed(chunk)
            except DecodeError as exc:
                for response in exc.partial or ():
                    items.append(self._response_unit(response, b"", time, packet))
                items.append(self._error(exc, "to_client", time, packet))
                self._skipping = True
                continue
            if not responses:
                self._response += chunk
                continue
            for response in responses[:-1]:  # completed by this line's start (help output)
                items.append(self._response_unit(response, bytes(self._response), time, packet))
                self._response.clear()
            self._response += chunk
            items.append(self._response_unit(responses[-1], bytes(self._response), time, packet))
            self._response.clear()
        return items

    def _response_unit(self, response: Any, payload: bytes, time: float, packet: int) -> Unit:
        name = type(response).__name__
        return Unit(
            time, packet, self.flow, "to_client", "bzrc", (name,), response, len(payload), payload
        )

    def _error(
        self, exc: DecodeError, direction: Direction, time: float, packet: int
    ) -> CaptureError:
        return CaptureError(
            "decode", str(exc), time, packet, self.flow, direction, self._base + exc.offset
        )


# -- ywindow ------------------------------------------------------------------


class _YDirection:
    __slots__ = ("buf", "dead", "decoder", "phase", "pos")

    def __init__(self) -> None:
        self.phase = "start"
        self.buf = bytearray()
        self.decoder: Any = None
        self.pos = 0
        self.dead = False


class YwindowStream:
    """ywindow: the greeting line, the 256-byte cookie and 16-byte digest, then messages.

    Units: ``("greeting",)`` (a :class:`gamecodec.ywindow.Greeting`), ``("cookie",)``
    and ``("digest",)`` (the raw bytes), then one per message (a
    :class:`gamecodec.ywindow.Message`, ``names`` its method or its kind). A
    stream picked up after its start is read as messages. The words carry no
    markers to resynchronise on: after a gap or a bad message the rest of that
    direction is reported once and skipped.
    """

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self._dirs: dict[Direction, _YDirection] = {
            "to_server": _YDirection(),
            "to_client": _YDirection(),
        }
        self._time = 0.0
        self._packet = 0

    def feed(self, direction: Direction, data: bytes, time: float, packet: int) -> list[Item]:
        """The units (and errors) that ``data`` completes."""
        state = self._dirs[direction]
        items: list[Item] = []
        self._time, self._packet = time, packet
        if state.dead:
            state.pos += len(data)
            return items
        while data and not state.dead:
            if state.phase == "start":
                state.phase = "greeting" if data[:1] == b"Y" else "words"
            if state.phase == "greeting":
                data = self._greeting(state, direction, data, items)
            elif state.phase in {"cookie", "digest"}:
                data = self._blob(state, direction, data, items)
            else:
                self._words(state, direction, data, items)
                data = b""
        return items

    def _unit(self, direction: Direction, name: str, value: object, payload: bytes) -> Unit:
        return Unit(
            self._time, self._packet, self.flow, direction, "ywindow", (name,), value,
            len(payload), payload,
        )  # fmt: skip

    def _error(self, direction: Direction, message: str, offset: int) -> CaptureError:
        return CaptureError(
            "decode", message, self._time, self._packet, self.flow, direction, offset
        )

    def _greeting(
        self, state: _YDirection, direction: Direction, data: bytes, items: list[Item]
    ) -> bytes:
        room = ywindow.MAX_GREETING - len(state.buf)
        nl = data.find(b"\n", 0, room)
        if nl < 0:
            state.buf += data[:room]
            if len(state.buf) >= ywindow.MAX_GREETING:
                self._die(state, direction, "no greeting line in the first 100 bytes", items)
            return b""
        line = bytes(state.buf + data[: nl + 1])
        role = ywindow.Role.SERVER if direction == "to_client" else ywindow.Role.CLIENT
        try:
            greeting = ywindow.parse_greeting(line, role)
        except GameCodecError as exc:
            self._die(state, direction, str(exc), items)
            return b""
        items.append(self._unit(direction, "greeting", greeting, line))
        state.pos += len(line)
        state.buf.clear()
        state.phase = "cookie"
        return data[nl + 1 :]

    def _blob(
        self, state: _YDirection, direction: Direction, data: bytes, items: list[Item]
    ) -> bytes:
        size = ywindow.COOKIE_SIZE if state.phase == "cookie" else ywindow.DIGEST_SIZE
        take = size - len(state.buf)
        state.buf += data[:take]
        if len(state.buf) == size:
            blob = bytes(state.buf)
            items.append(self._unit(direction, state.phase, blob, blob))
            state.pos += size
            state.buf.clear()
            state.phase = "digest" if state.phase == "cookie" else "words"
        return data[take:]

    def _words(
        self, state: _YDirection, direction: Direction, data: bytes, items: list[Item]
    ) -> None:
        if state.decoder is None:
            state.decoder = ywindow.Decoder(offset=state.pos)
        try:
            messages = state.decoder.feed(data)
        except DecodeError as exc:
            items.append(self._error(direction, str(exc), exc.offset))
            self._die(state, direction, "", items)
            return
        state.buf += data
        if not messages:
            return
        sizes = [len(ywindow.encode(m)) for m in messages]
        if state.decoder.at_boundary:  # exact, even for a non-canonical encoding
            sizes[-1] = len(state.buf) - sum(sizes[:-1])
        at = 0
        for message, size in zip(messages, sizes, strict=True):
            payload = bytes(state.buf[at : at + size])
            at += size
            items.append(self._unit(direction, message.method or message.kind, message, payload))
        del state.buf[:at]
        state.pos += at

    def _die(
        self, state: _YDirection, direction: Direction, message: str, items: list[Item]
    ) -> None:
        if message:
            items.append(self._error(direction, message, state.pos))
        state.dead = True
        state.buf.clear()
        state.decoder = None

    def gap(self, direction: Direction, size: int, time: float, packet: int) -> list[Item]:
        """``size`` bytes of ``direction`` were never captured: the rest of it is skipped."""
        state = self._dirs[direction]
        items: list[Item] = []
        self._time, self._packet = time, packet
        if state.phase == "start":
            state.phase = "words"  # picked up mid-stream: read on as messages
        elif not state.dead:
            message = (
                "ywindow cannot resynchronise after a gap: the rest of this direction is skipped"
            )
            self._die(state, direction, message, items)
        state.pos += size
        return items

    def close(self, time: float, packet: int) -> list[Item]:
        """The connection ended: a message left incomplete, as an error."""
        items: list[Item] = []
        self._time, self._packet = time, packet
        for direction, state in self._dirs.items():
            if not state.dead and state.buf:
                what = "message" if state.phase == "words" else state.phase
                items.append(self._error(direction, f"the stream ended inside a {what}", state.pos))
        return items
