"""A capture report: what flows a pcap holds, which messages, and what was damaged.

``python capture_report.py game.pcap`` reports on a capture (tcpdump,
tshark or Wireshark write them); with no argument it first records a small
demonstration capture of its own: a viewer talking to an OpenSimulator
region, an Avara game, and one damaged datagram.

Needs ``pip install "gamecodec[capture]"`` (dpkt, pyarrow, rich, matplotlib).
"""

from __future__ import annotations

import socket
import sys
import tempfile
from collections import Counter
from pathlib import Path

import dpkt  # type: ignore[import-untyped]  # dpkt has no type hints

from gamecodec import avara, capture, lludp

VIEWER, REGION = ("10.0.0.2", 51712), ("10.0.0.1", 9000)
PLAYER, SERVER = ("10.0.0.3", 40000), ("10.0.0.1", 19567)


def _frame(src: tuple[str, int], dst: tuple[str, int], payload: bytes) -> bytes:
    """One Ethernet frame of an IPv4 UDP datagram."""
    udp = dpkt.udp.UDP(sport=src[1], dport=dst[1], data=payload)
    udp.ulen = len(udp)
    ip = dpkt.ip.IP(
        src=socket.inet_aton(src[0]), dst=socket.inet_aton(dst[0]), p=dpkt.ip.IP_PROTO_UDP, data=udp
    )
    ip.len = len(ip)
    return bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip))


def record_demo(path: Path) -> None:
    """Write a small capture: LLUDP chat and pings, Avara commands, one bad datagram."""
    packets: list[tuple[tuple[str, int], tuple[str, int], bytes]] = []
    for n in range(20):
        chat = lludp.build(
            "ChatFromViewer",
            AgentData={"AgentID": bytes(16), "SessionID": bytes(16)},
            ChatData={"Message": f"hello {n}", "Type": 1, "Channel": 0},
        )
        packets.append((VIEWER, REGION, lludp.encode(chat._replace(sequence=n + 1))))
        ping = lludp.build("StartPingCheck", PingID={"PingID": n, "OldestUnacked": 0})
        packets.append((REGION, VIEWER, lludp.encode(ping._replace(sequence=n + 1))))
    for serial in range(10):
        command = avara.Command.make(serial, 17, p3=serial, sender=1)
        packets.append((PLAYER, SERVER, avara.encode(2 * serial, [command])))
    packets.append((VIEWER, REGION, b"\x40\x00\x00"))  # too short for a packet header
    with path.open("wb") as out:
        writer = dpkt.pcap.Writer(out)
        for n, (src, dst, payload) in enumerate(packets):
            writer.writepkt(_frame(src, dst, payload), ts=1_700_000_000 + n * 0.01)


def report(path: Path) -> None:
    """Print the flows, the messages of each protocol and the errors of ``path``."""
    read = capture.read(str(path))
    messages: Counter[tuple[str, str]] = Counter()
    sizes: Counter[tuple[str, str]] = Counter()
    errors: list[capture.CaptureError] = []
    for item in read:  # units and errors in capture order, streamed
        if isinstance(item, capture.CaptureError):
            errors.append(item)
            continue
        for name in item.names:
            messages[item.protocol, name] += 1
            sizes[item.protocol, name] += item.size // len(item.names)
    units = sum(flow.units for flow in read.flows)
    print(f"{path.name}: {read.packets} packets, {units} units, {len(errors)} errors")
    print("flows:")
    for flow in read.flows:
        f = flow.flow
        print(
            f"  {f.protocol or '?':6} {f.transport} {f.client} -> {f.server}: "
            f"{flow.packets} packets, {flow.units} units, {flow.errors} errors"
        )
    print("messages:")
    for (protocol, name), count in sorted(messages.items()):
        average = sizes[protocol, name] / count
        print(f"  {protocol:6} {name:16} {count:3} x {average:5.1f} bytes on average")
    print("errors:")
    for error in errors:
        print(f"  {error.where}: {error.message}")


def main(argv: list[str]) -> None:
    if argv:
        report(Path(argv[0]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo.pcap"
        record_demo(demo)
        report(demo)


if __name__ == "__main__":
    main(sys.argv[1:])
