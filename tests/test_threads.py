"""Decoding from several threads at once (the regular, GIL build).

What may be shared between threads:

* the decoders of LLUDP, Avara and Archipelago (``decode``, ``decode_many``,
  ``decode_array``, ``compat.decode``, ``frames.decode``, both twins) are
  functions over their arguments: call them from any number of threads at
  once, with one template shared by all (a template is read, never changed,
  by decoding);
* a session (an LLUDP ``Circuit``, an Avara ``Connection``, an Archipelago
  ``ClientSession``) is one peer's state: use each from one thread at a time
  (one per peer, or behind a lock). The LLUDP and Avara sessions refuse a
  second thread that enters one of them while another is inside with a
  ``RuntimeError`` (``tests/test_thread_stress.py``), so their compiled twins
  are free-threading compatible; the tests here that share one session
  without a lock check that nothing worse than such an error happens.

Each test runs every thread's work once alone, then all threads at once
(started together at a barrier, several rounds), and compares the results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from gamecodec.archipelago import commands as C
from gamecodec.archipelago import frames as ap_frames
from gamecodec.archipelago import sample as ap_sample
from gamecodec.archipelago import session as ap_session
from gamecodec.avara import sample as avara_sample
from gamecodec.lludp import default_template
from gamecodec.lludp import sample as lludp_sample
from tests.conftest import load_twin
from tests.thread_helpers import (
    avara_exchange,
    same_alone_and_together,
    switch_often,  # noqa: F401  (an autouse fixture)
    together,
)

THREADS = 4
ROUNDS = 3


# ---------------------------------------------------------------- LLUDP


def _lludp_wires(codec: Any, seed: int) -> list[bytes]:
    template = default_template()
    return [codec.encode(m, template) for m in lludp_sample.region_stream(300, seed=seed)]


def test_lludp_decoders(impl: str) -> None:
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    template = default_template()  # one template, shared by every thread
    inputs = [_lludp_wires(codec, seed) for seed in range(THREADS)]
    jobs: list[Callable[[], Any]] = []
    for wires in inputs:
        jobs.append(lambda w=wires: [codec.decode(d, template) for d in w])
        jobs.append(lambda w=wires: codec.decode_many(w, template))
        jobs.append(lambda w=wires: [codec.peek(d, template) for d in w])
    same_alone_and_together(jobs, ROUNDS)


def test_lludp_circuits_one_per_thread(impl: str) -> None:
    twin = load_twin("gamecodec.lludp", "_circuit", impl)
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    messages = lludp_sample.region_stream(200, seed=9)

    def exchange() -> tuple[list[Any], list[bytes]]:
        """Two circuits (one thread's pair) sending to each other."""
        a = twin.Circuit(now=0.0, codec=codec)
        b = twin.Circuit(now=0.0, codec=codec)
        delivered: list[Any] = []
        sent: list[bytes] = []
        for step, message in enumerate(messages):
            now = step * 0.01
            a.send(message, reliable=step % 2 == 0, now=now)
            for wire in a.datagrams_to_send(now):
                sent.append(wire)
                delivered.extend(b.receive_datagram(wire, now))
            for wire in b.datagrams_to_send(now):
                a.receive_datagram(wire, now)
        return delivered, sent

    same_alone_and_together([exchange] * THREADS, ROUNDS)


# ---------------------------------------------------------------- Avara


def test_avara_decoders(impl: str) -> None:
    codec = load_twin("gamecodec.avara", "_codec", impl)
    inputs = [avara_sample.sample_traffic(400, seed=seed) for seed in range(THREADS)]
    jobs: list[Callable[[], Any]] = []
    for datagrams in inputs:
        jobs.append(lambda d=datagrams: [codec.decode(x) for x in d])
        jobs.append(lambda d=datagrams: codec.decode_many(d))
        jobs.append(lambda d=datagrams: [a.tobytes() for a in codec.decode_array(d)])
    same_alone_and_together(jobs, ROUNDS)


def test_avara_connections_one_per_thread(impl: str) -> None:
    twin = load_twin("gamecodec.avara", "_session", impl)
    same_alone_and_together([avara_exchange(twin)] * THREADS, ROUNDS)


# ---------------------------------------------------------------- Archipelago


def test_archipelago_decoders(impl: str) -> None:
    compat = load_twin("gamecodec.archipelago", "_compat", impl)
    inputs = [ap_sample.sample_session(seed=seed) for seed in range(THREADS)]
    jobs: list[Callable[[], Any]] = []
    for session in inputs:
        jobs.append(lambda s=session: [compat.decode(f) for f in s])
        jobs.append(lambda s=session: [compat.decode(f.encode()) for f in s])
        jobs.append(lambda s=session: [ap_frames.decode(f) for f in s])
    same_alone_and_together(jobs, ROUNDS)


GAME = C.GameData({"Cake": 3}, {"Lamp": 1003}, "abc123")


def test_archipelago_sessions_one_per_thread() -> None:
    room = ap_frames.encode(
        [
            C.RoomInfo(
                False,
                ["Clique"],
                ["AP"],
                C.VersionInfo(0, 6, 8),
                datapackage_checksums={"Clique": "abc123"},
            )
        ]
    )
    connected = ap_frames.encode(
        [
            C.Connected(
                team=0,
                slot=1,
                players=[C.Player(0, 1, "JS", "JS")],
                missing_locations=[1001],
                checked_locations=[],
                slot_info={"1": C.Slot("JS", "Clique", 1)},
                hint_points=0,
                slot_data={},
            )
        ]
    )
    items = [ap_frames.encode([C.ReceivedItems(i, [C.Item(i, 1001, 1)])]) for i in range(200)]

    def play() -> tuple[list[Any], list[Any]]:
        session = ap_session.ClientSession(name="JS", game="Clique", data_packages={"abc123": GAME})
        events = session.receive_frame(room, 0.0) + session.receive_frame(connected, 0.0)
        for frame in items:
            events += session.receive_frame(frame, 1.0)
        session.check_locations([1001])
        return events, session.items

    same_alone_and_together([play] * THREADS, ROUNDS)


# ---------------------------------------------------------------- one session, no lock


def _hammer(step: Callable[[int], Any]) -> None:
    """Run ``step`` from several threads at once on one shared compiled
    session: a race may give wrong protocol state or a Python exception, never
    a crash. (The pure twins' races can also corrupt their Python-level state:
    an Avara Connection's slot links made a loop, its transmit then never
    ended; so no shared pure session is run here.)"""

    def work(offset: int) -> int:
        done = 0
        for i in range(100):
            with contextlib.suppress(Exception):  # a Python-level race: allowed
                step(offset + i)
            done += 1
        return done

    assert together([lambda o=o: work(o * 1000) for o in range(THREADS)]) == [100] * THREADS


def test_one_compiled_circuit_shared_without_a_lock_does_not_crash() -> None:
    twin = load_twin("gamecodec.lludp", "_circuit", "c")
    a, b = twin.Circuit(now=0.0), twin.Circuit(now=0.0)
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
    a.send(messages[0], now=10.0)  # still usable


def test_one_compiled_connection_shared_without_a_lock_does_not_crash() -> None:
    twin = load_twin("gamecodec.avara", "_session", "c")
    a = twin.Connection(my_id=1, peer_id=2, now=0.0)
    b = twin.Connection(my_id=2, peer_id=1, now=0.0)

    def step(i: int) -> None:
        now = i * 0.001
        a.send(17, p1=i % 100, data=b"x", now=now)
        for wire in a.datagrams_to_send(now):
            b.receive_datagram(wire, now)
        for wire in b.datagrams_to_send(now):
            a.receive_datagram(wire, now)
        a.events()

    _hammer(step)
    a.send(17, now=10.0)
