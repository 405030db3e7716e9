# Types for the compiled twin of _circuit_py.py (one source, aiohttp's reader_c.pxd model).
# Cython reads this augmenting .pxd when it compiles _circuit_py.py as
# gamecodec.lludp._circuit_c: Circuit becomes a cdef class with C-typed fields.
cimport cython


cdef long long _MASK
cdef long long _HALF
cdef int _ZEROCODED
cdef int _RELIABLE
cdef int _RESENT
cdef int _ACK
cdef double _INF
cdef long long _MAX_LIMIT
cdef long _MAX_ACKS
cdef Py_ssize_t _MAX_DATAGRAM
cdef double _MAX_TIME
cdef object _HEAD
cdef object _ONE_ACK
cdef dict _ACK_TAILS
cdef dict _ACK_IDS
cdef frozenset _CONTROL

cdef bytes _ack_tail(list acks, Py_ssize_t count)
cdef bytes _packet_ack_body(list ids)
cdef bint _older(long long a, long long b)


cdef class _Pending:
    cdef bytes wire
    cdef Py_ssize_t end
    cdef double exp
    cdef long resends


@cython.locals(p=_Pending)
cdef _Pending _pending(bytes wire, Py_ssize_t end, double exp)

@cython.locals(table=bytearray, code=long)
cdef bytes _control_leads(object template)


cdef class Circuit:
    cdef object _template
    cdef bytes _control_lead
    cdef object _decode
    cdef object _encode_packet
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
    cdef dict _unacked
    cdef list _timeline
    cdef Py_ssize_t _tl_head
    cdef double _last_exp
    cdef list _out
    cdef double _out_at
    cdef list _acks
    cdef double _ack_deadline
    cdef set _seen
    cdef list _order
    cdef Py_ssize_t _order_head
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

    cdef double _timeout_for(self, double ping)

    @cython.locals(n=long, transit=double, ping=double)
    cdef double _rto_at(self, double now)

    cpdef object next_deadline(self)

    @cython.locals(timeline=list, unacked=dict, p=_Pending, exp=double, t=double, lost_at=double,
                   head=Py_ssize_t, n=Py_ssize_t)
    cdef double _compute_wake(self)

    @cython.locals(seq="long long", acks=list, count=Py_ssize_t, wire=bytes, end=Py_ssize_t)
    cdef long long _send(self, object message, bint reliable, double now) except -1

    @cython.locals(seq="long long", acks=list, count=Py_ssize_t, room=Py_ssize_t, wire=bytes,
                   end=Py_ssize_t)
    cdef long long _put(self, int flags, bytes body, bint can_ack, double now) except -1

    @cython.locals(exp=double, out=list)
    cdef int _queue(self, object seq, bytes wire, Py_ssize_t end, bint reliable,
                    double now) except -1

    @cython.locals(timeline=list, unacked=dict, p=_Pending, i=Py_ssize_t)
    cdef _schedule_early(self, object seq, double exp)

    cpdef list datagrams_to_send(self, double now)

    @cython.locals(timeline=list, unacked=dict, p=_Pending, cap=long, exp=double, wire=bytes,
                   end=Py_ssize_t, flags=int)
    cdef _timers(self, double now)

    @cython.locals(ping_id=long, oldest="long long")
    cdef _send_ping(self, double now)

    @cython.locals(acks=list, start=Py_ssize_t, n=Py_ssize_t, chunk=list)
    cdef _flush_acks(self, double now)

    cdef _kill(self, str reason, double now)

    @cython.locals(raw=bytes, flags=int, control=bint, seq="long long", unacked=dict, order=list,
                   end=Py_ssize_t, pos=Py_ssize_t, a="long long", timeline=list,
                   head=Py_ssize_t, first="long long")
    cpdef list receive_datagram(self, object data, double now)

    @cython.locals(acks=list, deadline=double)
    cdef _queue_ack(self, object seq, double now)

    @cython.locals(blocks=dict, unacked=dict, last=long)
    cdef _control(self, object msg, double now)

    @cython.locals(prune="long long", order=list, seen=set, head=Py_ssize_t, n=Py_ssize_t)
    cdef _prune(self, long long oldest)

    cdef _forget_to(self, Py_ssize_t head)

    @cython.locals(behind=long, rtt=double, avg=double)
    cdef _ping_answered(self, long ping_id, double now)


cdef class _Idle:
    cdef list _out, _none
    cpdef list datagrams_to_send(self, double now)
    cpdef list receive_datagram(self, object data, double now)
