# cython: language_level=3
# Types for _circuit_py.py, compiled as gamecodec.lludp._circuit_c: one source
# for both twins, typed by this augmenting .pxd (as aiohttp's reader_c.pxd
# types reader_py.py). The private constants are C values here; the public
# ones stay Python objects. Sequence numbers are long long: a received header
# carries 32 bits. max_size, mtu, max_resends and duplicate_window stay Python
# ints, as given, so both twins take the same values.
cimport cython


cdef long long _MASK, _HALF
cdef int _ZEROCODED, _RELIABLE, _RESENT, _ACK
cdef frozenset _CONTROL
cdef double _INF, _MAX_TIME
cdef Py_ssize_t _MAX_DATAGRAM
cdef object _HEAD, _PING_BODY
cdef bytes _PACKET_ACK_HEAD, _START_PING_HEAD, _COMPLETE_PING_HEAD


@cython.locals(t=double)
cdef double _seconds(object now) except? -1.0

@cython.locals(d="long long")
cdef bint _older(long long a, long long b) noexcept

cdef bytes _ack_tail(list acks, Py_ssize_t count)
cdef bytes _packet_ack_body(list ids)


@cython.final
cdef class _Pending:
    cdef bytes wire
    cdef Py_ssize_t end
    cdef double exp
    cdef long long resends


@cython.locals(p=_Pending)
cdef _Pending _pending(bytes wire, Py_ssize_t end, double exp)


cdef class Circuit:
    cdef readonly object _busy  # the entry points' lock (readonly: the tests hold it)
    cdef object _template
    cdef object _decode, _encode_packet, _zero_decode
    cdef public bint strict
    cdef object _max_size, _mtu, _limit
    cdef str _zero_coding
    cdef double _ping_interval, _circuit_timeout
    cdef double _reliable_timeout_factor, _minimum_reliable_timeout
    cdef object _max_resends, _duplicate_window  # any int, as given
    cdef double _ping_alpha, _ping_min, _ping_max, _ack_collect_time
    cdef long long _max_appended_acks, _max_pending_acks, _max_bad_datagrams
    cdef public bint deliver_control
    # sending
    cdef long long _seq
    cdef dict _unacked
    cdef object _timeline
    cdef double _last_exp
    cdef list _out
    cdef double _out_at
    # acks owed to the peer
    cdef list _acks
    cdef double _ack_deadline
    # duplicate suppression
    cdef set _seen
    cdef object _order
    cdef long long _prune_at, _ping_in
    # pings and round-trip time
    cdef long long _ping_id, _pings_in_transit
    cdef double _ping_sent, _next_ping, _last_ping_answer
    cdef public double rtt
    cdef double _ping_avg, _rto
    # state and counters
    cdef object _lost
    cdef list _events
    cdef double _timer_wake, _wake
    cdef public long long packets_out, packets_in, resent, duplicates, dropped
    cdef public long long bad_datagrams_dropped, strict_failures_dropped

    cpdef list events(self)

    @cython.final
    cdef _enter(self)

    @cython.final
    @cython.locals(t=double)
    cdef double _timeout_for(self, double ping) noexcept

    @cython.final
    @cython.locals(n="long long", transit=double, ping=double)
    cdef double _rto_at(self, double now) noexcept

    cpdef object next_deadline(self)

    @cython.final
    @cython.locals(timeline=object, unacked=dict, t=double, p=_Pending)
    cdef double _compute_wake(self) except? -1.0

    @cython.final
    @cython.locals(seq="long long", acks=list, count=Py_ssize_t, wire=bytes, end=Py_ssize_t)
    cdef long long _send(self, object message, bint reliable, double now) except -1

    @cython.final
    @cython.locals(body_end=Py_ssize_t)
    cdef _check_expansion(self, object message, bytes wire, Py_ssize_t end)

    @cython.final
    @cython.locals(seq="long long", acks=list, end=Py_ssize_t, count=Py_ssize_t, wire=bytes)
    cdef _put(self, int flags, bytes body, bint can_ack, double now)

    @cython.final
    @cython.locals(exp=double)
    cdef _queue(self, long long seq, bytes wire, Py_ssize_t end, bint reliable, double now)

    @cython.final
    @cython.locals(timeline=object, unacked=dict, i=Py_ssize_t, p=_Pending)
    cdef _schedule_early(self, long long seq, double exp)

    @cython.locals(t=double)
    cpdef list datagrams_to_send(self, object now)

    @cython.final
    @cython.locals(out=list)
    cdef list _datagrams_to_send(self, double t)

    @cython.final
    @cython.locals(timeline=object, unacked=dict, cap=object, seq="long long", p=_Pending,
                   wire=bytes, flags=int, exp=double, dropped=bytes)
    cdef _timers(self, double now)

    @cython.final
    @cython.locals(ping_id="long long", oldest="long long")
    cdef _send_ping(self, double now)

    @cython.final
    @cython.locals(acks=list, start=Py_ssize_t)
    cdef _flush_acks(self, double now)

    @cython.final
    cdef _kill(self, str reason, double now)

    @cython.locals(t=double, raw=bytes)
    cpdef list receive_datagram(self, object data, object now)

    @cython.final
    @cython.locals(seq="long long", control=bint)
    cdef list _receive_datagram(self, bytes raw, double t)

    @cython.final
    @cython.locals(unacked=dict, timeline=object)
    cdef _retire(self, tuple acks)

    @cython.final
    @cython.locals(n=Py_ssize_t, count=Py_ssize_t, ids=tuple)
    cdef bint _apply_appended_acks(self, bytes raw) except -1

    @cython.final
    cdef _refuse(self, object exc, bytes raw, double now)

    @cython.final
    cdef _bad_datagram(self, object exc, bytes raw, double now)

    @cython.final
    cdef _strict_failed(self, object msg, object exc, bytes raw, double now)

    @cython.final
    cdef _queue_ack(self, long long seq, double now)

    @cython.final
    @cython.locals(unacked=dict, last="long long")
    cdef _control(self, object msg, double now)

    @cython.final
    @cython.locals(prune="long long", order=object)
    cdef _prune(self, object oldest)

    @cython.final
    @cython.locals(behind="long long", rtt=double, avg=double)
    cdef _ping_answered(self, object ping_id, double now)
