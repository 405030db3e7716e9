"""RTT statistics and resend timers against the game's ValidatePacket."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pytest

from gamecodec.avara.session import INITIAL_RETRANSMIT_TIME, INITIAL_ROUND_TRIP_TIME
from tests.avara.helpers import sign

f32 = np.float32


@dataclass
class CppTimers:
    """``CUDPConnection::ValidatePacket`` (avaraline/Avara aaa5e633,
    src/net/CUDPConnection.cpp:356-463), in its units: ms and C floats.

    Facts: RTTSMOOTHFACTOR_UP = RTTSMOOTHFACTOR_DOWN = 100;
    CommandMultiplierForStats: kpKeyAndMouse fpsScale, kpPing with p3 > 0
    CLASSICFRAMETIME * 0.4, anything else 0 (not timed); a ping's round trip
    is scaled by 0.82 and, more than 64 ms above the mean, de-weighted by
    max(4, diff^2 / var); retransmitTime = mean + (long)(2.5 sigma) clamped
    to [urgentResendTime, 4000]; urgentRetransmitTime = 2 LT 64 - mean - 16
    clamped to [urgentResendTime, retransmitTime]; initially 2000 and 500 ms;
    while (u16) maxValid <= 10 the mean is primed by the best round trip.
    Round trips are taken on a continuous clock (ours), not whole ms.
    """

    fps_scale: float
    latency_tolerance: float
    urgent_resend: int  # itsOwner->urgentResendTime = 2 frames, ms
    mean: np.float32 = field(default_factory=lambda: f32(500))
    var: np.float32 = field(default_factory=lambda: f32(64 * 64))
    retransmit: int = 2000
    urgent: int = 500

    def validate(self, round_trip: float, command: int, p3: int, max_valid: int) -> None:
        if max_valid & 0xFFFF <= 10:
            if round_trip < self.mean:
                self.mean = f32(round_trip)
                self.var = f32(min(round_trip * round_trip, 64 * 64))
            return
        if command == 17:
            multiplier = f32(self.fps_scale)
        elif command == 31 and p3 > 0:
            multiplier = f32(64 * 0.4)
        else:
            return
        if command == 31:
            round_trip *= 0.82
        difference = f32(f32(round_trip) - self.mean)
        if command == 31 and difference > 64:
            reduction = max(4.0, float(f32(difference * difference) / self.var))
            multiplier = f32(multiplier / reduction)
        alpha = f32(multiplier / f32(100))
        increment = f32(alpha * difference)
        self.mean = f32(self.mean + increment)
        self.var = f32((f32(1) - alpha) * f32(self.var + f32(difference * increment)))
        stdev = f32(math.sqrt(self.var))
        retransmit = int(self.mean + f32(int(2.5 * float(stdev))))
        self.retransmit = min(max(retransmit, self.urgent_resend), 4000)
        urgent = int(2 * self.latency_tolerance * 64 - float(self.mean) - 16.0)
        self.urgent = min(max(urgent, self.urgent_resend), self.retransmit)


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
    assert conn.urgent_retransmit_time == INITIAL_ROUND_TRIP_TIME == cpp.urgent / 1000
    t_ms = 0
    for i in range(300):
        command, p3 = rng.choice([(17, i), (17, i), (31, 3), (31, 0), (6, 0)])
        rtt_ms = rng.choice([rng.randint(20, 90), rng.randint(20, 90), rng.randint(150, 900)])
        serial = conn.send(command, p1=-8 if command == 17 else 0, p3=p3, now=t_ms / 1000)
        assert conn.datagrams_to_send(t_ms / 1000)
        conn.receive_datagram(_ack(serial), (t_ms + rtt_ms) / 1000)
        cpp.validate(rtt_ms, command, p3, serial)
        assert conn.unacked == 0
        assert conn.mean_round_trip * 1000 == pytest.approx(float(cpp.mean), rel=1e-4)
        assert abs(conn.retransmit_time * 1000 - cpp.retransmit) <= 1
        assert abs(conn.urgent_retransmit_time * 1000 - cpp.urgent) <= 1
        t_ms += rtt_ms + 7


def test_first_resend_comes_at_the_cpp_times(twin: ModuleType) -> None:
    """After a stream of kpKeyAndMouse acked at 80 ms, with latency tolerance
    2: an urgent command's first resend comes 2*2*64 - mean - 16 ms after its
    send, a plain one's mean + 2.5 sigma after."""
    conn = twin.Connection(now=0.0, latency_tolerance=2.0)
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
