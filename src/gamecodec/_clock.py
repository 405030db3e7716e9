"""The time bound the UDP sessions (Avara ``Connection``, LLUDP ``Circuit``) share.

Every entry point takes ``now`` in seconds from any origin. Within +-2**33 s
(272 years; Unix time is fine until 2242) a double still resolves a
microsecond, so every timer set after ``now`` (Avara's 120 s kill check with its
1 us margin, LLUDP's resends, pings and ack flushes) comes after it and
``datagrams_to_send`` always ends. Past it, ``now + 1e-6 == now`` (Avara's kill
check stayed due forever at 1e11), and with nanoseconds passed as seconds
``now + 100 == now`` (a false PeerLost, or a resend loop that never ended). The
whole session must fit: a deadline past the limit cannot be kept.
"""

from __future__ import annotations

__all__ = ["MAX_TIME", "check_time"]

MAX_TIME = float(2**33)
"""The largest ``abs(now)`` the sessions accept, in seconds."""


def check_time(now: float) -> None:
    """Refuse a ``now`` the timers cannot work with (see :data:`MAX_TIME`)."""
    if not -MAX_TIME <= now <= MAX_TIME:
        raise ValueError(f"now {now!r}: not a finite time within +-2**33 s")
