# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Avara datagram codec, compiled twin of ``_codec_py.py``.

Both twins give the same results and raise the same errors, with the same
messages and offsets (``tests/avara/test_parity.py`` holds them together).
Multi-byte fields are read with explicit little-endian shifts, never pointer
casts, so big-endian hosts decode the same bytes the same way.
"""

from cpython.bytes cimport (
    PyBytes_AS_STRING,
    PyBytes_CheckExact,
    PyBytes_FromStringAndSize,
    PyBytes_GET_SIZE,
)
from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.long cimport PyLong_Check
from cpython.list cimport PyList_GET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdlib cimport free, malloc
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy

import threading as _threading

from gamecodec.avara import _errors as msg
from gamecodec.avara._models import (
    DEFAULT_VERSION,
    Batch,
    Command,
    Datagram,
)
from gamecodec.avara._models import Layout
from gamecodec.avara.punch import decode_punch
from gamecodec.errors import DecodeError

_DEFAULT_VERSION = DEFAULT_VERSION
_ONE = 1
_CURRENT = Layout.CURRENT

__all__ = [
    "canonical_flags",
    "crc16_kermit",
    "datagram_crc",
    "decode",
    "decode_array",
    "decode_many",
    "encode",
    "encode_into",
]

cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object obj, int *overflow) except? -1

cdef extern from "_capi.h":
    object gamecodec_alloc_subtuple(object cls, Py_ssize_t n)
    const uint8_t *gamecodec_bytes_of(PyObject *o, Py_ssize_t *size) noexcept


cdef bint _fast_tuples = True


cdef inline void _fill(object t, Py_ssize_t i, object value) noexcept:
    Py_INCREF(value)
    PyTuple_SET_ITEM(t, i, value)


cdef object _named(object cls, tuple items):
    """cls(*items) for a NamedTuple class, without calling its __new__."""
    cdef Py_ssize_t i, n = len(items)
    obj = gamecodec_alloc_subtuple(cls, n)
    for i in range(n):
        _fill(obj, i, items[i])
    return obj


cdef enum:
    DEFAULT_VERSION_C = 18
    MAX_DATA_LEN = 984
    MAX_DATAGRAM = 16384
    MAX_COMMAND = 17 + MAX_DATA_LEN  # the longest command on the wire
    PUNCH_SIZE = 7
    ST_OK = 0
    ST_CRC_MISMATCH = 1
    ST_SHORT = 2
    ST_BAD_DATA_LEN = 3
    ST_TRUNCATED = 4
    ST_PUNCH = 5
    ST_OVERSIZE = 6


cdef inline uint16_t _le16(const uint8_t *q) noexcept nogil:
    return q[0] | (q[1] << 8)


cdef inline uint32_t _le32(const uint8_t *q) noexcept nogil:
    return _le16(q) | (<uint32_t>_le16(q + 2) << 16)


# --- CRC-16/KERMIT, slice-by-4 -------------------------------------------

cdef uint16_t _T0[256]
cdef uint16_t _T1[256]
cdef uint16_t _T2[256]
cdef uint16_t _T3[256]


cdef void _init_tables() noexcept:
    cdef int i, k
    cdef uint16_t c
    for i in range(256):
        c = <uint16_t>i
        for k in range(8):
            c = (c >> 1) ^ 0x8408 if c & 1 else c >> 1
        _T0[i] = c
    for i in range(256):
        _T1[i] = (_T0[i] >> 8) ^ _T0[_T0[i] & 0xFF]
        _T2[i] = (_T1[i] >> 8) ^ _T0[_T1[i] & 0xFF]
        _T3[i] = (_T2[i] >> 8) ^ _T0[_T2[i] & 0xFF]


_init_tables()


cdef uint16_t crc16(const uint8_t *p, Py_ssize_t start, Py_ssize_t end,
                    uint16_t crc) noexcept nogil:
    """CRC-16/KERMIT of p[start:end], continuing from crc, four bytes a step."""
    p += start
    cdef Py_ssize_t n = end - start
    while n >= 4:
        crc ^= _le16(p)
        crc = _T3[crc & 0xFF] ^ _T2[crc >> 8] ^ _T1[p[2]] ^ _T0[p[3]]
        p += 4
        n -= 4
    while n > 0:
        crc = (crc >> 8) ^ _T0[(crc ^ p[0]) & 0xFF]
        p += 1
        n -= 1
    return crc


cdef inline uint16_t _datagram_crc(const uint8_t *p, Py_ssize_t size, uint16_t version) noexcept nogil:
    cdef uint8_t head[2]
    head[0] = version & 0xFF
    head[1] = version >> 8
    return crc16(p, 2, size, crc16(head, 0, 2, 0))


# --- argument helpers -------------------------------------------------------

cdef bint _int_in(object value, long long low, long long high, long long *out) except -1:
    """Whether value is an int in low..high (stored in out); never raises for
    other values."""
    cdef int overflow = 0
    cdef long long v
    if not PyLong_Check(value):
        return False
    v = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow or v < low or v > high:
        return False
    out[0] = v
    return True


cdef inline bytes _as_bytes(object data):
    if PyBytes_CheckExact(data):
        return <bytes>data
    return memoryview(data).tobytes()


cdef inline bytes _payload(object data):
    """data as bytes; longer than MAX_DATAGRAM raises before any copy."""
    cdef Py_ssize_t size
    if PyBytes_CheckExact(data):
        size = PyBytes_GET_SIZE(data)
        if size > MAX_DATAGRAM:
            raise msg.oversize(size)
        return <bytes>data
    view = memoryview(data)
    if view.nbytes > MAX_DATAGRAM:
        raise msg.oversize(view.nbytes)
    return view.tobytes()


cdef int _version_arg(object version) except -2:
    """-1 for None (no check), else the version; raises like the pure twin."""
    cdef long long v
    if version is _DEFAULT_VERSION:
        return DEFAULT_VERSION_C
    if version is None:
        return -1
    if not _int_in(version, 0, 0xFFFF, &v):
        raise msg.bad_version(version)
    return <int>v


cdef bint _is_current(object layout) except -1:
    cdef long long v
    if layout is _ONE or layout is _CURRENT:
        return True
    if not _int_in(layout, 0, 1, &v):
        raise msg.bad_layout(layout)
    return v == 1


# --- public helpers ---------------------------------------------------------

def crc16_kermit(data, crc=0):
    """CRC-16/KERMIT of ``data`` (reflected 0x1021, no final XOR), continuing
    from ``crc``. ``crc16_kermit(b"123456789") == 0x2189``."""
    cdef long long start
    if not _int_in(crc, 0, 0xFFFF, &start):
        raise ValueError(f"crc {crc} outside 0..65535")
    cdef bytes buf = _as_bytes(data)
    return crc16(<const uint8_t *>PyBytes_AS_STRING(buf), 0, PyBytes_GET_SIZE(buf),
                 <uint16_t>start)


def datagram_crc(data, version=DEFAULT_VERSION):
    """The checksum a datagram should carry in bytes 0-1: CRC-16/KERMIT over
    the network version (u16 LE) followed by ``data[2:]``."""
    cdef long long v
    if not _int_in(version, 0, 0xFFFF, &v):
        raise msg.bad_version(version)
    cdef bytes buf = _as_bytes(data)
    return _datagram_crc(<const uint8_t *>PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf),
                         <uint16_t>v)


# --- reading commands ----------------------------------------------------------

cdef inline Cmd _unparsed(Cmd c, int field, Py_ssize_t at, Py_ssize_t n) noexcept nogil:
    c.end = -1
    c.field = field
    c.data_pos = at
    c.n = n
    return c


cdef Cmd parse_command(const uint8_t *p, Py_ssize_t size, Py_ssize_t pos,
                       bint current) noexcept nogil:
    """The command at p[pos:size], read as the game's reader does (field
    order and precedence); end -1 (and field) if it does not."""
    return _read_command(p, size, pos, current)


cdef inline Cmd _read_command(const uint8_t *p, Py_ssize_t size, Py_ssize_t pos,
                              bint current) noexcept nogil:
    """parse_command, inlined into this module's decoders."""
    cdef int head = 5 if current else 4
    cdef uint8_t flags
    cdef Cmd c
    c.serial = c.send_count = c.flags = 0
    c.command = c.distribution = c.p3 = c.p2 = c.p1 = c.sender = 0
    c.n = 0
    c.field = -1
    if size - pos < head:
        return _unparsed(c, FIELD_HEADER, pos, 0)
    c.serial = _le16(p + pos)
    if current:
        c.send_count = p[pos + 2]
    flags = p[pos + head - 2]
    c.flags = flags
    c.command = <int8_t>p[pos + head - 1]
    pos += head
    if flags & 0x40:
        if size - pos < 2:
            return _unparsed(c, FIELD_DISTRIBUTION, pos, 0)
        c.distribution = <int16_t>_le16(p + pos)
        pos += 2
    if flags & 0x04:
        if size - pos < 4:
            return _unparsed(c, FIELD_P3, pos, 0)
        c.p3 = <int32_t>_le32(p + pos)
        pos += 4
    elif flags & 0x20:
        if size - pos < 2:
            return _unparsed(c, FIELD_P3, pos, 0)
        c.p3 = _le16(p + pos)
        pos += 2
    if flags & 0x02:
        if size - pos < 2:
            return _unparsed(c, FIELD_P2, pos, 0)
        c.p2 = <int16_t>_le16(p + pos)
        pos += 2
    if flags & 0x08:
        if size - pos < 2:
            return _unparsed(c, FIELD_DATA_LEN, pos, 0)
        c.n = <int16_t>_le16(p + pos)
        if c.n < 0 or c.n > MAX_DATA_LEN:
            return _unparsed(c, FIELD_BAD_DATA_LEN, pos, c.n)
        pos += 2
    elif flags & 0x10:
        if size - pos < 1:
            return _unparsed(c, FIELD_DATA_LEN, pos, 0)
        c.n = p[pos]
        pos += 1
    if flags & 0x01:
        if size - pos < 1:
            return _unparsed(c, FIELD_P1, pos, 0)
        c.p1 = <int8_t>p[pos]
        pos += 1
    if flags & 0x80:
        if size - pos < 1:
            return _unparsed(c, FIELD_SENDER, pos, 0)
        c.sender = <int8_t>p[pos]
        pos += 1
    if size - pos < c.n:
        return _unparsed(c, FIELD_DATA, pos, c.n)
    c.data_pos = pos
    c.end = pos + c.n
    return c


cdef inline bint _canonical(const Cmd *c) noexcept nogil:
    """Whether the game's writer would produce this flag byte."""
    return c.flags == writer_flags(c.flags & 0x40, c.p3, c.p2, c.n, c.p1, c.flags & 0x80)


_SMALL = tuple(range(-128, 256))


cdef inline object _small(int v):
    """A cached int object for -128..255 (CPython caches only -5..256)."""
    return (<tuple>_SMALL)[v + 128]


cdef object command_object(Cmd c, const uint8_t *p):
    """The Command for c, its data from p."""
    cdef uint8_t flags = c.flags
    if not _fast_tuples:
        return tuple.__new__(Command, (
            c.serial, c.send_count, flags, c.command,
            c.distribution if flags & 0x40 else None, c.p3, c.p2, c.p1,
            c.sender if flags & 0x80 else None,
            PyBytes_FromStringAndSize(<const char *>p + c.data_pos, c.n),
        ))
    obj = gamecodec_alloc_subtuple(Command, 10)
    _fill(obj, 0, c.serial)
    _fill(obj, 1, _small(c.send_count))
    _fill(obj, 2, _small(flags))
    _fill(obj, 3, _small(c.command))
    _fill(obj, 4, c.distribution if flags & 0x40 else None)
    _fill(obj, 5, c.p3)
    _fill(obj, 6, c.p2)
    _fill(obj, 7, _small(c.p1))
    _fill(obj, 8, _small(c.sender) if flags & 0x80 else None)
    _fill(obj, 9, PyBytes_FromStringAndSize(<const char *>p + c.data_pos, c.n))
    return obj


cdef list _command_list(const Cmd *cmds, Py_ssize_t k, const uint8_t *p):
    return [command_object(cmds[i], p) for i in range(k)]


cdef inline object _datagram(object crc_ok, int ack, object bitmap, object commands):
    if not _fast_tuples:
        return tuple.__new__(Datagram, (crc_ok, ack, bitmap, commands))
    obj = gamecodec_alloc_subtuple(Datagram, 4)
    _fill(obj, 0, crc_ok)
    _fill(obj, 1, ack)
    _fill(obj, 2, bitmap)
    _fill(obj, 3, commands)
    return obj


def _check_fast_tuples():
    """Use the direct NamedTuple construction only if it is indistinguishable
    from tuple.__new__ on this interpreter (hash cache, equality, type)."""
    global _fast_tuples
    items = (1, 2, 3, 4, None, 6, 7, 8, None, b"x")
    slow = tuple.__new__(Command, items)
    fast = _named(Command, items)
    _fast_tuples = (type(fast) is Command and fast == slow and hash(fast) == hash(slow)
                    and hash(fast) == hash(items))


_check_fast_tuples()


def _uses_fast_tuples():
    """Whether NamedTuples are built directly (for tests)."""
    return _fast_tuples


_SHORT = Datagram(False, None, None, ())
_EMPTY = ()


def decode(data, *, version=DEFAULT_VERSION, layout=1, bint strict=False):
    """Decode one UDP payload.

    Exactly 7 bytes is a :class:`HolePunch`. Shorter than 4 bytes, or a
    checksum that does not match ``version``, gives ``crc_ok=False`` and no
    ack or commands (``strict=True`` raises instead); ``version=None`` skips
    the check (``crc_ok=None``). A command that runs past the end or has a bad
    dataLen raises :class:`~gamecodec.DecodeError`, with what was decoded
    before it in ``.partial``. ``strict=True`` also refuses flag bytes the
    game's writer never produces. Longer than ``MAX_DATAGRAM`` (the game's
    receive buffer) raises :class:`~gamecodec.avara.OversizeDatagramError`.
    """
    cdef bytes buf = _payload(data)
    cdef int v = _version_arg(version)
    return _decode(buf, v, version, _is_current(layout), strict)


def decode_many(datagrams, *, version=DEFAULT_VERSION, layout=1, bint strict=False):
    """Decode each datagram as :func:`decode` does, independently.

    A datagram that does not decode gives its :class:`~gamecodec.DecodeError`
    in its place in the list (the others are unaffected).
    """
    cdef int v = _version_arg(version)
    cdef bint current = _is_current(layout)
    cdef list out = []
    cdef bytes buf
    for item in datagrams:
        try:
            buf = _payload(item)
            out.append(_decode(buf, v, version, current, strict))
        except DecodeError as exc:
            out.append(exc)
    return out


cdef object _decode(bytes buf, int v, object version, bint current, bint strict):
    """decode() of buf with checked arguments: v is the version (-1: no check)."""
    cdef Py_ssize_t size = PyBytes_GET_SIZE(buf)
    cdef const uint8_t *p = <const uint8_t *>PyBytes_AS_STRING(buf)
    cdef int head = 5 if current else 4
    cdef int ack
    cdef Py_ssize_t pos
    if size == PUNCH_SIZE:
        return decode_punch(buf)
    if size < 4:
        if strict:
            raise msg.short_datagram(size)
        return _SHORT
    crc_ok = None
    if v >= 0:
        if _datagram_crc(p, size, <uint16_t>v) != _le16(p):
            if strict:
                raise msg.crc_mismatch(version)
            return _SHORT
        crc_ok = True
    ack = _le16(p + 2)
    bitmap = None
    pos = 4
    if ack & 1:
        if size < 8:
            raise msg.truncated("ack bitmap", 4, size - 4, 4, Datagram(crc_ok, ack, None, ()))
        bitmap = <int32_t>_le32(p + 4)
        pos = 8
    if pos == size:
        return _datagram(crc_ok, ack, bitmap, _EMPTY)
    cdef Cmd local[8]
    cdef Cmd *cmds = local
    cdef Cmd *grown
    cdef Py_ssize_t k = 0, cap = 8, i
    try:
        while pos < size:
            if k == cap:
                grown = <Cmd *>malloc((size // 4 + 1) * sizeof(Cmd))
                if grown == NULL:
                    raise MemoryError()
                memcpy(grown, cmds, k * sizeof(Cmd))
                cmds = grown
                cap = size // 4 + 1
            cmds[k] = _read_command(p, size, pos, current)
            if cmds[k].end < 0:
                raise msg.unparsed(
                    cmds[k].field, cmds[k].flags, cmds[k].n, cmds[k].data_pos, size, head,
                    msg.so_far(crc_ok, ack, bitmap, _command_list(cmds, k, p)),
                )
            if strict and not _canonical(&cmds[k]):
                raise msg.non_canonical(
                    cmds[k].flags,
                    msg.non_canonical_reason(
                        cmds[k].flags, cmds[k].p1, cmds[k].p2, cmds[k].p3, cmds[k].n),
                    pos + head - 2, msg.so_far(crc_ok, ack, bitmap, _command_list(cmds, k, p)),
                )
            pos = cmds[k].end
            k += 1
        commands = PyTuple_New(k)
        for i in range(k):
            _fill(commands, i, command_object(cmds[i], p))
    finally:
        if cmds != local:
            free(cmds)
    return _datagram(crc_ok, ack, bitmap, commands)


cdef packed struct CommandRow:
    uint32_t datagram
    uint16_t serial
    uint8_t send_count
    uint8_t flags
    int8_t command
    int16_t distribution
    int8_t p1
    int16_t p2
    int32_t p3
    int8_t sender
    uint32_t data_offset
    uint16_t data_length
    uint8_t has_distribution
    uint8_t has_sender


cdef packed struct DatagramRow:
    uint8_t status
    uint16_t ack
    int32_t ack_bitmap
    uint32_t first_command
    uint32_t command_count
    uint32_t error_offset


# (numpy, COMMAND_DTYPE, DATAGRAM_DTYPE), made by the first decode_array call:
# published once, as one tuple, under the lock, and never replaced
cdef object _numpy_state = None
cdef object _numpy_lock = _threading.Lock()


cdef tuple _load_numpy():
    """Import numpy and the dtypes, and check they match the C rows."""
    global _numpy_state
    with _numpy_lock:
        if _numpy_state is None:
            import numpy
            from gamecodec.avara._arrays import COMMAND_DTYPE, DATAGRAM_DTYPE
            if (sizeof(CommandRow) != COMMAND_DTYPE.itemsize
                    or sizeof(DatagramRow) != DATAGRAM_DTYPE.itemsize):
                raise ImportError("COMMAND_DTYPE or DATAGRAM_DTYPE does not match the compiled rows")
            _numpy_state = (numpy, COMMAND_DTYPE, DATAGRAM_DTYPE)
        return _numpy_state


cdef inline void _decode_one(const uint8_t *p, Py_ssize_t size, uint32_t index, int version,
                             bint current, DatagramRow *row, CommandRow *rows,
                             Py_ssize_t *count) noexcept nogil:
    """Decode one datagram into row and rows[count...]; rows has room for
    size // 4 + 1 more commands."""
    cdef Py_ssize_t pos = 4
    cdef Cmd c
    cdef CommandRow *r
    row.status = ST_OK
    row.ack = 0
    row.ack_bitmap = 0
    row.first_command = <uint32_t>count[0]
    row.command_count = 0
    row.error_offset = 0
    if size > MAX_DATAGRAM:
        row.status = ST_OVERSIZE
        row.error_offset = MAX_DATAGRAM
        return
    if size == PUNCH_SIZE:
        row.status = ST_PUNCH
        return
    if size < 4:
        row.status = ST_SHORT
        return
    if version >= 0 and _datagram_crc(p, size, <uint16_t>version) != _le16(p):
        row.status = ST_CRC_MISMATCH
        return
    row.ack = _le16(p + 2)
    if row.ack & 1:
        if size < 8:
            row.status = ST_TRUNCATED
            row.error_offset = 4
            return
        row.ack_bitmap = <int32_t>_le32(p + 4)
        pos = 8
    while pos < size:
        c = _read_command(p, size, pos, current)
        if c.end < 0:
            row.status = ST_BAD_DATA_LEN if c.field == FIELD_BAD_DATA_LEN else ST_TRUNCATED
            row.error_offset = <uint32_t>c.data_pos
            return
        r = rows + count[0]
        r.datagram = index
        r.serial = c.serial
        r.send_count = c.send_count
        r.flags = c.flags
        r.command = c.command
        r.distribution = c.distribution
        r.p1 = c.p1
        r.p2 = c.p2
        r.p3 = c.p3
        r.sender = c.sender
        r.data_offset = <uint32_t>c.data_pos
        r.data_length = <uint16_t>c.n
        r.has_distribution = (c.flags & 0x40) != 0
        r.has_sender = (c.flags & 0x80) != 0
        count[0] += 1
        row.command_count += 1
        pos = c.end


def decode_array(datagrams, *, version=DEFAULT_VERSION, layout=1):
    """Decode many datagrams into one numpy structured array of commands
    (``COMMAND_DTYPE``) and one row per datagram (``DATAGRAM_DTYPE``).

    A bad datagram does not stop the batch: its row says what went wrong and
    where, and the commands decoded before the error are kept.
    """
    state = _numpy_state
    if state is None:
        state = _load_numpy()
    np, command_dtype, datagram_dtype = <tuple>state
    cdef int v = _version_arg(version)
    cdef bint current = _is_current(layout)
    # Our own copy: nothing else can resize it while we hold borrowed items.
    cdef list items = list(datagrams)
    cdef Py_ssize_t total = len(items), i
    cdef Py_ssize_t count = 0, room
    cdef Py_ssize_t capacity = total + 16
    cdef Py_buffer out_view, cmd_view, new_view
    cdef bytes buf
    cdef const uint8_t *p
    cdef Py_ssize_t size
    outcomes = np.empty(total, dtype=datagram_dtype)
    commands = np.empty(capacity, dtype=command_dtype)
    PyObject_GetBuffer(outcomes, &out_view, PyBUF_SIMPLE | PyBUF_WRITABLE)
    try:
        PyObject_GetBuffer(commands, &cmd_view, PyBUF_SIMPLE | PyBUF_WRITABLE)
        try:
            for i in range(total):
                p = gamecodec_bytes_of(PyList_GET_ITEM(items, i), &size)
                if p == NULL:
                    view = memoryview(items[i])
                    if view.nbytes > MAX_DATAGRAM:
                        size = view.nbytes  # _decode_one only reads the size
                    else:
                        buf = view.tobytes()
                        p = <const uint8_t *>PyBytes_AS_STRING(buf)
                        size = PyBytes_GET_SIZE(buf)
                room = 0 if size > MAX_DATAGRAM else size // 4 + 1
                if count + room > capacity:
                    capacity = max(2 * capacity, count + room)
                    grown = np.empty(capacity, dtype=command_dtype)
                    PyObject_GetBuffer(grown, &new_view, PyBUF_SIMPLE | PyBUF_WRITABLE)
                    memcpy(new_view.buf, cmd_view.buf, count * sizeof(CommandRow))
                    PyBuffer_Release(&cmd_view)
                    cmd_view = new_view
                    commands = grown
                _decode_one(p, size, <uint32_t>i, v, current,
                            <DatagramRow *>out_view.buf + i, <CommandRow *>cmd_view.buf, &count)
        finally:
            PyBuffer_Release(&cmd_view)
    finally:
        PyBuffer_Release(&out_view)
    commands.resize(count, refcheck=False)
    return Batch(commands, outcomes)


# --- writing commands ----------------------------------------------------------

cdef int writer_flags(bint distribution, long long p3, long long p2, Py_ssize_t n,
                      long long p1, bint sender) noexcept nogil:
    """The flag byte the game's writer computes for these values."""
    cdef int flags = 0x40 if distribution else 0
    if p3 < 0 or p3 > 0xFFFF:
        flags |= 0x04
    elif p3:
        flags |= 0x20
    if p2:
        flags |= 0x02
    if n > 255:
        flags |= 0x08
    elif n:
        flags |= 0x10
    if p1:
        flags |= 0x01
    if sender:
        flags |= 0x80
    return flags


cdef inline Py_ssize_t _put16(uint8_t *out, Py_ssize_t pos, uint32_t v) noexcept nogil:
    out[pos] = v & 0xFF
    out[pos + 1] = (v >> 8) & 0xFF
    return pos + 2


cdef inline Py_ssize_t _put32(uint8_t *out, Py_ssize_t pos, uint32_t v) noexcept nogil:
    return _put16(out, _put16(out, pos, v), v >> 16)


cdef Py_ssize_t write_acks(uint8_t *out, int ack, uint32_t bitmap) noexcept nogil:
    """Write the ack block at out[2:] (the bitmap only after an odd
    ack); return the offset after it."""
    if ack & 1:
        return _put32(out, _put16(out, 2, <uint32_t>ack), bitmap)
    return _put16(out, 2, <uint32_t>ack)


cdef Py_ssize_t write_command(uint8_t *out, Py_ssize_t pos, bint current, int serial,
                              int send_count, int flags, int command, int distribution,
                              int p3, int p2, int p1, int sender, bytes data) noexcept:
    """Write a command at out[pos:] as its flag byte says, each value
    as its low bytes; return the offset after it. out has room for it."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    pos = _put16(out, pos, <uint32_t>serial)
    if current:
        out[pos] = <uint8_t>send_count
        pos += 1
    out[pos] = <uint8_t>flags
    out[pos + 1] = <uint8_t>command
    pos += 2
    if flags & 0x40:
        pos = _put16(out, pos, <uint32_t>distribution)
    if flags & 0x04:
        pos = _put32(out, pos, <uint32_t>p3)
    elif flags & 0x20:
        pos = _put16(out, pos, <uint32_t>p3)
    if flags & 0x02:
        pos = _put16(out, pos, <uint32_t>p2)
    if flags & 0x08:
        pos = _put16(out, pos, <uint32_t>n)
    elif flags & 0x10:
        out[pos] = <uint8_t>n
        pos += 1
    if flags & 0x01:
        out[pos] = <uint8_t>p1
        pos += 1
    if flags & 0x80:
        out[pos] = <uint8_t>sender
        pos += 1
    memcpy(out + pos, PyBytes_AS_STRING(data), n)
    return pos + n


# --- encoding -----------------------------------------------------------------

def canonical_flags(command):
    """The flag byte the game's writer computes for these values."""
    return writer_flags(command.distribution is not None, command.p3, command.p2,
                        len(command.data), command.p1, command.sender is not None)


cdef long long _checked(Py_ssize_t index, str name, object value, long long low,
                        long long high) except? -1:
    cdef long long v
    if not _int_in(value, low, high, &v):
        raise msg.out_of_range(index, name, value, low, high)
    return v


def encode(datagram, commands=(), ack_bitmap=None, *, version=DEFAULT_VERSION,
                    layout=1, bint keep_flags=False):
    """Encode a :class:`Datagram` (or an ack, commands and bitmap) to bytes.

    Flags are computed with the game's writer rules; ``keep_flags=True``
    writes each command's own flag byte instead (so a decoded non-canonical
    datagram re-encodes byte-exact), refusing values those flags cannot
    carry. The checksum is computed for ``version``.
    """
    cdef long long v, ack, bm, serial, send_count, cmd_id, dist = 0, p3, p2, p1, sender = 0
    cdef long long flags
    cdef Py_ssize_t index, n, size, at
    cdef tuple cmd
    # past MAX_DATAGRAM commands are written over the last MAX_COMMAND bytes,
    # only to be counted: the datagram is refused once all are checked
    cdef uint8_t out[MAX_DATAGRAM + MAX_COMMAND]
    if isinstance(datagram, Datagram):
        ack_obj = (<tuple>datagram)[1]
        bitmap = (<tuple>datagram)[2]
        cmds = (<tuple>datagram)[3]
    else:
        ack_obj = datagram
        bitmap = ack_bitmap
        cmds = tuple(commands)
    if not _int_in(version, 0, 0xFFFF, &v):
        raise msg.bad_encode_version(version)
    cdef bint current = _is_current(layout)
    if not _int_in(ack_obj, 0, 0xFFFF, &ack):
        raise msg.bad_ack(ack_obj)
    bm = 0
    if ack & 1:
        if bitmap is None:
            raise msg.missing_bitmap(ack_obj)
        if not _int_in(bitmap, -(1 << 31), 0xFFFFFFFF, &bm):
            raise msg.bad_bitmap(bitmap)
    elif bitmap is not None:
        raise msg.unwanted_bitmap(ack_obj)
    _put16(out, 0, <uint32_t>v)
    size = write_acks(out, <int>ack, <uint32_t>bm)
    index = 0
    for item in cmds:
        if not isinstance(item, tuple) or len(<tuple>item) != 10:
            raise msg.not_a_command(index)
        cmd = <tuple>item
        serial = _checked(index, "serial", cmd[0], 0, 0xFFFF)
        send_count = _checked(index, "send_count", cmd[1], 0, 0xFF if current else 0)
        cmd_id = _checked(index, "command", cmd[3], -128, 127)
        dist_obj = cmd[4]
        if dist_obj is not None:
            dist = _checked(index, "distribution", dist_obj, -0x8000, 0x7FFF)
        p3 = _checked(index, "p3", cmd[5], -(1 << 31), (1 << 31) - 1)
        p2 = _checked(index, "p2", cmd[6], -0x8000, 0x7FFF)
        p1 = _checked(index, "p1", cmd[7], -128, 127)
        sender_obj = cmd[8]
        if sender_obj is not None:
            sender = _checked(index, "sender", sender_obj, -128, 127)
        data = cmd[9]
        if not isinstance(data, bytes):
            raise msg.data_not_bytes(index, data)
        n = PyBytes_GET_SIZE(<bytes>data)
        if n > MAX_DATA_LEN:
            raise msg.data_too_long(index, n)
        if keep_flags:
            flags = _checked(index, "flags", cmd[2], 0, 255)
            if bool(flags & 0x40) != (dist_obj is not None):
                raise msg.flags_disagree(index, flags, f"distribution {dist_obj}")
            if not flags & 0x04 and (p3 < 0 or p3 > 0xFFFF if flags & 0x20 else p3 != 0):
                raise msg.flags_disagree(index, flags, f"p3 {p3}")
            if not flags & 0x02 and p2 != 0:
                raise msg.flags_disagree(index, flags, f"p2 {p2}")
            if not flags & 0x08 and (n > 255 if flags & 0x10 else n != 0):
                raise msg.flags_disagree(index, flags, f"{n} data bytes")
            if not flags & 0x01 and p1 != 0:
                raise msg.flags_disagree(index, flags, f"p1 {p1}")
            if bool(flags & 0x80) != (sender_obj is not None):
                raise msg.flags_disagree(index, flags, f"sender {sender_obj}")
        else:
            flags = writer_flags(dist_obj is not None, p3, p2, n, p1, sender_obj is not None)
        at = size if size <= MAX_DATAGRAM else MAX_DATAGRAM
        size += write_command(out, at, current, <int>serial, <int>send_count, <int>flags,
                              <int>cmd_id, <int>dist, <int>p3, <int>p2, <int>p1, <int>sender,
                              <bytes>data) - at
        index += 1
    if size > MAX_DATAGRAM:
        raise msg.too_big(size)
    if size == PUNCH_SIZE:
        raise msg.punch_sized()
    cdef uint16_t crc = crc16(out, 0, size, 0)
    out[0] = crc & 0xFF
    out[1] = crc >> 8
    return PyBytes_FromStringAndSize(<const char *>out, size)


def encode_into(datagram, buf, offset=0, commands=(), ack_bitmap=None, *,
                version=DEFAULT_VERSION, layout=1, keep_flags=False):
    """Encode into ``buf`` at ``offset`` (growing it as needed); return the
    number of bytes written."""
    if not isinstance(buf, bytearray):
        raise TypeError("buf must be a bytearray")
    if not 0 <= offset <= len(buf):
        raise ValueError(f"offset {offset} outside 0..{len(buf)}")
    out = encode(
        datagram, commands, ack_bitmap, version=version, layout=layout, keep_flags=keep_flags
    )
    buf[offset:offset + len(out)] = out
    return len(out)
