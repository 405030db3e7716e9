# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""LLUDP packet codec, compiled twin of ``_codec_py.py``.

Same results, same errors (messages and offsets) as the pure twin; the
parity tests hold them together. Zero-coding runs in ``_lludp.h``; the field
walk follows the per-message plan of :meth:`Template.plan` over raw bytes,
building Block tuples directly. Any value the fast encoder does not handle
itself (an unusual type, or an error) goes to the pure twin's field encoder,
so both raise the same EncodeError.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.pycapsule cimport PyCapsule_New
from cpython.unicode cimport PyUnicode_GET_LENGTH
from cpython.dict cimport PyDict_GetItemWithError, PyDict_SetItem
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_New, PyList_SET_ITEM, PyList_SetItem
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject, PyObject_GetItem, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from libc.math cimport isfinite, isinf, signbit, sqrt
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

import uuid as _uuid_mod

from gamecodec.errors import DecodeError
from gamecodec.lludp import _codec_py as _py
from gamecodec.lludp import _messages as M
from gamecodec.lludp._models import Header, Message, split_code

cdef extern from "_lludp.h":
    enum: LLUDP_SLACK
    enum: LLUDP_FREE_THREADED
    Py_ssize_t lludp_expand(const uint8_t *src, Py_ssize_t n, uint8_t *dst, Py_ssize_t cap,
                            Py_ssize_t *err) nogil
    Py_ssize_t lludp_compress(const uint8_t *src, Py_ssize_t n, uint8_t *dst, Py_ssize_t cap) nogil
    Py_ssize_t lludp_compressed_size(const uint8_t *src, Py_ssize_t n) nogil
    object lludp_expand_bytes(const uint8_t *src, Py_ssize_t n, Py_ssize_t cap, Py_ssize_t *err)
    object lludp_uint128(const uint8_t *p)
    int lludp_as_u64(object v, unsigned long long *out)
    int lludp_as_u64_exact(object v, unsigned long long *out)
    int lludp_as_i64(object v, long long *out)
    bint lludp_small_uint(PyObject *v, unsigned long long *out)
    int lludp_uint128_bytes(object v, uint8_t *out) noexcept
    PyObject **lludp_slot(PyObject *obj, PyObject *descr)
    object lludp_alloc(object cls)
    void lludp_fast_init(object plain_heap_class)
    object lludp_new_tuple(object cls, Py_ssize_t n)
    Py_ssize_t lludp_fl_total()
    PyObject *lludp_uuid_get(const uint8_t *p)
    void lludp_uuid_put(const uint8_t *p, object obj)
    int lludp_uuid_cache(int on)
    double lludp_f32_value(uint32_t bits) noexcept nogil
    uint32_t lludp_f32_bits(double d) noexcept nogil
    void lludp_values_init(object zero, object one, object zero3)
    int lludp_uuid_setup(PyObject *cls, PyObject *int_descr, PyObject *safe_descr,
                         PyObject *safe_unknown)
    object lludp_make_uuid(const uint8_t *p)
    object lludp_uint_obj(uint32_t v)
    int lludp_int_ring_use(int on)
    Py_ssize_t lludp_fields(object blk, const uint8_t *layout, Py_ssize_t f, Py_ssize_t nfields,
                            const uint8_t *r, Py_ssize_t end, Py_ssize_t *ppos) except -1
    Py_ssize_t lludp_fields_put(object item, const uint8_t *layout, Py_ssize_t f,
                                Py_ssize_t nfields, uint8_t *buf, Py_ssize_t cap,
                                Py_ssize_t *pn) except -1
    object lludp_acks_tuple(const uint8_t *p, Py_ssize_t n, Py_ssize_t count)

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX
    object PyUnicode_FromFormat(const char *fmt, ...)
    object PyLong_FromUnsignedLong(unsigned long v)
    object PyLong_FromUnsignedLongLong(unsigned long long v)
    object PyLong_FromLongLong(long long v)
    object PyLong_FromLong(long v)
    unsigned long long PyLong_AsUnsignedLongLong(object o) except? <unsigned long long>-1
    long long PyLong_AsLongLong(object o) except? -1
    double PyFloat_AS_DOUBLE(object o)
    bint PyLong_CheckExact(object o)
    bint PyLong_Check(object o)
    bint PyFloat_CheckExact(object o)
    bint PyBytes_CheckExact(object o)
    bint PyTuple_CheckExact(object o)
    bint PyList_CheckExact(object o)
    bint PyDict_CheckExact(object o)
    bint PyTuple_Check(object o)
    PyObject *Py_True
    PyObject *Py_False

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
    KIND_VARIABLE_FIELD = 20
    MAX_VARIABLE = 0xFFFF
    MAX_ACKS_C = 250

cdef object _UUID = _uuid_mod.UUID
cdef object _UUID_INT = _uuid_mod.UUID.__dict__["int"]
cdef object _UUID_SAFE = _uuid_mod.UUID.__dict__["is_safe"]
cdef object _SAFE_UNKNOWN = _uuid_mod.SafeUUID.unknown
cdef bint _fast_tuples = True
cdef bint _fast_uuid = True
cdef tuple _EMPTY = ()
# module globals cost a dict lookup per use on Python 3.12+: keep C references
cdef object _Message = Message
cdef object _Header = Header
cdef object _ZERO = 0.0
cdef object _ONE = 1.0
cdef tuple _ZERO3 = (0.0, 0.0, 0.0)
cdef bytes _NOBYTES = b""
cdef str _FLAG = "flag"


# ------------------------------------------------------------------ objects


cdef inline object _u32(uint32_t v):
    # one-digit ints built directly where the int layout is known (_lludp.h)
    return lludp_uint_obj(v)


cdef inline object _item(object t, Py_ssize_t i):
    return <object>PyTuple_GET_ITEM(t, i)


cdef inline void _set(object t, Py_ssize_t i, object value) noexcept:
    Py_INCREF(value)
    PyTuple_SET_ITEM(t, i, value)


cdef object _make_uuid(const uint8_t *q):
    cdef PyObject *hit
    if _fast_uuid:
        return lludp_make_uuid(q)
    hit = lludp_uuid_get(q)
    if hit != NULL:
        return <object>hit
    obj = _new_uuid(q)
    lludp_uuid_put(q, obj)
    return obj


cdef object _new_uuid(const uint8_t *q):
    cdef object value = lludp_uint128(q)
    cdef object obj
    cdef PyObject **slot
    if _fast_uuid:
        obj = lludp_alloc(_UUID)
        slot = lludp_slot(<PyObject *>obj, <PyObject *>_UUID_INT)
        Py_INCREF(value)
        slot[0] = <PyObject *>value
        slot = lludp_slot(<PyObject *>obj, <PyObject *>_UUID_SAFE)
        Py_INCREF(_SAFE_UNKNOWN)
        slot[0] = <PyObject *>_SAFE_UNKNOWN
        return obj
    obj = object.__new__(_UUID)
    _UUID_INT.__set__(obj, value)
    _UUID_SAFE.__set__(obj, _SAFE_UNKNOWN)
    return obj


cdef inline double _f32(const uint8_t *q) noexcept:
    return lludp_f32_value(q[0] | (<uint32_t>q[1] << 8) | (<uint32_t>q[2] << 16) | (<uint32_t>q[3] << 24))


cdef inline uint64_t _u64(const uint8_t *q) noexcept:
    cdef uint64_t v = 0
    cdef int k
    for k in range(7, -1, -1):
        v = (v << 8) | q[k]
    return v


cdef inline double _f64(const uint8_t *q) noexcept:
    cdef uint64_t bits = _u64(q)
    cdef double d
    memcpy(&d, &bits, 8)
    return d


cdef inline object _float(double d):
    """A float object; +0.0 and 1.0, the commonest values on the wire, are shared."""
    if d == 0.0:
        if not signbit(d):
            return _ZERO
    elif d == 1.0:
        return _ONE
    return PyFloat_FromDouble(d)


cdef bint _all_zero(const uint8_t *q, int n) noexcept:
    cdef int k
    for k in range(n):
        if q[k]:
            return False
    return True


cdef object _floats(const uint8_t *q, int count, bint wide):
    cdef object t
    cdef int k
    if count == 3 and _all_zero(q, 24 if wide else 12):
        return _ZERO3  # (0.0, 0.0, 0.0): immutable, so one object serves
    t = PyTuple_New(count)
    for k in range(count):
        _set(t, k, _float(_f64(q + 8 * k) if wide else _f32(q + 4 * k)))
    return t


cdef object _value(int t, const uint8_t *q, Py_ssize_t size):
    """The value of a fixed-size field at q (size bytes, all present)."""
    cdef double x, y, z, w, s
    cdef uint32_t u32
    if t == 15:
        return _make_uuid(q)
    elif t == 3:
        u32 = q[0] | (<uint32_t>q[1] << 8) | (<uint32_t>q[2] << 16) | (<uint32_t>q[3] << 24)
        return _u32(u32)
    elif t == 1:
        return PyLong_FromLong(q[0])
    elif t == 9:
        return _float(_f32(q))
    elif t == 11:
        return _floats(q, 3, False)
    elif t == 14:
        x = _f32(q)
        y = _f32(q + 4)
        z = _f32(q + 8)
        s = 1.0 - (x * x + y * y + z * z)
        w = sqrt(s) if s > 0 else 0.0
        tup = PyTuple_New(4)
        _set(tup, 0, _float(x))
        _set(tup, 1, _float(y))
        _set(tup, 2, _float(z))
        _set(tup, 3, _float(w))
        return tup
    elif t == 16:
        if q[0] == 0:
            return False
        if q[0] == 1:
            return True
        return PyLong_FromLong(q[0])
    elif t == 7:
        u32 = q[0] | (<uint32_t>q[1] << 8) | (<uint32_t>q[2] << 16) | (<uint32_t>q[3] << 24)
        return PyLong_FromLong(<int32_t>u32)
    elif t == 2:
        return PyLong_FromLong(q[0] | (q[1] << 8))
    elif t == 4:
        return PyLong_FromUnsignedLongLong(_u64(q))
    elif t == 5:
        return PyLong_FromLong(<int8_t>q[0])
    elif t == 6:
        return PyLong_FromLong(<int16_t>(q[0] | (q[1] << 8)))
    elif t == 8:
        return PyLong_FromLongLong(<int64_t>_u64(q))
    elif t == 10:
        return _float(_f64(q))
    elif t == 12:
        return _floats(q, 3, True)
    elif t == 13:
        return _floats(q, 4, False)
    elif t == 17:
        return PyUnicode_FromFormat(b"%d.%d.%d.%d", <int>q[0], <int>q[1], <int>q[2], <int>q[3])
    elif t == 18:
        return PyLong_FromLong((q[0] << 8) | q[1])
    else:
        return PyBytes_FromStringAndSize(<const char *>q, size)  # Fixed


cdef inline object _new_block(object cls, Py_ssize_t n):
    """An empty Block of n slots (or a plain tuple to convert, without fast tuples)."""
    if _fast_tuples:
        return lludp_new_tuple(cls, n)
    return PyTuple_New(n)


cdef object _named(object cls, tuple items):
    cdef Py_ssize_t i, n = PyTuple_GET_SIZE(items)
    if not _fast_tuples:
        return tuple.__new__(cls, items)
    obj = lludp_new_tuple(cls, n)
    for i in range(n):
        _set(obj, i, <object>PyTuple_GET_ITEM(items, i))
    return obj


# ------------------------------------------------------------------ zero-coding


cdef Py_ssize_t _cap(object max_size) except -1:
    cdef unsigned long long v
    if PyLong_CheckExact(max_size) and lludp_as_u64_exact(max_size, &v) == 0:
        return v if v <= <unsigned long long>PY_SSIZE_T_MAX else PY_SSIZE_T_MAX
    if type(max_size) is not int or max_size < 0:
        raise M.bad_max_size(max_size)
    return max_size if max_size <= PY_SSIZE_T_MAX else PY_SSIZE_T_MAX


def zero_decode(data, max_size=8192):
    """Expand LL zero-coding; DecodeError if the result passes ``max_size`` bytes."""
    cdef bytes src = data if type(data) is bytes else bytes(data)
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
    cdef bytes src = data if type(data) is bytes else bytes(data)
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


cdef object _last_template = None
cdef object _last_plans = None


cdef object _last_name_template = None
cdef object _last_name_plans = None


cdef object _name_plans(object template):
    """``template._name_plans``, looked up once per template (as _plan does ``_plans``)."""
    global _last_name_template, _last_name_plans
    if LLUDP_FREE_THREADED:
        return template._name_plans
    if template is not _last_name_template:
        _last_name_plans = template._name_plans
        _last_name_template = template
    return _last_name_plans


cdef object _plan(object template, uint32_t code):
    global _last_template, _last_plans
    cdef object key = _u32(code)
    cdef object plans
    cdef PyObject *found
    if LLUDP_FREE_THREADED:
        plans = template._plans  # no cache shared between threads without a GIL
    else:
        if template is not _last_template:
            # one attribute lookup per template, not per packet; a Template's
            # _plans dict is made once, with it, and only grows
            _last_plans = template._plans
            _last_template = template
        plans = _last_plans
    if PyDict_CheckExact(plans):
        found = PyDict_GetItemWithError(plans, key)
        if found != NULL:
            return <object>found
    return template.plan(code)


def peek(data, template):
    """Header, acks and message number, expanding at most the first bytes of the body."""
    cdef bytes src = data if type(data) is bytes else bytes(data)
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
    return _named(_Header, (flags, _u32(_be32(p + 1)), p[5], frequency,
                           number, name, acks, body_end))


# ------------------------------------------------------------------ decode


cdef object _walk(const uint8_t *r, Py_ssize_t end, Py_ssize_t *ppos, tuple plan, bint strict,
                  Py_ssize_t *first_absent, bint *truncated):
    # Once a count byte is missing the data has ended, so every later Variable
    # block is missing too: *first_absent (the index of the first) says it all.
    cdef dict out = {}
    cdef tuple blocks = <tuple>plan[4]
    cdef tuple block
    cdef Py_ssize_t pos = ppos[0], nb = PyTuple_GET_SIZE(blocks), b, f, nfields, size, i, count
    cdef Py_ssize_t produced = 0, length, have, k
    cdef const uint8_t *layout
    cdef int kind, ftype
    cdef uint8_t tmp[32]
    cdef object name = plan[1]
    cdef list items
    cdef object blk
    for b in range(nb):
        block = <tuple>PyTuple_GET_ITEM(blocks, b)
        bname = <object>PyTuple_GET_ITEM(block, 0)
        kind = <int><object>PyTuple_GET_ITEM(block, 1)
        count = <Py_ssize_t><object>PyTuple_GET_ITEM(block, 2)
        cls = <object>PyTuple_GET_ITEM(block, 3)
        lay = <object>PyTuple_GET_ITEM(block, 4)
        layout = <const uint8_t *>PyBytes_AS_STRING(lay)
        nfields = PyBytes_GET_SIZE(lay) // 3
        if kind == KIND_VARIABLE:
            if pos >= end:
                if strict:
                    raise M.missing_count(6 + pos, name, bname)
                if first_absent[0] < 0:
                    first_absent[0] = b
                PyDict_SetItem(out, bname, [])
                continue
            count = r[pos]
            pos += 1
        items = PyList_New(count)
        for i in range(count):
            blk = _new_block(cls, nfields)
            PyList_SET_ITEM(items, i, blk)
            Py_INCREF(blk)
            f = 0
            while True:
                # the fixed-size fields that fit, in C; the rest here, one at a time
                f = lludp_fields(blk, layout, f, nfields, r, end, &pos)
                if f >= nfields:
                    break
                ftype = layout[3 * f]
                size = layout[3 * f + 1] | (layout[3 * f + 2] << 8)
                if ftype == 20:
                    if pos + size > end:
                        if strict:
                            raise M.short_field(6 + pos, name, bname, cls._fields[f])
                        truncated[0] = True
                        pos = end
                        _set(blk, f, _NOBYTES)
                        f += 1
                        continue
                    length = 0
                    for k in range(size - 1, -1, -1):
                        length = (length << 8) | r[pos + k]
                    if length > MAX_VARIABLE:
                        raise M.too_long_variable(6 + pos, name, bname, cls._fields[f], length)
                    pos += size
                    if pos + length > end:
                        if strict:
                            raise M.short_field(6 + pos, name, bname, cls._fields[f])
                        truncated[0] = True
                        value = PyBytes_FromStringAndSize(NULL, length)
                        memset(PyBytes_AS_STRING(value), 0, length)
                        memcpy(PyBytes_AS_STRING(value), r + pos, end - pos)
                        _set(blk, f, value)
                        pos = end
                    else:
                        _set(blk, f, PyBytes_FromStringAndSize(<const char *>r + pos, length))
                        pos += length
                    f += 1
                    continue
                if pos + size > end:
                    if strict:
                        raise M.short_field(6 + pos, name, bname, cls._fields[f])
                    truncated[0] = True
                    have = end - pos if end > pos else 0
                    if ftype == 19:
                        value = PyBytes_FromStringAndSize(NULL, size)
                        memset(PyBytes_AS_STRING(value), 0, size)
                        memcpy(PyBytes_AS_STRING(value), r + pos, have)
                        _set(blk, f, value)
                    else:
                        memset(tmp, 0, 32)
                        memcpy(tmp, r + pos, have)
                        _set(blk, f, _value(ftype, tmp, size))
                    pos = end
                else:
                    _set(blk, f, _value(ftype, r + pos, size))
                    pos += size
                f += 1
            if not _fast_tuples:
                PyList_SetItem(items, i, tuple.__new__(cls, blk))
        produced += count
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
    cdef Py_ssize_t pos = 0
    cdef uint32_t code = _number(r, rn, &pos)
    cdef bint truncated = False
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
            PyBytes_FromStringAndSize(<const char *>r + pos, rn - pos),
        ))
    blocks = _walk(r, rn, &pos, <tuple>plan, strict, &first_absent, &truncated)
    absent = _EMPTY if first_absent < 0 else _absent_names(<tuple>plan, first_absent)
    excess = _NOBYTES
    if pos < rn:
        if strict:
            raise M.excess_bytes(6 + pos, (<tuple>plan)[1], rn - pos)
        excess = PyBytes_FromStringAndSize(<const char *>r + pos, rn - pos)
    if not _fast_tuples:
        return _named(_Message, (
            (<tuple>plan)[1], blocks, flags, _u32(seq), acks, extra,
            (<tuple>plan)[2], (<tuple>plan)[3], excess,
            absent, truncated, None,
        ))
    obj = lludp_new_tuple(_Message, 12)
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
    if not (flags & ZC):
        return _decode_region(p + 6, body_end - 6, flags, _be32(p + 1), p[5], acks, template,
                              strict)
    room = cap
    if room > 256 * (body_end - 6) + 1:
        room = 256 * (body_end - 6) + 1
    if room <= STACK:
        rn = lludp_expand(p + 6, body_end - 6, stack, cap if cap < STACK else STACK, &err)
        if rn < 0:
            raise M.zero_run_too_long(6 + err, cap)
        return _decode_region(stack, rn, flags, _be32(p + 1), p[5], acks, template, strict)
    heap = <uint8_t *>PyMem_Malloc(room + LLUDP_SLACK)
    if heap == NULL:
        raise MemoryError()
    try:
        rn = lludp_expand(p + 6, body_end - 6, heap, room, &err)
        if rn < 0:
            raise M.zero_run_too_long(6 + err, cap)
        return _decode_region(heap, rn, flags, _be32(p + 1), p[5], acks, template, strict)
    finally:
        PyMem_Free(heap)


def decode(data, template, bint strict=False, max_size=8192):
    """Decode one packet: header, acks, message number, extra bytes, every field."""
    cdef bytes src = data if type(data) is bytes else bytes(data)
    return _decode(src, template, strict, _cap(max_size))


cdef object _decode_c(object raw, object template, bint strict, object max_size):
    """``decode(raw, template, strict, max_size)`` for the compiled circuit
    (``raw`` an exact ``bytes``), without the call's argument parsing. Reached
    through the ``_DECODE_C`` capsule."""
    return _decode(<bytes>raw, template, strict, _cap(max_size))


ctypedef object (*_decode_c_t)(object, object, bint, object)

_DECODE_C = PyCapsule_New(
    <void *>(<_decode_c_t>_decode_c), b"gamecodec.lludp._codec_c.decode_c.v1", NULL
)
"""The C entry point ``_decode_c`` for the compiled circuit (see there)."""


def decode_many(datagrams, template, bint strict=False, max_size=8192):
    """Decode each packet; a bad one gives its DecodeError in its place."""
    cdef Py_ssize_t cap = _cap(max_size)
    cdef list out = []
    for data in list(datagrams):
        try:
            out.append(_decode(data if type(data) is bytes else bytes(data), template, strict,
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


cdef inline int _put_le(Buf *b, uint64_t v, int size) except -1:
    cdef int k
    if b.n + size > b.cap:
        _grow(b, size)
    for k in range(size):
        b.p[b.n + k] = (v >> (8 * k)) & 0xFF
    b.n += size
    return 0


cdef inline int _put_f64(Buf *b, double d) except -1:
    cdef uint64_t bits
    memcpy(&bits, &d, 8)
    return _put_le(b, bits, 8)


cdef inline int _put_f32(Buf *b, double d) except -1:
    return _put_le(b, lludp_f32_bits(d), 4)


cdef int _slow(Buf *b, int ftype, Py_ssize_t size, object value, str where, str name) except -1:
    """The pure twin's field encoder: identical errors, and every unusual type."""
    cdef bytes raw = _py._field_bytes(ftype, size, value, where, name)
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
    if (PyLong_Check(frequency) and lludp_as_i64(frequency, &fv) == 0 and 1 <= fv <= 5
            and PyLong_CheckExact(number) and lludp_as_u64(number, &nv) == 0
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


cdef int _floats_out(Buf *b, object value, int count, bint wide) except 1:
    """Fast path for a tuple/list of exact floats; returns 1 to ask for the slow path."""
    cdef Py_ssize_t k
    cdef double d
    cdef float f
    if not (PyTuple_CheckExact(value) or PyList_CheckExact(value)) or _seq_len(value) != count:
        return 2
    for k in range(count):
        item = _seq_item(value, k)
        if PyFloat_CheckExact(item):
            d = PyFloat_AS_DOUBLE(item)
        else:
            return 2
        if not wide:
            f = <float>d
            if isinf(f) and not isinf(d):
                return 2
    for k in range(count):
        d = PyFloat_AS_DOUBLE(_seq_item(value, k))
        if wide:
            _put_f64(b, d)
        else:
            _put_f32(b, d)
    return 0


cdef int _quat_out(Buf *b, object value) except 1:
    """LL's packToVector3 for a tuple/list of exact floats; 2 asks for the slow path."""
    cdef double q[4]
    cdef double mag, x, y, z, w
    cdef float fl
    cdef Py_ssize_t k, n
    if not (PyTuple_CheckExact(value) or PyList_CheckExact(value)):
        return 2
    n = _seq_len(value)
    if n != 3 and n != 4:
        return 2
    for k in range(n):
        item = _seq_item(value, k)
        if not PyFloat_CheckExact(item):
            return 2
        q[k] = PyFloat_AS_DOUBLE(item)
    if n == 4:
        x = q[0]
        y = q[1]
        z = q[2]
        w = q[3]
        mag = 1.0 - (x * x + y * y + z * z)
        if w == (sqrt(mag) if mag > 0 else 0.0):
            n = 3  # the w that decoding rebuilds: send x, y, z back as they came
    if n == 4:
        mag = sqrt(x * x + y * y + z * z + w * w)
        if not isfinite(mag):
            return 2
        if mag <= 1e-7:
            q[0] = q[1] = q[2] = 0.0
        else:
            x = x / mag
            y = y / mag
            z = z / mag
            w = w / mag
            if w < 0:
                x = -x
                y = -y
                z = -z
            q[0] = x
            q[1] = y
            q[2] = z
    for k in range(3):
        fl = <float>q[k]
        if isinf(fl) and not isinf(q[k]):
            return 2
    for k in range(3):
        _put_f32(b, q[k])
    return 0


cdef int _field_out(Buf *b, int ftype, Py_ssize_t size, object value, object bname,
                    object cls, Py_ssize_t f, object name) except -1:
    cdef unsigned long long u
    cdef long long s
    cdef double d
    cdef float fl
    cdef uint8_t raw[16]
    cdef Py_ssize_t length
    cdef PyObject **slot
    if ftype == 15:
        if type(value) is _UUID and _fast_uuid:
            slot = lludp_slot(<PyObject *>value, <PyObject *>_UUID_INT)
            if slot[0] != NULL and lludp_uint128_bytes(<object>slot[0], raw) == 0:
                return _put(b, raw, 16)
    elif ftype <= 4 or ftype == 18:  # unsigned ints, IPPORT
        if PyLong_CheckExact(value):
            if lludp_as_u64(value, &u) == 0:
                if size == 8 or u < (<unsigned long long>1 << (8 * size)):
                    if ftype == 18:
                        raw[0] = (u >> 8) & 0xFF
                        raw[1] = u & 0xFF
                        return _put(b, raw, 2)
                    return _put_le(b, u, size)
    elif ftype <= 8:  # signed ints
        if PyLong_CheckExact(value):
            if lludp_as_i64(value, &s) == 0:
                if size == 8 or (-(<long long>1 << (8 * size - 1)) <= s < (<long long>1 << (8 * size - 1))):
                    return _put_le(b, <uint64_t>s, size)
    elif ftype == 9:
        if PyFloat_CheckExact(value):
            d = PyFloat_AS_DOUBLE(value)
            fl = <float>d
            if not (isinf(fl) and not isinf(d)):
                return _put_f32(b, d)
    elif ftype == 10:
        if PyFloat_CheckExact(value):
            d = PyFloat_AS_DOUBLE(value)
            return _put_f64(b, PyFloat_AS_DOUBLE(value))
    elif ftype == 14:
        if _quat_out(b, value) == 0:
            return 0
    elif ftype == 11 or ftype == 12 or ftype == 13:
        if _floats_out(b, value, 4 if ftype == 13 else 3, ftype == 12) == 0:
            return 0
    elif ftype == 16:
        if value is True:
            raw[0] = 1
            return _put(b, raw, 1)
        if value is False:
            raw[0] = 0
            return _put(b, raw, 1)
    elif ftype == 19:
        if PyBytes_CheckExact(value) and PyBytes_GET_SIZE(value) == size:
            return _put(b, PyBytes_AS_STRING(value), size)
    elif ftype == 20:
        if PyBytes_CheckExact(value):
            length = PyBytes_GET_SIZE(value)
            if <unsigned long long>length < (<unsigned long long>1 << (8 * size)):
                _put_le(b, length, size)
                return _put(b, PyBytes_AS_STRING(value), length)
        where = f"{bname}.{cls._fields[f]}"
        raw_value = _py._bytes(value, where, name)
        if <unsigned long long>len(raw_value) >= (<unsigned long long>1 << (8 * size)):
            raise M.encode_error(
                name, where, f"{len(raw_value)} bytes do not fit a {size}-byte length"
            )
        _put_le(b, len(raw_value), size)
        return _put(b, PyBytes_AS_STRING(raw_value), len(raw_value))
    return _slow(b, ftype, size, value, f"{bname}.{cls._fields[f]}", name)


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
    cdef object name = plan[1]
    cdef tuple blocks = <tuple>plan[4]
    cdef Py_ssize_t nb = PyTuple_GET_SIZE(blocks), bi, f, nfields, count, nitems, k, size, tail, room
    cdef int kind, ftype
    cdef const uint8_t *layout
    cdef uint8_t one
    cdef PyObject *found
    given = _item(message, 1)
    absent = _item(message, 9)
    # an empty absent Variable block is left out only at the end (no count byte):
    # one a written block follows gets its count of 0, or the packet is misread
    tail = _absent_tail(blocks, given, absent) if absent else nb
    for bi in range(nb):
        block = <tuple>PyTuple_GET_ITEM(blocks, bi)
        bname = <object>PyTuple_GET_ITEM(block, 0)
        kind = <int><object>PyTuple_GET_ITEM(block, 1)
        count = <Py_ssize_t><object>PyTuple_GET_ITEM(block, 2)
        cls = <object>PyTuple_GET_ITEM(block, 3)
        lay = <object>PyTuple_GET_ITEM(block, 4)
        layout = <const uint8_t *>PyBytes_AS_STRING(lay)
        nfields = PyBytes_GET_SIZE(lay) // 3
        if PyDict_CheckExact(given):
            found = PyDict_GetItemWithError(given, bname)
            items = _EMPTY if found == NULL else <object>found
        else:
            items = given.get(bname, _EMPTY)
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
                # the fixed-size fields it takes, in C; the rest here, one at a time
                f = lludp_fields_put(item, layout, f, nfields, b.p, b.cap, &b.n)
                if f >= nfields:
                    break
                ftype = layout[3 * f]
                size = layout[3 * f + 1] | (layout[3 * f + 2] << 8)
                room = size if size > 32 else 32
                if ftype != KIND_VARIABLE_FIELD and b.cap - b.n < room:
                    _grow(b, room)
                    continue
                _field_out(b, ftype, size, <object>PyTuple_GET_ITEM(item, f), bname, cls, f, name)
                f += 1
    return 0


cdef bytes _encode(
    object message, object template, bint smaller, Py_ssize_t reserve, Py_ssize_t *plain=NULL
):
    """The packet of ``message``, followed by ``reserve`` spare bytes (not
    counted by the packet: the caller fills them or drops the object).
    ``*plain``, if given: how many bytes follow the 6 header bytes before
    zero-coding (what the coded ones expand to), before the appended acks."""
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
    try:
        extra = _item(message, 5)
        if not PyBytes_CheckExact(extra):
            extra = _py._bytes(extra, "extra", name)
        body_raw = _item(message, 11)
        if body_raw is not None:
            _number_out(&b, _item(message, 6), _item(message, 7), name)
            _put(&b, PyBytes_AS_STRING(extra), PyBytes_GET_SIZE(extra))
            body_raw = _py._bytes(body_raw, "body", name)
            _put(&b, PyBytes_AS_STRING(body_raw), PyBytes_GET_SIZE(body_raw))
        else:
            plans = _name_plans(template)
            found = (PyDict_GetItemWithError(plans, name)
                     if type(name) is str and PyDict_CheckExact(plans) else NULL)
            plan = None if found == NULL else <object>found
            if plan is None:
                try:
                    plan = template.plan_by_name(name)
                except KeyError:
                    raise M.encode_error(name, "name", "not in the template") from None
            _number_out(&b, (<tuple>plan)[2], (<tuple>plan)[3], name)
            _put(&b, PyBytes_AS_STRING(extra), PyBytes_GET_SIZE(extra))
            _body(&b, message, <tuple>plan)
            excess = _item(message, 8)
            if not PyBytes_CheckExact(excess):
                excess = _py._bytes(excess, "excess", name)
            _put(&b, PyBytes_AS_STRING(excess), PyBytes_GET_SIZE(excess))
        fl = _item(message, 2)
        if not (PyLong_CheckExact(fl) and lludp_as_u64(fl, &v) == 0 and v <= 0xFF):
            v = _py._int(fl, 0, 0xFF, "flags", name)
        flags = <uint8_t>v
        seq = _item(message, 3)
        if not (PyLong_CheckExact(seq) and lludp_as_u64(seq, &seq_v) == 0 and (seq_v >> 32) == 0):
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
        if plain != NULL:
            plain[0] = b.n
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
        # one allocation of the exact size: no realloc churn in the allocator
        result = PyBytes_FromStringAndSize(
            NULL, 6 + coded_n + ((4 * nacks + 1) if flags & ACKF else 0) + reserve
        )
        o = <uint8_t *>PyBytes_AS_STRING(result)
        memcpy(o + 6, src_p, coded_n)
        total = 6 + coded_n
        if flags & ACKF:
            for k in range(nacks - 1, -1, -1):
                ack = <object>PyTuple_GET_ITEM(acks, k) if PyTuple_CheckExact(acks) else acks[k]
                if not (PyLong_CheckExact(ack) and lludp_as_u64(ack, &v) == 0 and (v >> 32) == 0):
                    v = _py._int(ack, 0, 0xFFFFFFFF, "acks", name)
                _put_be32(o + total, <uint32_t>v)
                total += 4
            o[total] = <uint8_t>nacks
            total += 1
        o[0] = flags
        v = seq_v
        _put_be32(o + 1, <uint32_t>v)
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
        return _encode(message, template, False, 0)
    if zero_coding != "flag" and zero_coding != "smaller":
        if not isinstance(message, Message):
            raise TypeError(f"expected a Message, got {type(message).__name__}")
        raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
    return _encode(message, template, zero_coding == "smaller", 0)


cdef inline unsigned long long _u(object value, unsigned long long hi, str where, object name) except? 0xFFFFFFFFFFFFFFFF:
    """``value`` as an int in 0..hi, or the pure twin's EncodeError."""
    cdef unsigned long long v
    if PyLong_CheckExact(value) and lludp_as_u64_exact(value, &v) == 0 and v <= hi:
        return v
    return _py._int(value, 0, hi, where, name)


cdef inline bint _is_packet_ack(object name):
    """``name == "PacketAck"``, without a string comparison for other names."""
    if type(name) is str and PyUnicode_GET_LENGTH(name) != 9:
        return False
    return name == "PacketAck"


cdef inline bytes _headed(
    bytes data, Py_ssize_t size, Py_ssize_t end, Py_ssize_t n, Py_ssize_t reserve,
    unsigned int head, uint32_t sequence
):
    """``data`` (an encoded packet: ``size`` bytes, its acks from ``end`` on,
    then ``reserve`` spare bytes) with ``head`` as its flags (ACK added when
    ``n`` acks follow), ``sequence`` in its header and room after ``end`` for
    ``n`` acks and their count, which the caller writes: ``data`` itself when
    the spare bytes are exactly that room (ours alone, not hashed yet: it is
    rewritten in place), else a copy of its first ``end`` bytes."""
    cdef Py_ssize_t tail = 4 * n + 1 if n else 0
    cdef bytes result
    cdef uint8_t *o
    if end == size and tail == reserve:
        result = data
    else:
        result = PyBytes_FromStringAndSize(NULL, end + tail)
        memcpy(PyBytes_AS_STRING(result), PyBytes_AS_STRING(data), end)
    o = <uint8_t *>PyBytes_AS_STRING(result)
    o[0] = <uint8_t>(head | ACKF if n else head)
    _put_be32(o + 1, sequence)
    return result


def encode_packet(message, template, zero_coding, flags, sequence, acks, count, limit):
    """``message`` as a circuit sends it (see the pure twin): encode's packet
    with ``flags``/``sequence`` in the header and up to ``count`` ids of
    ``acks`` appended in that order, within ``limit`` bytes."""
    cdef bytes data
    cdef const uint8_t *p
    cdef uint8_t *o
    cdef Py_ssize_t size, end, n, k, total, reserve = 0
    cdef unsigned long long head, seq_v, cnt, lim, v
    cdef bint smaller = False
    if zero_coding is not _FLAG:
        if zero_coding != "flag" and zero_coding != "smaller":
            if not isinstance(message, Message):
                raise TypeError(f"expected a Message, got {type(message).__name__}")
            raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
        smaller = zero_coding == "smaller"
    # room for the tail the acks will most likely need, so that it is written
    # in place (a guess that checks nothing and raises nothing: every check
    # below is made as before, and a wrong guess only costs a copy)
    if PyList_CheckExact(acks) and PyLong_CheckExact(count):
        n = PyList_GET_SIZE(acks)
        if n and lludp_as_u64(count, &v) == 0 and v <= MAX_ACKS_C:
            if <Py_ssize_t>v < n:
                n = <Py_ssize_t>v
            if n:
                reserve = 4 * n + 1
    data = _encode(message, template, smaller, reserve)
    name = _item(message, 0)
    p = <const uint8_t *>PyBytes_AS_STRING(data)
    size = PyBytes_GET_SIZE(data) - reserve
    head = (_u(flags, 0xFF, "flags", name) & ~(<unsigned long long>(ZC | ACKF))) | (p[0] & ZC)
    seq_v = _u(sequence, 0xFFFFFFFF, "sequence", name)
    cnt = _u(count, MAX_ACKS_C, "acks", name)
    lim = _u(limit, 0xFFFFFFFF, "limit", name)
    end = size - 1 - 4 * <Py_ssize_t>p[size - 1] if p[0] & ACKF else size
    n = 0
    if not _is_packet_ack(name):
        n = len(acks)
        if <Py_ssize_t>cnt < n:
            n = <Py_ssize_t>cnt
        if (<Py_ssize_t>lim - end - 1) >> 2 < n:
            n = (<Py_ssize_t>lim - end - 1) >> 2
        if n < 0:
            n = 0
    result = _headed(data, size, end, n, reserve, <unsigned int>head, <uint32_t>seq_v)
    o = <uint8_t *>PyBytes_AS_STRING(result)
    if n:
        total = end
        k = 0
        if PyList_CheckExact(acks) or PyTuple_CheckExact(acks):
            # exact ints in range: no code of the caller's runs, so the n
            # items stay there (len(acks) >= n was taken after the last call)
            while k < n:
                ack = _seq_item(acks, k)
                if not (PyLong_CheckExact(ack) and lludp_as_u64(ack, &v) == 0 and (v >> 32) == 0):
                    break
                _put_be32(o + total, <uint32_t>v)
                total += 4
                k += 1
        while k < n:
            # anything else, as the pure twin's acks[k]: converting an ack may
            # run code that changes the list (acks[k] then raises IndexError)
            ack = PyObject_GetItem(acks, k)
            v = _u(ack, 0xFFFFFFFF, "acks", name)
            _put_be32(o + total, <uint32_t>v)
            total += 4
            k += 1
        o[total] = <uint8_t>n
    return result


cdef object _encode_packet_c(
    object message,
    object template,
    bint smaller,
    unsigned int flags,
    uint32_t sequence,
    const uint32_t *acks,
    Py_ssize_t count,
    Py_ssize_t limit,
    Py_ssize_t *plain,
):
    """``encode_packet(message, template, zero_coding, flags, sequence, ids,
    count, limit)`` for a circuit whose owed acks are a C array: ``ids`` =
    ``acks[:count]`` (``count`` <= 250 of them), ``flags`` < 256, ``limit``
    within 0..0xFFFFFFFF (what the circuit passes; the same bytes and the same
    errors as the Python call). ``*plain``: the size of the packet's bytes 6..
    before zero-coding and before any acks (what a zero-coded body expands
    to). Reached through the ``_ENCODE_PACKET_C`` capsule."""
    cdef bytes data
    cdef const uint8_t *p
    cdef uint8_t *o
    cdef Py_ssize_t size, end, n, k, total
    cdef Py_ssize_t reserve = 4 * count + 1 if count > 0 else 0
    cdef unsigned int head
    data = _encode(message, template, smaller, reserve, plain)
    name = _item(message, 0)
    p = <const uint8_t *>PyBytes_AS_STRING(data)
    size = PyBytes_GET_SIZE(data) - reserve
    head = (flags & ~(<unsigned int>(ZC | ACKF))) | (p[0] & ZC)
    end = size - 1 - 4 * <Py_ssize_t>p[size - 1] if p[0] & ACKF else size
    n = 0
    if count > 0 and not _is_packet_ack(name):
        n = count
        if (limit - end - 1) >> 2 < n:
            n = (limit - end - 1) >> 2
        if n < 0:
            n = 0
    result = _headed(data, size, end, n, reserve, head, sequence)
    o = <uint8_t *>PyBytes_AS_STRING(result)
    if n:
        total = end
        for k in range(n):
            _put_be32(o + total, acks[k])
            total += 4
        o[total] = <uint8_t>n
    return result


ctypedef object (*_encode_packet_c_t)(
    object, object, bint, unsigned int, uint32_t, const uint32_t *, Py_ssize_t, Py_ssize_t,
    Py_ssize_t *
)

_ENCODE_PACKET_C = PyCapsule_New(
    <void *>(<_encode_packet_c_t>_encode_packet_c), b"gamecodec.lludp._codec_c.encode_packet_c.v2", NULL
)
"""The C entry point ``_encode_packet_c`` for the compiled circuit (see there)."""


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
    cdef bytes src = data if type(data) is bytes else bytes(data)
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


# ------------------------------------------------------------------ self-checks


def _check_fast_objects():
    """Use direct tuple and UUID construction only where it is indistinguishable."""
    global _fast_tuples, _fast_uuid
    lludp_fast_init(type("_Plain", (tuple,), {"__slots__": ()}))
    items = ("X", {}, 1, 2, (), b"", 1, 4, b"", (), False, None)
    slow = tuple.__new__(Message, items)
    fast = _named(Message, items)
    _fast_tuples = (type(fast) is Message and fast == slow and repr(fast) == repr(slow))
    raw = bytes(range(1, 17))
    lludp_values_init(_ZERO, _ONE, _ZERO3)
    try:
        probe = object.__new__(_UUID)
        _fast_uuid = (lludp_slot(<PyObject *>probe, <PyObject *>_UUID_INT) != NULL
                      and lludp_slot(<PyObject *>probe, <PyObject *>_UUID_SAFE) != NULL
                      and lludp_uuid_setup(<PyObject *>_UUID, <PyObject *>_UUID_INT,
                                           <PyObject *>_UUID_SAFE, <PyObject *>_SAFE_UNKNOWN) == 1)
        if _fast_uuid:
            made = _make_uuid(raw)
            ref = _uuid_mod.UUID(bytes=raw)
            _fast_uuid = (type(made) is _UUID and made == ref and hash(made) == hash(ref)
                          and str(made) == str(ref) and made.is_safe is ref.is_safe
                          and made.bytes == raw)
    except Exception:
        _fast_uuid = False
    if not _fast_uuid:
        lludp_uuid_setup(NULL, NULL, NULL, NULL)  # the walk leaves UUIDs to _make_uuid


_check_fast_objects()
lludp_uuid_cache(1)


def _check_int_ring():
    """Reuse the ints of the ring only where they come out as CPython makes them."""
    cdef uint32_t v
    lludp_int_ring_use(1)
    try:
        for _ in range(80):  # past the ring's size twice: reused ints, with other values
            for v in (257, 1000, 0x3FFFFFFF, 0x40000000, 0x7FFFFFFF, 0xFFFFFFFF, 4097):
                made = _u32(v)
                ok = (type(made) is int and made == int(v) and hash(made) == hash(int(v))
                      and str(made) == str(int(v)) and made.bit_length() == int(v).bit_length()
                      and made + 0 == int(v) and -made == -int(v))
                if not ok:
                    lludp_int_ring_use(0)
                    return
                del made
    except Exception:
        lludp_int_ring_use(0)


_check_int_ring()


def _set_uuid_cache(bint on):
    """Turn the decoded-UUID cache on or off (off also empties it); returns the old state.

    For tests and for measuring decode without cache hits; it is on by default.
    """
    return bool(lludp_uuid_cache(on))


def _set_int_ring(bint on):
    """Turn the ring of reused ints on or off (off also empties it); returns the old state.

    For tests and for measuring decode without reuse; it is on by default.
    """
    return bool(lludp_int_ring_use(on))


def _parked():
    """How many dead result tuples the free list holds (-1 where there is none; for tests)."""
    return lludp_fl_total()


def _uses_fast_objects():
    """(fast tuples, fast UUIDs): whether the direct constructions are in use (for tests)."""
    return _fast_tuples, _fast_uuid
