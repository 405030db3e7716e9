# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""LLUDP packet codec, compiled twin of ``_codec_py.py``.

Same results, same errors (messages and offsets) as the pure twin; the
parity tests hold them together. Zero-coding, the field walk and the field
writer are in ``_lludp.h``; the walk follows the per-message plan of
:meth:`Template.plan` over raw bytes, building Block tuples directly. Any
value the writer does not take itself (an unusual type, or an error) goes
to the pure twin's field encoder, so both raise the same EncodeError.

Decoded blocks, UUIDs and tuples of floats hold only atomic values, and each
block name's tuple of blocks and the blocks dict only those: they are left
untracked by the cyclic GC (see ``_lludp.h``), so a program keeping many
decoded messages does not make every collection traverse them.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItemWithError, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject, PyObject_GetItem
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_GET_LENGTH
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

import uuid as _uuid_mod

from gamecodec.errors import DecodeError
from gamecodec.lludp import _codec_py as _py
from gamecodec.lludp import _errors as M
from gamecodec.lludp._models import Header, Message, split_code

cdef extern from "_capi.h":
    object gamecodec_alloc_subtuple(object cls, Py_ssize_t n)
    object _named "gamecodec_subtuple_of"(object cls, tuple items)
    int gamecodec_as_u64(object v, unsigned long long *out)
    int gamecodec_as_i64(object v, long long *out)
    object gamecodec_uint128(const uint8_t *p)
    int gamecodec_uint128_bytes(object v, uint8_t *out)

cdef extern from "_lludp.h":
    enum: LLUDP_SLACK
    enum: LLUDP_SHORT
    enum: LLUDP_TOO_LONG
    Py_ssize_t lludp_expand(const uint8_t *src, Py_ssize_t n, uint8_t *dst, Py_ssize_t cap,
                            Py_ssize_t *err) nogil
    Py_ssize_t lludp_compress(const uint8_t *src, Py_ssize_t n, uint8_t *dst, Py_ssize_t cap) nogil
    Py_ssize_t lludp_compressed_size(const uint8_t *src, Py_ssize_t n) nogil
    object lludp_expand_bytes(const uint8_t *src, Py_ssize_t n, Py_ssize_t cap, Py_ssize_t *err)
    void lludp_init(object zero, object one, object zero3, object uuid_cls, object uuid_int,
                    object uuid_safe, object safe_unknown)
    int lludp_block_fill(object blk, const uint8_t *layout, Py_ssize_t nfields, const uint8_t *r,
                         Py_ssize_t end, Py_ssize_t *ppos, bint strict, int *truncated,
                         int *odd_bool, Py_ssize_t *pf, uint64_t *plength) except -1
    object lludp_acks_tuple(const uint8_t *p, Py_ssize_t n, Py_ssize_t count)
    void lludp_untrack_tuple(object t)
    Py_ssize_t lludp_fields_put(object item, const uint8_t *layout, Py_ssize_t f,
                                Py_ssize_t nfields, uint8_t *buf, Py_ssize_t cap,
                                Py_ssize_t *pn, Py_ssize_t *need)

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX
    object PyLong_FromUnsignedLong(unsigned long v)
    object PyLong_FromLong(long v)
    bint PyLong_CheckExact(object o)
    bint PyLong_Check(object o)
    bint PyBytes_CheckExact(object o)
    bint PyTuple_CheckExact(object o)
    bint PyList_CheckExact(object o)
    bint PyDict_CheckExact(object o)
    bint PyTuple_Check(object o)

__all__ = [
    "decode",
    "decode_many",
    "encode",
    "encode_into",
    "encode_packet",
    "forward",
    "peek",
    "zero_decode",
    "zero_encode",
]

cdef enum:
    ZC = 0x80
    ACKF = 0x10
    STACK = 8192
    KIND_VARIABLE = 3
    MAX_ACKS_C = 250

cdef tuple _EMPTY = ()
# module globals cost a dict lookup per use on Python 3.12+: keep C references
cdef object _Message = Message
cdef object _Header = Header
cdef bytes _NOBYTES = b""
cdef str _FLAG = "flag"
cdef object _MISSING = object()

lludp_init(0.0, 1.0, (0.0, 0.0, 0.0), _uuid_mod.UUID, _uuid_mod.UUID.__dict__["int"],
           _uuid_mod.UUID.__dict__["is_safe"], _uuid_mod.SafeUUID.unknown)


# ------------------------------------------------------------------ objects


cdef inline object _u32(uint32_t v):
    return PyLong_FromUnsignedLong(v)


cdef inline object _item(object t, Py_ssize_t i):
    return <object>PyTuple_GET_ITEM(t, i)


cdef inline void _set(object t, Py_ssize_t i, object value) noexcept:
    Py_INCREF(value)
    PyTuple_SET_ITEM(t, i, value)


# ------------------------------------------------------------------ zero-coding


cdef Py_ssize_t _cap(object max_size) except -1:
    cdef unsigned long long v
    if PyLong_CheckExact(max_size) and gamecodec_as_u64(max_size, &v) == 0:
        return v if v <= <unsigned long long>PY_SSIZE_T_MAX else PY_SSIZE_T_MAX
    if type(max_size) is not int or max_size < 0:
        raise M.bad_max_size(max_size)
    return max_size if max_size <= PY_SSIZE_T_MAX else PY_SSIZE_T_MAX


def zero_decode(data, max_size=8192):
    """Expand LL zero-coding; DecodeError if the result passes ``max_size`` bytes."""
    cdef bytes src = data if type(data) is bytes else memoryview(data).tobytes()
    cdef Py_ssize_t cap = _cap(max_size)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(src)
    cdef Py_ssize_t err = 0, got
    cdef uint8_t stack[STACK + LLUDP_SLACK]
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(src)
    # Small results are expanded on the stack and copied out; bigger ones into
    # a bytes object that grows as needed and is cut to size.
    if cap <= STACK:
        got = lludp_expand(p, n, stack, cap, &err)
        if got < 0:
            raise M.zero_run_too_long(err, cap)
        return PyBytes_FromStringAndSize(<const char *>stack, got)
    result = lludp_expand_bytes(p, n, cap, &err)
    if result is None:
        raise M.zero_run_too_long(err, cap)
    return result


def zero_encode(data):
    """LL zero-coding: each run of zeros as ``00 n``, runs cut at 255."""
    cdef bytes src = data if type(data) is bytes else memoryview(data).tobytes()
    cdef Py_ssize_t n = PyBytes_GET_SIZE(src)
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(src)
    cdef uint8_t stack[STACK + LLUDP_SLACK]
    cdef Py_ssize_t got
    if 2 * n <= STACK:
        got = lludp_compress(p, n, stack, STACK)
        return PyBytes_FromStringAndSize(<const char *>stack, got)
    got = lludp_compressed_size(p, n)
    result = PyBytes_FromStringAndSize(NULL, got)
    lludp_compress(p, n, <uint8_t *>PyBytes_AS_STRING(result), got)
    return result


# ------------------------------------------------------------------ header


cdef inline uint32_t _be32(const uint8_t *q) noexcept:
    return (<uint32_t>q[0] << 24) | (<uint32_t>q[1] << 16) | (<uint32_t>q[2] << 8) | q[3]


cdef inline void _put_be32(uint8_t *q, uint32_t v) noexcept:
    q[0] = (v >> 24) & 0xFF
    q[1] = (v >> 16) & 0xFF
    q[2] = (v >> 8) & 0xFF
    q[3] = v & 0xFF


cdef tuple _acks(const uint8_t *p, Py_ssize_t n, Py_ssize_t *body_end):
    cdef Py_ssize_t count = p[n - 1], k
    if n - 1 < 4 * count + 7:
        raise M.bad_ack_count(count, n)
    body_end[0] = n - 1 - 4 * count
    if count == 0:
        return _EMPTY
    return lludp_acks_tuple(p, n, count)


cdef uint32_t _number(const uint8_t *r, Py_ssize_t size, Py_ssize_t *pos) except? 0xFFFFFFFF:
    if size < 1:
        raise M.short_number(6)
    if r[0] != 0xFF:
        pos[0] = 1
        return r[0]
    if size < 2:
        raise M.short_number(6 + size)
    if r[1] != 0xFF:
        pos[0] = 2
        return 0xFF00 | r[1]
    if size < 4:
        raise M.short_number(6 + size)
    pos[0] = 4
    return 0xFFFF0000 | (<uint32_t>r[2] << 8) | r[3]


cdef object _plan(object template, uint32_t code):
    cdef object plans = template._plans
    cdef PyObject *found
    if PyDict_CheckExact(plans):
        found = PyDict_GetItemWithError(plans, _u32(code))
        if found != NULL:
            return <object>found
    return template.plan(code)


def peek(data, template):
    """Header, acks and message number, expanding at most the first bytes of the body."""
    cdef bytes src = data if type(data) is bytes else memoryview(data).tobytes()
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(src)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(src)
    cdef Py_ssize_t body_end = n, err = 0, head_n, pos = 0, stop
    cdef uint8_t head[2048 + LLUDP_SLACK]
    cdef uint8_t flags
    cdef uint32_t code
    cdef tuple acks = _EMPTY
    if n < 7:
        raise M.short_packet(n)
    flags = p[0]
    if flags & ACKF:
        acks = _acks(p, n, &body_end)
    stop = body_end if body_end < 14 else 14
    if flags & ZC:
        # 8 input bytes expand to at most 7 * 256 + 1 bytes: this cannot fail
        head_n = lludp_expand(p + 6, stop - 6, head, 2048, &err)
        if head_n > 4:
            head_n = 4
        code = _number(head, head_n, &pos)
    else:
        head_n = (stop if stop < 10 else 10) - 6
        code = _number(p + 6, head_n, &pos)
    plan = _plan(template, code)
    if plan is False:
        frequency, number = split_code(code)
        name = None
    else:
        name = (<tuple>plan)[1]
        frequency = (<tuple>plan)[2]
        number = (<tuple>plan)[3]
    return _named(_Header, (flags, _u32(_be32(p + 1)), p[5], frequency, number, name, acks,
                           body_end))


# ------------------------------------------------------------------ decode


cdef inline int _block_layout(tuple block, Py_ssize_t *count, const uint8_t **layout,
                              Py_ssize_t *nfields) noexcept:
    """The kind of a plan's block ``(name, kind, count, cls, layout)``; its
    count, its layout bytes (3 a field) and its number of fields."""
    cdef bytes lay = <bytes>PyTuple_GET_ITEM(block, 4)
    count[0] = <Py_ssize_t><object>PyTuple_GET_ITEM(block, 2)
    layout[0] = <const uint8_t *>PyBytes_AS_STRING(lay)
    nfields[0] = PyBytes_GET_SIZE(lay) // 3
    return <int><object>PyTuple_GET_ITEM(block, 1)


cdef object _walk(const uint8_t *r, Py_ssize_t end, Py_ssize_t *ppos, tuple plan, bint strict,
                  Py_ssize_t *first_absent, int *truncated, int *odd_bool):
    # Once a count byte is missing the data has ended, so every later Variable
    # block is missing too: *first_absent (the index of the first) says it all.
    # Each tuple of blocks is untracked before it goes into the dict, which so
    # stays untracked.
    cdef dict out = {}
    cdef tuple blocks = <tuple>plan[4]
    cdef tuple block
    cdef Py_ssize_t pos = ppos[0], nb = PyTuple_GET_SIZE(blocks), b, f, i
    cdef Py_ssize_t produced = 0
    cdef uint64_t length = 0
    cdef int rc
    cdef const uint8_t *layout = NULL
    cdef Py_ssize_t nfields = 0, count = 0
    cdef object name = plan[1]
    cdef tuple items
    for b in range(nb):
        block = <tuple>PyTuple_GET_ITEM(blocks, b)
        bname = block[0]
        cls = block[3]
        if _block_layout(block, &count, &layout, &nfields) == KIND_VARIABLE:
            if pos >= end:
                if strict:
                    raise M.missing_count(6 + pos, name, bname)
                if first_absent[0] < 0:
                    first_absent[0] = b
                PyDict_SetItem(out, bname, _EMPTY)
                continue
            count = r[pos]
            pos += 1
        items = PyTuple_New(count)
        for i in range(count):
            blk = gamecodec_alloc_subtuple(cls, nfields)
            PyTuple_SET_ITEM(items, i, blk)
            Py_INCREF(blk)
            rc = lludp_block_fill(blk, layout, nfields, r, end, &pos, strict, truncated,
                                  odd_bool, &f, &length)
            if rc == LLUDP_SHORT:
                raise M.short_field(6 + pos, name, bname, cls._fields[f])
            if rc == LLUDP_TOO_LONG:
                raise M.too_long_variable(6 + pos, name, bname, cls._fields[f], length)
        produced += count
        lludp_untrack_tuple(items)
        PyDict_SetItem(out, bname, items)
    if produced == 0 and nb:
        raise M.empty_message(6 + pos, name)
    ppos[0] = pos
    return out


cdef tuple _absent_names(tuple plan, Py_ssize_t first):
    """The Variable blocks from index ``first`` on (their count bytes lay past the end)."""
    return tuple([b[0] for b in (<tuple>plan[4])[first:] if b[1] == KIND_VARIABLE])


cdef object _decode_region(const uint8_t *r, Py_ssize_t rn, uint8_t flags, uint32_t seq,
                           Py_ssize_t extra_len, tuple acks, object template, bint strict):
    cdef Py_ssize_t pos = 0, start
    cdef uint32_t code = _number(r, rn, &pos)
    cdef int truncated = 0, odd_bool = 0
    cdef Py_ssize_t first_absent = -1
    if pos + extra_len > rn:
        raise M.short_extra(6 + rn, extra_len)
    extra = _NOBYTES if extra_len == 0 else PyBytes_FromStringAndSize(<const char *>r + pos, extra_len)
    pos += extra_len
    plan = _plan(template, code)
    if plan is False:
        frequency, number = split_code(code)
        return _named(_Message, (
            _py._unknown_name(code), {}, flags, _u32(seq), acks, extra,
            frequency, number, _NOBYTES, _EMPTY, False,
            PyBytes_FromStringAndSize(<const char *>r + pos, rn - pos), _EMPTY,
        ))
    start = pos
    blocks = _walk(r, rn, &pos, <tuple>plan, strict, &first_absent, &truncated, &odd_bool)
    bool_bytes = _EMPTY
    if odd_bool:  # rare (senders write 0 and 1): the pure twin's walk lists them
        bool_bytes = tuple(_py._walk(PyBytes_FromStringAndSize(<const char *>r, rn), start,
                                     plan, strict, (<tuple>plan)[1])[4])
    absent = _EMPTY if first_absent < 0 else _absent_names(<tuple>plan, first_absent)
    excess = _NOBYTES
    if pos < rn:
        if strict:
            raise M.excess_bytes(6 + pos, (<tuple>plan)[1], rn - pos)
        excess = PyBytes_FromStringAndSize(<const char *>r + pos, rn - pos)
    # the Message stays tracked by the GC: its blocks dict is the user's to fill
    obj = gamecodec_alloc_subtuple(_Message, 13)
    _set(obj, 0, (<tuple>plan)[1])
    _set(obj, 1, blocks)
    _set(obj, 2, PyLong_FromLong(flags))
    _set(obj, 3, _u32(seq))
    _set(obj, 4, acks)
    _set(obj, 5, extra)
    _set(obj, 6, (<tuple>plan)[2])
    _set(obj, 7, (<tuple>plan)[3])
    _set(obj, 8, excess)
    _set(obj, 9, absent)
    _set(obj, 10, True if truncated else False)
    _set(obj, 11, None)
    _set(obj, 12, bool_bytes)
    return obj


cdef object _decode(bytes src, object template, bint strict, Py_ssize_t cap):
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(src)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(src)
    cdef Py_ssize_t body_end = n, err = 0, rn, room
    cdef uint8_t flags
    cdef tuple acks = _EMPTY
    cdef uint8_t stack[STACK + LLUDP_SLACK]
    cdef uint8_t *heap
    if n < 7:
        raise M.short_packet(n)
    flags = p[0]
    if flags & ACKF:
        acks = _acks(p, n, &body_end)
    cdef Py_ssize_t limit = cap  # the caller's max_size, for the error
    # the 6 header bytes and the expansion share the cap, as the viewer's buffer
    cap = cap - 6 if cap > 6 else 0
    if not (flags & ZC):
        return _decode_region(p + 6, body_end - 6, flags, _be32(p + 1), p[5], acks, template,
                              strict)
    room = cap
    if room > 256 * (body_end - 6) + 1:
        room = 256 * (body_end - 6) + 1
    if room <= STACK:
        # (a cap above STACK cannot bind here: 31 input bytes expand to 7,681 at most)
        rn = lludp_expand(p + 6, body_end - 6, stack, cap if cap < STACK else STACK, &err)
        if rn < 0:
            raise M.packet_too_long(6 + err, limit)
        return _decode_region(stack, rn, flags, _be32(p + 1), p[5], acks, template, strict)
    heap = <uint8_t *>PyMem_Malloc(room + LLUDP_SLACK)
    if heap == NULL:
        raise MemoryError()
    try:
        rn = lludp_expand(p + 6, body_end - 6, heap, room, &err)
        if rn < 0:
            raise M.packet_too_long(6 + err, limit)
        return _decode_region(heap, rn, flags, _be32(p + 1), p[5], acks, template, strict)
    finally:
        PyMem_Free(heap)


def decode(data, template, bint strict=False, max_size=8192):
    """Decode one packet: header, acks, message number, extra bytes, every field."""
    cdef bytes src = data if type(data) is bytes else memoryview(data).tobytes()
    return _decode(src, template, strict, _cap(max_size))


def decode_many(datagrams, template, bint strict=False, max_size=8192):
    """Decode each packet; a bad one gives its DecodeError in its place."""
    cdef Py_ssize_t cap = _cap(max_size)
    cdef list out = []
    for data in list(datagrams):
        try:
            out.append(_decode(data if type(data) is bytes else memoryview(data).tobytes(), template, strict,
                               cap))
        except DecodeError as exc:
            out.append(exc)
    return out


# ------------------------------------------------------------------ encode


cdef struct Buf:
    uint8_t *p
    Py_ssize_t n
    Py_ssize_t cap
    bint heap
    bint missed  # a block of the plan is not in the message (see _encode)


cdef int _grow(Buf *b, Py_ssize_t need) except -1:
    cdef Py_ssize_t cap = b.cap * 2
    cdef uint8_t *q
    if cap < b.n + need + 64:
        cap = b.n + need + 64
    if b.heap:
        q = <uint8_t *>PyMem_Realloc(b.p, cap)
    else:
        q = <uint8_t *>PyMem_Malloc(cap)
        if q != NULL:
            memcpy(q, b.p, b.n)
    if q == NULL:
        raise MemoryError()
    b.p = q
    b.cap = cap
    b.heap = True
    return 0


cdef inline int _put(Buf *b, const void *src, Py_ssize_t size) except -1:
    if b.n + size > b.cap:
        _grow(b, size)
    memcpy(b.p + b.n, src, size)
    b.n += size
    return 0


cdef inline int _put_bytes(Buf *b, bytes raw) except -1:
    return _put(b, PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw))


cdef inline object _seq_item(object seq, Py_ssize_t k):
    """Item k of an exact tuple or list (the caller checked the type and size)."""
    if PyTuple_CheckExact(seq):
        return <object>PyTuple_GET_ITEM(seq, k)
    return <object>PyList_GET_ITEM(seq, k)


cdef inline Py_ssize_t _seq_len(object seq) noexcept:
    if PyTuple_CheckExact(seq):
        return PyTuple_GET_SIZE(seq)
    return PyList_GET_SIZE(seq)


cdef int _number_out(Buf *b, object frequency, object number, object name) except -1:
    """The message number bytes (as the pure twin's _number_bytes, which handles the rest)."""
    cdef uint8_t raw[4]
    cdef int f
    cdef unsigned long n
    cdef long long fv
    cdef unsigned long long nv
    # read as C integers (a Frequency is an IntEnum): no Python comparisons
    if (PyLong_Check(frequency) and gamecodec_as_i64(frequency, &fv) == 0 and 1 <= fv <= 5
            and PyLong_CheckExact(number) and gamecodec_as_u64(number, &nv) == 0
            and nv <= 0xFFFFFFFF):
        f = <int>fv
        n = <unsigned long>nv
        if (f == 1 or f == 2) and n <= 0xFE:
            if f == 1:
                raw[0] = n
                return _put(b, raw, 1)
            raw[0] = 0xFF
            raw[1] = n
            return _put(b, raw, 2)
        if (f == 4 and n <= 0xFFFF) or (f == 5 and n >= 0xFFFFFF00):
            raw[0] = 0xFF if f == 4 else (n >> 24) & 0xFF
            raw[1] = 0xFF if f == 4 else (n >> 16) & 0xFF
            raw[2] = (n >> 8) & 0xFF
            raw[3] = n & 0xFF
            return _put(b, raw, 4)
    nb = _py._number_bytes(frequency, number, name)
    return _put(b, PyBytes_AS_STRING(nb), PyBytes_GET_SIZE(nb))


cdef Py_ssize_t _absent_tail(tuple blocks, object given, object absent) except -1:
    """Where the trailing run of empty Variable blocks listed in ``absent`` starts
    (the number of blocks if the last one is written)."""
    cdef Py_ssize_t tail = PyTuple_GET_SIZE(blocks)
    cdef tuple block
    cdef object items
    while tail > 0:
        block = <tuple>PyTuple_GET_ITEM(blocks, tail - 1)
        bname = <object>PyTuple_GET_ITEM(block, 0)
        if <int><object>PyTuple_GET_ITEM(block, 1) != KIND_VARIABLE or bname not in absent:
            break
        items = given.get(bname, _EMPTY)
        if not (PyList_CheckExact(items) or PyTuple_CheckExact(items)) or len(items):
            break
        tail -= 1
    return tail


cdef int _body(Buf *b, object message, tuple plan) except -1:
    """Write the blocks of ``message`` by ``plan`` (``b.missed`` if one of
    the plan's is not in it)."""
    cdef object name = plan[1]
    cdef tuple blocks = <tuple>plan[4]
    cdef Py_ssize_t nb = PyTuple_GET_SIZE(blocks), bi, f, nitems, k, tail, need
    cdef Py_ssize_t nfields = 0, count = 0
    cdef int ftype, kind
    cdef const uint8_t *layout = NULL
    cdef uint8_t one
    cdef PyObject *found
    given = _item(message, 1)
    absent = _item(message, 9)
    # an empty absent Variable block is left out only at the end (no count byte):
    # one a written block follows gets its count of 0, or the packet is misread
    tail = _absent_tail(blocks, given, absent) if absent else nb
    for bi in range(nb):
        block = <tuple>PyTuple_GET_ITEM(blocks, bi)
        bname = block[0]
        cls = block[3]
        kind = _block_layout(block, &count, &layout, &nfields)
        if PyDict_CheckExact(given):
            found = PyDict_GetItemWithError(given, bname)
            if found == NULL:
                items = _EMPTY
                b.missed = True
            else:
                items = <object>found
        else:
            items = given.get(bname, _MISSING)
            if items is _MISSING:
                items = _EMPTY
                b.missed = True
        if not (PyList_CheckExact(items) or PyTuple_CheckExact(items)):
            items = list(items)
        nitems = _seq_len(items)
        if kind == KIND_VARIABLE:
            if bi >= tail:
                continue
            if nitems > 0xFF:
                raise M.encode_error(name, bname, f"{nitems} blocks, at most 255")
            one = <uint8_t>nitems
            _put(b, &one, 1)
        elif nitems != count:
            raise M.encode_error(name, bname, f"expected {count} block(s), got {nitems}")
        k = 0
        # the size each time, as the pure twin's list iterator: writing a field
        # may run code that shrinks the list
        while k < _seq_len(items):
            item = _seq_item(items, k)
            k += 1
            if not PyTuple_Check(item):
                raise M.encode_error(name, bname, f"expected a Block, got {type(item).__name__}")
            if PyTuple_GET_SIZE(item) != nfields:
                raise M.encode_error(
                    name, bname, f"expected {nfields} fields, got {PyTuple_GET_SIZE(item)}"
                )
            f = 0
            while True:
                f = lludp_fields_put(item, layout, f, nfields, b.p, b.cap, &b.n, &need)
                if f >= nfields:
                    break
                if need:
                    _grow(b, need)
                    continue
                # a value the writer leaves: the pure twin's bytes, or its error
                ftype = layout[3 * f]
                _put_bytes(b, _py._field_bytes(
                    ftype, layout[3 * f + 1] | (layout[3 * f + 2] << 8),
                    <object>PyTuple_GET_ITEM(item, f), f"{bname}.{cls._fields[f]}", name,
                ))
                f += 1
    return 0


cdef bytes _encode(object message, object template, bint smaller):
    """The packet of ``message``."""
    cdef unsigned long long seq_v
    cdef Buf b
    cdef uint8_t stack[2048]
    cdef uint8_t zstack[4096]
    cdef uint8_t *zheap = NULL
    cdef uint8_t *zbuf
    cdef const uint8_t *src_p
    cdef Py_ssize_t total, coded_n, k, nacks
    cdef uint8_t *o
    cdef uint8_t flags
    cdef unsigned long long v
    cdef PyObject *found
    if type(message) is not _Message:
        if not isinstance(message, _Message):
            raise TypeError(f"expected a Message, got {type(message).__name__}")
    name = _item(message, 0)
    b.p = stack
    b.n = 0
    b.cap = 2048
    b.heap = False
    b.missed = False
    try:
        extra = _item(message, 5)
        if not PyBytes_CheckExact(extra):
            extra = _py._bytes(extra, "extra", name)
        body_raw = _item(message, 11)
        if body_raw is not None:
            _number_out(&b, _item(message, 6), _item(message, 7), name)
            _put_bytes(&b, extra)
            _put_bytes(&b, _py._bytes(body_raw, "body", name))
        else:
            plans = template._name_plans
            found = (PyDict_GetItemWithError(plans, name)
                     if type(name) is str and PyDict_CheckExact(plans) else NULL)
            plan = None if found == NULL else <object>found
            if plan is None:
                try:
                    plan = template.plan_by_name(name)
                except KeyError:
                    raise M.encode_error(name, "name", "not in the template") from None
        if body_raw is None and _item(message, 12):
            # BOOL bytes to write back (rare: senders write 0 and 1): the pure twin's body
            _put_bytes(&b, _py._body(message, plan, template))
        elif body_raw is None:
            _number_out(&b, (<tuple>plan)[2], (<tuple>plan)[3], name)
            _put_bytes(&b, extra)
            _body(&b, message, <tuple>plan)
            # a block the template's message does not have: the message has
            # more blocks than the plan, or as many and misses one of them
            if b.missed or len(_item(message, 1)) != PyTuple_GET_SIZE((<tuple>plan)[4]):
                _py._check_blocks(name, _item(message, 1), plan, template)
            excess = _item(message, 8)
            if not PyBytes_CheckExact(excess):
                excess = _py._bytes(excess, "excess", name)
            _put_bytes(&b, excess)
        fl = _item(message, 2)
        if not (PyLong_CheckExact(fl) and gamecodec_as_u64(fl, &v) == 0 and v <= 0xFF):
            v = _py._int(fl, 0, 0xFF, "flags", name)
        flags = <uint8_t>v
        seq = _item(message, 3)
        if not (PyLong_CheckExact(seq) and gamecodec_as_u64(seq, &seq_v) == 0 and (seq_v >> 32) == 0):
            seq_v = _py._int(seq, 0, 0xFFFFFFFF, "sequence", name)
        if PyBytes_GET_SIZE(extra) > 0xFF:
            raise M.encode_error(name, "extra", f"{PyBytes_GET_SIZE(extra)} bytes, at most 255")
        acks = _item(message, 4)
        nacks = len(acks)
        if nacks > 0xFF:  # written back as they are (see _codec_py.encode)
            raise M.encode_error(name, "acks", f"{nacks} acks, at most 255")
        if nacks:
            flags |= ACKF
        src_p = b.p
        coded_n = b.n
        if flags & ZC:
            if 2 * b.n + LLUDP_SLACK <= 4096:
                zbuf = zstack
            else:
                zheap = <uint8_t *>PyMem_Malloc(2 * b.n + LLUDP_SLACK)
                if zheap == NULL:
                    raise MemoryError()
                zbuf = zheap
            coded_n = lludp_compress(b.p, b.n, zbuf, 2 * b.n + LLUDP_SLACK)
            if smaller and coded_n >= b.n:
                flags &= ~ZC
                coded_n = b.n
            else:
                src_p = zbuf
        result = PyBytes_FromStringAndSize(
            NULL, 6 + coded_n + ((4 * nacks + 1) if flags & ACKF else 0)
        )
        o = <uint8_t *>PyBytes_AS_STRING(result)
        memcpy(o + 6, src_p, coded_n)
        total = 6 + coded_n
        if flags & ACKF:
            for k in range(nacks - 1, -1, -1):
                ack = <object>PyTuple_GET_ITEM(acks, k) if PyTuple_CheckExact(acks) else acks[k]
                if not (PyLong_CheckExact(ack) and gamecodec_as_u64(ack, &v) == 0 and (v >> 32) == 0):
                    v = _py._int(ack, 0, 0xFFFFFFFF, "acks", name)
                _put_be32(o + total, <uint32_t>v)
                total += 4
            o[total] = <uint8_t>nacks
            total += 1
        o[0] = flags
        _put_be32(o + 1, <uint32_t>seq_v)
        o[5] = <uint8_t>PyBytes_GET_SIZE(extra)
    finally:
        if b.heap:
            PyMem_Free(b.p)
        if zheap != NULL:
            PyMem_Free(zheap)
    return result


def encode(message, template, zero_coding="flag"):
    """The packet bytes of ``message`` (see ``gamecodec.lludp.encode``)."""
    if zero_coding is _FLAG:  # the default (an interned str): no comparison
        return _encode(message, template, False)
    if zero_coding != "flag" and zero_coding != "smaller":
        if not isinstance(message, Message):
            raise TypeError(f"expected a Message, got {type(message).__name__}")
        raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
    return _encode(message, template, zero_coding == "smaller")


cdef inline unsigned long long _u(object value, unsigned long long hi, str where, object name) except? 0xFFFFFFFFFFFFFFFF:
    """``value`` as an int in 0..hi, or the pure twin's EncodeError."""
    cdef unsigned long long v
    if PyLong_CheckExact(value) and gamecodec_as_u64(value, &v) == 0 and v <= hi:
        return v
    return _py._int(value, 0, hi, where, name)


cdef inline bint _is_packet_ack(object name):
    """``name == "PacketAck"``, without a string comparison for other names."""
    if type(name) is str and PyUnicode_GET_LENGTH(name) != 9:
        return False
    return name == "PacketAck"


def encode_packet(message, template, zero_coding, flags, sequence, acks, count, limit):
    """``message`` as a circuit sends it (see the pure twin): encode's packet
    with ``flags``/``sequence`` in the header and up to ``count`` ids of
    ``acks`` appended in that order, within ``limit`` bytes."""
    cdef bytes data = encode(message, template, zero_coding)
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), end, n = 0, k
    cdef unsigned long long head, seq_v, cnt, lim
    cdef uint8_t *o
    name = _item(message, 0)
    head = (_u(flags, 0xFF, "flags", name) & ~(<unsigned long long>(ZC | ACKF))) | (p[0] & ZC)
    seq_v = _u(sequence, 0xFFFFFFFF, "sequence", name)
    cnt = _u(count, MAX_ACKS_C, "acks", name)
    lim = _u(limit, 0xFFFFFFFF, "limit", name)
    end = size - 1 - 4 * <Py_ssize_t>p[size - 1] if p[0] & ACKF else size
    if not _is_packet_ack(name):
        n = len(acks)
        if <Py_ssize_t>cnt < n:
            n = <Py_ssize_t>cnt
        if (<Py_ssize_t>lim - end - 1) >> 2 < n:
            n = (<Py_ssize_t>lim - end - 1) >> 2
        if n < 0:
            n = 0
    result = PyBytes_FromStringAndSize(NULL, end + (4 * n + 1 if n else 0))
    o = <uint8_t *>PyBytes_AS_STRING(result)
    memcpy(o, p, end)
    o[0] = <uint8_t>(head | ACKF if n else head)
    _put_be32(o + 1, <uint32_t>seq_v)
    for k in range(n):
        # as the pure twin's acks[k]: converting an ack may run code that
        # changes the list (acks[k] then raises IndexError)
        _put_be32(o + end + 4 * k, <uint32_t>_u(PyObject_GetItem(acks, k), 0xFFFFFFFF, "acks", name))
    if n:
        o[end + 4 * n] = <uint8_t>n
    return result


def encode_into(message, buf, offset, template, zero_coding="flag"):
    """Write ``message`` into ``buf`` at ``offset``; returns the bytes written."""
    data = encode(message, template, zero_coding)
    if not isinstance(buf, bytearray):
        raise TypeError(f"buf must be a bytearray, not {type(buf).__name__}")
    if offset < 0 or offset > len(buf):
        raise ValueError(f"offset {offset} outside the buffer of {len(buf)} bytes")
    buf[offset : offset + len(data)] = data
    return len(data)


def forward(data, flags=None, sequence=None, acks=None):
    """Rewrite a packet's header and appended acks, copying its body untouched."""
    cdef bytes src = data if type(data) is bytes else memoryview(data).tobytes()
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(src)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(src), body_end = n, k, nacks, total
    cdef tuple old_acks = _EMPTY
    cdef uint8_t new_flags
    cdef uint8_t *o
    cdef unsigned long long v = 0
    if n < 7:
        raise M.short_packet(n)
    if p[0] & ACKF:
        old_acks = _acks(p, n, &body_end)
    new_flags = p[0] if flags is None else _py._int(flags, 0, 0xFF, "flags", "forward")
    new_acks = old_acks if acks is None else tuple(acks)
    nacks = len(new_acks)
    if nacks > MAX_ACKS_C:
        raise M.encode_error("forward", "acks", f"{nacks} acks, at most {MAX_ACKS_C}")
    if acks is not None and nacks and src[6:10] == _py.PACKET_ACK_NUMBER:
        raise M.encode_error("forward", "acks", "acks are never appended to PacketAck")
    if acks is not None:
        new_flags = (new_flags | ACKF) if nacks else (new_flags & ~ACKF)
    total = body_end + ((4 * nacks + 1) if new_flags & ACKF else 0)
    if sequence is not None:
        v = _py._int(sequence, 0, 0xFFFFFFFF, "sequence", "forward")
    result = PyBytes_FromStringAndSize(NULL, total)
    o = <uint8_t *>PyBytes_AS_STRING(result)
    memcpy(o, p, body_end)
    o[0] = new_flags
    if sequence is not None:
        _put_be32(o + 1, <uint32_t>v)
    if new_flags & ACKF:
        total = body_end
        for k in range(nacks - 1, -1, -1):
            ack = new_acks[k]
            v = ack if (PyLong_CheckExact(ack) and 0 <= ack <= 0xFFFFFFFF) else _py._int(
                ack, 0, 0xFFFFFFFF, "acks", "forward")
            _put_be32(o + total, <uint32_t>v)
            total += 4
        o[total] = <uint8_t>nacks
    return result


# ------------------------------------------------------------------ self-check


def _check_capi():
    """Compare the helpers of _capi.h that know CPython's layout with the public
    API; ImportError (the pure twin is used) if they disagree."""
    cdef unsigned long long u = 0
    cdef long long s = 0
    cdef uint8_t raw[16]
    values = [0, 1, 255, 256, (1 << 30) - 1, 1 << 30, (1 << 60) - 1, 1 << 60, (1 << 64) - 1,
              1 << 64, (1 << 128) - 1, 1 << 128, 0x0123456789ABCDEF0FEDCBA987654321]
    for v in values + [-x for x in values]:
        if (gamecodec_as_u64(v, &u) == 0) != (0 <= v < 1 << 64) or (0 <= v < 1 << 64 and u != v):
            raise ImportError("gamecodec_as_u64 disagrees with the int value")
        ok = -(1 << 63) <= v < 1 << 63
        if (gamecodec_as_i64(v, &s) == 0) != ok or (ok and s != v):
            raise ImportError("gamecodec_as_i64 disagrees with the int value")
        ok = 0 <= v < 1 << 128
        if (gamecodec_uint128_bytes(v, raw) == 0) != ok or (ok and raw[:16] != v.to_bytes(16, "big")):
            raise ImportError("gamecodec_uint128_bytes disagrees with the int value")
        if ok and gamecodec_uint128(v.to_bytes(16, "big")) != v:
            raise ImportError("gamecodec_uint128 disagrees with int.from_bytes")
    items = ("X", {}, 1, 2, (), b"", 1, 4, b"", (), False, None, ())
    made = _named(Message, items)
    ref = tuple.__new__(Message, items)
    if type(made) is not Message or made != ref or repr(made) != repr(ref):
        raise ImportError("gamecodec_alloc_subtuple does not make a plain instance")
    made = _named(Header, (1, 2, 3, 4, 5, "x", (), 7))
    if hash(made) != hash(tuple.__new__(Header, (1, 2, 3, 4, 5, "x", (), 7))):
        raise ImportError("gamecodec_alloc_subtuple does not make a plain instance")


_check_capi()
