"""ywindow streaming word decoder, pure-Python twin of ``_codec_c.pyx``.

Both twins give the same messages and raise the same errors, with the same
messages and offsets (the parity tests hold them together).
Each rule is checked as soon as the bytes it needs have arrived, so any
chunking of a stream gives the same messages and the same error.
"""

from __future__ import annotations

from threading import Lock
from typing import Any

from gamecodec.errors import DecodeError
from gamecodec.ywindow import _errors as msg
from gamecodec.ywindow._models import MAX_MESSAGE, MIN_MAX_MESSAGE, Keyword, Message, Value

Buffer = bytes | bytearray | memoryview

__all__ = ["Decoder", "decode"]

HEADER, KEYWORD, INT, STRING, BLOB = 1, 2, 3, 4, 5
WIDE = 8
KEYWORD_CACHE = 256
"""Distinct keywords a decoder keeps to reuse (method names repeat)."""

_CODES = dict(zip(b"cvrkisb", (HEADER, HEADER, HEADER, KEYWORD, INT, STRING, BLOB), strict=True))
_CODES.update({t - 0x20: code | WIDE for t, code in _CODES.items()})
TYPES: tuple[int, ...] = tuple(_CODES.get(t, 0) for t in range(256))
"""Per type byte: 0 (unknown) or a code, plus ``WIDE`` for a 4-byte length."""

_KIND = {t: chr(t | 0x20) for t in b"cvrCVR"}


def _keyword(payload: bytes, at: int, partial: list[Message]) -> Keyword:
    if payload.isascii() and b"\0" not in payload:
        return Keyword(payload.decode("ascii"))
    for i, b in enumerate(payload):
        if b == 0 or b > 0x7F:
            raise msg.bad_keyword_byte(b, at + i, partial)
    raise AssertionError("unreachable")


def _string(payload: bytes, at: int, partial: list[Message]) -> str:
    try:
        return payload.decode("utf-32-be")
    except UnicodeDecodeError as exc:
        start = exc.start - exc.start % 4
        cp = int.from_bytes(payload[start : start + 4], "big")
        raise msg.bad_code_point(cp, at + start, partial) from None


class Decoder:
    """Bytes in any chunking -> complete :class:`Message` objects.

    ``max_message`` caps one message's bytes, and so what the decoder ever
    buffers; ``offset`` is the absolute stream offset of the first byte fed.
    After a :class:`~gamecodec.DecodeError` (whose ``partial`` holds the
    messages that call decoded first) every call raises it again.

    Feeding costs O(bytes) whatever the chunking: a word that has not fully
    arrived is kept, and chunks are only appended to it until it can be read.
    One decoder serves one stream, from one thread at a time: a call made
    while another thread is inside the decoder raises a
    :class:`~gamecodec.DecodeError` and changes nothing (share a decoder only
    under a lock). The decoded messages are immutable and safe to share.
    """

    __slots__ = (
        "_base",
        "_buf",
        "_bytes_scanned",
        "_cache",
        "_error",
        "_kind",
        "_lock",
        "_max",
        "_need",
        "_remaining",
        "_start",
        "_words",
    )

    def __init__(self, *, max_message: int = MAX_MESSAGE, offset: int = 0) -> None:
        if type(max_message) is not int or max_message < MIN_MAX_MESSAGE:
            raise msg.bad_max_message(max_message)
        if type(offset) is not int or not 0 <= offset <= msg.MAX_OFFSET:
            raise msg.bad_offset(offset)
        lock: Lock | None = getattr(self, "_lock", None)
        if lock is None:
            lock = self._lock = Lock()
        if not lock.acquire(False):
            raise msg.in_use(self.offset)
        try:
            self._max = min(max_message, msg.MAX_OFFSET)  # past any buffer: the same cap
            self._base = offset
            self._buf = bytearray()
            self._need = 0
            self._kind: str | None = None
            self._remaining = 0
            self._words: list[Value] = []
            self._start = 0
            self._error: DecodeError | None = None
            self._cache: dict[bytes, Keyword] = {}
            self._bytes_scanned = 0
        finally:
            lock.release()

    @property
    def offset(self) -> int:
        """The absolute offset of the next byte to be fed."""
        return self._base + len(self._buf)

    @property
    def buffered(self) -> int:
        """Bytes held back: the start of an incomplete word."""
        return len(self._buf)

    @property
    def bytes_scanned(self) -> int:
        """Bytes this decoder has scanned, summed over its feeds: a count of
        its work (each feed scans the word held back and the new chunk, unless
        the word still cannot be read), within a small multiple of the bytes
        fed whatever their chunking."""
        return self._bytes_scanned

    @property
    def at_boundary(self) -> bool:
        """Whether the stream so far ends between messages."""
        return self._kind is None and not self._buf

    def feed(self, data: Buffer) -> list[Message]:
        """Decode what ``data`` completes; keep the rest for the next call."""
        lock = self._lock
        if not lock.acquire(False):
            raise msg.in_use(self._base + len(self._buf))
        try:
            return self._feed(data)
        finally:
            lock.release()

    def _feed(self, data: Buffer) -> list[Message]:
        if self._error is not None:
            raise msg.again(self._error)
        tail = self._buf
        kept = len(tail)  # what an error leaves buffered, as before the call
        if kept:
            tail += data
            if len(tail) < self._need:
                return []  # the word still cannot be read: nothing is rescanned
            buf = bytes(tail)
            tail.clear()
        else:
            buf = data if type(data) is bytes else memoryview(data).tobytes()
        out: list[Message] = []
        n = len(buf)
        self._bytes_scanned += n
        pos = 0
        need = 0  # when the loop stops early: the bytes from pos the next word needs
        base = self._base
        cap = self._max
        kind: Any = self._kind  # a str inside a message, None between messages
        remaining = self._remaining
        words = self._words
        start = self._start
        cache = self._cache
        types = TYPES
        try:
            while pos < n:
                t = buf[pos]
                code = types[t]
                if not code:
                    raise msg.unknown_type(t, base + pos, out)
                wide = code & WIDE
                code &= 7
                if kind is None:
                    if code != HEADER:
                        raise msg.header_expected(t, base + pos, out)
                    start = base + pos
                elif code == HEADER:
                    raise msg.value_expected(t, base + pos, out)
                if wide:
                    if n - pos < 5:
                        need = 5
                        break
                    size = int.from_bytes(buf[pos + 1 : pos + 5])
                    head = 5
                else:
                    if n - pos < 2:
                        need = 2
                        break
                    size = buf[pos + 1]
                    head = 2
                if code <= INT:
                    if code != KEYWORD and size != 4:
                        raise msg.bad_fixed_length(t, size, base + pos + 1, out)
                elif code == STRING and size & 3:
                    raise msg.bad_string_length(t, size, base + pos + 1, out)
                total = base + pos - start + head + size
                if total > cap:
                    raise msg.over_cap(t, size, total, base + pos + 1, out, cap=cap)
                end = pos + head + size
                if end > n:
                    need = head + size
                    break
                if code == HEADER:
                    count = int.from_bytes(buf[pos + head : end], signed=True)
                    if count < 0:
                        raise msg.negative_count(t, count, base + pos + head, out)
                    if count > (cap - total) >> 1:
                        raise msg.count_over_cap(t, count, cap, base + pos + head, out)
                    if count:
                        kind = _KIND[t]
                        remaining = count
                        words = []
                    else:
                        out.append(Message(_KIND[t], ()))
                    pos = end
                    continue
                if code == INT:
                    value: Value = int.from_bytes(buf[pos + head : end], signed=True)
                elif code == KEYWORD:
                    payload = buf[pos + head : end]
                    keyword = cache.get(payload)
                    if keyword is None:
                        keyword = _keyword(payload, base + pos + head, out)
                        if len(cache) < KEYWORD_CACHE:
                            cache[payload] = keyword
                    value = keyword
                elif code == STRING:
                    value = _string(buf[pos + head : end], base + pos + head, out)
                else:
                    value = buf[pos + head : end]
                words.append(value)
                remaining -= 1
                if not remaining:
                    out.append(Message(kind, tuple(words)))
                    kind = None
                pos = end
        except DecodeError as exc:
            self._error = exc
            tail += buf[:kept]
            raise
        finally:
            self._kind = kind
            self._remaining = remaining
            self._words = words
            self._start = start
        if pos < n:
            tail += buf[pos:] if pos else buf
        self._need = need
        self._base = base + pos
        return out

    def close(self) -> None:
        """End of stream: raise :class:`~gamecodec.TruncatedError` if it
        ended inside a message."""
        lock = self._lock
        if not lock.acquire(False):
            raise msg.in_use(self.offset)
        try:
            if self._error is not None:
                raise msg.again(self._error)
            if not self.at_boundary:
                self._error = msg.truncated(len(self._buf), self.offset)
                raise self._error
        finally:
            lock.release()


def decode(data: Buffer, *, max_message: int = MAX_MESSAGE) -> list[Message]:
    """Decode a complete stream of messages; it must end between messages
    (a :class:`~gamecodec.TruncatedError` holds the messages in ``partial``)."""
    decoder = Decoder(max_message=max_message)
    out = decoder.feed(data)
    try:
        decoder.close()
    except DecodeError as exc:
        exc.partial = out
        raise
    return out
