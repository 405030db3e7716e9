# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""ywindow streaming word decoder, compiled twin of ``_codec_py.py``.

Both twins give the same messages and raise the same errors, with the same
messages and offsets (the parity tests hold them together).
Each rule is checked as soon as the bytes it needs have arrived, so any
chunking of a stream gives the same messages and the same error. Lengths,
counts, ints and code points are read with explicit big-endian shifts.
"""

cimport cython
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize
from cpython.bytes cimport PyBytes_GET_SIZE
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.string cimport memcmp

from gamecodec.errors import DecodeError
from gamecodec.ywindow import _errors as msg
from gamecodec.ywindow._models import MAX_MESSAGE, Keyword, Message

__all__ = ["Decoder", "decode"]

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    object PyUnicode_DecodeASCII(const char *s, Py_ssize_t size, const char *errors)
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value)

cdef extern from "_capi.h":
    object gamecodec_alloc_subtuple(object cls, Py_ssize_t n)

cdef enum:
    HEADER = 1
    KEYWORD = 2
    INT = 3
    STRING = 4
    BLOB = 5
    WIDE = 8
    CACHE_SLOTS = 256
    MIN_MAX_MESSAGE = 6

# Module state: _TYPES and the _KIND_* strings are written once, at import,
# and only read afterwards, so threads share them safely without the GIL.
# Everything a decode changes lives in its Decoder.
cdef uint8_t _TYPES[256]


cdef void _init_types() noexcept:
    cdef int t
    cdef const char *letters = b"cvrkisb"
    cdef int codes[7]
    codes[:] = [HEADER, HEADER, HEADER, KEYWORD, INT, STRING, BLOB]
    for t in range(256):
        _TYPES[t] = 0
    for t in range(7):
        _TYPES[<uint8_t>letters[t]] = codes[t]
        _TYPES[<uint8_t>letters[t] - 0x20] = codes[t] | WIDE


_init_types()

_KIND_C = "c"
_KIND_V = "v"
_KIND_R = "r"
_EMPTY = ()


cdef inline object _kind_str(int t):
    t |= 0x20
    if t == 0x63:
        return _KIND_C
    if t == 0x76:
        return _KIND_V
    return _KIND_R


cdef inline void _fill(object t, Py_ssize_t i, object value) noexcept:
    Py_INCREF(value)
    PyTuple_SET_ITEM(t, i, value)


cdef inline object _message(object kind, object words):
    """Message(kind, words) without calling its __new__."""
    obj = gamecodec_alloc_subtuple(Message, 2)
    _fill(obj, 0, kind)
    _fill(obj, 1, words)
    return obj


cdef inline uint32_t _be32(const uint8_t *q) noexcept nogil:
    return ((<uint32_t>q[0] << 24) | (<uint32_t>q[1] << 16)
            | (<uint32_t>q[2] << 8) | <uint32_t>q[3])


cdef object _string(const uint8_t *q, Py_ssize_t size, long long at, list out):
    cdef Py_ssize_t i, n = size >> 2
    cdef uint32_t cp, top = 0
    for i in range(n):
        cp = _be32(q + 4 * i)
        if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            raise msg.bad_code_point(cp, at + 4 * i, out)
        if cp > top:
            top = cp
    s = PyUnicode_New(n, top)
    cdef int kind = PyUnicode_KIND(s)
    cdef void *data = PyUnicode_DATA(s)
    for i in range(n):
        PyUnicode_WRITE(kind, data, i, _be32(q + 4 * i))
    return s


@cython.final
cdef class Decoder:
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

    cdef bytearray _buf  # the start of an incomplete word (only ever mutated in place)
    cdef Py_ssize_t _need  # the bytes _buf must hold before the word can be read
    cdef long long _base
    cdef long long _start
    cdef long long _max
    cdef long long _remaining
    cdef long long _bytes_scanned
    cdef int _kind
    cdef int _busy  # a thread is inside feed/close/__init__
    cdef list _words
    cdef list _cache
    cdef object _error

    def __cinit__(self):
        self._buf = bytearray()
        self._busy = 0

    def __init__(self, *, max_message=MAX_MESSAGE, offset=0):
        if type(max_message) is not int or max_message < MIN_MAX_MESSAGE:
            raise msg.bad_max_message(max_message)
        if type(offset) is not int or not 0 <= offset <= msg.MAX_OFFSET:
            raise msg.bad_offset(offset)
        self._enter()
        try:
            self._max = min(max_message, msg.MAX_OFFSET)  # past any buffer: the same cap
            self._base = offset
            del self._buf[:]
            self._need = 0
            self._kind = 0
            self._remaining = 0
            self._words = []
            self._start = 0
            self._error = None
            self._cache = [None] * CACHE_SLOTS
            self._bytes_scanned = 0
        finally:
            self._leave()

    cdef int _enter(self) except -1:
        """Claim the decoder for this call, or raise (changing nothing) if
        another thread is inside it."""
        cdef int busy
        with cython.critical_section(self):
            busy = self._busy
            self._busy = 1
        if busy:
            raise msg.in_use(self._base + PyByteArray_GET_SIZE(self._buf))
        return 0

    cdef void _leave(self) noexcept:
        with cython.critical_section(self):
            self._busy = 0

    @property
    def offset(self):
        """The absolute offset of the next byte to be fed."""
        return self._base + PyByteArray_GET_SIZE(self._buf)

    @property
    def buffered(self):
        """Bytes held back: the start of an incomplete word."""
        return PyByteArray_GET_SIZE(self._buf)

    @property
    def bytes_scanned(self):
        """Bytes this decoder has scanned, summed over its feeds: a count of
        its work (each feed scans the word held back and the new chunk, unless
        the word still cannot be read), within a small multiple of the bytes
        fed whatever their chunking."""
        return self._bytes_scanned

    @property
    def at_boundary(self):
        """Whether the stream so far ends between messages."""
        return self._kind == 0 and PyByteArray_GET_SIZE(self._buf) == 0

    cdef object _keyword(self, const uint8_t *q, Py_ssize_t size, long long at, list out):
        cdef uint32_t h = 2166136261u
        cdef Py_ssize_t i
        for i in range(size):
            h = (h ^ q[i]) * 16777619u
        h = (h ^ (h >> 16)) & (CACHE_SLOTS - 1)
        kw = self._cache[h]
        if (kw is not None and PyUnicode_GET_LENGTH(kw) == size
                and memcmp(PyUnicode_DATA(kw), q, size) == 0):
            return kw
        for i in range(size):
            if q[i] == 0 or q[i] > 0x7F:
                raise msg.bad_keyword_byte(q[i], at + i, out)
        kw = Keyword(PyUnicode_DecodeASCII(<const char *>q, size, NULL))
        self._cache[h] = kw
        return kw

    def feed(self, data):
        """Decode what ``data`` completes; keep the rest for the next call."""
        self._enter()
        try:
            return self._feed(data)
        finally:
            self._leave()

    cdef list _feed(self, data):
        if self._error is not None:
            raise msg.again(self._error)
        cdef bytearray tail = self._buf
        cdef Py_ssize_t kept = PyByteArray_GET_SIZE(tail)
        cdef object src  # holds what p points into for the whole call
        cdef const uint8_t *p
        cdef Py_ssize_t n
        if kept:
            tail += data
            n = PyByteArray_GET_SIZE(tail)
            if n < self._need:
                return []  # the word still cannot be read: nothing is rescanned
            src = tail
            p = <const uint8_t *>PyByteArray_AS_STRING(tail)
        else:
            src = <bytes>data if PyBytes_CheckExact(data) else memoryview(data).tobytes()
            p = <const uint8_t *>PyBytes_AS_STRING(src)
            n = PyBytes_GET_SIZE(src)
        self._bytes_scanned += n
        cdef list out = []
        cdef Py_ssize_t pos = 0, head, end, need = 0
        cdef long long base = self._base, cap = self._max
        cdef long long start = self._start, remaining = self._remaining
        cdef long long size, total
        cdef int kind = self._kind
        cdef int t, code, wide
        cdef int32_t count
        cdef list words = self._words
        try:
            while pos < n:
                t = p[pos]
                code = _TYPES[t]
                if code == 0:
                    raise msg.unknown_type(t, base + pos, out)
                wide = code & WIDE
                code &= 7
                if kind == 0:
                    if code != HEADER:
                        raise msg.header_expected(t, base + pos, out)
                    start = base + pos
                elif code == HEADER:
                    raise msg.value_expected(t, base + pos, out)
                if wide:
                    if n - pos < 5:
                        need = 5
                        break
                    size = _be32(p + pos + 1)
                    head = 5
                else:
                    if n - pos < 2:
                        need = 2
                        break
                    size = p[pos + 1]
                    head = 2
                if code <= INT:
                    if code != KEYWORD and size != 4:
                        raise msg.bad_fixed_length(t, size, base + pos + 1, out)
                elif code == STRING and size & 3:
                    raise msg.bad_string_length(t, size, base + pos + 1, out)
                total = base + pos - start + head + size
                if total > cap:
                    raise msg.over_cap(t, size, total, base + pos + 1, out, cap=cap)
                if size > n - pos - head:
                    need = head + <Py_ssize_t>size
                    break
                end = pos + head + <Py_ssize_t>size
                if code == HEADER:
                    count = <int32_t>_be32(p + pos + head)
                    if count < 0:
                        raise msg.negative_count(t, count, base + pos + head, out)
                    if count > (cap - total) >> 1:
                        raise msg.count_over_cap(t, count, cap, base + pos + head, out)
                    if count:
                        kind = t | 0x20
                        remaining = count
                        words = []
                    else:
                        out.append(_message(_kind_str(t), _EMPTY))
                    pos = end
                    continue
                if code == INT:
                    words.append(<int32_t>_be32(p + pos + head))
                elif code == KEYWORD:
                    words.append(self._keyword(p + pos + head, size, base + pos + head, out))
                elif code == STRING:
                    words.append(_string(p + pos + head, size, base + pos + head, out))
                else:
                    words.append(PyBytes_FromStringAndSize(<const char *>p + pos + head, size))
                remaining -= 1
                if remaining == 0:
                    out.append(_message(_kind_str(kind), tuple(words)))
                    kind = 0
                pos = end
        except DecodeError as exc:
            self._error = exc
            if src is tail:  # what was buffered before the call stays buffered
                del tail[kept:]
            raise
        finally:
            self._kind = kind
            self._remaining = remaining
            self._words = words
            self._start = start
        if src is tail:
            del tail[:pos]
        elif pos < n:
            tail += (<const char *>p)[pos:n]
        self._need = need
        self._base = base + pos
        return out

    def close(self):
        """End of stream: raise :class:`~gamecodec.TruncatedError` if it
        ended inside a message."""
        self._enter()
        try:
            if self._error is not None:
                raise msg.again(self._error)
            if not self.at_boundary:
                self._error = msg.truncated(PyByteArray_GET_SIZE(self._buf), self.offset)
                raise self._error
        finally:
            self._leave()


def decode(data, *, max_message=MAX_MESSAGE):
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
