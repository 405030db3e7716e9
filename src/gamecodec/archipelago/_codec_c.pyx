# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compat codec, compiled twin of ``_codec_py.py``.

Decode: msgspec parses the text (no Python callback), then one native
post-order walk counts the nesting depth and turns ``"class"``-tagged dicts
into ``NetworkItem`` / ``NetworkPlayer`` / ``NetworkSlot`` (``Version`` and any
non-string ``class`` go through the pure twin's hook, they are rare).
Encode: a native writer does the reference pre-pass and the stdlib encoder's
formatting in one pass (NamedTuples tagged with a trailing ``"class"``, sets
as arrays, int/float/bool/None keys stringified, ``float.__repr__``, bare
``NaN``/``Infinity``, escapes of ``json`` with ``ensure_ascii=False``).

Whatever the fast paths do not take on (JSON that msgspec rejects: NaN,
``1e400``, escaped lone surrogates, syntax errors; nesting past the limit; an
object that fails to build; a value the writer does not know; a string with a
lone surrogate) is handed to the pure twin, so results and errors are the
pure twin's by construction.
"""

from cpython.dict cimport PyDict_GetItem, PyDict_Next, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_SetItem
from cpython.mem cimport PyMem_Free
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_SET_ITEM
from libc.math cimport isfinite, isnan
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy

import msgspec

from gamecodec.archipelago import _codec_py
from gamecodec.archipelago.commands import Command as _Command
from gamecodec.archipelago._models import (
    DEFAULT_MAX_DEPTH,
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
)

__all__ = [
    "bind_typed",
    "decode",
    "decode_frame",
    "encode",
    "encode_bytes",
    "encode_frame",
    "encode_frame_bytes",
    "encode_typed",
    "encode_typed_bytes",
]

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object o, Py_ssize_t *size) except NULL
    object PyUnicode_DecodeUTF8(const char *s, Py_ssize_t size, const char *errors)
    object PyUnicode_DecodeASCII(const char *s, Py_ssize_t size, const char *errors)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    object PyBytes_FromStringAndSize(const char *s, Py_ssize_t size)
    char *PyBytes_AS_STRING(object o)
    Py_ssize_t PyBytes_GET_SIZE(object o)
    ctypedef struct PyTypeObject
    PyTypeObject *Py_TYPE(PyObject *o)
    long long PyLong_AsLongLongAndOverflow(object o, int *overflow) except? -1
    char *PyOS_double_to_string(double val, char format_code, int precision, int flags,
                                int *ptype) except NULL
    double PyFloat_AS_DOUBLE(object o)
    bint PyTuple_Check(object o)
    bint PyUnicode_Check(object o)
    bint PyLong_Check(object o)
    bint PyLong_CheckExact(object o)
    bint PyFloat_Check(object o)
    int Py_DTSF_ADD_DOT_0
    bint PyUnicode_IS_COMPACT_ASCII(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_ssize_t PyDict_GET_SIZE(object o)

cdef extern from *:
    """
    /* 1 on free-threaded builds, where the writer's shared type hints stay unset. */
    #ifdef Py_GIL_DISABLED
    #define GAMECODEC_FREE_THREADED 1
    #else
    #define GAMECODEC_FREE_THREADED 0
    #endif
    /* The value of a small exact int without a call: 1 when it fits in the
       compact representation (one CPython digit, or two on 3.11), else 0. */
    static inline int gamecodec_small_int(PyObject *o, long long *out) {
    #if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject *)o)) {
            *out = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
            return 1;
        }
        return 0;
    #else
        Py_ssize_t size = Py_SIZE(o);
        const digit *d = ((PyLongObject *)o)->ob_digit;
        switch (size) {
            case 0: *out = 0; return 1;
            case 1: *out = (long long)d[0]; return 1;
            case -1: *out = -(long long)d[0]; return 1;
            case 2: *out = (long long)(((unsigned long long)d[1] << PyLong_SHIFT) | d[0]); return 1;
            case -2: *out = -(long long)(((unsigned long long)d[1] << PyLong_SHIFT) | d[0]); return 1;
            default: return 0;
        }
    #endif
    }

    /* Move the items of list `src` into the empty list `dst` (a list subclass
       fresh from tp_alloc) without copying: the two swap their item arrays. */
    static inline int gamecodec_list_move(PyObject *dst, PyObject *src) {
    #ifdef Py_GIL_DISABLED
        return PyList_SetSlice(dst, 0, 0, src);
    #else
        PyListObject *d = (PyListObject *)dst, *s = (PyListObject *)src;
        PyObject **items = d->ob_item;
        Py_ssize_t size = Py_SIZE(d), allocated = d->allocated;
        d->ob_item = s->ob_item;
        Py_SET_SIZE(d, Py_SIZE(s));
        d->allocated = s->allocated;
        s->ob_item = items;
        Py_SET_SIZE(s, size);
        s->allocated = allocated;
        return 0;
    #endif
    }

    /* A new empty instance of a list subclass (zeroed slots, GC-tracked). */
    static inline PyObject *gamecodec_alloc_empty(PyObject *type) {
        return ((PyTypeObject *)type)->tp_alloc((PyTypeObject *)type, 0);
    }

    /* Store a new reference to `value` in the object slot at `offset` of `obj`. */
    static inline void gamecodec_set_slot(PyObject *obj, Py_ssize_t offset, PyObject *value) {
        PyObject **slot = (PyObject **)((char *)obj + offset);
        PyObject *old = *slot;
        Py_INCREF(value);
        *slot = value;
        Py_XDECREF(old);
    }

    /* The object in the slot at `offset` of `obj` (borrowed; NULL when unset). */
    static inline PyObject *gamecodec_get_slot(PyObject *obj, Py_ssize_t offset) {
        return *(PyObject **)((char *)obj + offset);
    }
    """
    enum: GAMECODEC_FREE_THREADED
    int gamecodec_small_int(PyObject *o, long long *out)
    int gamecodec_list_move(object dst, object src) except -1
    object gamecodec_alloc_empty(object type)
    void gamecodec_set_slot(object obj, Py_ssize_t offset, object value)
    PyObject *gamecodec_get_slot(object obj, Py_ssize_t offset)

cdef extern from "_capi.h":
    object gamecodec_alloc_subtuple(object cls, Py_ssize_t n)


class _Fallback(Exception):
    """Internal: let the pure twin handle this input."""


# ---------------------------------------------------------------- decode

cdef object _json_decode = msgspec.json.Decoder().decode
cdef object _pure_decode = _codec_py.decode
cdef object _pure_hook = _codec_py.object_hook

cdef tuple _ITEM_FIELDS = NetworkItem._fields
cdef tuple _PLAYER_FIELDS = NetworkPlayer._fields
cdef tuple _SLOT_FIELDS = NetworkSlot._fields
cdef tuple _ITEM_DEFAULTS = (None, None, None, 0)
cdef tuple _SLOT_DEFAULTS = (None, None, None, ())
cdef tuple _NO_DEFAULTS = (None, None, None, None)
cdef object _CLASS = "class"


cdef object _build(dict obj, object cls, tuple fields, Py_ssize_t required, tuple defaults):
    """``cls(**obj)`` after dropping the keys that are not fields."""
    cdef Py_ssize_t i, n = PyTuple_GET_SIZE(fields)
    cdef PyObject *found
    cdef object value
    cdef object result = gamecodec_alloc_subtuple(cls, n)
    for i in range(n):
        found = PyDict_GetItem(obj, <object>PyTuple_GET_ITEM(fields, i))
        if found == NULL:
            if i < required:
                raise _Fallback()
            value = <object>PyTuple_GET_ITEM(defaults, i)
        else:
            value = <object>found
        Py_INCREF(value)
        PyTuple_SET_ITEM(result, i, value)
    return result


cdef object _hook(dict obj, object name):
    if type(name) is str:
        if name == "NetworkItem":
            return _build(obj, NetworkItem, _ITEM_FIELDS, 3, _ITEM_DEFAULTS)
        if name == "NetworkPlayer":
            return _build(obj, NetworkPlayer, _PLAYER_FIELDS, 4, _NO_DEFAULTS)
        if name == "NetworkSlot":
            return _build(obj, NetworkSlot, _SLOT_FIELDS, 3, _SLOT_DEFAULTS)
        if name != "Version":
            return obj
    try:
        return _pure_hook(obj)
    except Exception:
        raise _Fallback() from None


cdef inline bint _is_class_key(PyObject *key) noexcept:
    """``key == "class"`` without a hash lookup (msgspec keys are exact compact str)."""
    cdef const char *text
    if not (
        Py_TYPE(key) == <PyTypeObject *>str
        and PyUnicode_IS_COMPACT_ASCII(<object>key)
        and PyUnicode_GET_LENGTH(<object>key) == 5
    ):
        return False
    text = <const char *>PyUnicode_DATA(<object>key)
    return (
        text[0] == b'c' and text[1] == b'l' and text[2] == b'a' and text[3] == b's'
        and text[4] == b's'
    )


cdef struct Seen:
    # what _walk saw, for _lost_tags (per call: no shared state between threads)
    Py_ssize_t entries  # dict entries
    Py_ssize_t tagged  # "class"-tagged dicts


cdef Py_ssize_t _colons(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """The ``:`` bytes of ``p[:n]`` (a loop the compiler vectorises)."""
    cdef Py_ssize_t i, count = 0
    for i in range(n):
        count += p[i] == 58
    return count


cdef Py_ssize_t _class_texts(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """The ``"class"`` texts of ``p[:n]`` (compares the compiler vectorises)."""
    cdef Py_ssize_t i, count = 0
    for i in range(n - 6):
        count += ((p[i] == 34) & (p[i + 1] == 99) & (p[i + 2] == 108) & (p[i + 3] == 97)
                  & (p[i + 4] == 115) & (p[i + 5] == 115) & (p[i + 6] == 34))
    return count


cdef Py_ssize_t _u_escapes(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """The ``\\u`` pairs of ``p[:n]`` (compares the compiler vectorises)."""
    cdef Py_ssize_t i, count = 0
    for i in range(n - 1):
        count += (p[i] == 92) & (p[i + 1] == 117)
    return count


cdef bint _lost_tags(object data, Seen *seen):
    """Whether a repeated key may have dropped a ``"class"``-tagged object that the
    reference builds (and may fail on) while it parses: the msgspec decode keeps
    only a repeated key's last value. Every key is followed by one ``:``, so no
    more colons than dict entries means no repeated key. Otherwise (a repeated
    key, or a colon in a string), with no ``\\u`` escape in the text every
    tagged key is a literal ``"class"``, so as many of those as tagged dicts
    walked means none was lost. Anything else is left to the reference's
    algorithm."""
    cdef const unsigned char *p
    cdef Py_ssize_t n
    if type(data) is bytes:
        p = <const unsigned char *>PyBytes_AS_STRING(data)
        n = PyBytes_GET_SIZE(data)
    elif PyUnicode_IS_COMPACT_ASCII(data):
        p = <const unsigned char *>PyUnicode_DATA(data)
        n = PyUnicode_GET_LENGTH(data)
    else:  # a wider str: the same tests through str methods
        if data.count(":") <= seen.entries:
            return False
        return "\\u" in data or data.count('"class"') != seen.tagged
    if _colons(p, n) <= seen.entries:
        return False
    if _u_escapes(p, n):
        return True
    return _class_texts(p, n) != seen.tagged


cdef object _walk(object obj, int depth, int max_depth, Seen *seen):
    """Post-order: children first, then this dict's hook; ``depth`` counts this
    container (the reference's count is ``1 + depth``)."""
    cdef Py_ssize_t i, n, pos = 0
    cdef PyObject *key
    cdef PyObject *value
    cdef PyObject *ptr
    cdef object new
    cdef bint tagged = False
    if depth + 1 > max_depth:
        raise _Fallback()
    if type(obj) is list:
        n = PyList_GET_SIZE(obj)
        for i in range(n):
            ptr = PyList_GET_ITEM(obj, i)
            if Py_TYPE(ptr) == <PyTypeObject *>list or Py_TYPE(ptr) == <PyTypeObject *>dict:
                new = _walk(<object>ptr, depth + 1, max_depth, seen)
                if <PyObject *>new != ptr:
                    Py_INCREF(new)
                    PyList_SetItem(obj, i, new)
        return obj
    seen.entries += PyDict_GET_SIZE(obj)
    while PyDict_Next(obj, &pos, &key, &value):
        if Py_TYPE(value) == <PyTypeObject *>list or Py_TYPE(value) == <PyTypeObject *>dict:
            new = _walk(<object>value, depth + 1, max_depth, seen)
            if <PyObject *>new != value:
                PyDict_SetItem(obj, <object>key, new)
        if not tagged and _is_class_key(key):
            tagged = True
    if not tagged:
        return obj
    seen.tagged += 1
    ptr = PyDict_GetItem(obj, _CLASS)
    if ptr == NULL:
        return obj
    return _hook(<dict>obj, <object>ptr)


def decode(data, *, max_depth=DEFAULT_MAX_DEPTH):
    """``NetUtils.decode`` of a text frame (``str``, or UTF-8 ``bytes``)."""
    cdef object value
    cdef int depth
    cdef Seen seen
    if type(max_depth) is not int:
        return _pure_decode(data, max_depth=max_depth)  # its behaviour for any value
    try:
        depth = max_depth
    except OverflowError:
        return _pure_decode(data, max_depth=max_depth)
    if type(data) is not str and type(data) is not bytes:
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        else:
            return _pure_decode(data, max_depth=max_depth)
    try:
        value = _json_decode(data)
    except Exception:
        return _pure_decode(data, max_depth=max_depth)
    if type(value) is list or type(value) is dict:
        seen.entries = seen.tagged = 0
        try:
            value = _walk(value, 1, depth, &seen)
        except _Fallback:
            return _pure_decode(data, max_depth=max_depth)
        if _lost_tags(data, &seen):  # the reference's parse-time order decides
            return _pure_decode(data, max_depth=max_depth)
    return value


# ---------------------------------------------------------------- encode

cdef enum:
    SMALL = 512


cdef struct Buf:
    char *data
    Py_ssize_t length
    Py_ssize_t capacity
    bint wide  # a byte >= 0x80 may have been written
    char small[SMALL]  # small outputs never touch the heap


cdef object _text(Buf *buf):
    """The buffer as a str (a plain copy when everything written was ASCII)."""
    cdef object text
    if buf.wide:
        return PyUnicode_DecodeUTF8(buf.data, buf.length, NULL)
    text = PyUnicode_New(buf.length, 127)
    memcpy(PyUnicode_DATA(text), buf.data, buf.length)
    return text

cdef enum:
    MAX_NESTING = 900
    TYPE_CACHE_CAP = 256
    MODE_PREPASS = 0   # compat: the reference pre-pass applies
    MODE_RAW = 1       # inside a NamedTuple's fields: plain stdlib rules
    MODE_TYPED = 2     # typed commands: the pre-pass plus msgspec Structs

# 0: copy; 'u': \u00XX; else the letter of the short escape
cdef char _ESCAPE[256]
cdef const char *_HEX = b"0123456789abcdef"


cdef void _init_escapes() noexcept:
    cdef int c
    for c in range(256):
        _ESCAPE[c] = 0
    for c in range(0x20):
        _ESCAPE[c] = b'u'
    _ESCAPE[b'"'] = b'"'
    _ESCAPE[b'\\'] = b'\\'
    _ESCAPE[b'\n'] = b'n'
    _ESCAPE[b'\r'] = b'r'
    _ESCAPE[b'\t'] = b't'
    _ESCAPE[8] = b'b'
    _ESCAPE[12] = b'f'


_init_escapes()


cdef int _reserve(Buf *buf, Py_ssize_t extra) except -1:
    cdef Py_ssize_t need = buf.length + extra
    cdef Py_ssize_t capacity
    cdef char *grown
    if need <= buf.capacity:
        return 0
    capacity = buf.capacity * 2 if buf.capacity > SMALL else 4096
    while capacity < need:
        capacity *= 2
    if buf.data == buf.small:
        grown = <char *>malloc(capacity)
        if grown != NULL:
            memcpy(grown, buf.small, buf.length)
    else:
        grown = <char *>realloc(buf.data, capacity)
    if grown == NULL:
        raise MemoryError()
    buf.data = grown
    buf.capacity = capacity
    return 0


cdef inline void _init(Buf *buf) noexcept:
    buf.data = buf.small
    buf.length = 0
    buf.capacity = SMALL
    buf.wide = False


cdef inline void _release(Buf *buf) noexcept:
    if buf.data != buf.small:
        free(buf.data)


cdef inline int _put(Buf *buf, const char *src, Py_ssize_t n) except -1:
    cdef Py_ssize_t i
    cdef char *out
    if buf.length + n > buf.capacity:
        _reserve(buf, n)
    out = buf.data + buf.length
    if n <= 16:
        for i in range(n):
            out[i] = src[i]
    else:
        memcpy(out, src, n)
    buf.length += n
    return 0


cdef inline int _putc(Buf *buf, char c) except -1:
    if buf.length + 1 > buf.capacity:
        _reserve(buf, 1)
    buf.data[buf.length] = c
    buf.length += 1
    return 0


cdef inline bint _needs_escape(uint64_t word) noexcept:
    """Any byte < 0x20, ``"`` or ``\\`` in the word (exact: SWAR zero-byte tests)."""
    cdef uint64_t ones = 0x0101010101010101ULL
    cdef uint64_t high = 0x8080808080808080ULL
    cdef uint64_t control = (word - ones * 0x20) & ~word & high
    cdef uint64_t quote = word ^ (ones * 0x22)
    cdef uint64_t slash = word ^ (ones * 0x5C)
    quote = (quote - ones) & ~quote & high
    slash = (slash - ones) & ~slash & high
    return (control | quote | slash) != 0


cdef int _put_str(Buf *buf, object text) except -1:
    cdef Py_ssize_t n, i, start = 0
    cdef uint64_t word
    cdef const char *src
    cdef unsigned char c
    cdef char e
    cdef char *out
    if PyUnicode_IS_COMPACT_ASCII(text):
        src = <const char *>PyUnicode_DATA(text)
        n = PyUnicode_GET_LENGTH(text)
    else:
        src = PyUnicode_AsUTF8AndSize(text, &n)
        buf.wide = True
    # find the first byte that needs an escape, eight bytes at a time
    i = 0
    while i + 8 <= n:
        memcpy(&word, src + i, 8)
        if _needs_escape(word):
            break
        i += 8
    while i < n and _ESCAPE[<unsigned char>src[i]] == 0:
        i += 1
    _reserve(buf, n + 2)
    out = buf.data + buf.length
    out[0] = b'"'
    memcpy(out + 1, src, i)
    buf.length += i + 1
    if i == n:
        buf.data[buf.length] = b'"'
        buf.length += 1
        return 0
    start = i
    for i in range(start, n):
        c = <unsigned char>src[i]
        e = _ESCAPE[c]
        if e == 0:
            continue
        if i > start:
            _put(buf, src + start, i - start)
        start = i + 1
        _reserve(buf, 6 + n - i)
        out = buf.data + buf.length
        out[0] = b'\\'
        if e == b'u':
            out[1] = b'u'
            out[2] = b'0'
            out[3] = b'0'
            out[4] = _HEX[c >> 4]
            out[5] = _HEX[c & 15]
            buf.length += 6
        else:
            out[1] = e
            buf.length += 2
    if n > start:
        _put(buf, src + start, n - start)
    _putc(buf, b'"')
    return 0


cdef int _put_ascii(Buf *buf, object text) except -1:
    cdef Py_ssize_t n
    cdef const char *src = PyUnicode_AsUTF8AndSize(text, &n)
    _put(buf, src, n)
    return 0


cdef char _PAIRS[200]


cdef void _init_pairs() noexcept:
    cdef int k
    for k in range(100):
        _PAIRS[2 * k] = <char>(48 + k // 10)
        _PAIRS[2 * k + 1] = <char>(48 + k % 10)


_init_pairs()


cdef inline int _digits(unsigned long long u) noexcept:
    cdef int n = 1
    while u >= 10000:
        u //= 10000
        n += 4
    if u >= 1000:
        return n + 3
    if u >= 100:
        return n + 2
    if u >= 10:
        return n + 1
    return n


cdef int _put_int(Buf *buf, object value) except -1:
    """Digits written straight into the buffer, two at a time from the end
    (a local digit array read back as a word stalls store forwarding)."""
    cdef long long v
    cdef unsigned long long u
    cdef unsigned int k
    cdef int n, sign
    cdef char *out
    cdef int overflow = 0
    if not (PyLong_CheckExact(value) and gamecodec_small_int(<PyObject *>value, &v)):
        v = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow:
            _put_ascii(buf, int.__repr__(value))
            return 0
    if v < 0:
        u = <unsigned long long>(-(v + 1)) + 1
        sign = 1
    else:
        u = <unsigned long long>v
        sign = 0
    n = _digits(u) + sign
    if buf.length + n > buf.capacity:
        _reserve(buf, n)
    out = buf.data + buf.length
    buf.length += n
    if sign:
        out[0] = b'-'
    out += n
    while u >= 100:
        k = <unsigned int>(u % 100)
        u //= 100
        out -= 2
        out[0] = _PAIRS[2 * k]
        out[1] = _PAIRS[2 * k + 1]
    if u >= 10:
        out -= 2
        out[0] = _PAIRS[2 * u]
        out[1] = _PAIRS[2 * u + 1]
    else:
        out -= 1
        out[0] = <char>(48 + u)
    return 0


cdef int _put_float(Buf *buf, double v) except -1:
    cdef char *text
    cdef Py_ssize_t n = 0
    if not isfinite(v):
        if isnan(v):
            _put(buf, b"NaN", 3)
        elif v > 0:
            _put(buf, b"Infinity", 8)
        else:
            _put(buf, b"-Infinity", 9)
        return 0
    text = PyOS_double_to_string(v, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    while text[n] != 0:
        n += 1
    try:
        _put(buf, text, n)
    finally:
        PyMem_Free(text)
    return 0


cdef int _put_key(Buf *buf, object key) except -1:
    if PyUnicode_Check(key):
        _put_str(buf, key)
    elif PyFloat_Check(key):
        _putc(buf, b'"')
        _put_float(buf, PyFloat_AS_DOUBLE(key))
        _putc(buf, b'"')
    elif key is True:
        _put(buf, b'"true"', 6)
    elif key is False:
        _put(buf, b'"false"', 7)
    elif key is None:
        _put(buf, b'"null"', 6)
    elif PyLong_Check(key):
        _putc(buf, b'"')
        _put_int(buf, key)
        _putc(buf, b'"')
    else:
        raise _Fallback()
    return 0


cdef dict _TUPLE_TYPES = {}


cdef object _tuple_layout(object cls):
    """(key prefixes, class suffix) of a standard NamedTuple type, else ``None``."""
    cdef object layout = _TUPLE_TYPES.get(cls)
    if layout is not None or cls in _TUPLE_TYPES:
        return layout
    layout = None
    fields = getattr(cls, "_fields", None)
    asdict = getattr(cls, "_asdict", None)
    if (
        type(fields) is tuple
        and all(type(name) is str for name in fields)
        and getattr(asdict, "__module__", None) == "collections"
        and cls.__dictoffset__ == 0
    ):
        keys = tuple([
            (("{" if i == 0 else ",") + _codec_py.encode(name) + ":").encode("utf-8")
            for i, name in enumerate(fields)
        ])
        suffix = (
            ("{" if not fields else ",") + '"class":' + _codec_py.encode(cls.__name__) + "}"
        ).encode("utf-8")
        layout = (keys, suffix, all(k.isascii() for k in keys) and suffix.isascii())
    if len(_TUPLE_TYPES) >= TYPE_CACHE_CAP:
        _TUPLE_TYPES.clear()
    _TUPLE_TYPES[cls] = layout
    return layout


cdef int _put_named(Buf *buf, object obj, int depth) except -1:
    cdef object layout = _tuple_layout(type(obj))
    cdef tuple keys
    cdef bytes key, suffix
    cdef Py_ssize_t i, n
    if layout is None:
        raise _Fallback()
    keys = <tuple>(<tuple>layout)[0]
    suffix = <bytes>(<tuple>layout)[1]
    if (<tuple>layout)[2] is not True:
        buf.wide = True
    n = PyTuple_GET_SIZE(keys)
    if PyTuple_GET_SIZE(obj) != n:
        raise _Fallback()
    for i in range(n):
        key = <bytes>PyTuple_GET_ITEM(keys, i)
        _put(buf, key, len(key))
        _put_obj(buf, <object>PyTuple_GET_ITEM(obj, i), MODE_RAW, depth + 1)
    _put(buf, suffix, len(suffix))
    return 0



cdef class _Hint:
    """The layout of the Struct type last seen in one place (a field, a list's items)."""

    cdef _Layout layout


cdef int _put_list(Buf *buf, object obj, int mode, int depth, _Hint hint) except -1:
    """A list (or list subclass) as an array. Under MODE_TYPED, items of the Struct
    type seen last (``hint`` remembers it across calls) skip the type dispatch."""
    cdef Py_ssize_t i, n = PyList_GET_SIZE(obj)
    cdef PyObject *value
    cdef object item, found
    cdef _Layout last = None
    if mode == MODE_TYPED and hint is not None:
        last = hint.layout
    _putc(buf, b'[')
    for i in range(n):
        if i:
            _putc(buf, b',')
        value = PyList_GET_ITEM(obj, i)
        if Py_TYPE(value) == <PyTypeObject *>int:
            _put_int(buf, <object>value)
            continue
        item = <object>value
        if last is not None and <PyObject *>Py_TYPE(value) == <PyObject *>last.cls:
            if depth >= MAX_NESTING:
                raise _Fallback()
            _put_struct(buf, item, depth + 1, last)
        else:
            _put_obj(buf, item, mode, depth + 1)
            if mode == MODE_TYPED and PyTuple_Check(item) == 0 and isinstance(item, _Struct):
                found = _struct_layout(type(item))
                if found is not None:
                    last = <_Layout>found
                    if hint is not None and not GAMECODEC_FREE_THREADED:
                        hint.layout = last
    _putc(buf, b']')
    return 0


cdef int _put_obj(Buf *buf, object obj, int mode, int depth) except -1:
    """Write one value under ``mode`` (see MODE_*)."""
    cdef type cls = type(obj)
    cdef Py_ssize_t i, n, pos = 0
    cdef PyObject *key
    cdef PyObject *value
    cdef bint first
    cdef object item
    if depth > MAX_NESTING:
        raise _Fallback()
    if cls is str:
        _put_str(buf, obj)
    elif cls is int:
        _put_int(buf, obj)
    elif obj is None:
        _put(buf, b"null", 4)
    elif obj is True:
        _put(buf, b"true", 4)
    elif obj is False:
        _put(buf, b"false", 5)
    elif cls is float:
        _put_float(buf, PyFloat_AS_DOUBLE(obj))
    elif cls is dict:
        first = True
        _putc(buf, b'{')
        while PyDict_Next(obj, &pos, &key, &value):
            if not first:
                _putc(buf, b',')
            first = False
            if Py_TYPE(key) == <PyTypeObject *>str:
                _put_str(buf, <object>key)
            else:
                _put_key(buf, <object>key)
            _putc(buf, b':')
            if Py_TYPE(value) == <PyTypeObject *>int:
                _put_int(buf, <object>value)
            elif Py_TYPE(value) == <PyTypeObject *>str:
                _put_str(buf, <object>value)
            else:
                _put_obj(buf, <object>value, mode, depth + 1)
        _putc(buf, b'}')
    elif cls is list:
        _put_list(buf, obj, mode, depth, None)
    elif cls is tuple or (mode == MODE_RAW and PyTuple_Check(obj)):
        n = PyTuple_GET_SIZE(obj)
        _putc(buf, b'[')
        for i in range(n):
            if i:
                _putc(buf, b',')
            _put_obj(buf, <object>PyTuple_GET_ITEM(obj, i), mode, depth + 1)
        _putc(buf, b']')
    elif PyTuple_Check(obj):
        _put_named(buf, obj, depth)
    elif mode != MODE_RAW and (cls is set or cls is frozenset):
        first = True
        _putc(buf, b'[')
        for item in obj:
            if not first:
                _putc(buf, b',')
            first = False
            _put_obj(buf, item, mode, depth + 1)
        _putc(buf, b']')
    elif PyUnicode_Check(obj):
        _put_str(buf, obj)
    elif PyLong_Check(obj):
        _put_int(buf, obj)
    elif PyFloat_Check(obj):
        _put_float(buf, PyFloat_AS_DOUBLE(obj))
    elif mode == MODE_TYPED:
        _put_struct(buf, obj, depth, _struct_layout(cls))
    else:
        raise _Fallback()
    return 0


# ---------------------------------------------------------------- typed encode

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef *d_member

cdef object _Struct = msgspec.Struct
cdef object _UNSET = msgspec.UNSET
cdef object _EXTRA = "_extra"
cdef dict _STRUCT_TYPES = {}


cdef class _Layout:
    """How to write one msgspec Struct type: opening bytes, keys, slot offsets."""

    cdef object cls
    cdef bytes opening
    cdef bint opened
    cdef bint is_command
    cdef bint ascii
    cdef Py_ssize_t n
    cdef tuple keys
    cdef Py_ssize_t *offsets
    cdef const char **key_data
    cdef Py_ssize_t *key_size
    # an ASCII str default (the trailing "class"): its text and its JSON form
    cdef tuple constants
    # per field: the Struct type its values (or list items) had last time
    cdef tuple hints
    # where the instance __dict__ pointer lives (extra keys), or -1: use getattr
    cdef Py_ssize_t dict_offset
    cdef const char **const_text
    cdef Py_ssize_t *const_size
    cdef const char **const_json

    def __dealloc__(self):
        free(self.offsets)
        free(self.key_data)
        free(self.key_size)
        free(self.const_text)
        free(self.const_size)
        free(self.const_json)


cdef object _struct_layout(object cls):
    """The :class:`_Layout` of a plain msgspec Struct type, or ``None`` when the
    writer does not take it on (array_like, omit_defaults, odd descriptors)."""
    cdef object found = _STRUCT_TYPES.get(cls)
    cdef _Layout layout
    cdef Py_ssize_t i
    cdef bytes key
    if found is not None or cls in _STRUCT_TYPES:
        return found
    found = None
    if issubclass(cls, _Struct):
        config = cls.__struct_config__
        names = cls.__struct_fields__
        wire_names = cls.__struct_encode_fields__
        descriptors = [getattr(cls, name, None) for name in names]
        if (
            not config.array_like
            and not config.omit_defaults
            and all(type(d).__name__ == "member_descriptor" for d in descriptors)
        ):
            layout = _Layout()
            layout.cls = cls
            if isinstance(config.tag_field, str):
                layout.opening = (
                    "{" + _codec_py.encode(config.tag_field) + ":" + _codec_py.encode(config.tag)
                ).encode("utf-8")
            else:
                layout.opening = b"{"
            layout.opened = len(layout.opening) > 1
            layout.ascii = layout.opening.isascii()
            layout.is_command = issubclass(cls, _Command)
            layout.keys = tuple([
                ("," + _codec_py.encode(name) + ":").encode("utf-8") for name in wire_names
            ])
            layout.ascii = layout.ascii and all(k.isascii() for k in layout.keys)
            layout.n = len(names)
            defaults = dict(zip(names[len(names) - len(cls.__struct_defaults__):],
                                cls.__struct_defaults__))
            constants = []
            for name in names:
                default = defaults.get(name)
                if type(default) is str and default.isascii() and default.isprintable():
                    constants.append((default.encode("ascii"), _codec_py.encode(default).encode()))
                else:
                    constants.append(None)
            layout.constants = tuple(constants)
            layout.hints = tuple([_Hint() for _ in names])
            layout.dict_offset = -1
            if layout.is_command and getattr(cls, "_extra", 0) is None:
                offset = cls.__dictoffset__
                if type(offset) is int and offset > 0:
                    layout.dict_offset = offset
            layout.offsets = <Py_ssize_t *>malloc(sizeof(Py_ssize_t) * (layout.n + 1))
            layout.key_data = <const char **>malloc(sizeof(char *) * (layout.n + 1))
            layout.key_size = <Py_ssize_t *>malloc(sizeof(Py_ssize_t) * (layout.n + 1))
            layout.const_text = <const char **>malloc(sizeof(char *) * (layout.n + 1))
            layout.const_size = <Py_ssize_t *>malloc(sizeof(Py_ssize_t) * (layout.n + 1))
            layout.const_json = <const char **>malloc(sizeof(char *) * (layout.n + 1))
            if (layout.offsets == NULL or layout.key_data == NULL or layout.key_size == NULL
                    or layout.const_text == NULL or layout.const_size == NULL
                    or layout.const_json == NULL):
                raise MemoryError()
            for i in range(layout.n):
                layout.offsets[i] = (<PyMemberDescrObject *><PyObject *>descriptors[i]).d_member.offset
                key = <bytes>layout.keys[i]
                layout.key_data[i] = key
                layout.key_size[i] = len(key)
                constant = layout.constants[i]
                if constant is None:
                    layout.const_text[i] = NULL
                    layout.const_size[i] = -1
                    layout.const_json[i] = NULL
                else:
                    layout.const_text[i] = <bytes>constant[0]
                    layout.const_size[i] = len(<bytes>constant[0])
                    layout.const_json[i] = <bytes>constant[1]
            found = layout
    if len(_STRUCT_TYPES) >= TYPE_CACHE_CAP:
        _STRUCT_TYPES.clear()
    _STRUCT_TYPES[cls] = found
    return found


cdef int _put_struct(Buf *buf, object obj, int depth, object found) except -1:
    cdef _Layout layout
    cdef Py_ssize_t i, pos = 0
    cdef PyObject *value
    cdef PyObject *extra_key
    cdef PyObject *extra_value
    cdef bint first
    cdef object extra
    cdef _Hint hint
    cdef _Layout known
    if found is None:
        raise _Fallback()
    layout = <_Layout>found
    if not layout.ascii:
        buf.wide = True
    _put(buf, layout.opening, len(layout.opening))
    first = not layout.opened
    for i in range(layout.n):
        value = (<PyObject **>((<char *><PyObject *>obj) + layout.offsets[i]))[0]
        if value == NULL:
            raise _Fallback()
        if value == <PyObject *>_UNSET:
            continue
        if first:
            first = False
            _put(buf, layout.key_data[i] + 1, layout.key_size[i] - 1)
        else:
            _put(buf, layout.key_data[i], layout.key_size[i])
        if Py_TYPE(value) == <PyTypeObject *>int:
            _put_int(buf, <object>value)
        elif Py_TYPE(value) == <PyTypeObject *>str:
            if (
                layout.const_size[i] >= 0
                and PyUnicode_IS_COMPACT_ASCII(<object>value)
                and PyUnicode_GET_LENGTH(<object>value) == layout.const_size[i]
                and memcmp(PyUnicode_DATA(<object>value), layout.const_text[i],
                           layout.const_size[i]) == 0
            ):
                _put(buf, layout.const_json[i], layout.const_size[i] + 2)
            else:
                _put_str(buf, <object>value)
        elif Py_TYPE(value) == <PyTypeObject *>list:
            if depth >= MAX_NESTING:
                raise _Fallback()
            _put_list(buf, <object>value, MODE_TYPED, depth + 1,
                      <_Hint>PyTuple_GET_ITEM(layout.hints, i))
        else:
            hint = <_Hint>PyTuple_GET_ITEM(layout.hints, i)
            known = hint.layout
            if known is not None and <PyObject *>Py_TYPE(value) == <PyObject *>known.cls:
                if depth >= MAX_NESTING:
                    raise _Fallback()
                _put_struct(buf, <object>value, depth + 1, known)
            else:
                _put_obj(buf, <object>value, MODE_TYPED, depth + 1)
                if (
                    not GAMECODEC_FREE_THREADED
                    and PyTuple_Check(<object>value) == 0
                    and isinstance(<object>value, _Struct)
                ):
                    hint.layout = _struct_layout(type(<object>value))
    if layout.is_command:
        if layout.dict_offset > 0:
            # extra keys live in the instance __dict__ (absent for most commands)
            value = gamecodec_get_slot(obj, layout.dict_offset)
            extra = None
            if value != NULL:
                value = PyDict_GetItem(<object>value, _EXTRA)
                if value != NULL:
                    extra = <object>value
        else:
            extra = getattr(obj, "_extra", None)
        if extra:
            if type(extra) is not dict:
                raise _Fallback()
            while PyDict_Next(extra, &pos, &extra_key, &extra_value):
                if first:
                    first = False
                else:
                    _putc(buf, b',')
                _put_key(buf, <object>extra_key)
                _putc(buf, b':')
                _put_obj(buf, <object>extra_value, MODE_TYPED, depth + 1)
    _putc(buf, b'}')
    return 0


def encode(obj):
    """``NetUtils.encode``: the wire text of ``obj``."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_obj(&buf, obj, MODE_PREPASS, 0)
        return _text(&buf)
    except Exception:
        return _codec_py.encode(obj)
    finally:
        _release(&buf)


def encode_bytes(obj):
    """:func:`encode` as UTF-8 bytes."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_obj(&buf, obj, MODE_PREPASS, 0)
        return PyBytes_FromStringAndSize(buf.data, buf.length)
    except Exception:
        return _codec_py.encode_bytes(obj)
    finally:
        _release(&buf)


def encode_typed(obj):
    """The wire text of typed commands (Structs) and plain values."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_obj(&buf, obj, MODE_TYPED, 0)
        return _text(&buf)
    except Exception:
        return _codec_py.encode_typed(obj)
    finally:
        _release(&buf)


def encode_typed_bytes(obj):
    """:func:`encode_typed` as UTF-8 bytes."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_obj(&buf, obj, MODE_TYPED, 0)
        return PyBytes_FromStringAndSize(buf.data, buf.length)
    except Exception:
        return _codec_py.encode_typed_bytes(obj)
    finally:
        _release(&buf)


# ---------------------------------------------------------------- typed frames
# The typed codec's common cases run here; everything else goes to the Python
# algorithm of ``_typed`` (bound by ``_typed.FrameCodec``: this module cannot
# import it), so results and errors are that algorithm's by construction.

cdef object _t_decode_all = None   # msgspec Decoder(list[AnyCommand]).decode
cdef object _t_general = None      # _typed._decode_general
cdef object _t_failed = None       # _typed._decode_failed
cdef object _t_check_connects = None
cdef object _t_frame = None        # _typed.Frame
cdef object _t_connect = None      # commands.Connect
cdef set _t_prone = set()          # _typed._EXTRA_PRONE (shared, updated there)
cdef Py_ssize_t _t_peek = 512
cdef Py_ssize_t _t_raw = -1        # offset of Frame.raw
cdef object _t_resolve = None
cdef object _t_encode_text = None
cdef object _t_encode_bytes = None
cdef object _t_lenient_all = None   # _typed._all_lenient
cdef object _t_plain = None         # msgspec Decoder().decode
cdef object _t_tops = None          # _typed._tops: top-level keys, raw values
cdef dict _t_strict_of = {}         # lenient class -> command class
cdef dict _t_declared_of = {}       # command class -> frozenset of its wire keys
cdef object _t_invalid = None       # msgspec.ValidationError
cdef tuple _t_lenient_errors = ()   # what makes the two-pass path decline
cdef object _t_declined = None      # _typed._decode_declined


def bind_typed(*, frame, decode_all, general, failed, check_connects, connect, prone,
               peek_from, resolve, encode_text, encode_bytes, lenient_all, plain, tops, strict_of,
               declared_of, invalid, lenient_errors, declined):
    """Receive the typed codec's Python pieces from ``_typed.FrameCodec``."""
    global _t_decode_all, _t_general, _t_failed, _t_check_connects, _t_frame, _t_connect
    global _t_prone, _t_peek, _t_raw, _t_resolve, _t_encode_text, _t_encode_bytes
    global _t_lenient_all, _t_plain, _t_tops, _t_strict_of, _t_declared_of, _t_invalid
    global _t_lenient_errors, _t_declined
    descriptor = frame.__dict__.get("raw")
    if (
        not isinstance(frame, type)
        or not issubclass(frame, list)
        or type(descriptor).__name__ != "member_descriptor"
        or type(prone) is not set
    ):
        raise TypeError("bind_typed: unexpected Frame type or prone set")
    _t_raw = (<PyMemberDescrObject *><PyObject *>descriptor).d_member.offset
    _t_frame = frame
    _t_decode_all = decode_all
    _t_general = general
    _t_failed = failed
    _t_check_connects = check_connects
    _t_connect = connect
    _t_prone = prone
    _t_peek = peek_from
    _t_resolve = resolve
    _t_encode_text = encode_text
    _t_encode_bytes = encode_bytes
    _t_lenient_all = lenient_all
    _t_plain = plain
    _t_tops = tops
    _t_strict_of = dict(strict_of)
    _t_declared_of = dict(declared_of)
    _t_invalid = invalid
    _t_lenient_errors = tuple(lenient_errors)
    _t_declined = declined


cdef bint _is_prone(object data) except -1:
    """Whether the frame's first command is one whose large frames carry extra
    keys (``_typed._lead`` + ``_EXTRA_PRONE``), read without copying the frame."""
    cdef Py_ssize_t size = 0
    cdef const char *name
    if type(data) is str and not PyUnicode_IS_COMPACT_ASCII(data):
        return _t_general is not None and _lead_py(data) in _t_prone
    name = _lead_name(data, &size, 38)  # _lead's limit: the quote before offset 48
    if name == NULL:
        return False
    return PyUnicode_DecodeASCII(name, size, b"replace") in _t_prone


cdef int _bind_self() except -1:
    """Bind this module to ``_typed`` when it is used before ``_typed`` bound it."""
    import sys

    from gamecodec.archipelago import _typed

    _typed.FrameCodec(sys.modules[__name__])
    return 0


cdef object _lead_py(object data):
    from gamecodec.archipelago._typed import _lead

    return _lead(data)


# Leading commands whose last small frame carried extra keys (archipelago.js puts
# a uuid on every Get and Set): their small frames take the two-pass path at once
# instead of failing the one-pass decode first. A fixed table checked without
# allocating; only speed depends on it, never the result.
cdef enum:
    PRONE_SLOTS = 8
    PRONE_NAME = 32
cdef extern from *:
    """
    /* the table is plain C state: kept off where threads run without the GIL */
    #ifdef Py_GIL_DISABLED
    #define GAMECODEC_PRONE_TABLE 0
    #else
    #define GAMECODEC_PRONE_TABLE 1
    #endif
    """
    const bint GAMECODEC_PRONE_TABLE
cdef char _p_names[PRONE_SLOTS][PRONE_NAME]
cdef Py_ssize_t _p_lens[PRONE_SLOTS]
cdef int _p_count = 0


cdef const char *_lead_name(object data, Py_ssize_t *size, Py_ssize_t limit) noexcept:
    """The first command's name in a frame starting ``[{"cmd":"`` (str of ASCII, or
    bytes), NULL otherwise; ``size`` gets its length (at most ``limit``)."""
    cdef const char *text
    cdef Py_ssize_t n, end
    if type(data) is str:
        if not PyUnicode_IS_COMPACT_ASCII(data):
            return NULL
        text = <const char *>PyUnicode_DATA(data)
        n = PyUnicode_GET_LENGTH(data)
    else:
        text = PyBytes_AS_STRING(data)
        n = PyBytes_GET_SIZE(data)
    if n < 10 or memcmp(text, b'[{"cmd":"', 9) != 0:
        return NULL
    end = 9
    while end < n and end < 9 + limit and text[end] != b'"':
        end += 1
    if end >= n or text[end] != b'"':
        return NULL
    size[0] = end - 9
    return text + 9


cdef int _prone_slot(const char *name, Py_ssize_t size) noexcept:
    cdef int k
    for k in range(_p_count):
        if _p_lens[k] == size and memcmp(_p_names[k], name, size) == 0:
            return k
    return -1


cdef void _mark_prone(object data, bint prone) noexcept:
    """Add the frame's lead to the table (``prone``), or take it out."""
    cdef Py_ssize_t size = 0
    cdef const char *name = _lead_name(data, &size, PRONE_NAME)
    cdef int k, last
    global _p_count
    if name == NULL or not GAMECODEC_PRONE_TABLE:
        return
    k = _prone_slot(name, size)
    if prone and k < 0 and _p_count < PRONE_SLOTS:
        memcpy(_p_names[_p_count], name, size)
        _p_lens[_p_count] = size
        _p_count += 1
    elif not prone and k >= 0:
        last = _p_count - 1
        if k != last:
            memcpy(_p_names[k], _p_names[last], _p_lens[last])
            _p_lens[k] = _p_lens[last]
        _p_count = last


cdef object _lenient(object data, bint *had_extra):
    """``_typed._decode_lenient`` natively, as a Frame; None when it declines.
    ``had_extra`` says whether any command carried extra keys."""
    cdef Py_ssize_t i, n, pos
    cdef PyObject *key
    cdef PyObject *value
    cdef object command, tops, cls, declared, extra, version, frame
    if _t_lenient_all is None:  # re-classing does not work here (see _typed)
        return None
    try:
        items = _t_lenient_all(data)
        values = _t_tops(data)
        n = PyList_GET_SIZE(items)
        if PyList_GET_SIZE(values) != n:
            return None
        for i in range(n):
            command = <object>PyList_GET_ITEM(items, i)
            tops = <object>PyList_GET_ITEM(values, i)
            cls = _t_strict_of[type(command)]
            command.__class__ = cls
            declared = _t_declared_of[cls]
            extra = None
            pos = 0
            while PyDict_Next(tops, &pos, &key, &value):
                if <object>key not in declared:
                    if extra is None:
                        extra = {}
                    PyDict_SetItem(extra, <object>key, _t_plain(<object>value))
            if extra is not None:
                command.__dict__["_extra"] = extra
                had_extra[0] = True
            if cls is _t_connect:
                version = tops.get("version")
                if version is not None:
                    version = _t_plain(version)
                if type(version) is not dict or version.get("class") != "Version":
                    return None
    except _t_lenient_errors:
        return None
    frame = gamecodec_alloc_empty(_t_frame)
    gamecodec_list_move(frame, items)
    gamecodec_set_slot(frame, _t_raw, data)
    return frame


# ---------------------------------------------------------------- the typed reader
# decode_frame first tries a small JSON reader that builds the command Structs
# itself. PrintJSON (most of a session's bytes) and DataPackage have hand-written
# readers; every other command whose fields it can read (ints, strings, bools,
# untyped values, lists and dicts of them and of nested Structs: the kinds come
# from msgspec.inspect at import) is read by table, its extra keys kept as the
# two-pass path keeps them. Short ASCII strings (the repeated "player_id",
# " found their ", "1"...) come from a small direct-mapped table (1024 strings of
# at most 24 bytes) instead of being built again. It builds what msgspec would
# (same field slots, defaults, GC tracking) and declines anything else (a command
# it does not read, an escape, a control character, a float in a typed field, an
# int past 18 digits, a duplicate key, a missing required key, a wrong type, a
# syntax error): the frame then goes the usual way, so results and errors never
# depend on this path. Self-checks at import compare it with msgspec, and it
# stays off when the layout is not the expected one.

cdef extern from *:
    """
    #define GCJ_CACHE 1024  /* strings in the table (a power of two) */
    #define GCJ_MAXLEN 24   /* the longest string it keeps */
    static PyObject *gcj_cache[GCJ_CACHE];
    static int gcj_on = 0;
    static PyTypeObject *gcj_pj, *gcj_part, *gcj_item;
    static Py_ssize_t gcj_pj_off[10], gcj_part_off[6], gcj_item_off[5];
    static PyObject *gcj_unset, *gcj_flags0, *gcj_itemcls;

    typedef struct gcj_spec_s gcj_spec;
    /* the reader: where it is, how deep in an untyped value, the nested spec */
    typedef struct {
        const unsigned char *p, *end;
        int depth, had_extra;
        const gcj_spec *sub;
    } gcj_rd;

    static inline void gcj_ws(gcj_rd *r) {
        while (r->p < r->end
               && (*r->p == ' ' || *r->p == '\\n' || *r->p == '\\r' || *r->p == '\\t'))
            r->p++;
    }

    /* consume `c` (after whitespace); 0 when it is not there */
    static inline int gcj_eat(gcj_rd *r, unsigned char c) {
        gcj_ws(r);
        if (r->p < r->end && *r->p == c) { r->p++; return 1; }
        return 0;
    }

    static PyObject *gcj_new_ascii(const unsigned char *s, Py_ssize_t n) {
        PyObject *o = PyUnicode_New(n, 127);
        if (o != NULL && n) memcpy(PyUnicode_DATA(o), s, n);
        return o;
    }

    static inline uint64_t gcj_load8(const unsigned char *s) {
        uint64_t v;
        memcpy(&v, s, 8);
        return v;
    }

    /* whether the n bytes at a and b are the same */
    static inline int gcj_same(const void *x, const unsigned char *b, Py_ssize_t n) {
        const unsigned char *a = (const unsigned char *)x;
        Py_ssize_t i;
        if (n >= 8) {
            if (gcj_load8(a + n - 8) != gcj_load8(b + n - 8)) return 0;
            for (i = 0; i < n - 8; i += 8)
                if (gcj_load8(a + i) != gcj_load8(b + i)) return 0;
            return 1;
        }
        for (i = 0; i < n; i++)
            if (a[i] != b[i]) return 0;
        return 1;
    }

    static PyObject *gcj_str_of(const unsigned char *s, Py_ssize_t n, int ascii) {
        if (!ascii) return PyUnicode_DecodeUTF8((const char *)s, n, NULL);
    #ifndef Py_GIL_DISABLED
        if (n <= GCJ_MAXLEN) {
            uint64_t h;
            PyObject *c, *o;
            if (n >= 8) {
                h = gcj_load8(s) * 0x9E3779B97F4A7C15ull
                    ^ gcj_load8(s + n - 8) * 0xC2B2AE3D27D4EB4Full;
            } else {
                Py_ssize_t i;
                h = 0;
                for (i = 0; i < n; i++) h = (h << 8) | s[i];
                h *= 0x9E3779B97F4A7C15ull;
            }
            h ^= (uint64_t)n;
            h = (h ^ (h >> 29) ^ (h >> 47)) & (GCJ_CACHE - 1);
            c = gcj_cache[h];
            if (c != NULL && PyUnicode_GET_LENGTH(c) == n && gcj_same(PyUnicode_DATA(c), s, n)) {
                Py_INCREF(c);
                return c;
            }
            o = gcj_new_ascii(s, n);
            if (o == NULL) return NULL;
            Py_INCREF(o);
            gcj_cache[h] = o;
            Py_XDECREF(c);
            return o;
        }
    #endif
        return gcj_new_ascii(s, n);
    }

    #define GCJ_ONES 0x0101010101010101ull
    #define GCJ_HIGH 0x8080808080808080ull
    #define GCJ_ZERO_BYTE(x) (((x) - GCJ_ONES) & ~(x) & GCJ_HIGH)

    static inline int gcj_hex4(const unsigned char *p, const unsigned char *end, unsigned *out) {
        unsigned v = 0;
        int i;
        if (end - p < 4) return 0;
        for (i = 0; i < 4; i++) {
            unsigned char c = p[i];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= c - '0';
            else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
            else return 0;
        }
        *out = v;
        return 1;
    }

    /* a string with escapes, from its first byte `s` (after the quote): the
       JSON escapes written out as UTF-8, then decoded; NULL to decline (a lone
       surrogate, an unknown escape, a control character, no closing quote) */
    static PyObject *gcj_str_escaped(gcj_rd *r, const unsigned char *s) {
        unsigned char held[256], *buf = held, *w;
        const unsigned char *q = s, *end = r->end;
        unsigned cp, lo;
        PyObject *out = NULL;
        /* the raw text up to the closing quote: no longer than what it decodes to */
        while (q < end && *q != '"') q += *q == '\\\\' ? 2 : 1;
        if (q >= end) return NULL;
        if (q - s > (Py_ssize_t)sizeof(held)) {
            buf = PyMem_Malloc(q - s);
            if (buf == NULL) return NULL;
        }
        q = s;
        w = buf;
        for (;;) {
            unsigned char c;
            if (q >= end) goto done;
            c = *q;
            if (c == '"') break;
            if (c < 0x20) goto done;
            if (c != '\\\\') {
                *w++ = c;
                q++;
                continue;
            }
            if (++q >= end) goto done;
            switch (*q++) {
            case '"': *w++ = '"'; continue;
            case '\\\\': *w++ = '\\\\'; continue;
            case '/': *w++ = '/'; continue;
            case 'b': *w++ = '\\b'; continue;
            case 'f': *w++ = '\\f'; continue;
            case 'n': *w++ = '\\n'; continue;
            case 'r': *w++ = '\\r'; continue;
            case 't': *w++ = '\\t'; continue;
            case 'u': break;
            default: goto done;
            }
            if (!gcj_hex4(q, end, &cp)) goto done;
            q += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) goto done;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (end - q < 6 || q[0] != '\\\\' || q[1] != 'u' || !gcj_hex4(q + 2, end, &lo)
                    || lo < 0xDC00 || lo > 0xDFFF)
                    goto done;
                q += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp < 0x80) {
                *w++ = (unsigned char)cp;
            } else if (cp < 0x800) {
                *w++ = (unsigned char)(0xC0 | (cp >> 6));
                *w++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *w++ = (unsigned char)(0xE0 | (cp >> 12));
                *w++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *w++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else {
                *w++ = (unsigned char)(0xF0 | (cp >> 18));
                *w++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
                *w++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *w++ = (unsigned char)(0x80 | (cp & 0x3F));
            }
        }
        out = PyUnicode_DecodeUTF8((const char *)buf, w - buf, NULL);
        if (out != NULL) r->p = q + 1;
    done:
        if (buf != held) PyMem_Free(buf);
        return out;
    }

    /* a string value (escapes through gcj_str_escaped); NULL to decline */
    static PyObject *gcj_str(gcj_rd *r) {
        const unsigned char *s, *q;
        uint64_t hi = 0;
        unsigned char c;
        gcj_ws(r);
        if (r->p >= r->end || *r->p != '"') return NULL;
        s = q = r->p + 1;
        /* eight bytes at a time while none is a quote, a backslash or a control */
        while (r->end - q >= 8) {
            uint64_t v = gcj_load8(q);
            uint64_t stop = GCJ_ZERO_BYTE(v ^ (GCJ_ONES * '"'))
                            | GCJ_ZERO_BYTE(v ^ (GCJ_ONES * '\\\\'))
                            | ((v - GCJ_ONES * 0x20) & ~v & GCJ_HIGH);
            if (stop) break;
            hi |= v;
            q += 8;
        }
        for (;;) {
            if (q >= r->end) return NULL;
            c = *q;
            if (c == '"') break;
            if (c == '\\\\') return gcj_str_escaped(r, s);
            if (c < 0x20) return NULL;
            hi |= c;
            q++;
        }
        r->p = q + 1;
        return gcj_str_of(s, q - s, !(hi & GCJ_HIGH) && !(hi & 0x80));
    }

    /* a key: its bytes (no escapes) and the ':' after it; 0 to decline */
    static inline int gcj_key(gcj_rd *r, const unsigned char **key, Py_ssize_t *n) {
        const unsigned char *q;
        gcj_ws(r);
        if (r->p >= r->end || *r->p != '"') return 0;
        q = r->p + 1;
        *key = q;
        while (q < r->end && *q != '"') {
            if (*q == '\\\\' || *q < 0x20) return 0;
            q++;
        }
        if (q >= r->end) return 0;
        *n = q - *key;
        r->p = q + 1;
        return gcj_eat(r, ':');
    }

    #define GCJ_KEY(k, lit) \\
        (n == (Py_ssize_t)(sizeof(lit) - 1) && memcmp(k, lit, sizeof(lit) - 1) == 0)

    /* a plain JSON integer of at most 18 digits; NULL to decline */
    static PyObject *gcj_int(gcj_rd *r) {
        const unsigned char *p;
        long long v = 0;
        int neg = 0, digits = 0;
        gcj_ws(r);
        p = r->p;
        if (p < r->end && *p == '-') { neg = 1; p++; }
        if (p >= r->end) return NULL;
        if (*p == '0') {
            if (neg) return NULL;
            p++;
        } else {
            while (p < r->end && *p >= '0' && *p <= '9') {
                if (++digits > 18) return NULL;
                v = v * 10 + (*p - '0');
                p++;
            }
            if (!digits) return NULL;
        }
        if (p < r->end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E'))
            return NULL;
        r->p = p;
        if (neg) v = -v;
        return PyLong_FromLongLong(v);
    }

    static PyObject *gcj_bool(gcj_rd *r) {
        gcj_ws(r);
        if (r->end - r->p >= 4 && memcmp(r->p, "true", 4) == 0) {
            r->p += 4;
            Py_RETURN_TRUE;
        }
        if (r->end - r->p >= 5 && memcmp(r->p, "false", 5) == 0) {
            r->p += 5;
            Py_RETURN_FALSE;
        }
        return NULL;
    }

    /* a Struct of `type` from `n` values (stolen; NULL ones get `fill[i]`) */
    static PyObject *gcj_build(PyTypeObject *type, PyObject **vals, PyObject **fill,
                               const Py_ssize_t *off, int n) {
        int i;
        PyObject *o = type->tp_alloc(type, 0);
        if (o == NULL) {
            for (i = 0; i < n; i++) Py_XDECREF(vals[i]);
            return NULL;
        }
        for (i = 0; i < n; i++) {
            PyObject *v = vals[i];
            if (v == NULL) { v = fill[i]; Py_INCREF(v); }
            *(PyObject **)((char *)o + off[i]) = v;
        }
        return o;
    }

    static void gcj_clear(PyObject **vals, int n) {
        int i;
        for (i = 0; i < n; i++) Py_CLEAR(vals[i]);
    }

    /* one value into vals[i] unless already set; 0 to decline */
    #define GCJ_SET(i, expr) \\
        do { if (vals[i] != NULL || (vals[i] = (expr)) == NULL) goto fail; } while (0)

    static PyObject *gcj_part_obj(gcj_rd *r) {
        PyObject *vals[6] = {0}, *fill[6];
        const unsigned char *k;
        Py_ssize_t n;
        int i;
        if (!gcj_eat(r, '{')) return NULL;
        if (!gcj_eat(r, '}')) {
            for (;;) {
                if (!gcj_key(r, &k, &n)) goto fail;
                if (GCJ_KEY(k, "text")) GCJ_SET(0, gcj_str(r));
                else if (GCJ_KEY(k, "type")) GCJ_SET(4, gcj_str(r));
                else if (GCJ_KEY(k, "player")) GCJ_SET(1, gcj_int(r));
                else if (GCJ_KEY(k, "flags")) GCJ_SET(2, gcj_int(r));
                else if (GCJ_KEY(k, "color")) GCJ_SET(5, gcj_str(r));
                else if (GCJ_KEY(k, "hint_status")) GCJ_SET(3, gcj_int(r));
                else goto fail;
                if (gcj_eat(r, ',')) continue;
                if (gcj_eat(r, '}')) break;
                goto fail;
            }
        }
        for (i = 0; i < 6; i++) fill[i] = gcj_unset;
        return gcj_build(gcj_part, vals, fill, gcj_part_off, 6);
    fail:
        gcj_clear(vals, 6);
        return NULL;
    }

    static PyObject *gcj_item_obj(gcj_rd *r) {
        PyObject *vals[5] = {0}, *fill[5];
        const unsigned char *k;
        Py_ssize_t n;
        if (!gcj_eat(r, '{')) return NULL;
        if (!gcj_eat(r, '}')) {
            for (;;) {
                if (!gcj_key(r, &k, &n)) goto fail;
                if (GCJ_KEY(k, "item")) GCJ_SET(0, gcj_int(r));
                else if (GCJ_KEY(k, "location")) GCJ_SET(1, gcj_int(r));
                else if (GCJ_KEY(k, "player")) GCJ_SET(2, gcj_int(r));
                else if (GCJ_KEY(k, "flags")) GCJ_SET(3, gcj_int(r));
                else if (GCJ_KEY(k, "class")) GCJ_SET(4, gcj_str(r));
                else goto fail;
                if (gcj_eat(r, ',')) continue;
                if (gcj_eat(r, '}')) break;
                goto fail;
            }
        }
        if (vals[0] == NULL || vals[1] == NULL || vals[2] == NULL) goto fail;
        fill[0] = fill[1] = fill[2] = NULL;
        fill[3] = gcj_flags0;
        fill[4] = gcj_itemcls;
        return gcj_build(gcj_item, vals, fill, gcj_item_off, 5);
    fail:
        gcj_clear(vals, 5);
        return NULL;
    }

    /* '[' values ']' into a new list; `one` reads a value (the first 32 are
       held on the stack, so most lists are allocated once at their size) */
    #define GCJ_HELD 32
    static PyObject *gcj_list(gcj_rd *r, PyObject *(*one)(gcj_rd *)) {
        PyObject *held[GCJ_HELD], *out = NULL, *v;
        Py_ssize_t n = 0, i;
        if (!gcj_eat(r, '[')) return NULL;
        if (gcj_eat(r, ']')) return PyList_New(0);
        for (;;) {
            v = one(r);
            if (v == NULL) goto fail;
            if (out == NULL && n < GCJ_HELD) {
                held[n++] = v;
            } else {
                if (out == NULL) {
                    out = PyList_New(n);
                    if (out == NULL) {
                        Py_DECREF(v);
                        goto fail;
                    }
                    for (i = 0; i < n; i++) PyList_SET_ITEM(out, i, held[i]);
                    n = 0;
                }
                if (PyList_Append(out, v) < 0) {
                    Py_DECREF(v);
                    goto fail;
                }
                Py_DECREF(v);
            }
            if (gcj_eat(r, ',')) continue;
            if (gcj_eat(r, ']')) break;
            goto fail;
        }
        if (out == NULL) {
            out = PyList_New(n);
            if (out == NULL) goto fail;
            for (i = 0; i < n; i++) PyList_SET_ITEM(out, i, held[i]);
        }
        return out;
    fail:
        for (i = 0; i < n; i++) Py_DECREF(held[i]);
        Py_XDECREF(out);
        return NULL;
    }

    static PyObject *gcj_parts(gcj_rd *r) { return gcj_list(r, gcj_part_obj); }
    static PyObject *gcj_strs(gcj_rd *r) { return gcj_list(r, gcj_str); }

    /* one {"cmd":"PrintJSON",...} */
    static PyObject *gcj_printjson_rest(gcj_rd *r);
    static PyObject *gcj_printjson(gcj_rd *r) {
        const unsigned char *k;
        Py_ssize_t n;
        if (!gcj_eat(r, '{') || !gcj_key(r, &k, &n) || !GCJ_KEY(k, "cmd")) return NULL;
        gcj_ws(r);
        if (r->end - r->p < 11 || memcmp(r->p, "\\"PrintJSON\\"", 11) != 0) return NULL;
        r->p += 11;
        return gcj_printjson_rest(r);
    }

    /* a PrintJSON's keys after its "cmd" */
    static PyObject *gcj_printjson_rest(gcj_rd *r) {
        PyObject *vals[10] = {0}, *fill[10];
        const unsigned char *k;
        Py_ssize_t n;
        int i;
        while (gcj_eat(r, ',')) {
            if (!gcj_key(r, &k, &n)) goto fail;
            switch (n) {
            case 4:
                if (GCJ_KEY(k, "data")) GCJ_SET(0, gcj_parts(r));
                else if (GCJ_KEY(k, "type")) GCJ_SET(1, gcj_str(r));
                else if (GCJ_KEY(k, "item")) GCJ_SET(4, gcj_item_obj(r));
                else if (GCJ_KEY(k, "team")) GCJ_SET(2, gcj_int(r));
                else if (GCJ_KEY(k, "slot")) GCJ_SET(6, gcj_int(r));
                else if (GCJ_KEY(k, "tags")) GCJ_SET(7, gcj_strs(r));
                else goto fail;
                break;
            case 9:
                if (GCJ_KEY(k, "receiving")) GCJ_SET(3, gcj_int(r));
                else if (GCJ_KEY(k, "countdown")) GCJ_SET(9, gcj_int(r));
                else goto fail;
                break;
            case 5:
                if (GCJ_KEY(k, "found")) GCJ_SET(5, gcj_bool(r));
                else goto fail;
                break;
            case 7:
                if (GCJ_KEY(k, "message")) GCJ_SET(8, gcj_str(r));
                else goto fail;
                break;
            default:
                goto fail;
            }
        }
        if (!gcj_eat(r, '}') || vals[0] == NULL) goto fail;
        fill[0] = NULL;
        for (i = 1; i < 10; i++) fill[i] = gcj_unset;
        return gcj_build(gcj_pj, vals, fill, gcj_pj_off, 10);
    fail:
        gcj_clear(vals, 10);
        return NULL;
    }

    static PyTypeObject *gcj_dp, *gcj_dpd, *gcj_game;
    static Py_ssize_t gcj_dp_off, gcj_dpd_off, gcj_game_off[3];

    /* {str: value, ...} into a new dict; `one` reads a value */
    static PyObject *gcj_dict(gcj_rd *r, PyObject *(*one)(gcj_rd *)) {
        PyObject *out, *k, *v;
        if (!gcj_eat(r, '{')) return NULL;
        out = PyDict_New();
        if (out == NULL) return NULL;
        if (gcj_eat(r, '}')) return out;
        for (;;) {
            k = gcj_str(r);
            if (k == NULL) goto fail;
            if (!gcj_eat(r, ':') || (v = one(r)) == NULL) {
                Py_DECREF(k);
                goto fail;
            }
            if (PyDict_SetItem(out, k, v) < 0) {
                Py_DECREF(k);
                Py_DECREF(v);
                goto fail;
            }
            Py_DECREF(k);
            Py_DECREF(v);
            if (gcj_eat(r, ',')) continue;
            if (gcj_eat(r, '}')) return out;
            goto fail;
        }
    fail:
        Py_DECREF(out);
        return NULL;
    }

    static PyObject *gcj_ids(gcj_rd *r) { return gcj_dict(r, gcj_int); }

    static PyObject *gcj_game_obj(gcj_rd *r) {
        PyObject *vals[3] = {0}, *fill[3];
        const unsigned char *k;
        Py_ssize_t n;
        if (!gcj_eat(r, '{')) return NULL;
        if (!gcj_eat(r, '}')) {
            for (;;) {
                if (!gcj_key(r, &k, &n)) goto fail;
                if (GCJ_KEY(k, "item_name_to_id")) GCJ_SET(0, gcj_ids(r));
                else if (GCJ_KEY(k, "location_name_to_id")) GCJ_SET(1, gcj_ids(r));
                else if (GCJ_KEY(k, "checksum")) GCJ_SET(2, gcj_str(r));
                else goto fail;
                if (gcj_eat(r, ',')) continue;
                if (gcj_eat(r, '}')) break;
                goto fail;
            }
        }
        if (vals[0] == NULL || vals[1] == NULL) goto fail;
        fill[0] = fill[1] = NULL;
        fill[2] = gcj_unset;
        return gcj_build(gcj_game, vals, fill, gcj_game_off, 3);
    fail:
        gcj_clear(vals, 3);
        return NULL;
    }

    static PyObject *gcj_games(gcj_rd *r) { return gcj_dict(r, gcj_game_obj); }

    /* {"games": {...}} */
    static PyObject *gcj_dpd_obj(gcj_rd *r) {
        PyObject *games;
        const unsigned char *k;
        Py_ssize_t n;
        if (!gcj_eat(r, '{') || !gcj_key(r, &k, &n) || !GCJ_KEY(k, "games")) return NULL;
        games = gcj_games(r);
        if (games == NULL) return NULL;
        if (!gcj_eat(r, '}')) {
            Py_DECREF(games);
            return NULL;
        }
        return gcj_build(gcj_dpd, &games, NULL, &gcj_dpd_off, 1);
    }

    /* one {"cmd":"DataPackage","data":{...}} */
    static PyObject *gcj_datapackage_rest(gcj_rd *r);
    static PyObject *gcj_datapackage(gcj_rd *r) {
        const unsigned char *k;
        Py_ssize_t n;
        if (!gcj_eat(r, '{') || !gcj_key(r, &k, &n) || !GCJ_KEY(k, "cmd")) return NULL;
        gcj_ws(r);
        if (r->end - r->p < 13 || memcmp(r->p, "\\"DataPackage\\"", 13) != 0) return NULL;
        r->p += 13;
        return gcj_datapackage_rest(r);
    }

    /* a DataPackage's keys after its "cmd" */
    static PyObject *gcj_datapackage_rest(gcj_rd *r) {
        PyObject *data;
        const unsigned char *k;
        Py_ssize_t n;
        if (!gcj_eat(r, ',') || !gcj_key(r, &k, &n) || !GCJ_KEY(k, "data")) return NULL;
        data = gcj_dpd_obj(r);
        if (data == NULL) return NULL;
        if (!gcj_eat(r, '}')) {
            Py_DECREF(data);
            return NULL;
        }
        return gcj_build(gcj_dp, &data, NULL, &gcj_dp_off, 1);
    }

    static void gcj_setup_dp(PyObject *dp, PyObject *dpd, PyObject *game, Py_ssize_t dp_off,
                             Py_ssize_t dpd_off, const Py_ssize_t *game_off) {
        Py_INCREF(dp); Py_INCREF(dpd); Py_INCREF(game);
        gcj_dp = (PyTypeObject *)dp;
        gcj_dpd = (PyTypeObject *)dpd;
        gcj_game = (PyTypeObject *)game;
        gcj_dp_off = dp_off;
        gcj_dpd_off = dpd_off;
        gcj_game_off[0] = game_off[0];
        gcj_game_off[1] = game_off[1];
        gcj_game_off[2] = game_off[2];
    }

    /* ---- any JSON value (msgspec's untyped decode), and commands by table ---- */
    #define GCJ_DEPTH 32

    /* a number: an int through gcj_int, a float through PyOS_string_to_double
       (both correctly rounded, as msgspec's); NULL to decline */
    static PyObject *gcj_num(gcj_rd *r) {
        const unsigned char *p, *start, *q;
        char buf[48], *endp;
        int isfloat = 0;
        double d;
        gcj_ws(r);
        p = start = r->p;
        if (p < r->end && *p == '-') p++;
        if (p >= r->end) return NULL;
        if (*p == '0') p++;
        else if (*p >= '1' && *p <= '9') { while (p < r->end && *p >= '0' && *p <= '9') p++; }
        else return NULL;
        if (p < r->end && *p == '.') {
            p++;
            if (p >= r->end || *p < '0' || *p > '9') return NULL;
            while (p < r->end && *p >= '0' && *p <= '9') p++;
            isfloat = 1;
        }
        if (p < r->end && (*p == 'e' || *p == 'E')) {
            p++;
            if (p < r->end && (*p == '+' || *p == '-')) p++;
            if (p >= r->end || *p < '0' || *p > '9') return NULL;
            while (p < r->end && *p >= '0' && *p <= '9') p++;
            isfloat = 1;
        }
        if (!isfloat) return gcj_int(r);
        if (p - start > 40) return NULL;
        memcpy(buf, start, p - start);
        buf[p - start] = 0;
        d = PyOS_string_to_double(buf, &endp, NULL);
        if (d == -1.0 && PyErr_Occurred()) return NULL;
        if (endp != buf + (p - start) || !isfinite(d)) return NULL;
        if (d == 0.0) {  /* an underflow: left to msgspec */
            for (q = start; q < p && *q != 'e' && *q != 'E'; q++)
                if (*q >= '1' && *q <= '9') return NULL;
        }
        r->p = p;
        return PyFloat_FromDouble(d);
    }

    static PyObject *gcj_any(gcj_rd *r);
    static PyObject *gcj_any_list(gcj_rd *r) { return gcj_list(r, gcj_any); }
    static PyObject *gcj_any_dict(gcj_rd *r) { return gcj_dict(r, gcj_any); }

    static PyObject *gcj_any(gcj_rd *r) {
        PyObject *out;
        gcj_ws(r);
        if (r->p >= r->end) return NULL;
        switch (*r->p) {
        case '"':
            return gcj_str(r);
        case '{':
        case '[':
            if (r->depth >= GCJ_DEPTH) return NULL;
            r->depth++;
            out = *r->p == '{' ? gcj_any_dict(r) : gcj_any_list(r);
            r->depth--;
            return out;
        case 't':
        case 'f':
            return gcj_bool(r);
        case 'n':
            if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
                r->p += 4;
                Py_RETURN_NONE;
            }
            return NULL;
        default:
            return gcj_num(r);
        }
    }

    enum {
        GK_INT = 1, GK_STR, GK_BOOL, GK_ANY, GK_LINT, GK_LSTR, GK_LITEM, GK_DINT,
        GK_LSUB, GK_DSUB, GK_DANY, GK_FLOAT, GK_SUB, GK_DSTR, GK_NSTR, GK_NINT
    };
    enum { GF_VALUE = 0, GF_REQUIRED, GF_LIST, GF_DICT };
    #define GCJ_FIELDS 12
    #define GCJ_SPECS 32

    struct gcj_spec_s {
        PyTypeObject *type;
        const char *name;           /* the "cmd" of a command, NULL for a nested Struct */
        Py_ssize_t name_len;
        int n, is_command, is_gc;
        const char *key[GCJ_FIELDS];
        Py_ssize_t key_len[GCJ_FIELDS];
        int kind[GCJ_FIELDS], sub[GCJ_FIELDS], fill_kind[GCJ_FIELDS];
        Py_ssize_t off[GCJ_FIELDS];
        PyObject *fill[GCJ_FIELDS];
    };

    static gcj_spec gcj_specs[GCJ_SPECS];
    static int gcj_nspecs = 0;
    static PyObject *gcj_extra_key;  /* "_extra" */

    static PyObject *gcj_struct(gcj_rd *r, const gcj_spec *sp, int opened);

    static PyObject *gcj_lint(gcj_rd *r) { return gcj_list(r, gcj_int); }
    static PyObject *gcj_lstr(gcj_rd *r) { return gcj_list(r, gcj_str); }
    static PyObject *gcj_litem(gcj_rd *r) { return gcj_list(r, gcj_item_obj); }

    /* a nested Struct in a list or dict: its spec travels in the reader */
    static PyObject *gcj_sub_one(gcj_rd *r) {
        const gcj_spec *sp = r->sub;
        PyObject *out = gcj_struct(r, sp, 0);
        r->sub = sp;
        return out;
    }

    /* a float field: a JSON int becomes a float as msgspec makes it (exactly,
       below 2**53; larger ones are declined) */
    static PyObject *gcj_float(gcj_rd *r) {
        PyObject *v = gcj_num(r);
        long long i;
        if (v == NULL || PyFloat_CheckExact(v)) return v;
        i = PyLong_AsLongLong(v);
        Py_DECREF(v);
        if (i == -1 && PyErr_Occurred()) return NULL;
        if (i > (1LL << 53) || i < -(1LL << 53)) return NULL;
        return PyFloat_FromDouble((double)i);
    }

    static inline int gcj_null(gcj_rd *r) {
        gcj_ws(r);
        if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
            r->p += 4;
            return 1;
        }
        return 0;
    }

    static PyObject *gcj_dstr(gcj_rd *r) { return gcj_dict(r, gcj_str); }

    static PyObject *gcj_value(gcj_rd *r, int kind, int sub) {
        PyObject *out;
        switch (kind) {
        case GK_FLOAT: return gcj_float(r);
        case GK_SUB: return gcj_struct(r, &gcj_specs[sub], 0);
        case GK_DSTR: return gcj_dstr(r);
        case GK_NSTR:
            if (gcj_null(r)) Py_RETURN_NONE;
            return gcj_str(r);
        case GK_NINT:
            if (gcj_null(r)) Py_RETURN_NONE;
            return gcj_int(r);
        case GK_INT: return gcj_int(r);
        case GK_STR: return gcj_str(r);
        case GK_BOOL: return gcj_bool(r);
        case GK_ANY: return gcj_any(r);
        case GK_LINT: return gcj_lint(r);
        case GK_LSTR: return gcj_lstr(r);
        case GK_LITEM: return gcj_litem(r);
        case GK_DINT: return gcj_ids(r);
        case GK_DANY: return gcj_any_dict(r);
        case GK_LSUB:
        case GK_DSUB:
            r->sub = &gcj_specs[sub];
            out = kind == GK_LSUB ? gcj_list(r, gcj_sub_one) : gcj_dict(r, gcj_sub_one);
            return out;
        }
        return NULL;
    }

    /* msgspec's rule: a GC Struct stays tracked only when a field may be */
    static inline int gcj_may_track(PyObject *x) {
        return PyType_IS_GC(Py_TYPE(x)) && (!PyTuple_CheckExact(x) || PyObject_GC_IsTracked(x));
    }

    /* a Struct of `sp` (a command when `opened`: its '{' and "cmd" already read);
       a command keeps keys it does not declare in its __dict__'s "_extra" */
    static PyObject *gcj_struct(gcj_rd *r, const gcj_spec *sp, int opened) {
        PyObject *vals[GCJ_FIELDS] = {0}, *extra = NULL, *key = NULL, *v, *o, *d;
        const unsigned char *k;
        Py_ssize_t n;
        int i, n_f = sp->n, tracked = 0;
        if (!opened) {
            if (!gcj_eat(r, '{')) return NULL;
            if (gcj_eat(r, '}')) goto close;
            goto first;
        }
        for (;;) {
            if (!gcj_eat(r, ',')) break;
        first:
            if (!gcj_key(r, &k, &n)) goto fail;
            for (i = 0; i < n_f; i++)
                if (sp->key_len[i] == n && memcmp(sp->key[i], k, n) == 0) break;
            if (i < n_f) {
                if (vals[i] != NULL) goto fail;
                vals[i] = gcj_value(r, sp->kind[i], sp->sub[i]);
                if (vals[i] == NULL) goto fail;
                continue;
            }
            if (!sp->is_command || (n == 3 && memcmp(k, "cmd", 3) == 0)) goto fail;
            for (i = 0; i < (int)n; i++)
                if (k[i] >= 0x80) goto fail;
            key = gcj_str_of(k, n, 1);
            if (key == NULL) goto fail;
            if (extra == NULL && (extra = PyDict_New()) == NULL) goto fail;
            if (PyDict_Contains(extra, key)) goto fail;
            v = gcj_any(r);
            if (v == NULL) goto fail;
            if (PyDict_SetItem(extra, key, v) < 0) {
                Py_DECREF(v);
                goto fail;
            }
            Py_DECREF(v);
            Py_CLEAR(key);
        }
        if (!gcj_eat(r, '}')) goto fail;
    close:
        for (i = 0; i < n_f; i++) {
            if (vals[i] != NULL) continue;
            switch (sp->fill_kind[i]) {
            case GF_REQUIRED: goto fail;
            case GF_LIST: vals[i] = PyList_New(0); break;
            case GF_DICT: vals[i] = PyDict_New(); break;
            default: vals[i] = sp->fill[i]; Py_INCREF(vals[i]);
            }
            if (vals[i] == NULL) goto fail;
        }
        for (i = 0; i < n_f; i++) tracked |= gcj_may_track(vals[i]);
        o = gcj_build(sp->type, vals, NULL, sp->off, n_f);
        if (o == NULL) {
            Py_XDECREF(extra);
            return NULL;
        }
        if (sp->is_gc && !tracked) PyObject_GC_UnTrack(o);
        if (extra != NULL) {
            r->had_extra = 1;
            d = PyObject_GenericGetDict(o, NULL);
            if (d == NULL || PyDict_SetItem(d, gcj_extra_key, extra) < 0) {
                Py_XDECREF(d);
                Py_DECREF(extra);
                Py_DECREF(o);
                return NULL;
            }
            Py_DECREF(d);
            Py_DECREF(extra);
        }
        return o;
    fail:
        gcj_clear(vals, n_f);
        Py_XDECREF(extra);
        Py_XDECREF(key);
        return NULL;
    }

    /* one command of any supported kind */
    static PyObject *gcj_command(gcj_rd *r) {
        const unsigned char *k, *name;
        Py_ssize_t n;
        int i;
        if (!gcj_eat(r, '{') || !gcj_key(r, &k, &n) || !GCJ_KEY(k, "cmd")) return NULL;
        gcj_ws(r);
        if (r->p >= r->end || *r->p != '"') return NULL;
        name = r->p + 1;
        k = name;
        while (k < r->end && *k != '"' && *k != '\\\\') k++;
        if (k >= r->end || *k != '"') return NULL;
        n = k - name;
        r->p = k + 1;
        if (GCJ_KEY(name, "PrintJSON")) return gcj_printjson_rest(r);
        if (GCJ_KEY(name, "DataPackage")) return gcj_datapackage_rest(r);
        for (i = 0; i < gcj_nspecs; i++) {
            const gcj_spec *sp = &gcj_specs[i];
            if (sp->name != NULL && sp->name_len == n && memcmp(sp->name, name, n) == 0)
                return gcj_struct(r, sp, 1);
        }
        return NULL;
    }

    /* add a spec (from the Cython setup): `fields` is a tuple of
       (key bytes, kind, sub, offset, fill kind, fill) tuples */
    static int gcj_add_spec(PyObject *type, PyObject *name, int is_command, PyObject *fields) {
        gcj_spec *sp;
        Py_ssize_t i, n = PyTuple_GET_SIZE(fields);
        if (gcj_nspecs >= GCJ_SPECS || n > GCJ_FIELDS) return -1;
        sp = &gcj_specs[gcj_nspecs];
        Py_INCREF(type);
        Py_INCREF(fields);
        sp->type = (PyTypeObject *)type;
        sp->name = NULL;
        if (name != Py_None) {
            Py_INCREF(name);
            sp->name = PyBytes_AS_STRING(name);
            sp->name_len = PyBytes_GET_SIZE(name);
        }
        sp->n = (int)n;
        sp->is_command = is_command;
        sp->is_gc = PyType_IS_GC((PyTypeObject *)type);
        for (i = 0; i < n; i++) {
            PyObject *f = PyTuple_GET_ITEM(fields, i);
            sp->key[i] = PyBytes_AS_STRING(PyTuple_GET_ITEM(f, 0));
            sp->key_len[i] = PyBytes_GET_SIZE(PyTuple_GET_ITEM(f, 0));
            sp->kind[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(f, 1));
            sp->sub[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(f, 2));
            sp->off[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(f, 3));
            sp->fill_kind[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(f, 4));
            sp->fill[i] = PyTuple_GET_ITEM(f, 5);
        }
        if (gcj_extra_key == NULL) gcj_extra_key = PyUnicode_InternFromString("_extra");
        return gcj_nspecs++;
    }

    /* the commands of a frame of PrintJSON (kind 0), DataPackage (kind 1) or
       any supported (kind 2) commands as a new list; NULL (no exception set)
       when the reader declines it */
    static PyObject *gcj_frame(const char *text, Py_ssize_t size, int kind) {
        gcj_rd r;
        PyObject *out;
        r.p = (const unsigned char *)text;
        r.end = r.p + size;
        r.depth = r.had_extra = 0;
        r.sub = NULL;
        out = gcj_list(&r, kind == 2 ? gcj_command : kind ? gcj_datapackage : gcj_printjson);
        if (out != NULL) {
            gcj_ws(&r);
            if (r.p != r.end || PyList_GET_SIZE(out) == 0) Py_CLEAR(out);
        }
        if (out != NULL && r.had_extra) {
            /* the two-pass path re-classes every command of such a frame, and
               assigning __class__ tracks an object: so are these */
            Py_ssize_t i;
            for (i = 0; i < PyList_GET_SIZE(out); i++) {
                PyObject *o = PyList_GET_ITEM(out, i);
                if (PyType_IS_GC(Py_TYPE(o)) && !PyObject_GC_IsTracked(o)) PyObject_GC_Track(o);
            }
        }
        if (out == NULL) PyErr_Clear();
        return out;
    }

    static void gcj_setup(PyObject *pj, PyObject *part, PyObject *item, PyObject *unset,
                          PyObject *flags0, PyObject *itemcls,
                          const Py_ssize_t *pj_off, const Py_ssize_t *part_off,
                          const Py_ssize_t *item_off) {
        int i;
        Py_INCREF(pj); Py_INCREF(part); Py_INCREF(item);
        Py_INCREF(unset); Py_INCREF(flags0); Py_INCREF(itemcls);
        gcj_pj = (PyTypeObject *)pj;
        gcj_part = (PyTypeObject *)part;
        gcj_item = (PyTypeObject *)item;
        gcj_unset = unset;
        gcj_flags0 = flags0;
        gcj_itemcls = itemcls;
        for (i = 0; i < 10; i++) gcj_pj_off[i] = pj_off[i];
        for (i = 0; i < 6; i++) gcj_part_off[i] = part_off[i];
        for (i = 0; i < 5; i++) gcj_item_off[i] = item_off[i];
    }
    """
    int gcj_on
    PyObject *gcj_frame(const char *text, Py_ssize_t size, int kind)
    int gcj_add_spec(object type, object name, int is_command, object fields) except? -2
    int gcj_nspecs
    void gcj_setup_dp(object dp, object dpd, object game, Py_ssize_t dp_off, Py_ssize_t dpd_off,
                      const Py_ssize_t *game_off)
    void gcj_setup(object pj, object part, object item, object unset, object flags0,
                   object itemcls, const Py_ssize_t *pj_off, const Py_ssize_t *part_off,
                   const Py_ssize_t *item_off)

_HAVE_GC = 1 << 14  # Py_TPFLAGS_HAVE_GC


_PJ_FIELDS = (
    "data", "type", "team", "receiving", "item", "found", "slot", "tags", "message", "countdown"
)
_PART_FIELDS = ("text", "player", "flags", "hint_status", "type", "color")
_ITEM_WIRE = ("item", "location", "player", "flags", "class")
_GAME_FIELDS = ("item_name_to_id", "location_name_to_id", "checksum")
_PJ_PROBES = (
    '[{"cmd":"PrintJSON","data":[{"text":"1","type":"player_id"},{"text":" found "},'
    '{"text":"7","player":1,"flags":1,"type":"item_id","color":"red","hint_status":0},{}],'
    '"type":"ItemSend","receiving":1,"item":{"item":7,"location":-8,"player":1,"flags":1,'
    '"class":"NetworkItem"},"found":false}]',
    ' [ {"cmd" : "PrintJSON" , "data" : [ ] , "type" : "Chat" , "team" : 0 , "slot" : 2 ,'
    ' "message" : "h\u00e9" , "tags" : [ "AP" , "x" ] , "countdown" : 3 } ,'
    ' {"cmd":"PrintJSON","data":[{"text":""}],"item":{"player":2,"location":0,"item":1},'
    '"found":true} ] ',
    '[{"cmd":"DataPackage","data":{"games":{"A":{"item_name_to_id":{"Nothing":-1},'
    '"location_name_to_id":{"Cheat Console":-1,"Server":-2},"checksum":"ac91"},'
    '"B b":{"location_name_to_id":{},"item_name_to_id":{"x":1,"y\u00e9":2}}}}},'
    '{"cmd":"DataPackage","data":{"games":{}}}]',
)


cdef int _member_offsets(object cls, tuple names, Py_ssize_t *out) except -1:
    """The slot offsets of ``cls``'s fields ``names`` (its member descriptors)."""
    cdef Py_ssize_t i
    for i in range(len(names)):
        descriptor = None
        for klass in cls.__mro__:
            descriptor = klass.__dict__.get(names[i])
            if descriptor is not None:
                break
        if type(descriptor).__name__ != "member_descriptor":
            raise TypeError(f"{cls.__name__}.{names[i]} is not a slot")
        out[i] = (<PyMemberDescrObject *><PyObject *>descriptor).d_member.offset
    return 0


def _reader_probe(text):
    """The typed reader's commands for ``text`` as ``decode_frame`` would try it
    (tests), None when it declines or is off."""
    cdef PyObject *res
    cdef const char *data
    cdef Py_ssize_t size
    if not gcj_on:
        return None
    raw = text.encode("utf-8") if type(text) is str else bytes(text)
    data = PyBytes_AS_STRING(raw)
    size = PyBytes_GET_SIZE(raw)
    if b'"DataPackage"' in raw[:40]:
        res = gcj_frame(data, size, 1)
    elif b'"PrintJSON"' in raw[:40]:
        res = gcj_frame(data, size, 0)
    elif _specs_on:
        res = gcj_frame(data, size, 2)
    else:
        return None
    if res == NULL:
        return None
    out = <object>res
    Py_DECREF(out)
    return out


def _read_as(text, int kind):
    """The reader's commands for ``text`` read as ``kind``, None when it declines."""
    cdef PyObject *res
    raw = text.encode("utf-8") if type(text) is str else bytes(text)
    res = gcj_frame(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), kind)
    if res == NULL:
        return None
    out = <object>res
    Py_DECREF(out)
    return out


def _reader_setup():
    """Turn the PrintJSON and DataPackage readers on when the Struct layouts are
    the expected ones and they agree with msgspec on the probes; returns whether
    they are on."""
    global gcj_on
    cdef Py_ssize_t pj_off[10]
    cdef Py_ssize_t part_off[6]
    cdef Py_ssize_t item_off[5]
    cdef Py_ssize_t game_off[3]
    cdef Py_ssize_t dp_off = 0, dpd_off = 0
    import gc

    from gamecodec.archipelago.commands import (
        AnyCommand,
        DataPackage,
        DataPackageData,
        GameData,
        Item,
        MessagePart,
        PrintJSON,
    )

    gcj_on = 0
    try:
        config = PrintJSON.__struct_config__
        if (
            PrintJSON.__struct_fields__ != _PJ_FIELDS
            or PrintJSON.__struct_encode_fields__ != _PJ_FIELDS
            or MessagePart.__struct_fields__ != _PART_FIELDS
            or MessagePart.__struct_encode_fields__ != _PART_FIELDS
            or Item.__struct_encode_fields__ != _ITEM_WIRE
            or Item.__struct_defaults__ != (0, "NetworkItem")
            or config.tag_field != "cmd"
            or config.tag != "PrintJSON"
            or MessagePart.__struct_config__.gc
            or Item.__struct_config__.gc
            or not config.gc
            or any(c.__struct_config__.array_like for c in (PrintJSON, MessagePart, Item))
            or any(hasattr(c, "__post_init__") for c in (PrintJSON, MessagePart, Item))
            or any(c.__itemsize__ for c in (PrintJSON, MessagePart, Item))
            or MessagePart.__flags__ & _HAVE_GC
            or Item.__flags__ & _HAVE_GC
            or not PrintJSON.__flags__ & _HAVE_GC
            or DataPackage.__struct_encode_fields__ != ("data",)
            or DataPackage.__struct_config__.tag != "DataPackage"
            or DataPackageData.__struct_encode_fields__ != ("games",)
            or GameData.__struct_encode_fields__ != _GAME_FIELDS
            or GameData.__struct_fields__ != _GAME_FIELDS
            or any(c.__struct_config__.array_like for c in (DataPackage, DataPackageData, GameData))
            or any(hasattr(c, "__post_init__") for c in (DataPackage, DataPackageData, GameData))
            or any(c.__itemsize__ for c in (DataPackage, DataPackageData, GameData))
            or not all(c.__flags__ & _HAVE_GC for c in (DataPackage, DataPackageData, GameData))
        ):
            return False
        _member_offsets(PrintJSON, _PJ_FIELDS, pj_off)
        _member_offsets(MessagePart, _PART_FIELDS, part_off)
        _member_offsets(Item, Item.__struct_fields__, item_off)
        _member_offsets(GameData, _GAME_FIELDS, game_off)
        _member_offsets(DataPackage, ("data",), &dp_off)
        _member_offsets(DataPackageData, ("games",), &dpd_off)
        gcj_setup(PrintJSON, MessagePart, Item, _UNSET, Item.__struct_defaults__[0],
                  Item.__struct_defaults__[1], pj_off, part_off, item_off)
        gcj_setup_dp(DataPackage, DataPackageData, GameData, dp_off, dpd_off, game_off)
        gcj_on = 1
        reference = msgspec.json.Decoder(list[AnyCommand]).decode
        for probe in _PJ_PROBES:
            mine = _read_as(probe, 1 if "DataPackage" in probe[:40] else 0)
            theirs = reference(probe)
            if mine is None or mine != theirs:
                gcj_on = 0
            else:
                for a, b in zip(mine, theirs):
                    if type(a) is DataPackage:
                        games = zip(a.data.games.values(), b.data.games.values())
                        for x, y in ((a, b), (a.data, b.data), *games):
                            if gc.is_tracked(x) != gc.is_tracked(y) or type(x) is not type(y):
                                gcj_on = 0
                        continue
                    for name in _PJ_FIELDS:
                        if type(getattr(a, name)) is not type(getattr(b, name)):
                            gcj_on = 0
                    if gc.is_tracked(a) != gc.is_tracked(b):
                        gcj_on = 0
                    for x, y in zip(a.data, b.data):
                        if gc.is_tracked(x) != gc.is_tracked(y):
                            gcj_on = 0
    except Exception:  # a msgspec unlike the one it knows: the reader stays off
        gcj_on = 0
    return bool(gcj_on)


# ---- the other commands, by table: each field's kind from msgspec.inspect
(GK_INT, GK_STR, GK_BOOL, GK_ANY, GK_LINT, GK_LSTR, GK_LITEM, GK_DINT, GK_LSUB, GK_DSUB,
 GK_DANY, GK_FLOAT, GK_SUB, GK_DSTR, GK_NSTR, GK_NINT) = range(1, 17)
GF_VALUE, GF_REQUIRED, GF_LIST, GF_DICT = range(4)
_SPEC_PROBES = (
    '[{"cmd":"ReceivedItems","index":3,"items":[{"item":1,"location":2,"player":3,"flags":0,'
    '"class":"NetworkItem"}]},{"cmd":"LocationInfo","locations":[]},'
    '{"cmd":"RoomUpdate","players":[{"team":0,"slot":1,"alias":"a","name":"n",'
    '"class":"NetworkPlayer"}],"permissions":{"a":1},"password":false,"tags":["x"]},'
    '{"cmd":"Connected","team":0,"slot":1,"players":[],"missing_locations":[1],'
    '"checked_locations":[],"slot_info":{"1":{"name":"n","game":"g","type":1}},'
    '"slot_data":{"a":[1,2.5,-3e-2,null,true,"x",{}]}},'
    '{"cmd":"SetReply","key":"k","value":10,"operations":[{"operation":"add","value":1},'
    '{"operation":"x"}],"slot":1},{"cmd":"SetReply","key":"k","value":[1]},'
    '{"cmd":"Retrieved","keys":{"a":0,"b":[{"c":1.5}]}},{"cmd":"Get","keys":[]},'
    '{"cmd":"Sync"},{"cmd":"Bounce","data":{"time":1795254750.22956}}]',
    '[{"cmd":"RoomInfo","password":false,"games":["A"],"tags":[],"version":{"major":0,'
    '"minor":6,"build":8,"class":"Version"},"generator_version":{"major":0,"minor":6,'
    '"build":1},"datapackage_checksums":{"A":"c"},"time":1795254750.5},'
    '{"cmd":"RoomInfo","password":true,"games":[],"tags":["x"],"version":{"major":1,'
    '"minor":2,"build":3},"time":17},{"cmd":"InvalidPacket","type":"cmd","original_cmd":null},'
    '{"cmd":"InvalidPacket","type":"cmd","original_cmd":"x","text":"t"},'
    '{"cmd":"UpdateHint","player":1,"location":2,"status":null},'
    '{"cmd":"UpdateHint","player":1,"location":2,"status":3}]',
)


def _kind_of(t, subs):
    """The reader's kind for a msgspec.inspect type (and the nested spec), or None."""
    import msgspec.inspect as mi

    from gamecodec.archipelago.commands import Item

    def plain(x):
        if type(x) is mi.IntType:
            return x == mi.IntType()
        if type(x) is mi.StrType:
            return x == mi.StrType()
        return False

    if type(t) is mi.IntType and plain(t):
        return GK_INT, 0
    if type(t) is mi.StrType and plain(t):
        return GK_STR, 0
    if type(t) is mi.BoolType:
        return GK_BOOL, 0
    if type(t) is mi.FloatType and t == mi.FloatType():
        return GK_FLOAT, 0
    if type(t) is mi.StructType and t.cls is not Item:
        sub = _nested_spec(t, subs)
        return (None, 0) if sub is None else (GK_SUB, sub)
    if type(t) is mi.UnionType and len(t.types) == 2 and mi.NoneType() in t.types:
        other = [x for x in t.types if x != mi.NoneType()]
        if len(other) == 1 and plain(other[0]):
            return (GK_NINT if type(other[0]) is mi.IntType else GK_NSTR), 0
    if type(t) is mi.AnyType:
        return GK_ANY, 0
    if type(t) is mi.ListType and t.min_length is None and t.max_length is None:
        item = t.item_type
        if plain(item):
            return (GK_LINT if type(item) is mi.IntType else GK_LSTR), 0
        if type(item) is mi.StructType:
            if item.cls is Item:
                return GK_LITEM, 0
            sub = _nested_spec(item, subs)
            return (None, 0) if sub is None else (GK_LSUB, sub)
    if (
        type(t) is mi.DictType
        and t.min_length is None
        and t.max_length is None
        and type(t.key_type) is mi.StrType
        and plain(t.key_type)
    ):
        value = t.value_type
        if type(value) is mi.IntType and plain(value):
            return GK_DINT, 0
        if type(value) is mi.AnyType:
            return GK_DANY, 0
        if type(value) is mi.StrType and plain(value):
            return GK_DSTR, 0
        if type(value) is mi.StructType:
            sub = _nested_spec(value, subs)
            return (None, 0) if sub is None else (GK_DSUB, sub)
    return None, 0


def _spec_fields(cls, info, subs):
    """The field tuples of ``gcj_add_spec`` for a Struct, or None when unsupported."""
    cdef Py_ssize_t offset = 0
    if info.array_like or cls.__itemsize__ or hasattr(cls, "__post_init__"):
        return None
    if len(info.fields) > 12:  # GCJ_FIELDS
        return None
    defaults = {f.name: f for f in msgspec.structs.fields(cls)}
    out = []
    for field in info.fields:
        kind, sub = _kind_of(field.type, subs)
        if kind is None:
            return None
        _member_offsets(cls, (field.name,), &offset)
        given = defaults[field.name]
        if given.default_factory is not msgspec.NODEFAULT:
            fill_kind = {list: GF_LIST, dict: GF_DICT}.get(given.default_factory)
            if fill_kind is None:
                return None
            fill = None
        elif given.default is not msgspec.NODEFAULT:
            fill_kind, fill = GF_VALUE, given.default
        else:
            fill_kind, fill = GF_REQUIRED, None
        out.append((field.encode_name.encode(), kind, sub, offset, fill_kind, fill))
    return tuple(out)


def _nested_spec(info, subs):
    """The spec index of a nested Struct (added once), or None."""
    if info.cls in subs:
        return subs[info.cls]
    if info.tag_field is not None:
        return None
    subs[info.cls] = None  # while its fields are read: a recursive Struct is not read
    fields = _spec_fields(info.cls, info, subs)
    if fields is None:
        return None
    index = gcj_add_spec(info.cls, None, 0, fields)
    if index < 0:
        raise ValueError("the reader's spec table is full")
    subs[info.cls] = index
    return index


def _specs_setup():
    """Add every command the table can read (not PrintJSON and DataPackage, read by
    hand, nor Connect, whose version needs its own check); check the reader
    against msgspec on the probes. Returns whether the table path is usable."""
    global gcj_on
    import msgspec.inspect as mi

    from gamecodec.archipelago.commands import COMMANDS, AnyCommand, Connect

    subs = {}
    try:
        for name, cls in COMMANDS.items():
            if name in ("PrintJSON", "DataPackage") or cls is Connect:
                continue
            info = mi.type_info(cls)
            if info.tag_field != "cmd" or info.tag != name or not info.forbid_unknown_fields:
                continue
            fields = _spec_fields(cls, info, subs)
            if fields is not None:
                gcj_add_spec(cls, name.encode(), 1, fields)
        reference = msgspec.json.Decoder(list[AnyCommand]).decode
        for probe in _SPEC_PROBES:
            mine = _read_as(probe, 2)
            theirs = reference(probe)
            if mine is None or mine != theirs or _tracking(mine) != _tracking(theirs):
                return False
    except Exception:  # a msgspec unlike the one it knows: the table stays off
        return False
    return gcj_nspecs > 0


def _tracking(value):
    """Types and GC tracking all the way down (the self-check)."""
    import gc

    if isinstance(value, _Struct):
        return (type(value), gc.is_tracked(value),
                tuple(_tracking(getattr(value, n)) for n in value.__struct_fields__))
    if isinstance(value, list):
        return [_tracking(v) for v in value]
    if isinstance(value, dict):
        return (gc.is_tracked(value), [(_tracking(k), _tracking(v)) for k, v in value.items()])
    return type(value)


cdef bint _gcj_ready = _reader_setup()
cdef bint _specs_ready = _gcj_ready and _specs_setup()
cdef bint _specs_on = _specs_ready


def _reader_use(on):
    """Turn the typed reader on or off (tests and benchmarks compare the two
    paths); it stays off when its self-check failed. Returns whether it was on."""
    global gcj_on, _specs_on
    was = bool(gcj_on)
    gcj_on = 1 if on and _gcj_ready else 0
    _specs_on = gcj_on and _specs_ready
    return was


cdef object _fast_read(object data):
    """The frame read by the typed reader, as a Frame; None when it declines
    (the usual path then decodes it)."""
    cdef const char *text
    cdef Py_ssize_t size = 0
    cdef PyObject *res
    if type(data) is str:
        if PyUnicode_IS_COMPACT_ASCII(data):
            text = <const char *>PyUnicode_DATA(data)
            size = PyUnicode_GET_LENGTH(data)
        else:
            try:
                text = PyUnicode_AsUTF8AndSize(data, &size)
            except UnicodeError:
                return None
    else:
        text = PyBytes_AS_STRING(data)
        size = PyBytes_GET_SIZE(data)
    if size < 12 or memcmp(text, b'[{"cmd":"', 9) != 0:
        return None
    if size > 20 and memcmp(text + 9, b'PrintJSON",', 11) == 0:
        res = gcj_frame(text, size, 0)
    elif size > 22 and memcmp(text + 9, b'DataPackage",', 13) == 0:
        res = gcj_frame(text, size, 1)
    elif _specs_on:
        res = gcj_frame(text, size, 2)
    else:
        return None
    if res == NULL:
        return None
    items = <object>res
    Py_DECREF(items)
    frame = gamecodec_alloc_empty(_t_frame)
    gamecodec_list_move(frame, items)
    gamecodec_set_slot(frame, _t_raw, data)
    return frame


def decode_frame(data):
    """``_typed.decode_frame``: the typed reader, else the one-pass Struct decode,
    natively wrapped."""
    cdef object items, frame
    cdef Py_ssize_t i, n, size = 0
    cdef PyObject *connect
    cdef bint had_extra = False, tried = False
    cdef const char *name
    if _t_decode_all is None:
        _bind_self()
    if type(data) is not str and type(data) is not bytes:
        return _t_general(data)
    if type(data) is bytes and not (<bytes>data).isascii():
        # msgspec skips the bytes of keys a Struct does not declare unchecked
        try:
            (<bytes>data).decode("utf-8")
        except UnicodeDecodeError as exc:
            return _t_failed(data, exc)  # raises the DecodeError
    if gcj_on:
        frame = _fast_read(data)
        if frame is not None:
            return frame
    if len(data) > _t_peek:
        if _t_prone and _is_prone(data):
            return _t_general(data)
    elif _p_count:
        name = _lead_name(data, &size, PRONE_NAME)
        if name != NULL and _prone_slot(name, size) >= 0:
            tried = True
            frame = _lenient(data, &had_extra)
            if frame is not None and had_extra:
                return frame
            # none after all (or declined): the one-pass decode decides, so the
            # result never depends on the frames that came before
            _mark_prone(data, False)
    try:
        items = _t_decode_all(data)
    except Exception as exc:
        # keys a command does not declare: the two-pass path (a large frame goes
        # through _typed, which also remembers its leading command as prone)
        if type(exc) is _t_invalid and len(data) <= _t_peek:
            if not tried:
                had_extra = False
                frame = _lenient(data, &had_extra)
                if frame is not None:
                    if had_extra:
                        _mark_prone(data, True)
                    return frame
            return _t_declined(data)  # command by command, as _typed does next
        return _t_failed(data, exc)
    frame = gamecodec_alloc_empty(_t_frame)
    gamecodec_list_move(frame, items)
    connect = <PyObject *>_t_connect
    n = PyList_GET_SIZE(frame)
    for i in range(n):
        if <PyObject *>Py_TYPE(PyList_GET_ITEM(frame, i)) == connect:
            _t_check_connects(data, frame)
            break
    gamecodec_set_slot(frame, _t_raw, data)
    return frame


cdef object _write_items(object items, bint text):
    """The typed writer over a list (or list subclass); the pure twin when it declines."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_list(&buf, items, MODE_TYPED, 0, None)
        if text:
            return _text(&buf)
        return PyBytes_FromStringAndSize(buf.data, buf.length)
    except Exception:
        if text:
            return _codec_py.encode_typed(list(items))
        return _codec_py.encode_typed_bytes(list(items))
    finally:
        _release(&buf)


cdef object _encode_frame(object commands, bint text):
    """A plain list of commands, or a decoded Frame whose fresh encoding is its
    own text, natively; anything else in Python (as ``str`` or UTF-8 bytes)."""
    cdef PyObject *raw
    cdef object out
    if type(commands) is list:
        return _write_items(commands, text)
    if _t_frame is None:
        _bind_self()
    if type(commands) is _t_frame:
        raw = gamecodec_get_slot(commands, _t_raw)
        if raw == NULL or <object>raw is None:
            return _write_items(commands, text)
        if type(<object>raw) is (str if text else bytes):
            out = _write_items(commands, text)
            if out == <object>raw:
                return out
            out = _t_resolve(list(commands), <object>raw)
            return out.decode("utf-8") if text else out
    return _t_encode_text(commands) if text else _t_encode_bytes(commands)


def encode_frame(commands):
    """``_typed.encode_frame``: see :func:`_encode_frame`."""
    return _encode_frame(commands, True)


def encode_frame_bytes(commands):
    """``_typed.encode_frame_bytes``: :func:`encode_frame` as UTF-8 bytes."""
    return _encode_frame(commands, False)
