"""Throughput of decoding on 1 thread against 2 (run it on a free-threaded Python).

    python tools/ft_threads.py [--rounds 5]

Each round times the same work once on one thread and once split over two
threads (each thread decoding its own copy of the stream, so the two-thread run
does twice the work), interleaved, and prints the median speed-up in work per
second: 2.0 means the decoders did not serialise on shared state. Rows:
``lludp.decode_many`` over a region's realistic stream, and ``capture.read``
over a generated pcap of LLUDP and Avara traffic (needs dpkt).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import sysconfig
import threading
import time
from collections.abc import Callable

from gamecodec import avara, lludp
from gamecodec.avara import sample as avara_sample
from gamecodec.lludp import sample as lludp_sample


def _pcap(udp: list[tuple[int, bytes]]) -> bytes:
    """A little-endian microsecond pcap of Ethernet/IPv4/UDP packets (port, payload)."""
    import struct

    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for n, (port, payload) in enumerate(udp):
        udp_header = struct.pack("!HHHH", 50_000, port, 8 + len(payload), 0)
        total = 20 + 8 + len(payload)
        ip = struct.pack(
            "!BBHHHBBH4s4s",
            0x45,
            0,
            total,
            n & 0xFFFF,
            0,
            64,
            17,
            0,
            bytes([10, 0, 0, 2]),
            bytes([10, 0, 0, 1]),
        )
        frame = b"\x00" * 12 + b"\x08\x00" + ip + udp_header + payload
        out.append(
            struct.pack(
                "<IIII", 1_700_000_000 + n // 100, (n % 100) * 10_000, len(frame), len(frame)
            )
        )
        out.append(frame)
    return b"".join(out)


def _work() -> dict[str, Callable[[], int]]:
    template = lludp.default_template()
    wires = [lludp.encode(m, template=template) for m in lludp_sample.region_stream(20_000, seed=3)]

    def decode_own_copy() -> int:
        mine = [bytes(bytearray(w)) for w in wires]  # this thread's datagrams, as a socket gives
        return len(lludp.decode_many(mine, template=template))

    jobs: dict[str, Callable[[], int]] = {
        "lludp.decode_many (20,000 datagrams, one shared list)": lambda: len(
            lludp.decode_many(wires, template=template)
        ),
        "lludp.decode_many (20,000 datagrams, each thread its own)": decode_own_copy,
    }
    try:
        from gamecodec import capture
    except ImportError:  # pragma: no cover - without the capture extra
        return jobs
    packets = [(9000, w) for w in wires[:10_000]]
    packets += [(19567, w) for w in avara_sample.sample_traffic(10_000, seed=3)]
    data = _pcap(packets)
    assert avara.decode
    jobs["capture.read (20,000 packets)"] = lambda: sum(1 for _ in capture.read(io.BytesIO(data)))
    return jobs


def _timed(job: Callable[[], int], threads: int) -> float:
    barrier = threading.Barrier(threads + 1)
    done: list[int] = []

    def run() -> None:
        barrier.wait()
        done.append(job())

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    assert len(done) == threads and len(set(done)) == 1, done
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    print(
        f"Python {sys.version.split()[0]}, free-threaded build: "
        f"{bool(sysconfig.get_config_var('Py_GIL_DISABLED'))}, GIL on: {gil}"
    )
    for name, job in _work().items():
        job()  # warm up
        speedups = []
        ones = []
        for _ in range(args.rounds):
            one = _timed(job, 1)
            two = _timed(job, 2)
            ones.append(one)
            speedups.append(2 * one / two)  # work per second, 2 threads over 1
        print(
            f"{name}: 1 thread {statistics.median(ones):.3f} s; 2 threads do twice the "
            f"work at {statistics.median(speedups):.2f}x the throughput "
            f"(range {min(speedups):.2f}-{max(speedups):.2f}, {args.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
