"""RTT statistics and resend timers against the game's ValidatePacket."""

from __future__ import annotations

import math
import random
from types import ModuleType

import pytest

from gamecodec.avara.session import INITIAL_RETRANSMIT_TIME
from tests.avara.cpp_model import CppTimers
from tests.avara.helpers import sign


def _ack(serial: int) -> bytes:
    return sign(serial.to_bytes(2, "little"))


@pytest.mark.parametrize(("frame_time", "lt"), [(16.0, 2.0), (16.0, 0.0), (8.0, 1.5), (64.0, 4.0)])
def test_timers_follow_validate_packet(
    twin: ModuleType,
    frame_time: float,
    lt: float,
) -> None:
    rng = random.Random(int(frame_time * 10 + lt))
    told = {"latency_tolerance": lt} if lt else {}  # the game's LT starts at 0
    conn = twin.Connection(now=0.0, frame_time=frame_time, **told)
    cpp = CppTimers(frame_time / 64, lt, int(2 * frame_time))
    assert conn.retransmit_time == INITIAL_RETRANSMIT_TIME == cpp.retransmit / 1000
    # FreshClient (CUDPConnection.cpp:860): urgentRetransmitTime = urgentResendTime,
    # 2 frames (CUDPComm.cpp:1272), not the constructor's 500 ms (:78)
    assert conn.urgent_retransmit_time == cpp.urgent / 1000 == 2 * frame_time / 1000
    t_ms = 0
    for i in range(300):
        command, p3 = rng.choice([(17, i), (17, i), (31, 3), (31, 0), (6, 0)])
        rtt_ms = rng.choice([rng.randint(20, 90), rng.randint(20, 90), rng.randint(150, 900)])
        serial = conn.send(command, p1=-8 if command == 17 else 0, p3=p3, now=t_ms / 1000)
        assert conn.datagrams_to_send(t_ms / 1000)
        conn.receive_datagram(_ack(serial), (t_ms + rtt_ms) / 1000)
        cpp.validate(rtt_ms, command, p3, serial)
        assert conn.unacked == 0
        assert conn.mean_round_trip * 1000 == pytest.approx(cpp.mean, rel=1e-4)
        assert abs(conn.retransmit_time * 1000 - cpp.retransmit) <= 1
        assert abs(conn.urgent_retransmit_time * 1000 - cpp.urgent) <= 1
        t_ms += rtt_ms + 7


def test_first_resend_comes_at_the_cpp_times(twin: ModuleType) -> None:
    """After a stream of kpKeyAndMouse acked at 80 ms, with latency tolerance
    2: an urgent command's first resend comes 2*2*64 - mean - 16 ms after its
    send, a plain one's mean + 2.5 sigma after."""
    conn = twin.Connection(now=0.0, latency_tolerance=2.0, peer_cram_data=3)
    cpp = CppTimers(0.25, 2.0, 32)
    t_ms = 0
    for i in range(200):
        serial = conn.send(17, p1=-8, p3=i, now=t_ms / 1000)
        conn.datagrams_to_send(t_ms / 1000)
        conn.receive_datagram(_ack(serial), (t_ms + 80) / 1000)
        cpp.validate(80, 17, i, serial)
        t_ms += 100
    assert cpp.urgent == 256 - 80 - 16  # the mean has settled at 80 ms
    t = t_ms / 1000
    conn.send(17, p1=-8, p3=1, now=t)  # urgent after its first write (p1 != 0)
    conn.datagrams_to_send(t)
    assert conn.next_deadline() == pytest.approx(t + cpp.urgent / 1000, abs=0.001)
    assert conn.datagrams_to_send(t + cpp.urgent / 1000 - 0.002) == []
    assert len(conn.datagrams_to_send(t + cpp.urgent / 1000 + 0.001)) == 1

    plain = twin.Connection(now=0.0, latency_tolerance=2.0)
    for i in range(200):
        serial = plain.send(17, p1=-8, p3=i, now=i / 10)
        plain.datagrams_to_send(i / 10)
        plain.receive_datagram(_ack(serial), i / 10 + 0.08)
    plain.send(6, data=b"chat", now=30.0)  # p1 0: never urgent
    plain.datagrams_to_send(30.0)
    assert plain.next_deadline() == pytest.approx(30.0 + cpp.retransmit / 1000, abs=0.001)


def test_latency_tolerance_is_checked(twin: ModuleType) -> None:
    conn = twin.Connection(now=0.0)
    assert conn.latency_tolerance == 0.0
    conn.latency_tolerance = 8
    assert conn.latency_tolerance == 8.0
    for bad in (-0.5, 8.5, math.nan, "2", None):
        with pytest.raises(ValueError, match="latency_tolerance"):
            conn.latency_tolerance = bad
        with pytest.raises(ValueError, match="latency_tolerance"):
            twin.Connection(now=0.0, latency_tolerance=bad)
