"""Pure-Python twin of the BZRC response decoder (the compiled twin is
``_codec_c.pyx``; the tests hold the two together).

The decoder is a line-by-line state machine over a byte stream. Lines end at
``\\n``; tokens are runs of anything but ASCII whitespace (``bytes.split()``,
so ``\\r`` and the 28-space ``mytank`` gap do not matter). Text fields are
decoded as latin-1, so every byte survives. numpy is imported when the first
``occgrid`` body is decoded, not before.
"""

from __future__ import annotations

import re
from threading import Lock

from gamecodec.bzrc._errors import decode_error, in_use, truncated
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_RESPONSE,
    DOUBLE_FAIL_COMMANDS,
    Ack,
    Base,
    Constant,
    Error,
    Fail,
    Flag,
    Greeting,
    Help,
    Item,
    Listing,
    MyTank,
    Number,
    Obstacle,
    OccGrid,
    Ok,
    OtherTank,
    Response,
    Score,
    Shot,
    Team,
    Timer,
)
from gamecodec.errors import DecodeError

__all__ = ["Decoder", "parse_number"]

MAX_INT_DIGITS = 18
"""Integer tokens with more digits are rejected (they never occur, and Python's
``int()`` refuses very long ones)."""

_INT = re.compile(rb"[+-]?[0-9]+\Z")
_CELLS = bytes.maketrans(b"01", b"\x00\x01")
_INDENT = frozenset(b" \t\r\x0b\x0c")
_NOT_ITEMS = frozenset({b"ack", b"ok", b"fail", b"begin", b"timer", b"bzrobots", b"at", b"size"})

# parser states
_TOP = 0
_AFTER_ACK = 1
_LIST = 2
_GRID_SIZE = 3
_GRID_BODY = 4
_GRID_END = 5
_HELP = 6
_EXTRA_FAIL = 7


def _token_offset(line: bytes, index: int) -> int:
    """Offset inside ``line`` of its ``index``-th whitespace-separated token."""
    pos = 0
    count = -1
    n = len(line)
    while pos < n:
        while pos < n and line[pos] in b" \t\n\r\x0b\x0c":
            pos += 1
        if pos >= n:
            break
        count += 1
        if count == index:
            return pos
        while pos < n and line[pos] not in b" \t\n\r\x0b\x0c":
            pos += 1
    return n


def parse_number(token: bytes) -> Number | None:
    """A wire number: ``int`` for ``[+-]?digits`` (at most 18 digits), else
    whatever ``float()`` accepts without underscores; None if neither."""
    if _INT.match(token):
        digits = len(token) - (token[:1] in b"+-")
        return int(token) if digits <= MAX_INT_DIGITS else None
    if b"_" in token or token.split() != [token]:  # float() would strip whitespace
        return None
    try:
        return float(token)
    except ValueError:
        return None


def _num(tokens: list[bytes], index: int, line: bytes, start: int) -> Number:
    value = parse_number(tokens[index])
    if value is None:
        raise decode_error("bad number", start + _token_offset(line, index))
    return value


def _int(tokens: list[bytes], index: int, line: bytes, start: int) -> int:
    token = tokens[index]
    if _INT.match(token) and len(token) - (token[:1] in b"+-") <= MAX_INT_DIGITS:
        return int(token)
    raise decode_error("bad integer", start + _token_offset(line, index))


def _text(token: bytes) -> str:
    return token.decode("latin-1")


def _rest(line: bytes) -> str:
    """The line after its first token, without surrounding whitespace."""
    parts = line.split(None, 1)
    return parts[1].rstrip().decode("latin-1") if len(parts) > 1 else ""


def _count(tokens: list[bytes], n: int, line: bytes, start: int) -> None:
    if len(tokens) != n:
        word = tokens[0].decode("latin-1")
        raise decode_error(f"{word} line of {len(tokens)} fields, expected {n}", start)


def _corners(
    tokens: list[bytes], first: int, line: bytes, start: int
) -> tuple[tuple[Number, Number], ...]:
    n = len(tokens) - first
    if n < 2 or n % 2:
        word = tokens[0].decode("latin-1")
        raise decode_error(f"{word} line with {n} coordinates", start)
    values = [_num(tokens, i, line, start) for i in range(first, len(tokens))]
    return tuple(zip(values[0::2], values[1::2], strict=True))


def _item(tokens: list[bytes], line: bytes, start: int) -> Item:
    word = tokens[0]
    if word == b"mytank":
        _count(tokens, 13, line, start)
        return MyTank(
            _int(tokens, 1, line, start),
            _text(tokens[2]),
            _text(tokens[3]),
            _int(tokens, 4, line, start),
            _num(tokens, 5, line, start),
            _text(tokens[6]),
            _num(tokens, 7, line, start),
            _num(tokens, 8, line, start),
            _num(tokens, 9, line, start),
            _num(tokens, 10, line, start),
            _num(tokens, 11, line, start),
            _num(tokens, 12, line, start),
        )
    if word == b"othertank":
        _count(tokens, 8, line, start)
        return OtherTank(
            _text(tokens[1]),
            _text(tokens[2]),
            _text(tokens[3]),
            _text(tokens[4]),
            _num(tokens, 5, line, start),
            _num(tokens, 6, line, start),
            _num(tokens, 7, line, start),
        )
    if word == b"shot":
        _count(tokens, 5, line, start)
        return Shot(*(_num(tokens, i, line, start) for i in range(1, 5)))
    if word == b"flag":
        _count(tokens, 5, line, start)
        return Flag(
            _text(tokens[1]),
            _text(tokens[2]),
            _num(tokens, 3, line, start),
            _num(tokens, 4, line, start),
        )
    if word == b"team":
        _count(tokens, 3, line, start)
        return Team(_text(tokens[1]), _int(tokens, 2, line, start))
    if word == b"obstacle":
        return Obstacle(_corners(tokens, 1, line, start))
    if word == b"base":
        if len(tokens) < 2:
            raise decode_error("base line without a colour", start)
        return Base(_text(tokens[1]), _corners(tokens, 2, line, start))
    if word == b"constant":
        _count(tokens, 3, line, start)
        return Constant(_text(tokens[1]), _text(tokens[2]))
    if word == b"score":
        _count(tokens, 4, line, start)
        return Score(_text(tokens[1]), _text(tokens[2]), _num(tokens, 3, line, start))
    if word in _NOT_ITEMS:
        raise decode_error("list not terminated by end", start)
    raise decode_error("unknown list item", start)


def _ack(tokens: list[bytes], line: bytes, start: int) -> Ack:
    if len(tokens) < 2:
        raise decode_error("ack without a time", start)
    command = _text(tokens[2]) if len(tokens) > 2 else ""
    return Ack(_num(tokens, 1, line, start), command, tuple(_text(t) for t in tokens[3:]))


def _pair(token: bytes, sep: bytes, offset: int) -> tuple[int, int]:
    parts = token.split(sep)
    if len(parts) != 2 or not all(
        _INT.match(p) and len(p) - (p[:1] in b"+-") <= MAX_INT_DIGITS for p in parts
    ):
        raise decode_error("bad occgrid header", offset)
    return int(parts[0]), int(parts[1])


class Decoder:
    """Bytes in any chunking -> typed responses, in order.

    ``feed(data)`` returns every response completed by ``data``. Help output
    has no terminator: its lines after the first are empty or indented (or,
    for a bare ``help``, start with ``:``) and a response line never is, so
    it is returned when the next response starts, or by :meth:`flush`. A
    decoding error is raised as :class:`~gamecodec.DecodeError` with the
    absolute stream offset and the responses completed earlier in the same
    call as ``partial``; the parser then stays broken (every later call
    raises the same error; :attr:`offset` stays at the start of the bad
    line, and it is not :attr:`idle`) and drops the response it was reading.

    Caps on what a peer can make the decoder hold: ``max_line`` a line's
    bytes (and so the partial line buffered), ``max_grid_cells`` an occgrid's
    W*H (allocated when its size line arrives), ``max_response`` the bytes a
    list (``begin`` to ``end``) or a help output spans, ``max_items`` what a
    list holds (:data:`~gamecodec.bzrc.DEFAULT_MAX_ITEMS`); past a cap the
    decoder raises :class:`~gamecodec.DecodeError`. Feeding costs O(bytes)
    whatever the chunking (a partial line is never scanned twice).

    Threads: one decoder serves one stream, from one thread at a time; a call
    made while another thread is inside it raises a
    :class:`~gamecodec.DecodeError` and changes nothing (share a decoder only
    under a lock). The responses it returns are the caller's: decoding never
    touches them again, so they may be passed to and read by other threads.
    """

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
        max_response: int = DEFAULT_MAX_RESPONSE,
        max_items: int = DEFAULT_MAX_ITEMS,
    ) -> None:
        if max_line < 1 or max_grid_cells < 0 or max_response < 1 or max_items < 0:
            raise ValueError(
                "max_line and max_response must be >= 1, max_grid_cells and max_items >= 0"
            )
        lock: Lock | None = getattr(self, "_lock", None)
        if lock is None:
            lock = self._lock = Lock()
        if not lock.acquire(False):
            raise in_use(self.offset)
        try:
            self.max_line = max_line
            self.max_grid_cells = max_grid_cells
            self.max_response = max_response
            self.max_items = max_items
            self._held = 0  # what the list being read holds (see max_items)
            self._buf = bytearray()
            self._scanned = 0  # bytes at the start of _buf known to hold no newline
            self._bytes_scanned = 0  # see bytes_scanned
            self._base = 0
            self._state = _TOP
            self._ack: Ack | None = None
            self._items: list[Item] = []
            self._help: list[str] = []
            self._help_listing = False  # every help line so far starts with ":"
            self._help_at = 0  # where the last help line started
            self._fail: Fail | None = None
            self._first = 0  # where the list or help output being read started
            self._gx = 0
            self._gy = 0
            self._gw = 0
            self._gh = 0
            self._rows = 0
            self._cells = bytearray()
            self._failed: DecodeError | None = None
        finally:
            lock.release()

    @property
    def offset(self) -> int:
        """Absolute stream offset of the first byte not yet consumed."""
        return self._base

    @property
    def bytes_scanned(self) -> int:
        """Bytes this decoder has read from its buffer, summed over its feeds:
        each search for a line end from where the last one stopped (and, in
        the compiled twin, occgrid rows converted in place and a held partial
        line copied to join the next chunk). A count of its work, within a
        small multiple of the bytes fed whatever their chunking."""
        return self._bytes_scanned

    @property
    def idle(self) -> bool:
        """True between responses with no partial line buffered."""
        return self._state == _TOP and not self._buf

    def feed(self, data: bytes | bytearray | memoryview) -> list[Response]:
        """Consume ``data``; return the responses it completed."""
        lock = self._lock
        if not lock.acquire(False):
            raise in_use(self._base)
        try:
            return self._feed(data)
        finally:
            lock.release()

    def _feed(self, data: bytes | bytearray | memoryview) -> list[Response]:
        if self._failed is not None:
            raise self._failed.with_traceback(None)
        out: list[Response] = []
        buf = self._buf
        buf += data
        pos = 0
        line_at = 0
        scanned = self._scanned
        try:
            while True:
                line_at = pos
                search_at = pos + scanned
                nl = buf.find(b"\n", search_at)
                if nl < 0:
                    self._bytes_scanned += len(buf) - search_at
                    if len(buf) - pos > self.max_line:
                        raise decode_error("line longer than max_line", self._base + pos)
                    scanned = len(buf) - pos
                    break
                scanned = 0
                self._bytes_scanned += nl + 1 - search_at
                if nl - pos > self.max_line:
                    raise decode_error("line longer than max_line", self._base + pos)
                line = bytes(buf[pos:nl])
                start = self._base + pos
                pos = nl + 1
                self._line(line, start, out)
        except DecodeError as exc:
            exc.partial = out
            self._fail_with(exc)
            pos = line_at  # the bad line stays unconsumed: offset is where it starts
            raise
        finally:
            self._scanned = scanned
            if pos:
                del buf[:pos]
                self._base += pos
        return out

    def _fail_with(self, exc: DecodeError) -> None:
        """Break the decoder for good, dropping the response it was reading."""
        self._failed = exc
        self._items = []
        self._help = []
        self._cells = bytearray()
        self._ack = self._fail = None
        self._held = 0

    def flush(self) -> list[Response]:
        """Return what only the next line could complete: pending help output,
        or a speed/angvel ``fail`` still waiting for its second ``fail``."""
        lock = self._lock
        if not lock.acquire(False):
            raise in_use(self._base)
        try:
            return self._flush()
        finally:
            lock.release()

    def _flush(self) -> list[Response]:
        if self._failed is not None:
            raise self._failed.with_traceback(None)
        out: list[Response] = []
        if self._state == _HELP:
            out.append(Help(tuple(self._help)))
            self._help = []
            self._state = _TOP
        elif self._state == _EXTRA_FAIL:
            assert self._fail is not None
            out.append(self._fail)
            self._fail = None
            self._state = _TOP
        return out

    def close(self) -> list[Response]:
        """End of stream: :meth:`flush`, then raise
        :class:`~gamecodec.TruncatedError` if a response or line is incomplete."""
        lock = self._lock
        if not lock.acquire(False):
            raise in_use(self._base)
        try:
            out = self._flush()
            if self._state != _TOP or self._buf:
                exc = truncated("stream ended inside a response", self._base + len(self._buf), out)
                self._fail_with(exc)
                raise exc
            return out
        finally:
            lock.release()

    # -- one line --------------------------------------------------------

    def _line(self, line: bytes, start: int, out: list[Response]) -> None:
        state = self._state
        if state == _GRID_BODY:
            self._row(line, start, out)
            return
        if state == _LIST:
            self._check_span(start, len(line), "list")
        tokens = line.split()
        if state == _HELP:
            if self._help_line(line, start, out):
                return
            state = self._state = _TOP
        elif state == _EXTRA_FAIL:
            if not tokens:
                return
            assert self._fail is not None
            if tokens == [b"fail"]:
                out.append(self._fail._replace(extra=True))
                self._fail = None
                self._state = _TOP
                return
            if tokens[0] != b"error":
                out.append(self._fail)
                self._fail = None
                state = self._state = _TOP
        if not tokens:
            return
        word = tokens[0]
        if word == b"error":
            out.append(Error(_rest(line)))
        elif state == _TOP:
            self._top(word, tokens, line, start, out)
        elif state == _AFTER_ACK:
            self._after_ack(word, tokens, line, start, out)
        elif state == _LIST:
            if word == b"end" and len(tokens) == 1:
                out.append(Listing(self._ack, self._items))
                self._items = []
                self._state = _TOP
            elif word == b"at" and not self._items:
                self._at(tokens, line, start)
            else:
                self._hold(tokens, start)
                self._items.append(_item(tokens, line, start))
        elif state == _GRID_SIZE:
            self._size(tokens, line, start, out)
        else:  # _GRID_END
            if word != b"end" or len(tokens) != 1:
                raise decode_error("occgrid not terminated by end", start)
            self._finish_grid(out)

    # -- help ----------------------------------------------------------------

    def _start_help(self, line: bytes, start: int) -> None:
        self._first = self._help_at = start
        self._help_listing = True
        self._check_span(start, len(line), "help output")
        self._help = [line.decode("latin-1")]
        self._state = _HELP

    def _help_line(self, line: bytes, start: int, out: list[Response]) -> bool:
        """Take ``line`` into the help output, or end the help output (False:
        the line is then read as the start of the next response).

        After the first, a help line is empty or indented (a docstring's
        body), or starts with ``:`` while every line so far did (a bare
        ``help``'s command list); a response line is neither. A ``:`` line
        after a body, or repeating a command list's first line (each command
        is listed once), starts the next help output, and a body line after
        two or more ``:`` lines splits off the last one: it began a topic's
        help.
        """
        lead = line[:1]
        if not lead or lead[0] in _INDENT:
            if self._help_listing and len(self._help) > 1:
                out.append(Help(tuple(self._help[:-1])))
                self._help = self._help[-1:]
                self._first = self._help_at
            self._help_listing = False
        elif lead == b":":
            if not self._help_listing or line.decode("latin-1") == self._help[0]:
                out.append(Help(tuple(self._help)))
                self._start_help(line, start)
                return True
            self._help_at = start
        else:
            out.append(Help(tuple(self._help)))
            self._help = []
            return False
        self._check_span(start, len(line), "help output")
        self._help.append(line.decode("latin-1"))
        return True

    def _hold(self, tokens: list[bytes], start: int) -> None:
        """Count a list item against ``max_items`` before it is built."""
        weight = 1
        if tokens[0] == b"obstacle":
            weight += (len(tokens) - 1) // 2
        elif tokens[0] == b"base":
            weight += max(len(tokens) - 2, 0) // 2
        self._held += weight
        if self._held > self.max_items:
            raise decode_error("list longer than max_items", start)

    def _check_span(self, start: int, length: int, what: str) -> None:
        """Refuse a list or help line that ends past ``max_response``."""
        if start + length + 1 - self._first > self.max_response:
            raise decode_error(f"{what} longer than max_response", start)

    def _top(
        self, word: bytes, tokens: list[bytes], line: bytes, start: int, out: list[Response]
    ) -> None:
        if word == b"ack":
            self._ack = _ack(tokens, line, start)
            self._state = _AFTER_ACK
        elif word == b"fail":
            out.append(Fail(None, _rest(line), False))
        elif word == b"ok" and len(tokens) == 1:
            out.append(Ok(None))
        elif word == b"bzrobots" and len(tokens) == 2:
            out.append(Greeting("bzrobots", _int(tokens, 1, line, start)))
        elif word[:1] == b":":
            self._start_help(line, start)
        else:
            raise decode_error("unexpected line", start)

    def _after_ack(
        self, word: bytes, tokens: list[bytes], line: bytes, start: int, out: list[Response]
    ) -> None:
        ack = self._ack
        if word == b"ok" and len(tokens) == 1:
            out.append(Ok(ack))
            self._state = _TOP
        elif word == b"fail":
            fail = Fail(ack, _rest(line), False)
            if (
                ack is not None
                and ack.command in DOUBLE_FAIL_COMMANDS
                and fail.comment == "Invalid parameter(s)"
            ):
                self._fail = fail
                self._state = _EXTRA_FAIL
            else:
                out.append(fail)
                self._state = _TOP
        elif word == b"begin" and len(tokens) == 1:
            self._items = []
            self._held = 0
            self._first = start
            self._state = _LIST
        elif word == b"timer":
            _count(tokens, 3, line, start)
            out.append(Timer(ack, _num(tokens, 1, line, start), _num(tokens, 2, line, start)))
            self._state = _TOP
        elif word == b"at":
            self._at(tokens, line, start)
        else:
            raise decode_error("unexpected line after ack", start)

    # -- occgrid -----------------------------------------------------------

    def _at(self, tokens: list[bytes], line: bytes, start: int) -> None:
        if len(tokens) != 2:
            raise decode_error("bad occgrid header", start)
        self._gx, self._gy = _pair(tokens[1], b",", start + _token_offset(line, 1))
        self._state = _GRID_SIZE

    def _size(self, tokens: list[bytes], line: bytes, start: int, out: list[Response]) -> None:
        if tokens[0] != b"size" or len(tokens) != 2:
            raise decode_error("occgrid size line expected", start)
        offset = start + _token_offset(line, 1)
        w, h = _pair(tokens[1], b"x", offset)
        if w < 0 or h < 0 or w * h > self.max_grid_cells:
            raise decode_error("occgrid size out of range", offset)
        self._gw, self._gh = w, h
        self._rows = 0
        self._cells = bytearray()
        self._state = _GRID_END if w == 0 or h == 0 else _GRID_BODY

    def _row(self, line: bytes, start: int, out: list[Response]) -> None:
        cells = line.strip()
        h = self._gh
        if len(cells) == h and not cells.translate(None, b"01"):
            self._cells += cells
            self._rows += 1
            if self._rows == self._gw:
                self._state = _GRID_END
            return
        if not cells:
            return
        if cells.split()[0] == b"error":
            out.append(Error(_rest(cells)))
            return
        if cells == b"end":
            raise decode_error(f"occgrid ended after {self._rows} of {self._gw} rows", start)
        lead = len(line) - len(line.lstrip())
        for i, byte in enumerate(cells):
            if byte not in b"01":
                raise decode_error("bad occgrid cell", start + lead + i)
        raise decode_error(f"occgrid row of {len(cells)} cells, expected {h}", start)

    def _finish_grid(self, out: list[Response]) -> None:
        import numpy as np

        data = bytearray(self._cells.translate(_CELLS))
        grid = np.frombuffer(data, dtype=np.uint8).reshape(self._gw, self._gh)
        self._cells = bytearray()
        out.append(OccGrid(self._ack, self._gx, self._gy, grid))
        self._state = _TOP
