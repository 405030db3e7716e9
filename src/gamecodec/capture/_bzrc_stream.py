"""The BZRC stream decoder of captures: one direction of commands, one of responses."""

from __future__ import annotations

from typing import Any

from gamecodec import bzrc
from gamecodec.bzrc.session import _py_float, _py_int
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, Unit
from gamecodec.errors import DecodeError

__all__ = ["BzrcStream", "command_args"]

_RESYNC_STARTS = (b"ack ", b"bzrobots ")
"""How a server line starts where reading resumes after a gap: a response that
names its command, or the greeting."""
_RESYNC_LOOK = max(len(s) for s in _RESYNC_STARTS)
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
    gives and whose ``names`` is its kind (``("Listing",)``). After a gap, the
    client's first line is taken for a command if it starts with a command's
    name (else it is the rest of a line the gap cut). After a gap or a response
    the decoder refuses, the server side resumes at the next line that starts
    with ``ack`` (or the greeting), in whatever segments its bytes arrive: a
    line without one (``ok``, ``fail``, a list's items) may belong to a response
    whose ``ack`` was lost, and would answer the wrong command.
    """

    def __init__(self, flow: Flow, *, max_line: int = bzrc.DEFAULT_MAX_LINE) -> None:
        self.flow = flow
        self.max_line = max_line
        self._line = bytearray()
        self._client_skip = False
        self._client_unsure = False
        self._client_pos = 0
        self._next_id = -1
        self._decoder = bzrc.Decoder()
        self._base = 0
        self._server_pos = 0
        self._response = bytearray()
        self._skipping = False
        self._at_line_start = True
        self._head = bytearray()  # while skipping: the start of a line, until it tells

    def feed(self, direction: Direction, data: bytes, time: float, packet: int) -> list[Item]:
        """The units (and errors) that ``data`` completes."""
        if direction == "to_server":
            return self._client(data, time, packet)
        return self._server(data, time, packet)

    def gap(self, direction: Direction, size: int, time: float, packet: int) -> list[Item]:
        """``size`` bytes of ``direction`` were never captured: resynchronise."""
        if direction == "to_server":
            self._client_pos += size
            self._client_unsure = True  # the next line may be the rest of one the gap cut
            self._client_skip = False
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
                self._client_skip = self._client_unsure = False
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
        if self._client_unsure:  # the first line after a gap: a command, or the rest of one?
            self._client_unsure = False
            if not tokens or tokens[0] not in bzrc.COMMANDS:
                return None
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
        self._head.clear()
        self._skipping = skipping

    def _server(self, data: bytes, time: float, packet: int) -> list[Item]:
        items: list[Item] = []
        start = 0
        n = len(data)
        while start < n:
            if self._skipping:
                start = self._skip(data, start, items, time, packet)
                continue
            nl = data.find(b"\n", start)
            end = n if nl < 0 else nl + 1
            self._read(data[start:end], items, time, packet)
            start = end
        return items

    def _read(self, chunk: bytes, items: list[Item], time: float, packet: int) -> None:
        """Decode ``chunk``, a line or the part of one that has arrived."""
        self._at_line_start = chunk.endswith(b"\n")
        self._server_pos += len(chunk)
        try:
            responses = self._decoder.feed(chunk)
        except DecodeError as exc:
            for response in exc.partial or ():
                items.append(self._response_unit(response, b"", time, packet))
            items.append(self._error(exc, "to_client", time, packet))
            self._skipping = True
            return
        if not responses:
            self._response += chunk
            return
        for response in responses[:-1]:  # completed by this line's start (help output)
            items.append(self._response_unit(response, bytes(self._response), time, packet))
            self._response.clear()
        self._response += chunk
        items.append(self._response_unit(responses[-1], bytes(self._response), time, packet))
        self._response.clear()

    def _skip(self, data: bytes, start: int, items: list[Item], time: float, packet: int) -> int:
        """Skip from ``data[start:]`` to a line that starts with one of
        ``_RESYNC_STARTS`` (its first bytes may have come in earlier calls) and
        read that start with a fresh decoder; returns where reading goes on."""
        n = len(data)
        while start < n:
            if not self._at_line_start:
                nl = data.find(b"\n", start)
                end = n if nl < 0 else nl + 1
                self._server_pos += end - start
                self._at_line_start = nl >= 0
                start = end
                continue
            head = self._head
            stop = min(n, start + _RESYNC_LOOK - len(head))
            nl = data.find(b"\n", start, stop)
            end = stop if nl < 0 else nl + 1
            head += data[start:end]
            start = end
            if nl < 0 and len(head) < _RESYNC_LOOK:
                break  # the line's start is still arriving
            line_start = bytes(head)
            head.clear()
            if line_start.startswith(_RESYNC_STARTS):
                self._restart(skipping=False)  # the decoder starts at this line
                self._read(line_start, items, time, packet)
                break
            self._server_pos += len(line_start)
            self._at_line_start = nl >= 0
        return start

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
