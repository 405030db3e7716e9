"""Running the same work on several threads at once (tests/test_threads.py,
tests/test_thread_stress.py): imports nothing that needs msgspec, so the
free-threaded run can use it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def switch_often() -> Iterator[None]:
    """Switch threads every few microseconds (the regular build), so that work interleaves."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def together(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run the jobs in threads released at once by a barrier; their results, or the first error."""
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = jobs[index]()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def same_alone_and_together(jobs: list[Callable[[], Any]], rounds: int) -> None:
    """Each job's result run alone equals its result run with the others, ``rounds`` times."""
    alone = [job() for job in jobs]
    for _ in range(rounds):
        assert together(jobs) == alone


def avara_exchange(twin: Any) -> Callable[[], tuple[list[Any], list[bytes]]]:
    """One thread's work: two Connections of ``twin`` sending to each other, every
    seventh datagram lost (resends and reordering); what was delivered and sent."""

    def exchange() -> tuple[list[Any], list[bytes]]:
        a = twin.Connection(my_id=1, peer_id=2, now=0.0)
        b = twin.Connection(my_id=2, peer_id=1, now=0.0)
        delivered: list[Any] = []
        sent: list[bytes] = []
        for step in range(300):
            now = step * 0.016
            a.send(17, p1=step % 100, data=step.to_bytes(2, "little"), now=now)
            for wire in a.datagrams_to_send(now):
                sent.append(wire)
                if step % 7:  # every seventh datagram lost: resends and reordering
                    delivered.extend(b.receive_datagram(wire, now))
            for wire in b.datagrams_to_send(now):
                a.receive_datagram(wire, now)
            a.events()
        return delivered, sent

    return exchange
