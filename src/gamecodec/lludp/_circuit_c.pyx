# cython: language_level=3
"""The LLUDP circuit, compiled twin of ``_circuit_py.py`` (hand-written).

The same algorithm, step for step, as the pure twin (the readable reference;
the parity tests hold the two together); only the containers differ. The
per-packet bookkeeping runs on C data structures instead of Python ones:

* the pending reliable packets (the pure twin's ``_unacked`` dict of
  ``_Pending`` records) are a C insertion-ordered hash map keyed by sequence
  number: an array of records in insertion order (wire bytes, where its acks
  begin, resend time, resend count) and an open-addressing index into it
  (linear probing, deletion by backward shift), so retiring one is O(1) with
  no Python object made or looked up, and the oldest one is the first live
  record, as a dict's first key;
* the resend timeline (a list of sequence numbers and its head) is a C array
  of ``uint32``;
* the duplicate window (the pure twin's ``_seen`` set and its ``_order``
  queue) is a C ring of ``uint32`` in arrival order plus an open-addressing
  set of the same numbers: the same window size, the same eviction (oldest
  first) and the same pruning.

* the acks owed (the pure twin's ``_acks`` list) are a C array of
  ``uint32`` with a head index. With the compiled codec, ``send`` passes them
  to its C entry point (the ``_ENCODE_PACKET_C`` capsule: the same bytes and
  errors as ``encode_packet``), so no int object is made for an owed ack;
  with any other codec they are handed to ``encode_packet`` as the list the
  pure twin passes. ``receive_datagram`` likewise calls the compiled codec's
  decode through its C entry point (the ``_DECODE_C`` capsule);
* the pure twin's table of control messages by a packet's byte 6 has two
  more here, by bytes 7 and 8 of numbers that start 0xFF, so that a Low
  message (0xFF 0xFF ...) needs no name lookup either.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memmove, memset

import math
import struct

from gamecodec import _accel
from gamecodec._clock import MAX_TIME, check_time
from gamecodec.errors import DecodeError, EncodeError, LocalProtocolError
from gamecodec.lludp.template import default_template

__all__ = [
    "ACK_COLLECT_TIME",
    "AVERAGED_PING_ALPHA",
    "AVERAGED_PING_MAX",
    "AVERAGED_PING_MIN",
    "CIRCUIT_TIMEOUT",
    "COLLECT_ACK_TIME_MAX",
    "DUPLICATE_WINDOW",
    "INITIAL_PING",
    "MAX_APPENDED_ACKS",
    "MAX_DATAGRAM",
    "MAX_OUT_PACKET_ID",
    "MAX_PACKET_ACK_IDS",
    "MAX_RESENDS",
    "MAX_TIME",
    "MINIMUM_RELIABLE_TIMEOUT",
    "MTU",
    "PING_INTERVAL",
    "RELIABLE_TIMEOUT_FACTOR",
    "Circuit",
]

# -- constants: the pure twin's (one definition for both) ----------------------------

from gamecodec.lludp._circuit_py import (
    ACK_COLLECT_TIME,
    AVERAGED_PING_ALPHA,
    AVERAGED_PING_MAX,
    AVERAGED_PING_MIN,
    CIRCUIT_TIMEOUT,
    COLLECT_ACK_TIME_MAX,
    DUPLICATE_WINDOW,
    INITIAL_PING,
    MAX_APPENDED_ACKS,
    MAX_DATAGRAM,
    MAX_OUT_PACKET_ID,
    MAX_PACKET_ACK_IDS,
    MAX_RESENDS,
    MINIMUM_RELIABLE_TIMEOUT,
    MTU,
    PING_INTERVAL,
    RELIABLE_TIMEOUT_FACTOR,
)

cdef long long _MASK = MAX_OUT_PACKET_ID - 1
cdef long long _HALF = MAX_OUT_PACKET_ID >> 1
cdef int _RELIABLE = 0x40
cdef int _RESENT = 0x20
cdef int _ACK = 0x10
cdef int _ZEROCODED = 0x80
cdef double _INF = math.inf
cdef long long _MAX_LIMIT = 0xFFFFFFFF
cdef long _MAX_ACKS = MAX_APPENDED_ACKS
if not 0 <= _MAX_ACKS <= 256:  # the room _send copies them to
    raise ImportError(f"MAX_APPENDED_ACKS {_MAX_ACKS} does not fit 256")
cdef Py_ssize_t _MAX_DATAGRAM = MAX_DATAGRAM
cdef double _MAX_TIME = MAX_TIME


cdef inline double _time(object now) except? -1.0:
    """``now`` as a double, refused first as the pure twin refuses it (an int
    past the bound is a ValueError naming the int, never an OverflowError)."""
    if type(now) is float:
        return PyFloat_AS_DOUBLE(now)  # the callee checks the range
    if not -_MAX_TIME <= now <= _MAX_TIME:
        check_time(now)
    return now


cdef frozenset _CONTROL = frozenset(("PacketAck", "StartPingCheck", "CompletePingCheck"))

cdef object _HEAD = struct.Struct(">BI")
cdef dict _ACK_IDS = {}
cdef bytes _PACKET_ACK_HEAD = b"\x00\xff\xff\xff\xfb"
cdef bytes _START_PING_HEAD = b"\x00\x01"
cdef bytes _COMPLETE_PING_HEAD = b"\x00\x02"
cdef object _PING_BODY = struct.Struct("<BI")


cdef bytes _ack_tail(const uint32_t *acks, Py_ssize_t count):
    """``count`` queued ids as appended acks (see the pure twin): big-endian
    ids, then the count byte."""
    cdef bytes tail = PyBytes_FromStringAndSize(NULL, 4 * count + 1)
    cdef unsigned char *o = <unsigned char *>PyBytes_AS_STRING(tail)
    cdef Py_ssize_t k
    cdef uint32_t a
    for k in range(count):
        a = acks[k]
        o[4 * k] = <unsigned char>(a >> 24)
        o[4 * k + 1] = <unsigned char>(a >> 16)
        o[4 * k + 2] = <unsigned char>(a >> 8)
        o[4 * k + 3] = <unsigned char>a
    o[4 * count] = <unsigned char>count
    return tail


cdef inline Py_ssize_t _zeros(const unsigned char *p, Py_ssize_t n) noexcept:
    """The number of zero bytes in ``p[:n]`` (eight at a time)."""
    cdef Py_ssize_t i = 0, z = 0
    cdef uint64_t x, y
    while i + 8 <= n:
        memcpy(&x, p + i, 8)
        y = (x & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL  # high bit: low 7 bits not 0
        y = ~(y | x | 0x7F7F7F7F7F7F7F7FULL)  # 0x80 in each zero byte, 0 elsewhere
        z += <Py_ssize_t>(((y >> 7) * 0x0101010101010101ULL) >> 56)
        i += 8
    while i < n:
        z += p[i] == 0
        i += 1
    return z


# the compiled codec's C entry point (see _codec_c._encode_packet_c)
ctypedef object (*_encode_packet_c_t)(
    object, object, bint, unsigned int, uint32_t, const uint32_t *, Py_ssize_t, Py_ssize_t,
    Py_ssize_t *
)
cdef const char *_ENCODE_PACKET_C = b"gamecodec.lludp._codec_c.encode_packet_c.v2"
# and its decode (see _codec_c._decode_c)
ctypedef object (*_decode_c_t)(object, object, bint, object)
cdef const char *_DECODE_C = b"gamecodec.lludp._codec_c.decode_c.v1"


cdef bytes _packet_ack_body(list ids):
    """The body of a PacketAck (after the 5 header bytes)."""
    cdef Py_ssize_t count = len(ids)
    fmt = _ACK_IDS.get(count)
    if fmt is None:
        fmt = _ACK_IDS[count] = struct.Struct(f"<B{count}I")
    return _PACKET_ACK_HEAD + fmt.pack(count, *ids)


cdef inline bint _older(long long a, long long b) noexcept:
    """Sequence ``a`` comes before ``b`` (24-bit wrap-around)."""
    cdef long long d = (b - a) & _MASK
    return 0 < d < _HALF


cdef bytes _control_leads(object template):
    """256 flags by a packet's byte 6 (see the pure twin), then 256 by its
    byte 7 and 256 by its byte 8, for numbers that start 0xFF (Medium) and
    0xFF 0xFF (Low, Fixed): 1 where a control message's number has that byte
    there. Zero-coding leaves these bytes as they are: the bytes before them
    are 0xFF, and a zero byte stays 0 (a run expands to one zero at least).
    A flag set too many only costs a name lookup; a table is all 1s where
    the template cannot say."""
    cdef bytearray table
    try:
        table = bytearray(768)
        for spec in template:
            if spec.name in _CONTROL:
                code = spec.code
                table[code if 0 <= code < 0xFF else 0xFF] = 1
                if 0 <= code < 0xFF:
                    continue
                if 0xFF00 <= code <= 0xFFFF:  # Medium: 0xFF, n
                    table[256 + (code & 0xFF)] = 1
                elif 0xFFFF0000 <= code <= 0xFFFFFFFF:  # Low, Fixed: 0xFF, 0xFF, ...
                    table[256 + 0xFF] = 1
                    table[512 + ((code >> 8) & 0xFF)] = 1
                else:  # no number the codecs read
                    table[256:] = b"\x01" * 512
        return bytes(table)
    except (TypeError, AttributeError, ValueError, IndexError):
        return b"\x01" * 768


cdef object _event(str name, tuple args):
    # the event classes live in the never-compiled facade (one class for both twins)
    from gamecodec.lludp import circuit

    return getattr(circuit, name)(*args)


cdef bint _as_key(object x, uint32_t *out) except -1:
    """Whether ``x`` equals a possible key (an int 0..2**32-1, or a float of
    one: what a dict keyed by ints would find), and the key."""
    cdef double f
    if isinstance(x, int):
        if 0 <= x <= 0xFFFFFFFF:
            out[0] = <uint32_t>(<unsigned long long>x)
            return True
        return False
    if isinstance(x, float):
        f = x
        if 0.0 <= f <= 4294967295.0 and f == <double>(<unsigned long long>f):
            out[0] = <uint32_t>(<unsigned long long>f)
            return True
    return False


# -- C containers ----------------------------------------------------------------------

cdef inline Py_ssize_t _home(uint32_t key, Py_ssize_t mask) noexcept nogil:
    # Fibonacci hashing: sequence numbers are consecutive
    return <Py_ssize_t>((<uint64_t>key * <uint64_t>0x9E3779B97F4A7C15ULL) >> 32) & mask


cdef inline bint _between(Py_ssize_t i, Py_ssize_t k, Py_ssize_t j) noexcept nogil:
    """``k`` lies cyclically in ``(i, j]``."""
    if i <= j:
        return i < k <= j
    return k > i or k <= j


cdef struct Entry:
    PyObject *wire  # the packet as first sent (a strong reference); NULL: retired
    Py_ssize_t end  # where its appended acks begin
    double exp  # when it is resent next
    long resends
    uint32_t key


cdef struct Pending:
    # reliable packets in insertion order (retired ones stay as holes until
    # compacted) and an index of the live ones: slots hold entry index + 1
    Entry *ent
    Py_ssize_t head  # no live entry before it
    Py_ssize_t length
    Py_ssize_t cap
    Py_ssize_t live
    Py_ssize_t *idx
    Py_ssize_t mask  # len(idx) - 1, len(idx) >= 2 * cap


cdef Py_ssize_t _pm_slot(Pending *pm, uint32_t key) noexcept:
    """The index slot of ``key``, or -1."""
    cdef Py_ssize_t i, v
    if pm.live == 0:
        return -1
    i = _home(key, pm.mask)
    while True:
        v = pm.idx[i]
        if v == 0:
            return -1
        if pm.ent[v - 1].key == key:
            return i
        i = (i + 1) & pm.mask


cdef inline Entry *_pm_get(Pending *pm, uint32_t key) noexcept:
    cdef Py_ssize_t s = _pm_slot(pm, key)
    return NULL if s < 0 else &pm.ent[pm.idx[s] - 1]


cdef void _pm_index(Pending *pm) noexcept:
    """Rebuild the index from the live entries."""
    cdef Py_ssize_t n, i
    memset(pm.idx, 0, (pm.mask + 1) * sizeof(Py_ssize_t))
    for n in range(pm.head, pm.length):
        if pm.ent[n].wire != NULL:
            i = _home(pm.ent[n].key, pm.mask)
            while pm.idx[i]:
                i = (i + 1) & pm.mask
            pm.idx[i] = n + 1


cdef int _pm_make_room(Pending *pm) except -1:
    """Room for one more entry at the end: compact the holes out, or grow."""
    cdef Py_ssize_t n, k, cap
    cdef Entry *ent
    cdef Py_ssize_t *idx
    if pm.cap and pm.live * 2 <= pm.cap:
        k = 0
        for n in range(pm.head, pm.length):
            if pm.ent[n].wire != NULL:
                pm.ent[k] = pm.ent[n]
                k += 1
        pm.head = 0
        pm.length = k
        _pm_index(pm)
        return 0
    cap = pm.cap * 2 if pm.cap else 16
    idx = <Py_ssize_t *>malloc(2 * cap * sizeof(Py_ssize_t))
    if idx == NULL:
        raise MemoryError()
    ent = <Entry *>realloc(pm.ent, cap * sizeof(Entry))
    if ent == NULL:
        free(idx)
        raise MemoryError()
    pm.ent = ent
    pm.cap = cap
    free(pm.idx)
    pm.idx = idx
    pm.mask = 2 * cap - 1
    _pm_index(pm)
    return 0


cdef int _pm_set(Pending *pm, uint32_t key, bytes wire, Py_ssize_t end, double exp) except -1:
    """``unacked[key] = record``: a new record, in place if ``key`` is there
    (a dict keeps the key's position), else at the end."""
    cdef Entry *e = _pm_get(pm, key)
    cdef PyObject *old
    cdef Py_ssize_t i
    if e != NULL:
        old = e.wire
        Py_INCREF(wire)
        e.wire = <PyObject *>wire
        e.end = end
        e.exp = exp
        e.resends = 0
        Py_DECREF(<object>old)
        return 0
    if pm.length == pm.cap:
        _pm_make_room(pm)
    e = &pm.ent[pm.length]
    Py_INCREF(wire)
    e.wire = <PyObject *>wire
    e.end = end
    e.exp = exp
    e.resends = 0
    e.key = key
    pm.length += 1
    pm.live += 1
    i = _home(key, pm.mask)
    while pm.idx[i]:
        i = (i + 1) & pm.mask
    pm.idx[i] = pm.length
    return 0


cdef bint _pm_pop(Pending *pm, uint32_t key) noexcept:
    """``unacked.pop(key, None) is not None``."""
    cdef Py_ssize_t s = _pm_slot(pm, key)
    cdef Py_ssize_t n, i, j, k
    cdef PyObject *wire
    if s < 0:
        return False
    n = pm.idx[s] - 1
    wire = pm.ent[n].wire
    pm.ent[n].wire = NULL
    pm.live -= 1
    # backward-shift deletion
    i = s
    j = s
    while True:
        j = (j + 1) & pm.mask
        if pm.idx[j] == 0:
            break
        k = _home(pm.ent[pm.idx[j] - 1].key, pm.mask)
        if _between(i, k, j):
            continue
        pm.idx[i] = pm.idx[j]
        i = j
    pm.idx[i] = 0
    if pm.live == 0:
        pm.head = 0
        pm.length = 0
    else:
        while pm.ent[pm.head].wire == NULL:
            pm.head += 1
    Py_DECREF(<object>wire)
    return True


cdef void _pm_clear(Pending *pm) noexcept:
    cdef Py_ssize_t n
    cdef PyObject *wire
    for n in range(pm.head, pm.length):
        wire = pm.ent[n].wire
        if wire != NULL:
            pm.ent[n].wire = NULL
            Py_DECREF(<object>wire)
    pm.head = 0
    pm.length = 0
    pm.live = 0
    if pm.idx != NULL:
        memset(pm.idx, 0, (pm.mask + 1) * sizeof(Py_ssize_t))


cdef struct Bucket:
    uint64_t bits  # which of the 64 numbers hi * 64 .. hi * 64 + 63 are in; 0: an empty slot
    uint32_t hi


cdef struct Seen:
    # reliable sequence numbers received, in arrival order (a ring), and the
    # same numbers as a set: an open-addressing table of 64-number buckets
    # (consecutive numbers share a bucket and its cache line)
    uint32_t *ring
    Py_ssize_t start
    Py_ssize_t count
    Py_ssize_t rmask  # ring capacity - 1
    Bucket *slots
    Py_ssize_t smask  # table size - 1
    Py_ssize_t buckets  # slots in use


cdef inline Py_ssize_t _sw_slot(Seen *sw, uint32_t hi) noexcept:
    """The slot of bucket ``hi``, or the empty slot that ends its probe."""
    cdef Py_ssize_t i = _home(hi, sw.smask)
    while sw.slots[i].bits and sw.slots[i].hi != hi:
        i = (i + 1) & sw.smask
    return i


cdef inline bint _sw_contains(Seen *sw, uint32_t key) noexcept:
    if sw.buckets == 0:
        return False
    return (sw.slots[_sw_slot(sw, key >> 6)].bits >> (key & 63)) & 1


cdef int _sw_grow_set(Seen *sw) except -1:
    cdef Py_ssize_t size = 2 * (sw.smask + 1) if sw.slots != NULL else 16
    cdef Bucket *old = sw.slots
    cdef Py_ssize_t oldsize = sw.smask + 1 if old != NULL else 0
    cdef Bucket *slots = <Bucket *>malloc(size * sizeof(Bucket))
    cdef Py_ssize_t n, i
    if slots == NULL:
        raise MemoryError()
    memset(slots, 0, size * sizeof(Bucket))
    for n in range(oldsize):
        if old[n].bits:
            i = _home(old[n].hi, size - 1)
            while slots[i].bits:
                i = (i + 1) & (size - 1)
            slots[i] = old[n]
    free(old)
    sw.slots = slots
    sw.smask = size - 1
    return 0


cdef int _sw_push(Seen *sw, uint32_t key) except -1:
    """``seen.add(key); order.append(key)``."""
    cdef Py_ssize_t i, cap, n
    cdef uint32_t *ring
    if sw.slots == NULL or 2 * (sw.buckets + 1) > sw.smask + 1:
        _sw_grow_set(sw)
    if sw.ring == NULL or sw.count == sw.rmask + 1:
        cap = 2 * (sw.rmask + 1) if sw.ring != NULL else 64
        ring = <uint32_t *>malloc(cap * sizeof(uint32_t))
        if ring == NULL:
            raise MemoryError()
        for n in range(sw.count):
            ring[n] = sw.ring[(sw.start + n) & sw.rmask]
        free(sw.ring)
        sw.ring = ring
        sw.rmask = cap - 1
        sw.start = 0
    i = _sw_slot(sw, key >> 6)
    if sw.slots[i].bits == 0:
        sw.slots[i].hi = key >> 6
        sw.buckets += 1
    sw.slots[i].bits |= <uint64_t>1 << (key & 63)
    sw.ring[(sw.start + sw.count) & sw.rmask] = key
    sw.count += 1
    return 0


cdef void _sw_pop(Seen *sw) noexcept:
    """``seen.discard(order[head]); head += 1``."""
    cdef uint32_t key = sw.ring[sw.start]
    cdef Py_ssize_t i, j, k
    sw.start = (sw.start + 1) & sw.rmask
    sw.count -= 1
    i = _sw_slot(sw, key >> 6)
    if sw.slots[i].bits == 0:  # not there (the ring and the set hold the same numbers)
        return
    sw.slots[i].bits &= ~(<uint64_t>1 << (key & 63))
    if sw.slots[i].bits:
        return
    # the bucket is empty: backward-shift deletion
    sw.buckets -= 1
    j = i
    while True:
        j = (j + 1) & sw.smask
        if sw.slots[j].bits == 0:
            break
        k = _home(sw.slots[j].hi, sw.smask)
        if _between(i, k, j):
            continue
        sw.slots[i] = sw.slots[j]
        i = j
    sw.slots[i].bits = 0


cdef class Circuit:
    """One LLUDP circuit (see :class:`gamecodec.lludp.circuit.Circuit`)."""

    cdef object _template
    cdef bytes _control_lead
    cdef object _decode
    cdef object _encode_packet
    cdef object _zero_decode
    cdef public bint strict
    cdef object _max_size
    cdef long _max_size_c
    cdef str _zero_coding
    cdef double _ping_interval
    cdef double _circuit_timeout
    cdef double _reliable_timeout_factor
    cdef double _minimum_reliable_timeout
    cdef long _max_resends
    cdef double _ping_alpha
    cdef double _ping_min
    cdef double _ping_max
    cdef double _ack_collect_time
    cdef long _max_appended_acks
    cdef long _mtu
    cdef object _limit
    cdef long _duplicate_window
    cdef public bint deliver_control

    cdef long long _seq
    cdef Pending _pm
    cdef uint32_t *_tl  # unacked sequences by resend time, from _tl_head to _tl_len
    cdef Py_ssize_t _tl_head
    cdef Py_ssize_t _tl_len
    cdef Py_ssize_t _tl_cap
    cdef double _last_exp
    cdef list _out
    cdef double _out_at
    cdef uint32_t *_ak  # acks owed, in queue order, from _ak_head to _ak_len
    cdef Py_ssize_t _ak_head
    cdef Py_ssize_t _ak_len
    cdef Py_ssize_t _ak_cap
    cdef double _ack_deadline
    cdef object _enc_capsule
    cdef _encode_packet_c_t _enc_c  # NULL: call _encode_packet
    cdef object _dec_capsule
    cdef _decode_c_t _dec_c  # NULL: call _decode
    cdef bint _smaller
    cdef Py_ssize_t _limit_c
    cdef Seen _sw
    cdef long long _prune_at
    cdef long _ping_in
    cdef long _ping_id
    cdef double _ping_sent
    cdef long _pings_in_transit
    cdef double _next_ping
    cdef double _last_ping_answer
    cdef public double rtt
    cdef double _ping_avg
    cdef double _rto
    cdef object _lost
    cdef list _events
    cdef double _wake
    cdef double _timer_wake
    cdef public long long packets_out
    cdef public long long packets_in
    cdef public long long resent
    cdef public long long duplicates
    cdef public long long dropped

    def __cinit__(self, *args, **kwargs):
        memset(&self._pm, 0, sizeof(Pending))
        memset(&self._sw, 0, sizeof(Seen))
        self._tl = NULL
        self._tl_head = self._tl_len = self._tl_cap = 0
        self._ak = NULL
        self._ak_head = self._ak_len = self._ak_cap = 0
        self._enc_c = NULL
        self._dec_c = NULL

    def __dealloc__(self):
        _pm_clear(&self._pm)
        free(self._pm.ent)
        free(self._pm.idx)
        free(self._sw.ring)
        free(self._sw.slots)
        free(self._tl)
        free(self._ak)

    def __init__(
        self,
        *,
        now=0.0,
        template=None,
        codec=None,
        strict=False,
        max_size=8192,
        zero_coding="flag",
        ping_interval=PING_INTERVAL,
        circuit_timeout=CIRCUIT_TIMEOUT,
        reliable_timeout_factor=RELIABLE_TIMEOUT_FACTOR,
        minimum_reliable_timeout=MINIMUM_RELIABLE_TIMEOUT,
        max_resends=MAX_RESENDS,
        initial_ping=INITIAL_PING,
        ping_alpha=AVERAGED_PING_ALPHA,
        ping_min=AVERAGED_PING_MIN,
        ping_max=AVERAGED_PING_MAX,
        ack_collect_time=ACK_COLLECT_TIME,
        max_appended_acks=MAX_APPENDED_ACKS,
        mtu=MTU,
        duplicate_window=DUPLICATE_WINDOW,
        first_sequence=1,
        deliver_control=False,
    ):
        check_time(now)
        if codec is None:
            codec = _accel.load("gamecodec.lludp", "_codec", "lludp")
        if zero_coding not in ("flag", "smaller"):
            raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
        if not (ping_interval > 0 and circuit_timeout > 0 and minimum_reliable_timeout >= 0.001):
            raise ValueError(
                "ping_interval and circuit_timeout must be > 0, minimum_reliable_timeout >= 0.001"
            )
        if not reliable_timeout_factor >= 0:
            raise ValueError("reliable_timeout_factor must be >= 0")
        if not (0.0 <= ping_alpha <= 1.0 and 0.0 < ping_min <= ping_max):
            raise ValueError("ping_alpha must be within 0..1, and 0 < ping_min <= ping_max")
        if max_resends is not None and max_resends < 0:
            raise ValueError("max_resends must be >= 0 or None")
        if not 0 <= max_appended_acks <= MAX_APPENDED_ACKS:
            raise ValueError(f"max_appended_acks must be 0..{MAX_APPENDED_ACKS}")
        if duplicate_window < 1:
            raise ValueError("duplicate_window must be >= 1")
        self.template = default_template() if template is None else template
        self._decode = codec.decode
        self._encode_packet = codec.encode_packet
        self._zero_decode = codec.zero_decode
        capsule = getattr(codec, "_ENCODE_PACKET_C", None)
        self._enc_c = NULL
        self._enc_capsule = None
        if capsule is not None and PyCapsule_IsValid(capsule, _ENCODE_PACKET_C):
            self._enc_c = <_encode_packet_c_t>PyCapsule_GetPointer(capsule, _ENCODE_PACKET_C)
            self._enc_capsule = capsule
        capsule = getattr(codec, "_DECODE_C", None)
        self._dec_c = NULL
        self._dec_capsule = None
        if capsule is not None and PyCapsule_IsValid(capsule, _DECODE_C):
            self._dec_c = <_decode_c_t>PyCapsule_GetPointer(capsule, _DECODE_C)
            self._dec_capsule = capsule
        self.strict = bool(strict)
        self.max_size = int(max_size)
        self._zero_coding = zero_coding
        self._smaller = zero_coding == "smaller"
        self._ping_interval = float(ping_interval)
        self._circuit_timeout = float(circuit_timeout)
        self._reliable_timeout_factor = float(reliable_timeout_factor)
        self._minimum_reliable_timeout = float(minimum_reliable_timeout)
        self._max_resends = -1 if max_resends is None else int(max_resends)
        self._ping_alpha = float(ping_alpha)
        self._ping_min = float(ping_min)
        self._ping_max = float(ping_max)
        self._ack_collect_time = min(max(float(ack_collect_time), 0.0), COLLECT_ACK_TIME_MAX)
        self._max_appended_acks = int(max_appended_acks)
        self.mtu = int(mtu)
        self._duplicate_window = int(duplicate_window)
        self.deliver_control = bool(deliver_control)
        # sending
        self._seq = int(first_sequence) & _MASK
        with cython.critical_section(self):
            _pm_clear(&self._pm)
            self._tl_head = 0
            self._tl_len = 0
            self._ak_head = 0
            self._ak_len = 0
            while self._sw.count:
                _sw_pop(&self._sw)
        self._last_exp = -_INF
        self._out = []
        self._out_at = _INF
        # acks owed to the peer (the array is emptied above)
        self._ack_deadline = _INF
        # duplicate suppression (the containers are emptied above)
        self._prune_at = -1
        self._ping_in = -1
        # pings and round-trip time (llcircuit.cpp)
        self._ping_id = 0
        self._ping_sent = now
        self._pings_in_transit = 0
        self._next_ping = now + self._ping_interval
        self._last_ping_answer = now
        self.rtt = float(initial_ping)
        self._ping_avg = float(initial_ping)
        self._rto = self._timeout_for(self._ping_avg)
        # state and counters
        self._lost = None
        self._events = []
        self._timer_wake = min(self._next_ping, now + self._circuit_timeout)
        self._wake = self._timer_wake
        self.packets_out = 0
        self.packets_in = 0
        self.resent = 0
        self.duplicates = 0
        self.dropped = 0

    def restart_clock(self, now):
        """Count the ping schedule and the circuit timeout from ``now`` (see
        the pure twin). Only before anything was sent or received."""
        check_time(now)
        if self.packets_in or self.packets_out or self._lost is not None:
            raise LocalProtocolError("restart_clock on a circuit already in use")
        self._ping_sent = now
        self._next_ping = now + self._ping_interval
        self._last_ping_answer = now
        self._timer_wake = min(self._next_ping, now + self._circuit_timeout)
        self._wake = self._timer_wake

    # -- state ------------------------------------------------------------------

    @property
    def max_resends(self):
        """Resends of a reliable packet before it is given up (``None``: never)."""
        return None if self._max_resends < 0 else self._max_resends

    @property
    def zero_coding(self):
        """``"flag"`` or ``"smaller"``: when sent packets are zero-coded."""
        return self._zero_coding

    @property
    def ping_interval(self):
        """Seconds between StartPingChecks."""
        return self._ping_interval

    @property
    def circuit_timeout(self):
        """Seconds without a CompletePingCheck before the peer is lost."""
        return self._circuit_timeout

    @property
    def reliable_timeout_factor(self):
        """The resend timeout is this times the averaged ping, at least ..."""
        return self._reliable_timeout_factor

    @property
    def minimum_reliable_timeout(self):
        """... this many seconds."""
        return self._minimum_reliable_timeout

    @property
    def ping_alpha(self):
        """The averaged ping's weight of a new (lower) round trip."""
        return self._ping_alpha

    @property
    def ping_min(self):
        """The averaged ping's floor, in seconds."""
        return self._ping_min

    @property
    def ping_max(self):
        """The averaged ping's cap, in seconds."""
        return self._ping_max

    @property
    def ack_collect_time(self):
        """Seconds an owed ack waits for a packet to ride on before a PacketAck."""
        return self._ack_collect_time

    @property
    def max_appended_acks(self):
        """Acks appended to one packet at most."""
        return self._max_appended_acks

    @property
    def duplicate_window(self):
        """Reliable sequence numbers remembered at most, for duplicates."""
        return self._duplicate_window

    @property
    def max_size(self):
        """The decoder's cap on a zero-expanded packet, and the largest packet
        :meth:`send` sends, in bytes."""
        return self._max_size

    @max_size.setter
    def max_size(self, value):
        # through a C long (as the attribute it replaces), kept as an int
        # object for the codec calls
        self._max_size_c = value
        self._max_size = self._max_size_c

    @property
    def template(self):
        """The message template the circuit encodes and decodes with."""
        return self._template

    @template.setter
    def template(self, value):
        self._template = value
        self._control_lead = _control_leads(value)

    @property
    def mtu(self):
        """Appended acks keep a datagram within this many bytes."""
        return self._mtu

    @mtu.setter
    def mtu(self, value):
        self._mtu = value
        self._limit = min(max(self._mtu, 0), _MAX_LIMIT)
        self._limit_c = self._limit

    @property
    def next_sequence(self):
        """The sequence number the next packet gets."""
        return self._seq

    @property
    def unacked(self):
        """Reliable packets sent and not acked yet."""
        return self._pm.live

    @property
    def unacked_sequences(self):
        """Their sequence numbers, oldest first."""
        cdef Py_ssize_t n
        out = []
        with cython.critical_section(self):
            for n in range(self._pm.head, self._pm.length):
                if self._pm.ent[n].wire != NULL:
                    out.append(self._pm.ent[n].key)
        return out

    @property
    def acks_pending(self):
        """Sequence numbers we owe the peer an ack for, in queue order."""
        with cython.critical_section(self):
            return self._ak_list()

    @property
    def ping(self):
        """The averaged ping in seconds (``mPingDelayAveraged``)."""
        return self._ping_avg

    @property
    def pings_in_transit(self):
        """StartPingChecks sent and not answered (``mPingsInTransit``)."""
        return self._pings_in_transit

    @property
    def lost(self):
        """The :class:`PeerLost` event once the circuit is dead, else ``None``."""
        return self._lost

    def reliable_timeout(self, now):
        """Seconds a reliable packet sent at ``now`` waits before its resend."""
        check_time(now)
        return self._rto_at(now)

    def events(self):
        """Events since the last call: PeerLost, MessageDropped, BadDatagram."""
        out = self._events
        self._events = []
        return out

    # -- timers -----------------------------------------------------------------

    @cython.final
    cdef inline double _timeout_for(self, double ping) noexcept:
        cdef double t = self._reliable_timeout_factor * ping
        return t if t > self._minimum_reliable_timeout else self._minimum_reliable_timeout

    @cython.final
    cdef double _rto_at(self, double now) noexcept:
        cdef long n = self._pings_in_transit
        cdef double transit, ping
        if n == 0:
            return self._rto
        transit = (n - 1) * self._ping_interval + (now - self._ping_sent)
        ping = self._ping_avg
        if transit > ping:
            ping = min(transit, self._ping_max)
        return self._timeout_for(ping)

    cpdef object next_deadline(self):
        """When :meth:`datagrams_to_send` next has work (seconds), or ``None``."""
        with cython.critical_section(self):
            if self._lost is not None:
                return None
            if self._out:
                return self._out_at
            return self._compute_wake()

    @cython.final
    cdef double _compute_wake(self) noexcept:
        """The earliest timer (see the pure twin)."""
        cdef double t = self._next_ping, lost_at
        cdef Py_ssize_t head = self._tl_head, n = self._tl_len
        cdef Entry *e
        while head < n:
            e = _pm_get(&self._pm, self._tl[head])
            if e != NULL:
                t = min(t, e.exp)
                break
            head += 1
        if head and head * 2 >= n:
            memmove(self._tl, self._tl + head, (n - head) * sizeof(uint32_t))
            self._tl_len = n - head
            head = 0
        self._tl_head = head
        lost_at = self._last_ping_answer + self._circuit_timeout
        t = min(t, lost_at)
        self._timer_wake = t
        if self._ak_len > self._ak_head and self._ack_deadline < t:
            t = self._ack_deadline
        self._wake = t
        return t

    @cython.final
    cdef int _tl_append(self, uint32_t seq) except -1:
        if self._tl_len < self._tl_cap:
            self._tl[self._tl_len] = seq
            self._tl_len += 1
            return 0
        self._tl_insert(self._tl_len, seq)
        return 0

    @cython.final
    cdef int _tl_insert(self, Py_ssize_t i, uint32_t seq) except -1:
        """``timeline.insert(i, seq)`` (compacting or growing the array)."""
        cdef Py_ssize_t cap, head = self._tl_head
        cdef uint32_t *tl
        if self._tl_len == self._tl_cap:
            if head and head * 2 >= self._tl_cap:
                memmove(self._tl, self._tl + head, (self._tl_len - head) * sizeof(uint32_t))
                self._tl_len -= head
                self._tl_head = 0
                i -= head
            else:
                cap = 2 * self._tl_cap if self._tl_cap else 16
                tl = <uint32_t *>realloc(self._tl, cap * sizeof(uint32_t))
                if tl == NULL:
                    raise MemoryError()
                self._tl = tl
                self._tl_cap = cap
        if i < self._tl_len:
            memmove(self._tl + i + 1, self._tl + i, (self._tl_len - i) * sizeof(uint32_t))
        self._tl[i] = seq
        self._tl_len += 1
        return 0

    # -- sending ----------------------------------------------------------------

    def send(self, message, *, reliable=False, now):
        """Encode ``message`` once, give it the next sequence number, append the
        acks owed and queue it (see :meth:`gamecodec.lludp.circuit.Circuit.send`);
        return its sequence number."""
        cdef double t = _time(now)
        with cython.critical_section(self):
            return self._send(message, reliable, t)

    @cython.final
    cdef int _check_expansion(self, object message, bytes wire, Py_ssize_t end) except -1:
        """A zero-coded packet must expand within max_size too (see the pure twin)."""
        cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(wire)
        cdef Py_ssize_t body_end = end - 4 * p[end - 1] - 1 if p[0] & _ACK else end
        cdef Py_ssize_t zeros = _zeros(p + 6, body_end - 6) if body_end > 6 else 0
        if body_end - 6 + 256 * zeros <= self._max_size_c:
            return 0
        try:
            self._zero_decode(wire[6:body_end], self._max_size)
        except DecodeError:
            raise EncodeError(
                f"{message.name}: its zero-coded body expands past max_size "
                f"{self._max_size_c} (the receiver's limit)"
            ) from None
        return 0

    @cython.final
    cdef object _send(self, object message, bint reliable, double now):
        cdef long long seq
        cdef Py_ssize_t count, owed, end, plain = -1
        cdef uint32_t ids[256]  # count <= _MAX_ACKS (checked at import)
        cdef bytes wire
        cdef const unsigned char *p
        if not -_MAX_TIME <= now <= _MAX_TIME:
            check_time(now)
        if self._lost is not None:
            raise LocalProtocolError(f"send on a lost circuit ({self._lost.reason})")
        seq = self._seq
        owed = self._ak_len - self._ak_head
        count = owed
        if count:
            count = max(0, min(count, self._max_appended_acks, _MAX_ACKS))
        if self._enc_c != NULL:
            # the codec's C entry point, with a copy of the acks: encoding may
            # run code (a value's conversion) that feeds this circuit, which
            # may move the array
            memcpy(ids, self._ak + self._ak_head, count * sizeof(uint32_t))
            wire = self._enc_c(
                message,
                self._template,
                self._smaller,
                _RELIABLE if reliable else 0,
                <uint32_t>seq,
                ids,
                count,
                self._limit_c,
                &plain,
            )
            key = seq
        else:
            key = seq  # boxed once: the codec's argument and the return value
            wire = self._encode_packet(
                message,
                self._template,
                self._zero_coding,
                _RELIABLE if reliable else 0,
                key,
                self._ak_list(),
                count,
                self._limit,
            )
        if wire is None:
            raise TypeError("encode_packet returned None, not bytes")
        end = PyBytes_GET_SIZE(wire)
        if end == 0:  # no codec returns this (the pure twin's wire[0] raises the same)
            raise IndexError("index out of range")
        if end > self._max_size_c or end > _MAX_DATAGRAM:
            raise EncodeError(
                f"{message.name}: {end} bytes encoded, more than a peer takes "
                f"(max_size {self._max_size_c}, as the LL viewer's buffer; UDP at most "
                f"{MAX_DATAGRAM})"
            )
        p = <const unsigned char *>PyBytes_AS_STRING(wire)
        if p[0] & _ZEROCODED and not 0 <= plain <= self._max_size_c:
            # (the compiled codec tells what the body expands to: within
            # max_size, the check below would pass)
            self._check_expansion(message, wire, end)
        self._seq = (seq + 1) & _MASK
        if p[0] & _ACK:
            count = p[end - 1]
            end -= 4 * count + 1
            if count == self._ak_len - self._ak_head:  # (owed now: see above)
                self._ak_head = self._ak_len = 0
                self._ack_deadline = _INF
                self._wake = self._timer_wake
            else:
                self._ak_drop(count)
        self._queue(<uint32_t>seq, wire, end, reliable, now)
        return key

    @cython.final
    cdef list _ak_list(self):
        """The acks owed as a list of ints (the pure twin's ``_acks``)."""
        cdef Py_ssize_t k
        return [self._ak[k] for k in range(self._ak_head, self._ak_len)]

    @cython.final
    cdef void _ak_drop(self, Py_ssize_t count) noexcept:
        """``del acks[:count]``."""
        cdef Py_ssize_t owed = self._ak_len - self._ak_head
        if count >= owed:
            self._ak_head = self._ak_len = 0
        elif count > 0:
            self._ak_head += count

    @cython.final
    cdef int _ak_push(self, uint32_t seq) except -1:
        """``acks.append(seq)`` (compacting or growing the array)."""
        cdef Py_ssize_t cap, head = self._ak_head
        cdef uint32_t *ak
        if self._ak_len == self._ak_cap:
            if head and head * 2 >= self._ak_cap:
                memmove(self._ak, self._ak + head, (self._ak_len - head) * sizeof(uint32_t))
                self._ak_len -= head
                self._ak_head = 0
            else:
                cap = 2 * self._ak_cap if self._ak_cap else 16
                ak = <uint32_t *>realloc(self._ak, cap * sizeof(uint32_t))
                if ak == NULL:
                    raise MemoryError()
                self._ak = ak
                self._ak_cap = cap
        self._ak[self._ak_len] = seq
        self._ak_len += 1
        return 0

    @cython.final
    cdef long long _put(self, int flags, bytes body, bint can_ack, double now) except -1:
        """Put one packet (``body`` = everything after the sequence number) on
        the outgoing queue with the next sequence number and the acks that fit."""
        cdef long long seq = self._seq
        cdef Py_ssize_t count, room, owed = self._ak_len - self._ak_head
        cdef Py_ssize_t end = 5 + len(body)
        cdef bytes wire
        self._seq = (seq + 1) & _MASK
        if owed and can_ack:
            count = owed
            count = min(count, self._max_appended_acks)
            room = (self._mtu - 6 - len(body)) >> 2
            count = min(count, room)
            if count > 0:
                wire = (
                    _HEAD.pack(flags | _ACK, seq) + body + _ack_tail(self._ak + self._ak_head, count)
                )
                if count == owed:
                    self._ak_head = self._ak_len = 0
                    self._ack_deadline = _INF
                    self._wake = self._timer_wake
                else:
                    self._ak_drop(count)
            else:
                wire = _HEAD.pack(flags, seq) + body
        else:
            wire = _HEAD.pack(flags, seq) + body
        self._queue(<uint32_t>seq, wire, end, flags & _RELIABLE, now)
        return seq

    cdef int _queue(
        self, uint32_t seq, bytes wire, Py_ssize_t end, bint reliable, double now
    ) except -1:
        """Queue ``wire`` for sending; keep it until acked if ``reliable``."""
        cdef double exp
        cdef list out
        if reliable:
            exp = now + self._rto_at(now)
            _pm_set(&self._pm, seq, wire, end, exp)
            if exp >= self._last_exp:
                self._tl_append(seq)
                self._last_exp = exp
            else:
                self._schedule_early(seq, exp)
            self._timer_wake = min(self._timer_wake, exp)
            self._wake = min(self._wake, exp)
        out = self._out
        if not out:
            self._out_at = now
        out.append(wire)
        self.packets_out += 1
        return 0

    @cython.final
    cdef int _schedule_early(self, uint32_t seq, double exp) except -1:
        """Slot ``seq`` into the timeline before later resend times, dropping
        the entries of packets acked meanwhile on the way."""
        cdef Py_ssize_t i = self._tl_len
        cdef Entry *e
        while i > self._tl_head:
            e = _pm_get(&self._pm, self._tl[i - 1])
            if e == NULL:
                memmove(self._tl + i - 1, self._tl + i, (self._tl_len - i) * sizeof(uint32_t))
                self._tl_len -= 1
            elif e.exp <= exp:
                break
            i -= 1
        self._tl_insert(i, seq)
        return 0

    cpdef list datagrams_to_send(self, object now):
        """Every datagram due at ``now`` (see the pure twin)."""
        cdef double t = _time(now)
        with cython.critical_section(self):
            return self._datagrams(t)

    @cython.final
    cdef list _datagrams(self, double now):
        if not -_MAX_TIME <= now <= _MAX_TIME:
            check_time(now)
        if self._lost is not None:
            return []
        if now >= self._wake:
            self._timers(now)
        out = self._out
        if not out:
            return []  # the caller's own: later packets go to self._out
        self._out = []
        self._out_at = _INF
        return out

    @cython.final
    cdef int _timers(self, double now) except -1:
        cdef long cap = self._max_resends
        cdef uint32_t seq
        cdef Entry *e
        cdef double exp
        cdef Py_ssize_t end
        cdef int flags
        cdef bytes wire, resend
        cdef char *o
        if now >= self._last_ping_answer + self._circuit_timeout:
            self._kill(f"no CompletePingCheck for {self._circuit_timeout:g} s", now)
            return 0
        while self._tl_head < self._tl_len:
            seq = self._tl[self._tl_head]
            e = _pm_get(&self._pm, seq)
            if e == NULL:
                self._tl_head += 1  # acked meanwhile
                continue
            if e.exp > now:
                break
            self._tl_head += 1
            wire = <bytes>e.wire
            end = e.end
            flags = (<const unsigned char *>PyBytes_AS_STRING(wire))[0] & ~_ACK
            if 0 <= cap <= e.resends:
                _pm_pop(&self._pm, seq)
                self.dropped += 1
                self._events.append(
                    _event("MessageDropped", (seq, bytes((flags,)) + wire[1:end], now))
                )
                continue
            exp = now + self._rto_at(now)
            e.exp = exp  # (the record is not touched after a Python call)
            e.resends += 1
            if not self._out:
                self._out_at = now
            if 1 <= end <= PyBytes_GET_SIZE(wire):
                resend = PyBytes_FromStringAndSize(NULL, end)
                o = PyBytes_AS_STRING(resend)
                memcpy(o, PyBytes_AS_STRING(wire), end)
                o[0] = <char>(<unsigned char>(flags | _RESENT))
            else:  # only from a codec whose packet contradicts its ack count
                resend = bytes((flags | _RESENT,)) + wire[1:end]
            self._out.append(resend)
            self.resent += 1
            if exp >= self._last_exp or self._tl_head >= self._tl_len:
                self._tl_append(seq)
                self._last_exp = exp
            else:
                self._schedule_early(seq, exp)
        if now >= self._next_ping:
            self._send_ping(now)
        if self._ak_len > self._ak_head and now >= self._ack_deadline:
            self._flush_acks(now)
        self._compute_wake()
        return 0

    @cython.final
    cdef int _send_ping(self, double now) except -1:
        """``updateWatchDogTimers``: StartPingCheck with the next PingID and the
        oldest unacked sequence (the last one sent when nothing is unacked)."""
        cdef long ping_id = (self._ping_id + 1) & 0xFF
        cdef long long oldest
        self._ping_id = ping_id
        if self._pm.live:
            oldest = self._pm.ent[self._pm.head].key
        else:
            oldest = (self._seq - 1) & _MASK
        self._ping_sent = now
        self._pings_in_transit += 1
        self._next_ping = now + self._ping_interval
        self._put(0, _START_PING_HEAD + _PING_BODY.pack(ping_id, oldest), True, now)
        return 0

    @cython.final
    cdef int _flush_acks(self, double now) except -1:
        """``LLCircuit::sendAcks``: every owed ack in PacketAck messages."""
        cdef list acks = self._ak_list()
        cdef Py_ssize_t start = 0
        cdef Py_ssize_t n = len(acks)
        cdef list chunk
        while start < n:
            chunk = acks[start : start + MAX_PACKET_ACK_IDS]
            start += len(chunk)
            self._put(0, _packet_ack_body(chunk), False, now)
        self._ak_head = self._ak_len = 0
        self._ack_deadline = _INF
        return 0

    @cython.final
    cdef int _kill(self, str reason, double now) except -1:
        lost = _event("PeerLost", (reason, now))
        self._lost = lost
        self._events.append(lost)
        _pm_clear(&self._pm)
        self._tl_head = 0
        self._tl_len = 0
        self._ak_head = self._ak_len = 0
        self._out = []
        return 0

    # -- receiving --------------------------------------------------------------

    cpdef list receive_datagram(self, object data, object now):
        """Take one datagram; return the messages it delivers (none or one)
        (see :meth:`gamecodec.lludp.circuit.Circuit.receive_datagram`)."""
        cdef double t = _time(now)
        with cython.critical_section(self):  # the C containers (free-threaded builds)
            return self._receive(data, t)

    @cython.final
    cdef list _receive(self, object data, double now):
        cdef bytes raw
        cdef const unsigned char *r
        cdef const unsigned char *lead
        cdef Py_ssize_t size, end, pos, head
        cdef int flags = 0
        cdef bint reliable = False, control
        cdef uint32_t seq = 0, a
        if not -_MAX_TIME <= now <= _MAX_TIME:
            check_time(now)
        if self._lost is not None:
            return []
        raw = data if type(data) is bytes else bytes(data)
        r = <const unsigned char *>PyBytes_AS_STRING(raw)
        size = PyBytes_GET_SIZE(raw)
        if size >= 7:
            flags = r[0]
            if flags & _RELIABLE:
                reliable = True
                seq = (<uint32_t>r[1] << 24) | (<uint32_t>r[2] << 16) | (<uint32_t>r[3] << 8) | r[4]
                if _sw_contains(&self._sw, seq):
                    self.duplicates += 1
                    self._queue_ack(seq, now)
                    return []
        try:
            if self._dec_c != NULL:  # the codec's C entry point
                msg = self._dec_c(raw, self._template, self.strict, self._max_size)
            else:
                msg = self._decode(raw, self._template, self.strict, self._max_size)
        except DecodeError as exc:
            self._events.append(_event("BadDatagram", (exc, raw, now)))
            return []
        # the lead tables spare the name lookup for every other message
        if size < 7:  # a codec decodes no packet this short
            raise IndexError("index out of range")
        lead = <const unsigned char *>PyBytes_AS_STRING(self._control_lead)
        control = lead[r[6]]
        if control and r[6] == 0xFF:
            # bytes 7 and 8 of the number, when the body (before the acks) has them
            end = size - 1 - 4 * r[size - 1] if flags & _ACK else size
            if end >= 8:
                control = lead[256 + r[7]]
                if control and r[7] == 0xFF and end >= 9:
                    control = lead[512 + r[8]]
        control = control and msg.name in _CONTROL and msg.body is None
        if control and msg.truncated:
            # a cut-short PacketAck or ping, zero-filled: refused like garbage
            try:
                self._decode(raw, self._template, True, self._max_size)
            except DecodeError as exc:
                self._events.append(_event("BadDatagram", (exc, raw, now)))
            return []
        self.packets_in += 1
        if flags & _ACK:
            # the acks the codec just read, from the raw tail
            end = size - 1
            pos = end - 4 * r[end]  # >= 6: the codec checked the count
            while 0 <= pos < end:
                a = (
                    (<uint32_t>r[pos] << 24)
                    | (<uint32_t>r[pos + 1] << 16)
                    | (<uint32_t>r[pos + 2] << 8)
                    | r[pos + 3]
                )
                pos += 4
                if _pm_pop(&self._pm, a):
                    # acks come mostly in sending order: step the timeline's
                    # head past it now rather than look it up again later
                    head = self._tl_head
                    if head < self._tl_len and self._tl[head] == a:
                        self._tl_head = head + 1
        if reliable:
            _sw_push(&self._sw, seq)
            if self._sw.count > self._duplicate_window:
                _sw_pop(&self._sw)
            self._queue_ack(seq, now)
        if control:
            self._control(msg, now)
            if not self.deliver_control:
                return []
        return [msg]

    @cython.final
    cdef int _queue_ack(self, uint32_t seq, double now) except -1:
        """``collectRAck``: owe the peer an ack; the first one starts the clock."""
        cdef double deadline
        if self._ak_len == self._ak_head:
            deadline = now + self._ack_collect_time
            self._ack_deadline = deadline
            self._wake = min(self._wake, deadline)
        self._ak_push(seq)
        return 0

    @cython.final
    cdef int _control(self, object msg, double now) except -1:
        cdef dict blocks
        cdef long last
        cdef uint32_t key
        name = msg.name
        blocks = msg.blocks
        if name == "PacketAck":
            for block in blocks.get("Packets", ()):
                if block and _as_key(block[0], &key):
                    _pm_pop(&self._pm, key)
            return 0
        pings = blocks.get("PingID")
        if not pings or not pings[0]:
            return 0
        block = pings[0]
        ping_id = block[0]
        if name == "StartPingCheck":
            # process_start_ping_check: answer at once, then prune duplicates
            self._put(0, _COMPLETE_PING_HEAD + bytes((ping_id & 0xFF,)), True, now)
            # only a newer ping moves the prune point (see the pure twin)
            last = self._ping_in
            if len(block) > 1 and (last < 0 or 0 < ((ping_id - last) & 0xFF) < 0x80):
                self._ping_in = ping_id & 0xFF
                self._prune(block[1])
        else:
            self._ping_answered(ping_id, now)
        return 0

    @cython.final
    cdef int _prune(self, long long oldest) except -1:
        """``clearDuplicateList``, one ping late (see the pure twin)."""
        cdef long long prune = self._prune_at
        self._prune_at = oldest & _MASK
        if prune < 0:
            return 0
        while self._sw.count and _older(self._sw.ring[self._sw.start], prune):
            _sw_pop(&self._sw)
        return 0

    @cython.final
    cdef int _ping_answered(self, long ping_id, double now) except -1:
        """``pingTimerStop`` + ``setPingDelay`` (see the pure twin)."""
        cdef long behind = (self._ping_id - ping_id) & 0xFF
        cdef double rtt = behind * self._ping_interval + (now - self._ping_sent)
        cdef double avg
        self.rtt = rtt
        avg = self._ping_avg
        avg = max(avg, rtt)
        avg = (1.0 - self._ping_alpha) * avg + self._ping_alpha * rtt
        if avg < self._ping_min:
            avg = self._ping_min
        elif avg > self._ping_max:
            avg = self._ping_max
        self._ping_avg = avg
        self._pings_in_transit = behind
        self._rto = self._timeout_for(avg)
        self._last_ping_answer = now
        return 0


cdef class _Idle:
    """A stand-in with ``Circuit``'s three per-packet calls that does nothing
    and allocates nothing (see the pure twin): what ``_bench_circuit``
    subtracts."""

    cdef list _out, _none

    def __init__(self, datagram):
        self._out = [datagram]
        self._none = []

    def send(self, message, *, reliable=False, now):
        """Take the arguments; return 0."""
        return 0

    cpdef list datagrams_to_send(self, double now):
        """The same one-datagram list every time."""
        return self._out

    cpdef list receive_datagram(self, object data, double now):
        """The same empty list every time."""
        return self._none
