# cython: language_level=3, freethreading_compatible=True
"""Compiled twin of the BZRC response decoder (pure twin: ``_codec_py.py``).

The same line-by-line state machine, with lines found by ``memchr``,
tokens scanned in place, numbers parsed without temporary objects, short
strings (callsigns, colours, statuses) served from a per-parser cache, list
items built as NamedTuples directly, and the ``occgrid`` body converted in
one pass straight into the array's buffer (no per-row Python objects).
numpy is imported when the first ``occgrid`` size line is decoded.

Threads and free-threaded CPython: the module's C state is written once,
while the module loads (the NamedTuple classes, ``_fast_tuples``, the shared
small-int and float-zero objects of ``_scan.h``), and only read afterwards;
the number objects it hands out are immutable. Everything a decode changes (buffer,
string cache, token arrays, the grid) belongs to one Decoder, which admits
one thread at a time (``_enter``).
"""

cimport cython
from cpython.buffer cimport PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize
from cpython.bytes cimport PyBytes_GET_SIZE
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.list cimport PyList_Append
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from libc.string cimport memchr, memcmp

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
    Listing,
    MyTank,
    Obstacle,
    OccGrid,
    Ok,
    OtherTank,
    Score,
    Shot,
    Team,
    Timer,
)
from gamecodec.bzrc._errors import decode_error, in_use, truncated
from gamecodec.errors import DecodeError

__all__ = ["Decoder", "parse_number"]

MAX_INT_DIGITS = 18


cdef extern from "_capi.h":
    object gamecodec_alloc_subtuple(object cls, Py_ssize_t n)


cdef extern from "_scan.h":
    ctypedef struct bz_str_entry:
        Py_ssize_t n
        PyObject *obj
    enum: BZ_CACHE
    object bz_str(bz_str_entry *cache, const char *s, Py_ssize_t n)
    void bz_cache_clear(bz_str_entry *cache) noexcept
    int bz_parse_int(const char *s, Py_ssize_t n, long long *out) noexcept
    PyObject *bz_number(const char *s, Py_ssize_t n) noexcept
    int bz_init_numbers() except -1
    object bz_int_object(long long v)
    void from_ptr_decref(PyObject *o) noexcept
    object bz_steal(PyObject *o)
    bint bz_space(char c) noexcept nogil
    Py_ssize_t bz_tokenize(const char *b, Py_ssize_t i, Py_ssize_t le, Py_ssize_t *ts,
                           Py_ssize_t *te) noexcept
    bint bz_row(const char *p, char *o, Py_ssize_t n) noexcept nogil
    Py_ssize_t bz_grid(const char *b, Py_ssize_t pos, Py_ssize_t n, char *out, Py_ssize_t h,
                       Py_ssize_t w, Py_ssize_t *rows) noexcept nogil
    bint bz_mytank_fast(const char *b, Py_ssize_t i, Py_ssize_t le, bz_str_entry *cache,
                        PyObject **out) noexcept
    void bz_fill_steal(object t, PyObject **objs, int n) noexcept


bz_init_numbers()


cdef enum:
    S_TOP = 0
    S_AFTER_ACK = 1
    S_LIST = 2
    S_GRID_SIZE = 3
    S_GRID_BODY = 4
    S_GRID_END = 5
    S_HELP = 6
    S_EXTRA_FAIL = 7

cdef object _MyTank = MyTank
cdef object _OtherTank = OtherTank
cdef object _Shot = Shot
cdef object _Flag = Flag
cdef object _Team = Team
cdef object _Score = Score
cdef object _Constant = Constant
cdef object _Ack = Ack
cdef object _Listing = Listing
cdef object _Fail = Fail
cdef object _Ok = Ok
cdef object _EMPTY = ()
cdef object _OccGrid = OccGrid
cdef frozenset _DOUBLE_FAIL = DOUBLE_FAIL_COMMANDS
cdef bint _fast_tuples = True


cdef inline void _fill(object t, Py_ssize_t i, object value) noexcept:
    Py_INCREF(value)
    PyTuple_SET_ITEM(t, i, value)


cdef object _named(object cls, tuple items):
    """cls(*items) for a NamedTuple class, without calling its __new__."""
    cdef Py_ssize_t i, n = len(items)
    if not _fast_tuples:
        return tuple.__new__(cls, items)
    obj = gamecodec_alloc_subtuple(cls, n)
    for i in range(n):
        _fill(obj, i, items[i])
    return obj


def _check_fast_tuples():
    """Use the direct NamedTuple construction only if it is indistinguishable
    from tuple.__new__ on this interpreter (hash cache, equality, type)."""
    global _fast_tuples
    items = (1, "a", "b", 2, 0.5, "-", 3, 4, 0.1, 0.2, 0.3, 0)
    slow = tuple.__new__(MyTank, items)
    fast = _named(MyTank, items)
    _fast_tuples = (type(fast) is MyTank and fast == slow and hash(fast) == hash(slow)
                    and hash(fast) == hash(items))


_check_fast_tuples()


def _uses_fast_tuples():
    """Whether NamedTuples are built directly (for tests)."""
    return _fast_tuples


cdef char _NO_CELLS[1]  # never written: a grid with no cells gets no rows


cdef char *_data_pointer(object array) except NULL:
    """The data pointer of a writable C-contiguous array (buffer protocol).

    The view is released at once: the pointer stays valid as long as the
    array lives and is not resized; the decoder holds the array until the
    grid is complete, and only the call inside the decoder writes it."""
    cdef Py_buffer view
    cdef char *data
    PyObject_GetBuffer(array, &view, PyBUF_WRITABLE)
    data = <char *>view.buf
    PyBuffer_Release(&view)
    if data == NULL:  # a zero-size array may have no storage; it is never written
        data = <char *>_NO_CELLS
    return data


cdef object _error(str message, Py_ssize_t offset):
    return decode_error(message, offset)


def parse_number(token):
    """A wire number: ``int`` for ``[+-]?digits`` (at most 18 digits), else
    whatever ``float()`` accepts without underscores; None if neither."""
    cdef bytes b = bytes(token)
    cdef PyObject *obj = bz_number(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))
    if obj == NULL:
        return None
    result = <object>obj
    from_ptr_decref(obj)
    return result


@cython.final
cdef class Decoder:
    """Bytes in any chunking -> typed responses, in order (compiled twin).

    ``feed(data)`` returns every response completed by ``data``; :meth:`flush`
    returns help output (which has no terminator) and a ``fail`` waiting for
    its possible second ``fail``; :meth:`close` ends the stream. Both twins give
    the same responses, and the same exception types with the same offsets.

    Caps: ``max_line`` a line's bytes (and so the partial line buffered),
    ``max_grid_cells`` an occgrid's W*H, ``max_response`` the bytes a list or
    help output spans, ``max_items`` what a list holds; past one the decoder
    raises DecodeError and drops the response it was reading. Feeding costs
    O(bytes) whatever the chunking (a partial line is never scanned twice).

    Threads: one decoder serves one stream, from one thread at a time; a call
    made while another thread is inside it (the occgrid kernel runs without
    the GIL) raises DecodeError and changes nothing, so it can never free or
    replace the buffer or grid that call is using. Share a decoder only under
    a lock. The responses it returns are never touched again and may be
    shared between threads.
    """

    cdef readonly Py_ssize_t max_line
    cdef readonly Py_ssize_t max_grid_cells
    cdef readonly Py_ssize_t max_response
    cdef readonly Py_ssize_t max_items
    cdef Py_ssize_t _held  # what the list being read holds (see max_items)
    cdef bytearray _buf  # the partial line (only ever mutated in place)
    cdef Py_ssize_t _scanned  # its bytes known to hold no newline
    cdef long long _bytes_scanned  # see bytes_scanned
    cdef Py_ssize_t _first  # where the list or help output being read started
    cdef int _busy  # a thread is inside feed/flush/close/__init__
    cdef object _empty  # numpy.empty and numpy.uint8, looked up on this decoder's first grid
    cdef object _uint8
    cdef Py_ssize_t _base
    cdef int _state
    cdef object _ack
    cdef list _items
    cdef list _help
    cdef bint _help_listing  # every help line so far starts with ":"
    cdef Py_ssize_t _help_at  # where the last help line started
    cdef object _fail
    cdef object _gx
    cdef object _gy
    cdef Py_ssize_t _gw
    cdef Py_ssize_t _gh
    cdef Py_ssize_t _rows
    cdef object _cells  # the grid being filled: a C-contiguous uint8 ndarray (W, H)
    cdef char *_cellp  # its data; valid while _cells is held (only we hold it)
    cdef object _failed
    cdef Py_ssize_t *_ts
    cdef Py_ssize_t *_te
    cdef Py_ssize_t _tcap
    cdef Py_ssize_t _nt
    cdef bz_str_entry _cache[BZ_CACHE]

    def __cinit__(self):
        self._buf = bytearray()
        self._busy = 0
        self._ts = NULL
        self._te = NULL
        self._tcap = 0
        cdef int i
        for i in range(BZ_CACHE):
            self._cache[i].obj = NULL
            self._cache[i].n = 0

    def __init__(self, *, max_line=DEFAULT_MAX_LINE, max_grid_cells=DEFAULT_MAX_GRID_CELLS,
                 max_response=DEFAULT_MAX_RESPONSE, max_items=DEFAULT_MAX_ITEMS):
        if max_line < 1 or max_grid_cells < 0 or max_response < 1 or max_items < 0:
            raise ValueError(
                "max_line and max_response must be >= 1, max_grid_cells and max_items >= 0"
            )
        self._enter()
        try:
            self.max_line = max_line
            self.max_grid_cells = max_grid_cells
            self.max_response = max_response
            self.max_items = max_items
            self._held = 0
            del self._buf[:]
            self._scanned = 0
            self._bytes_scanned = 0
            self._first = 0
            self._base = 0
            self._state = S_TOP
            self._ack = None
            self._items = []
            self._help = []
            self._help_listing = False
            self._help_at = 0
            self._fail = None
            self._gx = 0
            self._gy = 0
            self._gw = 0
            self._gh = 0
            self._rows = 0
            self._cells = None
            self._cellp = NULL
            self._failed = None
            if self._tcap < 64:
                self._grow(64)
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
            raise in_use(self._base)
        return 0

    cdef void _leave(self) noexcept:
        with cython.critical_section(self):
            self._busy = 0

    def __dealloc__(self):
        bz_cache_clear(self._cache)
        PyMem_Free(self._ts)
        PyMem_Free(self._te)

    cdef int _grow(self, Py_ssize_t cap) except -1:
        cdef Py_ssize_t *ts = <Py_ssize_t *>PyMem_Realloc(self._ts, cap * sizeof(Py_ssize_t))
        if ts == NULL:
            raise MemoryError()
        self._ts = ts
        cdef Py_ssize_t *te = <Py_ssize_t *>PyMem_Realloc(self._te, cap * sizeof(Py_ssize_t))
        if te == NULL:
            raise MemoryError()
        self._te = te
        self._tcap = cap
        return 0

    @property
    def offset(self):
        """Absolute stream offset of the first byte not yet consumed."""
        return self._base

    @property
    def bytes_scanned(self):
        """Bytes this decoder has read from its buffer, summed over its feeds:
        each search for a line end from where the last one stopped (and, in
        the compiled twin, occgrid rows converted in place and a held partial
        line copied to join the next chunk). A count of its work, within a
        small multiple of the bytes fed whatever their chunking."""
        return self._bytes_scanned

    @property
    def idle(self):
        """True between responses with no partial line buffered."""
        return self._state == S_TOP and PyByteArray_GET_SIZE(self._buf) == 0

    def feed(self, data):
        """Consume ``data``; return the responses it completed."""
        self._enter()
        try:
            return self._feed(data)
        finally:
            self._leave()

    cdef list _feed(self, data):
        if self._failed is not None:
            raise self._failed.with_traceback(None)
        cdef bytearray tail = self._buf
        cdef Py_ssize_t kept = PyByteArray_GET_SIZE(tail)
        cdef object src  # holds what b points into for the whole call
        cdef long long work = 0  # added to _bytes_scanned
        cdef Py_ssize_t grid_at
        if kept == 0 and PyBytes_CheckExact(data):
            src = data  # nothing buffered: read the chunk in place
        elif PyBytes_CheckExact(data) and kept <= PyBytes_GET_SIZE(data):
            # a tail no longer than the chunk: one joined copy costs at most
            # twice the chunk (cheaper than growing the buffer)
            src = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(tail), kept) + data
            work = kept
            del tail[:]
        else:
            tail += data
            src = tail
        cdef const char *b
        cdef Py_ssize_t n
        if src is tail:
            b = PyByteArray_AS_STRING(tail)
            n = PyByteArray_GET_SIZE(tail)
        else:
            b = PyBytes_AS_STRING(src)
            n = PyBytes_GET_SIZE(src)
        cdef Py_ssize_t pos = 0, scanned = self._scanned
        cdef const char *nl
        cdef list out = []
        try:
            while True:
                if self._state == S_GRID_BODY and self._gh <= self.max_line:
                    grid_at = pos
                    pos = self._grid_fast(b, pos, n)
                    work += pos - grid_at
                    if pos:
                        scanned = 0
                    if self._state != S_GRID_BODY:
                        continue
                nl = <const char *>memchr(b + pos + scanned, b'\n', n - pos - scanned)
                if nl == NULL:
                    work += n - pos - scanned
                    if n - pos > self.max_line:
                        raise _error("line longer than max_line", self._base + pos)
                    scanned = n - pos
                    break
                work += (nl - b) + 1 - pos - scanned
                scanned = 0
                if (nl - b) - pos > self.max_line:
                    raise _error("line longer than max_line", self._base + pos)
                self._line(b, pos, nl - b, out)
                pos = (nl - b) + 1
        except DecodeError as exc:
            exc.partial = out
            self._fail_with(exc)
            raise
        finally:
            self._bytes_scanned += work
            self._scanned = scanned
            self._base += pos
            if src is tail:
                del tail[:pos]
            elif pos < n:
                tail += b[pos:n]
        return out

    cdef void _fail_with(self, exc) noexcept:
        """Break the decoder for good, dropping the response it was reading."""
        self._failed = exc
        self._items = []
        self._help = []
        self._cells = None
        self._cellp = NULL
        self._ack = None
        self._fail = None
        self._held = 0

    def flush(self):
        """Return what only the next line could complete: pending help output,
        or a speed/angvel ``fail`` still waiting for its second ``fail``."""
        self._enter()
        try:
            return self._flush()
        finally:
            self._leave()

    cdef list _flush(self):
        if self._failed is not None:
            raise self._failed.with_traceback(None)
        out = []
        if self._state == S_HELP:
            out.append(Help(tuple(self._help)))
            self._help = []
            self._state = S_TOP
        elif self._state == S_EXTRA_FAIL:
            out.append(self._fail)
            self._fail = None
            self._state = S_TOP
        return out

    def close(self):
        """End of stream: :meth:`flush`, then raise TruncatedError if a
        response or line is incomplete."""
        self._enter()
        try:
            out = self._flush()
            if self._state != S_TOP or PyByteArray_GET_SIZE(self._buf):
                exc = truncated("stream ended inside a response",
                                self._base + PyByteArray_GET_SIZE(self._buf), out)
                self._fail_with(exc)
                raise exc
            return out
        finally:
            self._leave()

    # -- tokens -------------------------------------------------------------

    cdef Py_ssize_t _tokenize(self, const char *b, Py_ssize_t ls, Py_ssize_t le) except -1:
        cdef Py_ssize_t need = ((le - ls) >> 1) + 1
        if need > self._tcap:
            self._grow(need)
        self._nt = bz_tokenize(b, ls, le, self._ts, self._te)
        return self._nt

    cdef inline bint _is(self, const char *b, Py_ssize_t k, const char *word,
                         Py_ssize_t n) noexcept:
        return (self._te[k] - self._ts[k] == n
                and memcmp(b + self._ts[k], word, n) == 0)

    cdef inline object _str(self, const char *b, Py_ssize_t k):
        return bz_str(self._cache, b + self._ts[k], self._te[k] - self._ts[k])

    cdef object _rest(self, const char *b):
        if self._nt < 2:
            return ""
        return b[self._ts[1]:self._te[self._nt - 1]].decode("latin-1")

    cdef inline object _num(self, const char *b, Py_ssize_t k):
        cdef PyObject *obj = bz_number(b + self._ts[k], self._te[k] - self._ts[k])
        if obj == NULL:
            raise _error("bad number", self._base + self._ts[k])
        return bz_steal(obj)

    cdef inline object _int(self, const char *b, Py_ssize_t k):
        cdef long long v
        if not bz_parse_int(b + self._ts[k], self._te[k] - self._ts[k], &v):
            raise _error("bad integer", self._base + self._ts[k])
        return bz_int_object(v)

    cdef int _count(self, const char *b, Py_ssize_t n, Py_ssize_t ls) except -1:
        if self._nt != n:
            word = b[self._ts[0]:self._te[0]].decode("latin-1")
            raise _error(f"{word} line of {self._nt} fields, expected {n}", self._base + ls)
        return 0

    # -- one line -------------------------------------------------------------

    cdef int _line(self, const char *b, Py_ssize_t ls, Py_ssize_t le, list out) except -1:
        cdef int state = self._state
        cdef Py_ssize_t nt
        cdef PyObject *fields[12]
        if state == S_GRID_BODY:
            return self._row(b, ls, le, out)
        if state == S_LIST and self._base + le + 1 - self._first > self.max_response:
            self._check_span(ls, le, "list")
        if (state == S_LIST and _fast_tuples and le - ls > 7 and memcmp(b + ls, b"mytank", 6) == 0
                and bz_space(b[ls + 6]) and self._held < self.max_items):
            # the hot list: one pass straight into the NamedTuple
            tank = gamecodec_alloc_subtuple(_MyTank, 12)
            if bz_mytank_fast(b, ls + 7, le, self._cache, fields):
                bz_fill_steal(tank, fields, 12)
                PyList_Append(self._items, tank)
                self._held += 1
                return 0
        if state == S_HELP:
            if self._help_line(b, ls, le, out):
                return 0
            state = self._state = S_TOP
        nt = self._tokenize(b, ls, le)
        if state == S_EXTRA_FAIL:
            if nt == 0:
                return 0
            if nt == 1 and self._is(b, 0, b"fail", 4):
                f = self._fail
                out.append(_named(_Fail, (f[0], f[1], True)))
                self._fail = None
                self._state = S_TOP
                return 0
            if not self._is(b, 0, b"error", 5):
                out.append(self._fail)
                self._fail = None
                state = self._state = S_TOP
        if nt == 0:
            return 0
        if self._is(b, 0, b"error", 5):
            out.append(Error(self._rest(b)))
        elif state == S_TOP:
            self._top(b, ls, le, out)
        elif state == S_AFTER_ACK:
            self._after_ack(b, ls, out)
        elif state == S_LIST:
            if nt == 1 and self._is(b, 0, b"end", 3):
                out.append(_named(_Listing, (self._ack, self._items)))
                self._items = []
                self._state = S_TOP
            elif self._is(b, 0, b"at", 2) and not self._items:
                self._at(b, ls)
            else:
                self._hold(b, ls)
                PyList_Append(self._items, self._item(b, ls))
        elif state == S_GRID_SIZE:
            self._size(b, ls)
        else:
            if nt != 1 or not self._is(b, 0, b"end", 3):
                raise _error("occgrid not terminated by end", self._base + ls)
            self._finish_grid(out)
        return 0

    # -- help -------------------------------------------------------------------

    cdef int _start_help(self, const char *b, Py_ssize_t ls, Py_ssize_t le) except -1:
        self._first = self._help_at = self._base + ls
        self._help_listing = True
        self._check_span(ls, le, "help output")
        self._help = [b[ls:le].decode("latin-1")]
        self._state = S_HELP
        return 0

    cdef bint _help_line(self, const char *b, Py_ssize_t ls, Py_ssize_t le,
                         list out) except -1:
        """Take the line into the help output, or end the help output (False:
        the line is then read as the start of the next response); the rule is
        the pure twin's ``_help_line``."""
        if ls == le or bz_space(b[ls]):
            if self._help_listing and len(self._help) > 1:
                out.append(Help(tuple(self._help[:-1])))
                self._help = self._help[-1:]
                self._first = self._help_at
            self._help_listing = False
        elif b[ls] == b':':
            if not self._help_listing or b[ls:le].decode("latin-1") == self._help[0]:
                out.append(Help(tuple(self._help)))
                self._start_help(b, ls, le)
                return True
            self._help_at = self._base + ls
        else:
            out.append(Help(tuple(self._help)))
            self._help = []
            return False
        self._check_span(ls, le, "help output")
        self._help.append(b[ls:le].decode("latin-1"))
        return True

    cdef int _hold(self, const char *b, Py_ssize_t ls) except -1:
        """Count a list item against ``max_items`` before it is built."""
        cdef Py_ssize_t weight = 1
        if self._is(b, 0, b"obstacle", 8):
            weight += (self._nt - 1) // 2
        elif self._is(b, 0, b"base", 4) and self._nt > 2:
            weight += (self._nt - 2) // 2
        self._held += weight
        if self._held > self.max_items:
            raise _error("list longer than max_items", self._base + ls)
        return 0

    cdef int _check_span(self, Py_ssize_t ls, Py_ssize_t le, str what) except -1:
        """Refuse a list or help line that ends past ``max_response``."""
        if self._base + le + 1 - self._first > self.max_response:
            raise _error(f"{what} longer than max_response", self._base + ls)
        return 0

    cdef int _top(self, const char *b, Py_ssize_t ls, Py_ssize_t le, list out) except -1:
        cdef Py_ssize_t nt = self._nt
        if self._is(b, 0, b"ack", 3):
            self._ack = self._parse_ack(b, ls)
            self._state = S_AFTER_ACK
        elif self._is(b, 0, b"fail", 4):
            out.append(_named(_Fail, (None, self._rest(b), False)))
        elif nt == 1 and self._is(b, 0, b"ok", 2):
            out.append(_named(_Ok, (None,)))
        elif nt == 2 and self._is(b, 0, b"bzrobots", 8):
            out.append(Greeting("bzrobots", self._int(b, 1)))
        elif b[self._ts[0]] == b':':
            self._start_help(b, ls, le)
        else:
            raise _error("unexpected line", self._base + ls)
        return 0

    cdef object _parse_ack(self, const char *b, Py_ssize_t ls):
        cdef Py_ssize_t nt = self._nt, k
        if nt < 2:
            raise _error("ack without a time", self._base + ls)
        t = self._num(b, 1)
        command = self._str(b, 2) if nt > 2 else ""
        if nt <= 3:
            args = _EMPTY
        else:
            args = tuple([self._str(b, k) for k in range(3, nt)])
        return _named(_Ack, (t, command, args))

    cdef int _after_ack(self, const char *b, Py_ssize_t ls, list out) except -1:
        cdef Py_ssize_t nt = self._nt
        ack = self._ack
        if nt == 1 and self._is(b, 0, b"ok", 2):
            out.append(_named(_Ok, (ack,)))
            self._state = S_TOP
        elif self._is(b, 0, b"fail", 4):
            comment = self._rest(b)
            fail = _named(_Fail, (ack, comment, False))
            if ack is not None and ack[1] in _DOUBLE_FAIL and comment == "Invalid parameter(s)":
                self._fail = fail
                self._state = S_EXTRA_FAIL
            else:
                out.append(fail)
                self._state = S_TOP
        elif nt == 1 and self._is(b, 0, b"begin", 5):
            self._items = []
            self._held = 0
            self._first = self._base + ls
            self._state = S_LIST
        elif self._is(b, 0, b"timer", 5):
            self._count(b, 3, ls)
            out.append(Timer(ack, self._num(b, 1), self._num(b, 2)))
            self._state = S_TOP
        elif self._is(b, 0, b"at", 2):
            self._at(b, ls)
        else:
            raise _error("unexpected line after ack", self._base + ls)
        return 0

    # -- list items -------------------------------------------------------------

    cdef object _corners(self, const char *b, Py_ssize_t first, Py_ssize_t ls):
        cdef Py_ssize_t n = self._nt - first, k
        if n < 2 or n % 2:
            word = b[self._ts[0]:self._te[0]].decode("latin-1")
            raise _error(f"{word} line with {n} coordinates", self._base + ls)
        values = [self._num(b, k) for k in range(first, self._nt)]
        return tuple([(values[k], values[k + 1]) for k in range(0, n, 2)])

    cdef object _item(self, const char *b, Py_ssize_t ls):
        cdef Py_ssize_t nt = self._nt
        cdef object obj
        if self._is(b, 0, b"mytank", 6):
            self._count(b, 13, ls)
            if not _fast_tuples:
                return tuple.__new__(_MyTank, (
                    self._int(b, 1), self._str(b, 2), self._str(b, 3), self._int(b, 4),
                    self._num(b, 5), self._str(b, 6), self._num(b, 7), self._num(b, 8),
                    self._num(b, 9), self._num(b, 10), self._num(b, 11), self._num(b, 12)))
            obj = gamecodec_alloc_subtuple(_MyTank, 12)
            # an error leaves unset (NULL) slots, which tuple dealloc tolerates
            _fill(obj, 0, self._int(b, 1))
            _fill(obj, 1, self._str(b, 2))
            _fill(obj, 2, self._str(b, 3))
            _fill(obj, 3, self._int(b, 4))
            _fill(obj, 4, self._num(b, 5))
            _fill(obj, 5, self._str(b, 6))
            _fill(obj, 6, self._num(b, 7))
            _fill(obj, 7, self._num(b, 8))
            _fill(obj, 8, self._num(b, 9))
            _fill(obj, 9, self._num(b, 10))
            _fill(obj, 10, self._num(b, 11))
            _fill(obj, 11, self._num(b, 12))
            return obj
        if self._is(b, 0, b"othertank", 9):
            self._count(b, 8, ls)
            return _named(_OtherTank, (
                self._str(b, 1), self._str(b, 2), self._str(b, 3), self._str(b, 4),
                self._num(b, 5), self._num(b, 6), self._num(b, 7)))
        if self._is(b, 0, b"shot", 4):
            self._count(b, 5, ls)
            return _named(_Shot, (self._num(b, 1), self._num(b, 2), self._num(b, 3),
                                  self._num(b, 4)))
        if self._is(b, 0, b"flag", 4):
            self._count(b, 5, ls)
            return _named(_Flag, (self._str(b, 1), self._str(b, 2), self._num(b, 3),
                                  self._num(b, 4)))
        if self._is(b, 0, b"team", 4):
            self._count(b, 3, ls)
            return _named(_Team, (self._str(b, 1), self._int(b, 2)))
        if self._is(b, 0, b"obstacle", 8):
            return Obstacle(self._corners(b, 1, ls))
        if self._is(b, 0, b"base", 4):
            if nt < 2:
                raise _error("base line without a colour", self._base + ls)
            return Base(self._str(b, 1), self._corners(b, 2, ls))
        if self._is(b, 0, b"constant", 8):
            self._count(b, 3, ls)
            return _named(_Constant, (self._str(b, 1), self._str(b, 2)))
        if self._is(b, 0, b"score", 5):
            self._count(b, 4, ls)
            return _named(_Score, (self._str(b, 1), self._str(b, 2), self._num(b, 3)))
        if (self._is(b, 0, b"ack", 3) or self._is(b, 0, b"ok", 2) or self._is(b, 0, b"fail", 4)
                or self._is(b, 0, b"begin", 5) or self._is(b, 0, b"timer", 5)
                or self._is(b, 0, b"bzrobots", 8) or self._is(b, 0, b"at", 2)
                or self._is(b, 0, b"size", 4)):
            raise _error("list not terminated by end", self._base + ls)
        raise _error("unknown list item", self._base + ls)

    # -- occgrid ----------------------------------------------------------------

    cdef tuple _pair(self, const char *b, Py_ssize_t k, char sep):
        cdef Py_ssize_t s = self._ts[k], e = self._te[k], i, cut = -1, count = 0
        cdef long long x, y
        for i in range(s, e):
            if b[i] == sep:
                cut = i
                count += 1
        if (count != 1 or not bz_parse_int(b + s, cut - s, &x)
                or not bz_parse_int(b + cut + 1, e - cut - 1, &y)):
            raise _error("bad occgrid header", self._base + s)
        return (x, y)

    cdef int _at(self, const char *b, Py_ssize_t ls) except -1:
        if self._nt != 2:
            raise _error("bad occgrid header", self._base + ls)
        self._gx, self._gy = self._pair(b, 1, b',')
        self._state = S_GRID_SIZE
        return 0

    cdef int _size(self, const char *b, Py_ssize_t ls) except -1:
        cdef long long w, h
        if self._nt != 2 or not self._is(b, 0, b"size", 4):
            raise _error("occgrid size line expected", self._base + ls)
        w, h = self._pair(b, 1, b'x')
        if w < 0 or h < 0 or (h != 0 and w > self.max_grid_cells // h):
            raise _error("occgrid size out of range", self._base + self._ts[1])
        self._gw = w
        self._gh = h
        self._rows = 0
        if self._empty is None:  # numpy is imported by the first grid, not before
            from numpy import empty, uint8
            self._empty = empty
            self._uint8 = uint8
        # uninitialised: every cell is written before the grid is returned
        self._cells = self._empty((w, h), dtype=self._uint8)
        self._cellp = _data_pointer(self._cells)
        self._state = S_GRID_END if w == 0 or h == 0 else S_GRID_BODY
        return 0

    cdef Py_ssize_t _grid_fast(self, const char *b, Py_ssize_t pos, Py_ssize_t n) except -1:
        """Convert every complete row that is exactly H cells + ``\\n``;
        stop at the first other line (the general path handles it)."""
        cdef Py_ssize_t h = self._gh, w = self._gw, rows = self._rows
        cdef object cells = self._cells  # out points into it: held across nogil
        cdef char *out = self._cellp
        with nogil:
            pos = bz_grid(b, pos, n, out, h, w, &rows)
        del cells
        self._rows = rows
        if rows == w:
            self._state = S_GRID_END
        return pos

    cdef int _row(self, const char *b, Py_ssize_t ls, Py_ssize_t le, list out) except -1:
        cdef Py_ssize_t cs = ls, ce = le, h = self._gh, i
        cdef char *cells = self._cellp
        while cs < ce and bz_space(b[cs]):
            cs += 1
        while ce > cs and bz_space(b[ce - 1]):
            ce -= 1
        if ce - cs == h and bz_row(b + cs, cells + self._rows * h, h):
            self._rows += 1
            if self._rows == self._gw:
                self._state = S_GRID_END
            return 0
        if cs == ce:
            return 0
        self._tokenize(b, ls, le)
        if self._is(b, 0, b"error", 5):
            out.append(Error(self._rest(b)))
            return 0
        if ce - cs == 3 and memcmp(b + cs, b"end", 3) == 0:
            raise _error(f"occgrid ended after {self._rows} of {self._gw} rows", self._base + ls)
        for i in range(cs, ce):
            if b[i] != b'0' and b[i] != b'1':
                raise _error("bad occgrid cell", self._base + i)
        raise _error(f"occgrid row of {ce - cs} cells, expected {h}", self._base + ls)

    cdef int _finish_grid(self, list out) except -1:
        grid = self._cells
        self._cells = None
        self._cellp = NULL
        out.append(_named(_OccGrid, (self._ack, self._gx, self._gy, grid)))
        self._state = S_TOP
        return 0
