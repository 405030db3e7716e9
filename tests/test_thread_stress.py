"""Eight threads at once: shared captures decoded, separate sessions fed.

On a free-threaded Python (3.13t, where the compiled twins keep the GIL off)
the threads really run in parallel; on the regular build they interleave every
few microseconds. Either way every thread's results must equal what the same
work gives run alone, and one session entered by two threads at once refuses
the second with :class:`RuntimeError` instead of corrupting its state.

The Archipelago codecs are left out: they need msgspec, which has no
free-threaded build for 3.13 (see ``docs/limits.md``).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import Any

import pytest

from gamecodec import avara, bzrc, lludp, ywindow
from gamecodec.avara import sample as avara_sample
from gamecodec.bzrc import sample as bzrc_sample
from gamecodec.lludp import sample as lludp_sample
from gamecodec.ywindow import sample as ywindow_sample
from tests.conftest import load_twin
from tests.thread_helpers import (
    avara_exchange,
    same_alone_and_together,
    switch_often,  # noqa: F401  (an autouse fixture)
    together,
)

THREADS = 8
ROUNDS = 2


# ---------------------------------------------------------------- shared inputs


def _capture_bytes() -> bytes:
    """A pcap of LLUDP and Avara traffic (the two UDP protocols; generated)."""
    pytest.importorskip("dpkt")
    from tests.capture import pcapgen

    template = lludp.default_template()
    packets = []
    t = 1_700_000_000.0
    for n, message in enumerate(lludp_sample.region_stream(300, seed=4)):
        wire = lludp.encode(message, template=template)
        packets.append(pcapgen.udp(t + n * 0.01, ("10.0.0.2", 50_001), ("10.0.0.1", 9000), wire))
    for n, wire in enumerate(avara_sample.sample_traffic(300, seed=4)):
        packets.append(pcapgen.udp(t + n * 0.01, ("10.0.0.3", 50_002), ("10.0.0.1", 19567), wire))
    packets.sort(key=lambda p: p.time)
    return pcapgen.capture(packets)


def test_shared_capture_read_by_eight_threads() -> None:
    pytest.importorskip("dpkt")
    from gamecodec import capture

    data = _capture_bytes()  # one bytes object, read by every thread

    def read() -> list[Any]:
        return [(type(u).__name__, u.protocol, u.payload) for u in capture.read(io.BytesIO(data))]

    first = read()
    assert sum(1 for kind, _, _ in first if kind == "Unit") == 600
    same_alone_and_together([read] * THREADS, ROUNDS)


def test_shared_datagrams_decoded_by_eight_threads(impl: str) -> None:
    lludp_codec = load_twin("gamecodec.lludp", "_codec", impl)
    avara_codec = load_twin("gamecodec.avara", "_codec", impl)
    template = lludp.default_template()  # one template, read by every thread
    lludp_wires = [lludp_codec.encode(m, template) for m in lludp_sample.region_stream(400, seed=5)]
    avara_wires = avara_sample.sample_traffic(400, seed=5)
    jobs: list[Callable[[], Any]] = []
    for _ in range(THREADS // 2):
        jobs.append(lambda: lludp_codec.decode_many(lludp_wires, template))
        jobs.append(lambda: avara_codec.decode_many(avara_wires))
    same_alone_and_together(jobs, ROUNDS)


def test_stream_decoders_one_per_thread(impl: str) -> None:
    bzrc_codec = load_twin("gamecodec.bzrc", "_codec", impl)
    ywindow_codec = load_twin("gamecodec.ywindow", "_codec", impl)
    answers = b"".join(bzrc_sample.mytanks_responses(64))  # shared by every thread
    words = ywindow_sample.sample_stream(300, chunk=61)

    def bzrc_job() -> list[Any]:
        decoder = bzrc_codec.Decoder()
        out: list[Any] = []
        for start in range(0, len(answers), 97):  # chunked: state carried across feeds
            out.extend(decoder.feed(answers[start : start + 97]))
        assert out
        return out

    def ywindow_job() -> list[Any]:
        decoder = ywindow_codec.Decoder()
        out: list[Any] = []
        for chunk in words:
            out.extend(decoder.feed(chunk))
        assert out
        return out

    same_alone_and_together([bzrc_job, ywindow_job] * (THREADS // 2), ROUNDS)


# ---------------------------------------------------------------- sessions


def _lludp_exchange(twin: Any, codec: Any) -> Callable[[], Any]:
    messages = lludp_sample.region_stream(200, seed=9)

    def exchange() -> tuple[list[Any], list[bytes]]:
        a = twin.Circuit(now=0.0, codec=codec)
        b = twin.Circuit(now=0.0, codec=codec)
        delivered: list[Any] = []
        sent: list[bytes] = []
        for step, message in enumerate(messages):
            now = step * 0.01
            a.send(message, reliable=step % 2 == 0, now=now)
            for wire in a.datagrams_to_send(now):
                sent.append(wire)
                if step % 5:
                    delivered.extend(b.receive_datagram(wire, now))
            for wire in b.datagrams_to_send(now):
                a.receive_datagram(wire, now)
            a.events()
        return delivered, sent

    return exchange


def test_separate_sessions_fed_by_eight_threads(impl: str) -> None:
    avara_twin = load_twin("gamecodec.avara", "_session", impl)
    lludp_twin = load_twin("gamecodec.lludp", "_circuit", impl)
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    jobs = [avara_exchange(avara_twin), _lludp_exchange(lludp_twin, codec)] * (THREADS // 2)
    same_alone_and_together(jobs, ROUNDS)


def _in_use(session: Any, call: Callable[[], Any]) -> None:
    """``call`` made while another thread is inside ``session`` raises
    RuntimeError: the session's busy lock (``_busy``) held here stands for that thread."""
    with session._busy, pytest.raises(RuntimeError, match="already in use"):
        call()


def test_one_avara_connection_refuses_a_second_thread(impl: str) -> None:
    twin = load_twin("gamecodec.avara", "_session", impl)
    conn = twin.Connection(my_id=1, peer_id=2, now=0.0)
    wire = avara.encode(0, [avara.Command.make(0, 17, sender=2)])
    for call in (
        lambda: conn.send(17, now=0.1),
        lambda: conn.datagrams_to_send(0.1),
        lambda: conn.receive_datagram(wire, 0.1),
        conn.events,
        conn.next_deadline,
        lambda: conn.unacked_serials,
        lambda: conn.receive_queue,
        conn.ack_block,
    ):
        _in_use(conn, call)
    conn.send(17, now=0.2)  # usable again once the other thread left
    assert conn.datagrams_to_send(0.2)


def test_one_lludp_circuit_refuses_a_second_thread(impl: str) -> None:
    twin = load_twin("gamecodec.lludp", "_circuit", impl)
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    circuit = twin.Circuit(now=0.0, codec=codec)
    message = lludp_sample.region_stream(1, seed=1)[0]
    wire = codec.encode(message, lludp.default_template())
    for call in (
        lambda: circuit.send(message, now=0.1),
        lambda: circuit.datagrams_to_send(0.1),
        lambda: circuit.receive_datagram(wire, 0.1),
        circuit.events,
        circuit.next_deadline,
    ):
        _in_use(circuit, call)
    circuit.send(message, now=0.2)
    assert circuit.datagrams_to_send(0.2)


def _hammer(step: Callable[[int], Any]) -> int:
    """``step`` from eight threads at once on one shared session: each call
    either works or is refused with the session's RuntimeError (never another
    exception, a hang or a crash). The refusals counted."""
    refused = [0] * THREADS

    def work(index: int) -> int:
        for i in range(100):  # 800 sends in all: within the 1024-command queue
            try:
                step(index * 1000 + i)
            except RuntimeError as exc:
                assert "already in use" in str(exc)
                refused[index] += 1
        return 100

    assert together([lambda i=i: work(i) for i in range(THREADS)]) == [100] * THREADS
    return sum(refused)


def test_one_shared_avara_connection_hammered(impl: str) -> None:
    twin = load_twin("gamecodec.avara", "_session", impl)
    a = twin.Connection(my_id=1, peer_id=2, now=0.0)
    b = twin.Connection(my_id=2, peer_id=1, now=0.0)

    def step(i: int) -> None:
        now = i * 0.001
        a.send(17, p1=i % 100, data=b"x", now=now)
        for wire in a.datagrams_to_send(now):
            b.receive_datagram(wire, now)
        for wire in b.datagrams_to_send(now):  # acks: the queue does not overflow
            a.receive_datagram(wire, now)
        a.events()

    _hammer(step)
    a.send(17, now=10.0)  # still consistent and usable
    assert a.datagrams_to_send(10.0)


def test_one_shared_lludp_circuit_hammered(impl: str) -> None:
    twin = load_twin("gamecodec.lludp", "_circuit", impl)
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    a = twin.Circuit(now=0.0, codec=codec)
    b = twin.Circuit(now=0.0, codec=codec)
    messages = lludp_sample.region_stream(50, seed=2)

    def step(i: int) -> None:
        now = i * 0.001
        a.send(messages[i % 50], reliable=True, now=now)
        for wire in a.datagrams_to_send(now):
            b.receive_datagram(wire, now)
        for wire in b.datagrams_to_send(now):
            a.receive_datagram(wire, now)
        a.events()

    _hammer(step)
    a.send(messages[0], now=10.0)
    assert a.datagrams_to_send(10.0)


def test_bzrc_and_ywindow_modules_load_here() -> None:
    # the imports above ran every protocol package this file needs; on a
    # free-threaded Python the GIL stayed off through them
    assert bzrc.Decoder and ywindow.Decoder
    if hasattr(sys, "_is_gil_enabled"):
        import sysconfig

        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            assert not sys._is_gil_enabled()
