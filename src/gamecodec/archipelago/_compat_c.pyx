# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compat codec, compiled twin of ``_compat_py.py``.

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
object that fails to build; a value the writer does not know and ``default``
does not replace; a string with a lone surrogate) is handed to the pure twin,
so results and errors are the pure twin's by construction.
"""

from cpython.dict cimport PyDict_GetItem, PyDict_Next, PyDict_SetItem, PyDict_Size
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_SetItem
from cpython.mem cimport PyMem_Free
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_SET_ITEM
from libc.math cimport isfinite, isnan
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcpy

import msgspec

from gamecodec.archipelago import _compat_py
from gamecodec.archipelago._models import (
    DEFAULT_MAX_DEPTH,
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
)

__all__ = ["decode", "encode", "encode_bytes", "past_depth"]

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object o, Py_ssize_t *size) except NULL
    object PyUnicode_DecodeUTF8(const char *s, Py_ssize_t size, const char *errors)
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
    bint PyFloat_Check(object o)
    int Py_DTSF_ADD_DOT_0
    bint PyUnicode_IS_COMPACT_ASCII(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_ssize_t PyDict_GET_SIZE(object o)

cdef extern from "_capi.h":
    object gamecodec_alloc_subtuple(object cls, Py_ssize_t n)


class _Fallback(Exception):
    """Internal: let the pure twin handle this input."""


# ---------------------------------------------------------------- decode

cdef object _json_decode = msgspec.json.Decoder().decode
cdef object _pure_decode = _compat_py.decode
cdef object _pure_hook = _compat_py.object_hook

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


cdef Py_ssize_t _scan_depth(const unsigned char *p, Py_ssize_t n, long max_depth) noexcept nogil:
    """The reference's bracket count over UTF-8 ``p[:n]``: 1, plus one per
    ``[``/``{`` outside strings, minus one per ``]``/``}``; the offset of the
    bracket where it first exceeds ``max_depth``, or -1. A string is skipped
    with memchr to its next quote not escaped (one after an even run of
    backslashes); an unterminated string runs to the end."""
    cdef Py_ssize_t i = 0, start, back
    cdef long depth = 1
    cdef unsigned char c
    cdef const unsigned char *quote
    while i < n:
        c = p[i]
        if c == 34:
            start = i + 1
            i = start
            while True:
                quote = <const unsigned char *>memchr(p + i, 34, n - i)
                if quote == NULL:
                    return -1
                i = quote - p
                back = i
                while back > start and p[back - 1] == 92:
                    back -= 1
                if (i - back) % 2 == 0:
                    break
                i += 1
        elif c == 91 or c == 123:
            depth += 1
            if depth > max_depth:
                return i
        elif c == 93 or c == 125:
            depth -= 1
        i += 1
    return -1


def past_depth(data, max_depth=DEFAULT_MAX_DEPTH):
    """The byte offset (in the UTF-8 text) of the bracket where the reference's
    nesting count first exceeds ``max_depth``, or -1 if it never does."""
    cdef const unsigned char *p
    cdef Py_ssize_t n
    cdef long limit = max_depth
    if type(data) is str:
        try:  # the str's own UTF-8 form, cached in it (msgspec reads the same one)
            p = <const unsigned char *>PyUnicode_AsUTF8AndSize(data, &n)
        except UnicodeEncodeError:  # a lone surrogate: counted as three bytes
            data = (<str>data).encode("utf-8", "surrogatepass")
    elif type(data) is not bytes:
        data = bytes(data)
    if type(data) is bytes:
        p = <const unsigned char *>PyBytes_AS_STRING(data)
        n = PyBytes_GET_SIZE(data)
    with nogil:
        n = _scan_depth(p, n, limit)
    return n


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
    MODE_PREPASS = 0   # the reference pre-pass applies
    MODE_RAW = 1       # inside a NamedTuple's fields: plain stdlib rules

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


cdef int _put_int(Buf *buf, object value) except -1:
    """Decimal digits, as ``int.__repr__`` writes them (ints past 64 bits through it)."""
    cdef long long v
    cdef unsigned long long u
    cdef char digits[24]
    cdef int at = 24
    cdef int overflow = 0
    v = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        _put_ascii(buf, int.__repr__(value))
        return 0
    u = <unsigned long long>(-(v + 1)) + 1 if v < 0 else <unsigned long long>v
    while True:
        at -= 1
        digits[at] = <char>(48 + u % 10)
        u //= 10
        if u == 0:
            break
    if v < 0:
        at -= 1
        digits[at] = b'-'
    _put(buf, digits + at, 24 - at)
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
            (("{" if i == 0 else ",") + _compat_py.encode(name) + ":").encode("utf-8")
            for i, name in enumerate(fields)
        ])
        suffix = (
            ("{" if not fields else ",") + '"class":' + _compat_py.encode(cls.__name__) + "}"
        ).encode("utf-8")
        layout = (keys, suffix, all(k.isascii() for k in keys) and suffix.isascii())
    # an entry, once made, is never replaced nor removed (a full cache stops
    # growing): a layout another thread just read stays alive without the GIL
    if len(_TUPLE_TYPES) < TYPE_CACHE_CAP:
        layout = _TUPLE_TYPES.setdefault(cls, layout)
    return layout


cdef int _put_named(Buf *buf, object obj, int depth, object default) except -1:
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
        _put_obj(buf, <object>PyTuple_GET_ITEM(obj, i), MODE_RAW, depth + 1, default)
    _put(buf, suffix, len(suffix))
    return 0



cdef int _put_items(Buf *buf, object items, int mode, int depth, object default) except -1:
    """A set or frozenset as an array, in iteration order."""
    cdef bint first = True
    cdef object item
    _putc(buf, b'[')
    for item in items:
        if not first:
            _putc(buf, b',')
        first = False
        _put_obj(buf, item, mode, depth + 1, default)
    _putc(buf, b']')
    return 0


cdef int _put_obj(Buf *buf, object obj, int mode, int depth, object default) except -1:
    """Write one value under ``mode`` (see MODE_*)."""
    cdef type cls = type(obj)
    cdef Py_ssize_t i, n, pos = 0
    cdef PyObject *key
    cdef PyObject *value
    cdef object item
    cdef bint first
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
        # ``default`` may change any container: each item is held while it is
        # written, and a container whose size changed goes to the pure twin
        n = PyDict_Size(obj)
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
                item = <object>value
                _put_obj(buf, item, mode, depth + 1, default)
                if PyDict_Size(obj) != n:
                    raise _Fallback()
        _putc(buf, b'}')
    elif cls is list:
        n = PyList_GET_SIZE(obj)
        _putc(buf, b'[')
        for i in range(n):
            if i:
                _putc(buf, b',')
            value = PyList_GET_ITEM(obj, i)
            if Py_TYPE(value) == <PyTypeObject *>int:
                _put_int(buf, <object>value)
            else:
                item = <object>value
                _put_obj(buf, item, mode, depth + 1, default)
                if PyList_GET_SIZE(obj) != n:
                    raise _Fallback()
        _putc(buf, b']')
    elif cls is tuple or (mode == MODE_RAW and PyTuple_Check(obj)):
        n = PyTuple_GET_SIZE(obj)
        _putc(buf, b'[')
        for i in range(n):
            if i:
                _putc(buf, b',')
            _put_obj(buf, <object>PyTuple_GET_ITEM(obj, i), mode, depth + 1, default)
        _putc(buf, b']')
    elif PyTuple_Check(obj):
        _put_named(buf, obj, depth, default)
    elif mode != MODE_RAW and (cls is set or cls is frozenset):
        _put_items(buf, obj, mode, depth, default)
    elif PyUnicode_Check(obj):
        _put_str(buf, obj)
    elif PyLong_Check(obj):
        _put_int(buf, obj)
    elif PyFloat_Check(obj):
        _put_float(buf, PyFloat_AS_DOUBLE(obj))
    elif isinstance(obj, (list, dict)) or (mode != MODE_RAW and isinstance(obj, (set, frozenset))):
        raise _Fallback()  # container subclasses: the pure twin's rules
    elif default is not None:
        # what ``default`` returns is written by the pre-pass rules (as the pure twin does)
        _put_obj(buf, default(obj), MODE_PREPASS, depth + 1, default)
    else:
        raise _Fallback()
    return 0


def encode(obj, *, default=None):
    """``NetUtils.encode``: the wire text of ``obj``; ``default(value)`` replaces a
    value the encoder does not know (as in ``json``)."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_obj(&buf, obj, MODE_PREPASS, 0, default)
        return _text(&buf)
    except Exception:
        return _compat_py.encode(obj, default=default)
    finally:
        _release(&buf)


def encode_bytes(obj, *, default=None):
    """:func:`encode` as UTF-8 bytes."""
    cdef Buf buf
    _init(&buf)
    try:
        _put_obj(&buf, obj, MODE_PREPASS, 0, default)
        return PyBytes_FromStringAndSize(buf.data, buf.length)
    except Exception:
        return _compat_py.encode_bytes(obj, default=default)
    finally:
        _release(&buf)
