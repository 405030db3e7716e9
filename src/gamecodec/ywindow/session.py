"""Sans-IO ywindow peer: the handshake, then calls, replies and events.

The peer takes bytes (``receive_data(data, now)``) and returns the events
they produced; it hands out bytes to send (``data_to_send``). It does no I/O
and reads no clock; it follows :class:`gamecodec.sessions.StreamSession`.
Replies carry no id: the n-th ``r`` answers the n-th ``c`` still pending, and
``v`` messages in between are delivered as events.
"""

from __future__ import annotations

import hmac
import os
import warnings
from collections import deque
from itertools import islice

from gamecodec._public import public_dir
from gamecodec.errors import DecodeError, RemoteProtocolError
from gamecodec.ywindow import _encode
from gamecodec.ywindow._errors import local_error, remote_error
from gamecodec.ywindow._impl import Decoder
from gamecodec.ywindow._models import (
    COOKIE_SIZE,
    DIGEST_SIZE,
    MAX_GREETING,
    MAX_MESSAGE,
    MAX_UNANSWERED,
    Authenticated,
    AuthenticationFailed,
    Call,
    CallHandle,
    ConnectionClosed,
    Encodable,
    Message,
    Notification,
    PeerEvent,
    Reply,
    Role,
    State,
)
from gamecodec.ywindow.authority import check_authority, digest
from gamecodec.ywindow.greeting import encode_greeting, parse_greeting

__all__ = ["Peer"]

_OTHER = {Role.CLIENT: Role.SERVER, Role.SERVER: Role.CLIENT}


class Peer:
    """One end of a ywindow connection, client or server.

    Order of the handshake: both greeting lines, both 256-byte
    cookies, both MD5(authority || cookie) digests. The server speaks first;
    the client proves itself first: the server sends its digest only once the
    client's checked out, so it never answers a cookie for someone who does not
    know the authority, and either side refuses a cookie equal to its own (a
    reflected handshake). A digest mismatch or a reflected cookie closes the
    connection (:class:`AuthenticationFailed`).
    Protocol violations raise :class:`~gamecodec.RemoteProtocolError` and
    close the peer; misuse raises :class:`~gamecodec.LocalProtocolError`.
    ``software`` goes into our greeting line; ``cookie`` (256 bytes) replaces
    the random one (for tests); ``max_message`` caps one incoming message.
    The peer keeps no timers.

    What the peer holds is bounded: one incoming message by ``max_message``
    (16 MiB), incoming calls not yet replied to by ``max_unanswered`` (1,024;
    one more closes the peer with :class:`~gamecodec.RemoteProtocolError`),
    the handshake bytes by one :meth:`receive_data` call, the events by those
    of one call (until :meth:`events` takes them), and our calls waiting for a
    reply by what the application sends.
    """

    def __init__(
        self,
        role: Role | str,
        authority: bytes,
        *,
        software: str = "gamecodec",
        cookie: bytes | None = None,
        max_message: int = MAX_MESSAGE,
        max_unanswered: int = MAX_UNANSWERED,
    ) -> None:
        if max_unanswered < 1:
            raise ValueError(f"max_unanswered {max_unanswered!r} is not >= 1")
        self.role = Role(role)
        self._max_unanswered = max_unanswered
        self._authority = check_authority(authority)
        self._greeting = encode_greeting(self.role, software)
        self._cookie = os.urandom(COOKIE_SIZE) if cookie is None else bytes(cookie)
        if len(self._cookie) != COOKIE_SIZE:
            raise ValueError(f"cookie of {len(self._cookie)} bytes, not {COOKIE_SIZE}")
        self._max_message = max_message
        Decoder(max_message=max_message)  # validate early
        self._decoder: Decoder | None = None
        self._state = State.GREETING
        self._in = bytearray()
        self._consumed = 0
        self._out = bytearray()
        self._events: deque[PeerEvent] = deque()
        self._server_cookie = b""
        self._their_cookie = b""
        self._pending: deque[CallHandle] = deque()
        self._next_call = 0
        self._incoming: dict[int, bytes | None] = {}
        self._next_incoming = 0
        self._next_answer = 0
        if self.role is Role.SERVER:
            self._out += self._greeting

    @classmethod
    def client(
        cls,
        authority: bytes,
        *,
        software: str = "gamecodec",
        cookie: bytes | None = None,
        max_message: int = MAX_MESSAGE,
        max_unanswered: int = MAX_UNANSWERED,
    ) -> Peer:
        """A client peer (see the class for the keyword arguments)."""
        return cls(
            Role.CLIENT,
            authority,
            software=software,
            cookie=cookie,
            max_message=max_message,
            max_unanswered=max_unanswered,
        )

    @classmethod
    def server(
        cls,
        authority: bytes,
        *,
        software: str = "gamecodec",
        cookie: bytes | None = None,
        max_message: int = MAX_MESSAGE,
        max_unanswered: int = MAX_UNANSWERED,
    ) -> Peer:
        """A server peer: its greeting is ready to send at once."""
        return cls(
            Role.SERVER,
            authority,
            software=software,
            cookie=cookie,
            max_message=max_message,
            max_unanswered=max_unanswered,
        )

    # -- state ----------------------------------------------------------

    @property
    def state(self) -> State:
        """Where the peer is: greeting, cookie, digest, open or closed."""
        return self._state

    @property
    def closed(self) -> bool:
        """Whether the connection should be (or is) closed."""
        return self._state is State.CLOSED

    @property
    def pending_calls(self) -> tuple[CallHandle, ...]:
        """Our calls still waiting for a reply, oldest first."""
        return tuple(self._pending)

    @property
    def unanswered_calls(self) -> tuple[int, ...]:
        """Ids of incoming calls we have not replied to yet."""
        return tuple(i for i, r in self._incoming.items() if r is None)

    # -- input ----------------------------------------------------------

    def receive_data(self, data: bytes, now: float | None = None) -> list[PeerEvent]:
        """Take bytes from the other side at time ``now``; ``b""`` means end of
        stream. Returns the events those bytes produced, oldest first.

        If it raises, the events the same bytes produced before the problem
        are kept for :meth:`events`. Calling it without ``now`` is deprecated;
        such calls also leave the events queued for :meth:`events`, as before.
        """
        events = self._events
        before = len(events)
        if now is None:
            warnings.warn(
                "Peer.receive_data(data) without now is deprecated; pass the time: "
                "receive_data(data, now), which returns the events (now becomes "
                "required in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            self._receive(data)
            return list(islice(events, before, None))
        self._receive(data)
        if not before:
            produced = list(events)
            events.clear()
            return produced
        produced = [events.pop() for _ in range(len(events) - before)]
        produced.reverse()
        return produced

    def next_deadline(self) -> float | None:
        """Always ``None``: the peer keeps no timers."""
        return None

    def handle_timeout(self, now: float) -> list[PeerEvent]:
        """Always ``[]``: the peer keeps no timers."""
        return []

    def _receive(self, data: bytes) -> None:
        if self._state is State.CLOSED:
            if data:
                raise local_error("receive_data on a closed peer")
            return
        if not data:
            self._end_of_stream()
            return
        if self._state is State.OPEN:
            self._feed(data)
            return
        self._in += data
        self._handshake()

    def events(self) -> list[PeerEvent]:
        """The events not returned by the call that caused them, oldest first,
        each once: those of a :meth:`receive_data` call that raised, and the
        :class:`ConnectionClosed` that :meth:`close` raises."""
        out = list(self._events)
        self._events.clear()
        return out

    def next_event(self) -> PeerEvent | None:
        """The oldest event not yet taken, or ``None``."""
        return self._events.popleft() if self._events else None

    def data_to_send(self) -> bytes:
        """Bytes to write to the other side (and forget)."""
        out = bytes(self._out)
        self._out.clear()
        return out

    def _fail(self, text: str) -> RemoteProtocolError:
        self._state = State.CLOSED
        return remote_error(text)

    def _end_of_stream(self) -> None:
        decoder = self._decoder
        self._state = State.CLOSED
        if decoder is not None:
            try:
                decoder.close()
            except DecodeError as exc:
                raise remote_error(str(exc)) from exc
        self._events.append(ConnectionClosed(tuple(h.id for h in self._pending)))

    def _handshake(self) -> None:
        buf = self._in
        other = _OTHER[self.role]
        while True:
            if self._state is State.GREETING:
                end = buf.find(b"\n", 0, MAX_GREETING)
                if end < 0:
                    if len(buf) >= MAX_GREETING:
                        raise self._fail(f"no newline in the first {MAX_GREETING} bytes")
                    return
                try:
                    greeting = parse_greeting(bytes(buf[: end + 1]), other)
                except RemoteProtocolError:
                    self._state = State.CLOSED
                    raise
                self._take(end + 1)
                self._events.append(greeting)
                if self.role is Role.CLIENT:
                    self._out += self._greeting
                self._out += self._cookie
                self._state = State.COOKIE
            elif self._state is State.COOKIE:
                if len(buf) < COOKIE_SIZE:
                    return
                theirs = self._take(COOKIE_SIZE)
                mine = self._cookie
                if hmac.compare_digest(theirs, mine):
                    # answering would hand back the very digest we expect
                    self._state = State.CLOSED
                    self._events.append(AuthenticationFailed(f"{other.value} sent our own cookie"))
                    buf.clear()
                    return
                self._their_cookie = theirs
                self._server_cookie = mine if self.role is Role.SERVER else theirs
                if self.role is Role.CLIENT:
                    self._out += digest(self._authority, theirs)
                self._state = State.DIGEST
            else:
                if len(buf) < DIGEST_SIZE:
                    return
                answer = self._take(DIGEST_SIZE)
                if not hmac.compare_digest(answer, digest(self._authority, self._cookie)):
                    self._state = State.CLOSED
                    self._events.append(AuthenticationFailed(f"{other.value} digest mismatch"))
                    buf.clear()
                    return
                if self.role is Role.SERVER:  # the client has proved itself: answer it
                    self._out += digest(self._authority, self._their_cookie)
                self._state = State.OPEN
                self._decoder = Decoder(max_message=self._max_message, offset=self._consumed)
                self._events.append(Authenticated(self._server_cookie))
                rest = bytes(buf)
                buf.clear()
                if rest:
                    self._feed(rest)
                return

    def _take(self, n: int) -> bytes:
        out = bytes(self._in[:n])
        del self._in[:n]
        self._consumed += n
        return out

    def _feed(self, data: bytes) -> None:
        assert self._decoder is not None
        try:
            messages = self._decoder.feed(data)
        except DecodeError as exc:
            for message in exc.partial or ():
                self._dispatch(message)
            raise self._fail(str(exc)) from exc
        for message in messages:
            self._dispatch(message)

    def _dispatch(self, message: Message) -> None:
        if message.kind == "r":
            if not self._pending:
                raise self._fail(f"reply {message.words!r} with no pending call")
            handle = self._pending.popleft()
            handle.values = message.words
            self._events.append(Reply(handle.id, message.words))
            return
        method = message.method
        if method is None:
            raise self._fail(f"{message.kind!r} message without a method keyword")
        args = message.words[1:]
        if message.kind == "c":
            if len(self._incoming) >= self._max_unanswered:
                raise self._fail(f"more than max_unanswered {self._max_unanswered} incoming calls")
            call_id = self._next_incoming
            self._next_incoming += 1
            self._incoming[call_id] = None
            self._events.append(Call(call_id, method, args))
        else:
            self._events.append(Notification(method, args))

    # -- output ---------------------------------------------------------

    def _require_open(self, what: str) -> None:
        if self._state is not State.OPEN:
            raise local_error(f"{what} while the peer is {self._state.value}")

    def call(self, method: str, *args: Encodable) -> CallHandle:
        """Send a ``c``; the handle resolves when its reply arrives."""
        self._require_open("call")
        data = _encode.call(method, *args)
        handle = CallHandle(self._next_call, method, args)
        self._next_call += 1
        self._pending.append(handle)
        self._out += data
        return handle

    def notify(self, method: str, *args: Encodable) -> None:
        """Send a ``v``: a call without reply, or an event."""
        self._require_open("notify")
        self._out += _encode.notify(method, *args)

    def reply(self, call: int | Call, *values: Encodable) -> None:
        """Answer incoming call ``call`` (an id or the :class:`Call`). Replies
        go out in the order the calls came in, whatever order they are given."""
        self._require_open("reply")
        call_id = call.id if isinstance(call, Call) else call
        if self._incoming.get(call_id, b"") is not None:
            raise local_error(f"no unanswered incoming call {call_id}")
        self._incoming[call_id] = _encode.reply(*values)
        while self._incoming.get(self._next_answer) is not None:
            data = self._incoming.pop(self._next_answer)
            assert data is not None
            self._out += data
            self._next_answer += 1

    def close(self) -> None:
        """Stop: later sends raise, later input is refused. If the peer was
        not closed yet, :meth:`events` then returns a :class:`ConnectionClosed`
        (``by_peer=False``) naming our calls that will never get a reply."""
        if self._state is not State.CLOSED:
            self._state = State.CLOSED
            self._events.append(ConnectionClosed(tuple(h.id for h in self._pending), False))


__dir__ = public_dir(__name__)
