"""The numpy dtypes of :func:`gamecodec.avara.decode_array` (imports numpy).

Imported only when a structured-array result is asked for, so that
``import gamecodec.avara`` does not load numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["COMMAND_DTYPE", "DATAGRAM_DTYPE"]

COMMAND_DTYPE = np.dtype(
    [
        ("datagram", "=u4"),
        ("serial", "=u2"),
        ("send_count", "u1"),
        ("flags", "u1"),
        ("command", "i1"),
        ("distribution", "=i2"),
        ("p1", "i1"),
        ("p2", "=i2"),
        ("p3", "=i4"),
        ("sender", "i1"),
        ("data_offset", "=u4"),
        ("data_length", "=u2"),
        ("has_distribution", "?"),
        ("has_sender", "?"),
    ]
)
"""One row per command. ``distribution``/``sender`` read 0 when the datagram
leaves them out, like a real 0: ``has_distribution``/``has_sender`` (the
flags' 0x40/0x80 bits) say whether they were on the wire (the game then uses
the receiver's own bit and the sending peer's slot); ``data_offset`` is into
the datagram."""

DATAGRAM_DTYPE = np.dtype(
    [
        ("status", "u1"),
        ("ack", "=u2"),
        ("ack_bitmap", "=i4"),
        ("first_command", "=u4"),
        ("command_count", "=u4"),
        ("error_offset", "=u4"),
    ]
)
"""One row per input datagram; ``status`` is a :class:`~gamecodec.avara.Status`
(a checksum failure is ``CRC_MISMATCH``); ``ack`` and ``ack_bitmap`` are 0
where absent; ``error_offset`` is the byte offset of a ``BAD_DATA_LEN`` /
``TRUNCATED`` error."""
