# cython: language_level=3
# The compiled codec's wire primitives, for the compiled session to cimport
# (_session_c.pxd): one CRC-16, one command reader, one writer of the ack block
# and one of commands. Their
# pure twins, with the same names and arguments, are in _codec_py.py.
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint16_t, uint32_t


cdef enum:
    # Cmd.field of a command that does not parse: the field that runs past
    # the end (the order of _errors.FIELDS), or a dataLen outside 0..984
    FIELD_HEADER = 0
    FIELD_DISTRIBUTION = 1
    FIELD_P3 = 2
    FIELD_P2 = 3
    FIELD_DATA_LEN = 4
    FIELD_P1 = 5
    FIELD_SENDER = 6
    FIELD_DATA = 7
    FIELD_BAD_DATA_LEN = 8


cdef struct Cmd:
    # One command as read: end is the offset after it, or -1 when it does
    # not parse (then field says why and data_pos is where that field starts;
    # n is the bad dataLen for FIELD_BAD_DATA_LEN, the missing data's length
    # for FIELD_DATA). distribution and sender are 0 where the flags lack them.
    Py_ssize_t end
    uint16_t serial
    uint8_t send_count
    uint8_t flags
    int8_t command
    int16_t distribution
    int32_t p3
    int16_t p2
    int8_t p1
    int8_t sender
    Py_ssize_t data_pos
    Py_ssize_t n
    int field


cdef uint16_t crc16(const uint8_t *p, Py_ssize_t start, Py_ssize_t end,
                    uint16_t crc) noexcept nogil
cdef Cmd parse_command(const uint8_t *p, Py_ssize_t size, Py_ssize_t pos,
                       bint current) noexcept nogil
cdef object command_object(Cmd c, const uint8_t *p)
cdef Py_ssize_t write_acks(uint8_t *out, int ack, uint32_t bitmap) noexcept nogil
cdef int writer_flags(bint distribution, long long p3, long long p2, Py_ssize_t n,
                      long long p1, bint sender) noexcept nogil
cdef Py_ssize_t write_command(uint8_t *out, Py_ssize_t pos, bint current, int serial,
                              int send_count, int flags, int command, int distribution,
                              int p3, int p2, int p1, int sender, bytes data) noexcept
