"""Sans-IO BZRC sessions: a client and a server-side connection.

Neither does I/O or reads a clock: bytes go in with ``receive_data(data,
now)``, bytes to send come out of ``data_to_send``. BZRC replies carry no id:
the n-th response answers the n-th command still pending, so both sides keep
order. Both sessions follow :class:`gamecodec.sessions.StreamSession`.
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Iterable
from typing import Any

from gamecodec._public import public_dir
from gamecodec.bzrc._encode import encode, encode_response
from gamecodec.bzrc._errors import encode_error, local_error, remote_error
from gamecodec.bzrc._format import Dialect, format_number
from gamecodec.bzrc._help import TOPICS, UNDOCUMENTED, UNDOCUMENTED_FAIL, unknown_fail
from gamecodec.bzrc._impl import Decoder
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_PENDING,
    DEFAULT_MAX_RESPONSE,
    Ack,
    Answer,
    ClientEvent,
    Closed,
    Connected,
    Error,
    Fail,
    Greeting,
    Help,
    Listing,
    Number,
    OccGrid,
    Ok,
    Request,
    Response,
    Timer,
    Unsolicited,
)
from gamecodec.errors import DecodeError, RemoteProtocolError, TruncatedError

__all__ = [
    "HELP",
    "Answer",
    "ClientEvent",
    "ClientSession",
    "Closed",
    "Connected",
    "Request",
    "ServerSession",
    "Unsolicited",
]


def _warn_no_now(cls: str) -> None:
    warnings.warn(
        f"{cls}.receive_data(data) without now is deprecated; pass the time: "
        "receive_data(data, now) (now becomes required in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )


class ClientSession:
    """The client end: greeting, handshake, pipelined commands answered in order.

    Commands may be sent before the greeting arrives; they are written right
    after the handshake. ``help`` output has no terminator: it is answered
    when the next response starts, or when you call :meth:`end_help`.
    A broken stream raises :class:`~gamecodec.RemoteProtocolError` and closes
    the session; the events the same bytes delivered before the problem are
    then kept for :meth:`events`. The client keeps no timers.

    What it holds is bounded: the decoder's ``max_line``, ``max_grid_cells``,
    ``max_response`` and ``max_items`` (see :class:`~gamecodec.bzrc.Decoder`); pending
    commands and the bytes queued before the greeting by what the application
    sends; kept events by those of the one call that raised.
    """

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
        max_response: int = DEFAULT_MAX_RESPONSE,
        max_items: int = DEFAULT_MAX_ITEMS,
    ) -> None:
        self._parser = Decoder(
            max_line=max_line,
            max_grid_cells=max_grid_cells,
            max_response=max_response,
            max_items=max_items,
        )
        self._out = bytearray()
        self._held = bytearray()
        self._pending: deque[Request] = deque()
        self._events: list[ClientEvent] = []
        self._next_id = 0
        self.greeting: Greeting | None = None
        """The server's greeting, once it has arrived."""
        self.closed = False
        """True once the stream ended or broke: nothing more is accepted."""

    @property
    def pending(self) -> tuple[Request, ...]:
        """Commands still waiting for their response, oldest first."""
        return tuple(self._pending)

    def send(self, command: str, *args: object) -> Request:
        """Queue one command; returns the :class:`Request` its answer will name."""
        return self.send_many(((command, *args),))[0]

    def send_many(self, commands: Iterable[tuple[object, ...]]) -> list[Request]:
        """Queue several commands, all or none: ``[("speed", 0, 1.0), ("shoot", 0)]``.
        Every command is encoded before any is queued, so a bad argument in the
        last one raises with nothing queued (the others would otherwise run)."""
        if self.closed:
            raise local_error("the session is closed")
        batch = [(str(c[0]), c[1:]) for c in commands]
        data = b"".join(encode(name, *args) for name, args in batch)
        first = self._next_id
        requests = [Request(first + i, name, tuple(args)) for i, (name, args) in enumerate(batch)]
        self._next_id = first + len(requests)
        self._pending.extend(requests)
        (self._out if self.greeting is not None else self._held).extend(data)
        return requests

    def send_line(self, line: str) -> Request | None:
        """Queue one command line as typed, unchecked (the reference client's
        ``sendline``): its first word names the :class:`Request`, the other
        words are its ``args``, as text. A blank line is sent and answers
        nothing (``None``: the server ignores it). A line break inside, or a
        character latin-1 cannot write, raises :class:`~gamecodec.EncodeError`."""
        if self.closed:
            raise local_error("the session is closed")
        if "\n" in line:
            raise encode_error("a command line must not contain a line break")
        try:
            data = line.encode("latin-1") + b"\n"
        except UnicodeEncodeError:
            raise encode_error(f"command line {line!r} is not latin-1") from None
        words = [w.decode("latin-1") for w in data.split()]
        request = None
        if words:
            request = Request(self._next_id, words[0], tuple(words[1:]))
            self._next_id += 1
            self._pending.append(request)
        (self._out if self.greeting is not None else self._held).extend(data)
        return request

    def data_to_send(self) -> bytes:
        """Bytes to write to the server (and forget); ``b""`` when there are none."""
        data = bytes(self._out)
        self._out.clear()
        return data

    def receive_data(self, data: bytes, now: float | None = None) -> list[ClientEvent]:
        """Take bytes from the server at time ``now``; ``b""`` means end of stream.

        Returns the events those bytes delivered: :class:`Connected`,
        :class:`Answer`, :class:`Unsolicited`, and :class:`Closed` at the end.
        The end of the stream is the connection lost wherever it comes, also
        inside a reply: :class:`Closed` then names the command whose reply
        was cut short among ``pending`` (help output counts as complete).
        Calling it without ``now`` is deprecated.
        """
        if now is None:
            _warn_no_now("ClientSession")
        if self.closed:
            return []
        events: list[ClientEvent] = []
        try:
            try:
                responses = self._parser.feed(data) if data else self._parser.close()
            except TruncatedError as exc:  # the stream ended inside a reply: a loss
                responses = list(exc.partial or [])
            except DecodeError as exc:
                self.closed = True
                self._dispatch(exc.partial or [], events)
                raise remote_error(f"bad BZRC stream: {exc}") from exc
            self._dispatch(responses, events)
        except RemoteProtocolError:
            self._events += events
            raise
        if not data:
            self.closed = True
            events.append(Closed(tuple(self._pending)))
            self._pending.clear()
        return events

    def end_help(self) -> list[ClientEvent]:
        """Treat buffered help output as complete (it has no terminator)."""
        events: list[ClientEvent] = []
        try:
            self._dispatch(self._parser.flush(), events)
        except RemoteProtocolError:
            self._events += events
            raise
        return events

    def events(self) -> list[ClientEvent]:
        """Events not returned by the call that caused them, each once: those
        delivered by bytes whose :meth:`receive_data` raised."""
        events = self._events
        self._events = []
        return events

    def next_deadline(self) -> float | None:
        """Always ``None``: the client keeps no timers."""
        return None

    def handle_timeout(self, now: float) -> list[ClientEvent]:
        """Always ``[]``: the client keeps no timers."""
        return []

    def _dispatch(self, responses: list[Response], events: list[ClientEvent]) -> None:
        for response in responses:
            if isinstance(response, Greeting):
                if self.greeting is not None or response.protocol != "bzrobots":
                    self.closed = True
                    raise remote_error(f"unexpected greeting {response!r}")
                self.greeting = response
                self._out += b"agent 1\n" + self._held
                self._held.clear()
                events.append(Connected(response))
                continue
            if self.greeting is None:
                self.closed = True
                raise remote_error(f"{response!r} before the greeting")
            if (
                isinstance(response, Fail)
                and response.ack is None
                and response.comment == ("Unrecognized handshake")
            ) or (isinstance(response, Error) and response.message == "agent expected"):
                self.closed = True
                raise remote_error(f"handshake refused: {response!r}")
            if isinstance(response, Error) and not (
                self._pending and response.message.startswith("Invalid request")
            ):
                events.append(Unsolicited(response))
                continue
            if not self._pending:
                self.closed = True
                raise remote_error(f"{response!r} answers no command")
            request = self._pending.popleft()
            if isinstance(response, Help) and request.command != "help":
                self.closed = True
                raise remote_error(f"help output answers {request.command!r}")
            ack = getattr(response, "ack", None)
            if ack is not None and ack.command != request.command:
                self.closed = True
                raise remote_error(f"ack for {ack.command!r} answers {request.command!r}")
            events.append(Answer(request, response))


# -- server side -----------------------------------------------------------------

HELP: dict[str, tuple[str, ...]] = dict(TOPICS)
"""What :class:`ServerSession` answers ``help <command>`` with: bzrflag's
own texts (``bzrflag/server.py`` at ``37eb537``, each ``bzrc_*`` method's
docstring), one string per line. A bare ``help`` lists each entry's first
line, in name order, as bzrflag does; ``help taunt`` and ``help endgame``
get bzrflag's ``fail`` for a command without a docstring."""

_NO_ARGS = frozenset(
    {
        "teams",
        "obstacles",
        "bases",
        "flags",
        "shots",
        "mytanks",
        "othertanks",
        "constants",
        "scores",
        "timer",
        "quit",
        "endgame",
    }
)
_TANK_VALUE = frozenset({"speed", "angvel"})
_LEGACY = frozenset({"accelx", "accely"})


def _py_int(token: str) -> int | None:
    """Python 2's ``int()`` of a byte-string token: no underscores, and only
    ASCII whitespace is whitespace (``1\x85`` is not a number)."""
    if "_" in token:
        return None
    try:
        return int(token.encode("latin-1"))
    except ValueError:
        return None


def _py_float(token: str) -> float | None:
    """Python 2's ``float()`` of a byte-string token (see :func:`_py_int`)."""
    if "_" in token:
        return None
    try:
        return float(token.encode("latin-1"))
    except ValueError:
        return None


class ServerSession:
    """A bzrflag-style server-side connection.

    The greeting is queued at once. ``receive_data(data)`` returns the valid
    commands as :class:`Request` objects (args parsed); everything the server
    answers by itself is answered here, in sequence: blank lines (ignored),
    the handshake, unknown verbs, wrong arguments (with the double ``fail``
    of speed/angvel), ``nan`` speeds, ``help`` and ``quit``. Answer each
    request with :meth:`respond`; output leaves in request order. ``now`` is
    the time the connection was accepted (acks count seconds from it);
    ``dialect`` picks bzrflag's or the BZFlag C++ number format, ``mytank_gap``
    keeps bzrflag's 28 spaces, ``legacy_accel`` accepts ``accelx``/``accely``.
    The server keeps no timers and raises no events of its own.

    What it holds is bounded: a partial command line by ``max_line``;
    commands whose answers have not been sent (unanswered ones and the
    answers queued behind them) by ``max_pending`` (1,024; one more closes
    the session with :class:`~gamecodec.RemoteProtocolError`); output by what
    one :meth:`receive_data` call produces until :meth:`data_to_send` takes it.
    """

    def __init__(
        self,
        now: float = 0.0,
        *,
        dialect: Dialect = "bzrflag",
        mytank_gap: bool = True,
        legacy_accel: bool = False,
        max_line: int = DEFAULT_MAX_LINE,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending {max_pending!r} is not >= 1")
        self.max_pending = max_pending
        self._start = now
        self._now = now
        self.dialect: Dialect = dialect
        self.mytank_gap = mytank_gap
        self.legacy_accel = legacy_accel
        self.max_line = max_line
        self._in = bytearray()
        self._out = bytearray(b"bzrobots 1\n")
        self._slots: dict[int, bytes | None] = {}
        self._echo: dict[int, tuple[str, ...]] = {}
        self._next_id = 0
        self._next_out = 0
        self.established = False
        self.closing = False

    @property
    def closed(self) -> bool:
        """True once the connection should be closed after flushing output."""
        return self.closing and not self._slots

    @property
    def unanswered(self) -> tuple[int, ...]:
        """Ids of requests still waiting for :meth:`respond`."""
        return tuple(i for i, data in self._slots.items() if data is None)

    def data_to_send(self) -> bytes:
        """Bytes to write to the client (and forget); ``b""`` when there are none."""
        data = bytes(self._out)
        self._out.clear()
        return data

    def receive_data(self, data: bytes, now: float) -> list[Request]:
        """Take bytes from the client at time ``now``; return the commands the
        caller answers. ``b""`` means the client closed its end: what is
        pending is still answered, then :attr:`closed` turns true."""
        if self.closing:
            return []
        if not data:
            self.closing = True
            return []
        self._now = now
        self._in += data
        requests: list[Request] = []
        while not self.closing:
            nl = self._in.find(b"\n")
            if nl < 0:
                if len(self._in) > self.max_line:
                    self.closing = True
                    raise remote_error("command line longer than max_line")
                break
            line = bytes(self._in[:nl])
            del self._in[: nl + 1]
            request = self._line(line)
            if request is not None:
                requests.append(request)
        return requests

    def events(self) -> list[Any]:
        """Always ``[]``: the server raises no events (commands come back from
        :meth:`receive_data`)."""
        return []

    def next_deadline(self) -> float | None:
        """Always ``None``: the server keeps no timers."""
        return None

    def handle_timeout(self, now: float) -> list[Any]:
        """Always ``[]``: the server keeps no timers."""
        return []

    def respond(
        self, request: Request, response: Response, now: float, *, ack: bool = True
    ) -> None:
        """Answer ``request`` with an Ok/Fail/Listing/Timer/OccGrid whose ack
        the session fills in (seconds since accept, the echo); ``ack=False``
        sends it without one (bzrflag's dead-tank occgrid ``fail``)."""
        if self._slots.get(request.id, b"") is not None:
            raise local_error(f"request {request.id} is not waiting for an answer")
        if not isinstance(response, Ok | Fail | Listing | Timer | OccGrid):
            raise local_error(f"{type(response).__name__} is not a command answer")
        echo = self._echo[request.id]
        if echo[0] == "occgrid" and isinstance(response, OccGrid):
            echo = ("occgrid",)  # bzrflag acks a served grid without the tank id
        head = Ack(now - self._start, echo[0], echo[1:]) if ack else None
        data = encode_response(
            response._replace(ack=head), dialect=self.dialect, mytank_gap=self.mytank_gap
        )  # an EncodeError leaves the request waiting for another answer
        del self._echo[request.id]
        self._fill(request.id, data)

    def ok(self, request: Request, now: float) -> None:
        """Answer ``request`` with ``ok``."""
        self.respond(request, Ok(None), now)

    def fail(self, request: Request, now: float, comment: str = "") -> None:
        """Answer ``request`` with ``fail [comment]``."""
        self.respond(request, Fail(None, comment, False), now)

    # -- internals -----------------------------------------------------------

    def _slot(self) -> int:
        if len(self._slots) >= self.max_pending:
            self.closing = True
            raise remote_error(f"more than max_pending {self.max_pending} commands unanswered")
        slot = self._next_id
        self._next_id += 1
        self._slots[slot] = None
        return slot

    def _fill(self, slot: int, data: bytes) -> None:
        self._slots[slot] = data
        while self._slots.get(self._next_out) is not None:
            self._out += self._slots.pop(self._next_out) or b""
            self._next_out += 1

    def _auto(self, data: bytes) -> None:
        self._fill(self._slot(), data)

    def _ack_line(self, words: list[str]) -> bytes:
        time = format_number(self._now - self._start, self.dialect)
        return (" ".join(["ack", time, *words]) + "\n").encode("latin-1")

    def _line(self, line: bytes) -> Request | None:
        tokens = [t.decode("latin-1") for t in line.split()]
        if not tokens:
            return None
        if not self.established:
            if tokens == ["agent", "1"]:
                self.established = True
                return None
            self._out += b"fail Unrecognized handshake\n"
            self.closing = True
            return None
        verb, args = tokens[0], tokens[1:]
        known = verb in _NO_ARGS or verb in _TANK_VALUE or verb in {"shoot", "occgrid", "taunt"}
        if self.legacy_accel and verb in _LEGACY:
            known = True
        if verb == "help":
            self._auto(self._help(args))
            return None
        if not known:
            self._auto(b"fail invalid command\n")
            return None
        parsed = self._parse_args(verb, args)
        if parsed is None:
            extra = b"fail\n" if verb in _TANK_VALUE or verb in _LEGACY else b""
            self._auto(self._ack_line([verb, *args]) + b"fail Invalid parameter(s)\n" + extra)
            return None
        echo = tuple(
            format_number(v, self.dialect) if isinstance(v, int | float) else v for v in parsed
        )
        if verb == "occgrid":
            echo = tuple(args)  # bzrflag echoes an occgrid's tank id as sent
        if verb in _TANK_VALUE and math.isnan(parsed[1]):
            self._auto(self._ack_line([verb, *echo]) + b"fail not a number\n")
            return None
        slot = self._slot()
        self._echo[slot] = (verb, *echo)
        request = Request(slot, verb, parsed)
        if verb == "quit":
            self.respond(request, Ok(None), self._now)
            self.closing = True
            return None
        return request

    def _parse_args(self, verb: str, args: list[str]) -> tuple[Any, ...] | None:
        if verb in _NO_ARGS:
            return () if not args else None
        if verb == "taunt":
            return tuple(args)
        if verb in {"shoot", "occgrid"}:
            if len(args) != 1:
                return None
            tank = _py_int(args[0])
            return None if tank is None else (tank,)
        if len(args) != 2:
            return None
        tank = _py_int(args[0])
        value = _py_float(args[1])
        if tank is None or value is None:
            return None
        number: Number = value
        return (tank, number)

    def _help(self, args: list[str]) -> bytes:
        """bzrflag's ``bzrc_help`` (``server.py:207-229``): the listing, a
        topic's text, or an ack-less ``fail``."""
        if not args:
            lines = [HELP[name][0] for name in sorted(HELP) if HELP[name]]
        # bzrflag's bzrc_help reads args[1] (the first argument) and ignores the rest
        elif args[0] in HELP:
            lines = list(HELP[args[0]])
        elif args[0] in UNDOCUMENTED:
            lines = [UNDOCUMENTED_FAIL]
        else:
            lines = [unknown_fail(args[0])]
        return "".join(line + "\n" for line in lines).encode("latin-1", "replace")


__dir__ = public_dir(__name__)
