# cython: language_level=3
# Types for _session_py.py, compiled as gamecodec.avara._session_c (the
# one-source twin pattern: Cython reads this beside the pure source). A few
# primitives (_fits, _time, _trunc, _head, _resize; _sqrt is libc's) have C
# bodies here; their pure versions sit in the .py's ``if not cython.compiled``
# block, which Cython drops. The wire primitives are the compiled codec's.
cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_Check
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport sqrt as _sqrt
from libc.stdint cimport SIZE_MAX
from libc.string cimport memcpy

from gamecodec.avara._codec_c cimport (
    Cmd,
    command_object,
    crc16,
    parse_command,
    write_acks,
    write_command,
    writer_flags,
)


cdef double _ACK_DELAY, _CRAM_TIME, _ULP_TIMEOUT, _MAX_RETRANSMIT_TIME, _INF
cdef double _MAX_TIME, _INITIAL_VAR
cdef double _RTT_SMOOTH, _PING_WEIGHT, _PING_SCALE, _CLASSIC_FRAME, _RESEND_BUFFER
cdef int _MAX_QUEUE, _CRAM_PACK, _SETTLE, _STEP, _MAX_DATA, _PUNCH, _WINDOW, _NO_BITMAP_LIMIT
cdef int _MAX_REACH, _CONTROL, _KEY_AND_MOUSE, _PING, _MAX_PICKS


cdef int _diff(int a, int b) noexcept
@cython.locals(size=int)
cdef int _command_size(int flags, Py_ssize_t n) noexcept


cdef inline bint _fits(object value, long long low, long long high) noexcept:
    """Whether value is an int in low..high."""
    cdef int overflow = 0
    cdef long long v
    if not PyLong_Check(value):
        return False
    v = PyLong_AsLongLongAndOverflow(value, &overflow)
    return overflow == 0 and low <= v <= high


cdef _refuse_time(object now)


cdef inline double _time(object now) except? -1.0:
    """now as a double, refused first as the pure twin refuses it (an int past
    the bound is check_time's ValueError naming the int, not an OverflowError)."""
    cdef double t
    if type(now) is float:
        t = PyFloat_AS_DOUBLE(now)
        if -_MAX_TIME <= t <= _MAX_TIME:
            return t
    elif -_MAX_TIME <= now <= _MAX_TIME:
        return now
    _refuse_time(now)
    return -1.0  # not reached: it raised


cdef inline long long _trunc(double x) noexcept:
    """(long) x, saturating (NaN gives 0): the pure twin's int() semantics
    where they are defined, and no undefined behaviour where they are not."""
    if x != x:
        return 0
    if x >= 9.2e18:
        return 9200000000000000000
    if x <= -9.2e18:
        return -9200000000000000000
    return <long long>x


cdef inline bytes _head(unsigned char *buf, Py_ssize_t size):
    return PyBytes_FromStringAndSize(<char *>buf, size)


cdef class Connection:
    cdef readonly object _busy  # the entry points' lock (readonly: the tests hold it)
    cdef readonly int peer_id, version
    cdef int _my_id, _peer_window
    cdef double _peer_lead
    cdef bint _my_id_set
    cdef public int cram_data, peer_cram_data
    cdef readonly double frame_time
    cdef double _fps_scale, _latency_tolerance, _urgent_resend, _resend_cap
    cdef int _skip
    cdef unsigned int _crc_seed
    cdef unsigned char _out[1072]  # _OUT_SIZE
    cdef int _picked[16]  # _MAX_PICKS
    # sending side
    cdef int _serial, _max_valid, _nrwr
    cdef double _valid_time
    cdef readonly double retransmit_time, urgent_retransmit_time, mean_round_trip
    cdef double _var_round_trip
    cdef int _cap, _count, _head, _tail, _free
    cdef list _t_data
    # the slot pool: _cap slots in one PyMem_Malloc'ed block (_resize)
    cdef char *_pool
    cdef int *_t_serial
    cdef int *_t_command
    cdef int *_t_p1
    cdef int *_t_p2
    cdef int *_t_p3
    cdef int *_t_flags
    cdef int *_t_size
    cdef int *_t_send_count
    cdef int *_t_urgent
    cdef int *_t_sender
    cdef int *_t_prev
    cdef int *_t_next
    cdef double *_t_birth
    cdef double *_t_next_send
    # receiving side
    cdef int _receive_serial, _top
    cdef double _top_time
    cdef dict _rxq
    cdef bint _have_to_send_ack
    cdef double _next_ack_time
    cdef list _events
    cdef int _max_skip_events
    cdef readonly long long skip_events_dropped
    cdef readonly object lost
    cdef bint _dl_stale
    cdef double _dl_exact, _dl_lower
    cdef readonly long long total_sent, total_resent, datagrams_received

    @cython.locals(t=double, base=int, bits="unsigned int")
    cpdef tuple ack_block(self, object now=*)
    cpdef list events(self)

    @cython.final
    cdef _enter(self)

    @cython.locals(size="long long", cap="long long", slot=int)
    cdef _grow(self)
    @cython.locals(tail=int)
    cdef inline void _append(self, int slot) noexcept
    @cython.locals(prev=int, nxt=int)
    cdef inline void _unlink(self, int slot) noexcept
    cdef inline _release(self, int slot)

    @cython.locals(n=Py_ssize_t, serial=int, flags=int, slot=int)
    cdef int _queue(self, int command, int p1, int p2, int p3, bytes data, bint urgent,
                    double now) except -1
    @cython.locals(allow=bint, max_valid=int, slot=int, best=int, d=int, best_time=double,
                   t=double, next_send="double *", send_count="int *", serial="int *",
                   nxt="int *", urgent="int *")
    cdef int _find_best(self, double now, double cram_time, double urgency) except -2
    cdef inline void _sent(self, int slot, double now) noexcept

    @cython.locals(t=double)
    cpdef list datagrams_to_send(self, object now)
    @cython.locals(out=list, buf="unsigned char *", picked="int *", first=int, slot=int,
                   pos=Py_ssize_t, count=int, i=int, cram=int, early=bint, length=Py_ssize_t,
                   rest=int, rt=double, bits="unsigned int")
    cdef list _transmit(self, double now)
    cdef Py_ssize_t _write_command(self, Py_ssize_t pos, int slot) except -1
    @cython.locals(out="unsigned char *", crc="unsigned int")
    cdef bytes _signed(self, Py_ssize_t size)
    @cython.locals(slot=int)
    cdef bint _oldest_check(self, double now) except -1
    cdef _kill(self, str reason, double now)

    @cython.locals(at=double)
    cpdef object next_deadline(self)
    @cython.locals(best=double, lower=double, allow=bint, max_valid=int, oldest=double,
                   slot=int, t=double, kill=double, next_send="double *", send_count="int *",
                   birth="double *", serial="int *", nxt="int *")
    cdef _compute_deadlines(self)

    @cython.locals(t=double)
    cpdef list receive_datagram(self, object data, object now)
    @cython.locals(p="const unsigned char *", size=Py_ssize_t, pos=Py_ssize_t,
                   delivered=list, ack=int, bits="unsigned int", max_valid=int, rs=int,
                   rxq=dict, peer_id=int, c=Cmd, serial=int, skip=int)
    cdef list _receive(self, bytes data, double now)
    @cython.locals(rxq=dict, base=int, reach=int, one="unsigned int", bits="unsigned int",
                   s=int, d=int, k=int)
    cdef unsigned int _bitmap(self, double now) except? 0
    @cython.locals(reach=int, lead=double, frames="long long", ahead="long long")
    cdef int _reach(self, int base, double now) except? -1
    @cython.locals(slot=int, nxt=int, d=int, reach=int)
    cdef _bitmap_acks(self, int base, unsigned int bits, double now)
    @cython.locals(slot=int, nxt=int)
    cdef _cumulative_acks(self, int ack, double now)
    @cython.locals(rtt=double, command=int, weight=double, mean=double, var=double,
                   diff=double, reduction=double, alpha=double, inc=double,
                   spread="long long", rt_ms="long long", rt=double, floor=double,
                   urgent_ms="long long", urgent=double)
    cdef _validated(self, int slot, double when)


cdef inline int *_move(int *new, int *old, size_t n) noexcept:
    """new, after copying old[:n] into it."""
    if n:
        memcpy(new, old, n * sizeof(int))
    return new


cdef inline double *_move_d(double *new, double *old, size_t n) noexcept:
    """new, after copying old[:n] into it."""
    if n:
        memcpy(new, old, n * sizeof(double))
    return new


cdef inline int _resize(Connection conn, long long size, long long cap) except -1:
    """Move conn's slot pool to one new block of cap slots (the doubles, then the
    ints, array after array), keeping its first size slots; cap 0 frees it."""
    cdef char *old = conn._pool
    cdef size_t n = <size_t>size
    cdef size_t c = <size_t>cap
    cdef double *d
    cdef int *i
    if cap == 0:
        conn._pool = NULL
        conn._t_birth = conn._t_next_send = NULL
        conn._t_serial = conn._t_command = conn._t_p1 = conn._t_p2 = conn._t_p3 = NULL
        conn._t_flags = conn._t_size = conn._t_send_count = conn._t_urgent = conn._t_sender = NULL
        conn._t_prev = conn._t_next = NULL
        PyMem_Free(old)
        return 0
    if conn._t_data is None:
        raise AttributeError("Connection.__init__ has not run")
    # slots are C ints; the block's size must fit a size_t (32-bit builds)
    if cap < size or cap > 0x7FFFFFFF:
        raise MemoryError()
    if c > SIZE_MAX // (2 * sizeof(double) + 12 * sizeof(int)):
        raise MemoryError()
    d = <double *>PyMem_Malloc(c * (2 * sizeof(double) + 12 * sizeof(int)))
    if d == NULL:
        raise MemoryError()
    conn._pool = <char *>d
    conn._t_birth = _move_d(d, conn._t_birth, n)
    conn._t_next_send = _move_d(d + c, conn._t_next_send, n)
    i = <int *>(d + 2 * c)
    conn._t_serial = _move(i, conn._t_serial, n)
    conn._t_command = _move(i + c, conn._t_command, n)
    conn._t_p1 = _move(i + 2 * c, conn._t_p1, n)
    conn._t_p2 = _move(i + 3 * c, conn._t_p2, n)
    conn._t_p3 = _move(i + 4 * c, conn._t_p3, n)
    conn._t_flags = _move(i + 5 * c, conn._t_flags, n)
    conn._t_size = _move(i + 6 * c, conn._t_size, n)
    conn._t_send_count = _move(i + 7 * c, conn._t_send_count, n)
    conn._t_urgent = _move(i + 8 * c, conn._t_urgent, n)
    conn._t_sender = _move(i + 9 * c, conn._t_sender, n)
    conn._t_prev = _move(i + 10 * c, conn._t_prev, n)
    conn._t_next = _move(i + 11 * c, conn._t_next, n)
    PyMem_Free(old)
    return 0

