"""Units built by hand from the project's corpus (tests/data), with each protocol's
public decoder: input for the tables, JSON lines and statistics without a capture."""

from __future__ import annotations

import json
from pathlib import Path

from gamecodec import archipelago, avara, bzrc, lludp
from gamecodec.capture import Address, CaptureError, Flow, Item, Unit

DATA = Path(__file__).resolve().parents[1] / "data"
T0 = 1_700_000_000.0


def flow(protocol: str, index: int, transport: str = "udp", port: int = 9000) -> Flow:
    return Flow(
        transport,  # type: ignore[arg-type]
        Address("10.0.0.2", 50_000 + index),
        Address("10.0.0.1", port),
        protocol,
        "test",
        index,
    )


def lludp_units(index: int = 1) -> list[Unit]:
    """Every datagram of the LLUDP corpus, alternating directions."""
    f = flow("lludp", index)
    out = []
    lines = (DATA / "lludp" / "messages.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        wire = bytes.fromhex(json.loads(line)["wire"])
        m = lludp.decode(wire)
        direction = "to_server" if n % 2 == 0 else "to_client"
        out.append(Unit(T0 + n * 0.01, n + 1, f, direction, "lludp", (m.name,), m, len(wire), wire))
    return out


def avara_units(index: int = 2) -> list[Unit]:
    """Every datagram of the Avara vectors that decodes."""
    f = flow("avara", index, port=19567)
    out = []
    for n, line in enumerate((DATA / "avara" / "vectors.jsonl").read_text().splitlines()):
        wire = bytes.fromhex(json.loads(line)["wire"])
        try:
            d = avara.decode(wire)
        except ValueError:
            continue
        names = tuple(avara.CommandId(c.command).name for c in d.commands)
        direction = "to_server" if n % 2 == 0 else "to_client"
        out.append(Unit(T0 + n * 0.01, n + 1, f, direction, "avara", names, d, len(wire), wire))
    return out


def archipelago_units(index: int = 3) -> list[Unit]:
    """The text frames of the small Archipelago session."""
    f = flow("archipelago", index, "tcp", 38281)
    out = []
    path = DATA / "archipelago" / "small" / "session.jsonl"
    for n, line in enumerate(path.read_text().splitlines()):
        record = json.loads(line)
        raw = record["raw"].encode()
        try:
            commands = archipelago.decode(raw)
        except ValueError:
            continue
        names = tuple(type(c).__name__ for c in commands)
        direction = "to_client" if record["dir"] == "s2c" else "to_server"
        out.append(
            Unit(
                T0 + record["t"], n + 1, f, direction, "archipelago", names, commands, len(raw), raw
            )
        )
    return out


def bzrc_units(index: int = 4) -> list[Unit]:
    """Commands and responses of one recorded bzrflag session, in order."""
    f = flow("bzrc", index, "tcp", 47200)
    exchanges = json.loads((DATA / "bzrc" / "basic_four_ls.json").read_text())["exchanges"]
    decoder = bzrc.Decoder()
    out: list[Unit] = []
    n = 0
    for exchange in exchanges:
        for line in exchange["send"].encode().splitlines(keepends=True):
            n += 1
            word = line.split()[0].decode() if line.split() else ""
            out.append(
                Unit(
                    T0 + n * 0.01,
                    n,
                    f,
                    "to_server",
                    "bzrc",
                    (word,),
                    line.decode().strip(),
                    len(line),
                    line,
                )
            )
        recv = exchange["recv"].encode()
        if recv:
            for response in decoder.feed(recv):
                n += 1
                kind = type(response).__name__
                out.append(
                    Unit(
                        T0 + n * 0.01, n, f, "to_client", "bzrc", (kind,), response, len(recv), recv
                    )
                )
    return out


def errors(index: int = 1) -> list[CaptureError]:
    f = flow("lludp", index)
    return [
        CaptureError("file", "truncated packet record", packet=7, offset=1234),
        CaptureError("decode", "bad message number", T0, 9, f, "to_server", 6),
    ]


def all_items() -> list[Item]:
    items: list[Item] = [
        *lludp_units(),
        *avara_units(),
        *archipelago_units(),
        *bzrc_units(),
        *errors(),
    ]
    return sorted(items, key=lambda i: (i.time or 0.0, i.packet or 0))


def mixed_packets(start: float = T0) -> list:  # type: ignore[type-arg]
    """A capture's packets holding every LLUDP and Avara corpus datagram (each on
    its well-known port) and a BZRC session over TCP."""
    from . import pcapgen

    viewer, sim = ("10.0.0.2", 50_001), ("10.0.0.1", 9000)
    player, server = ("10.0.0.3", 50_002), ("10.0.0.1", 19567)
    packets = []
    t = start
    for n, unit in enumerate(lludp_units()):
        src, dst = (viewer, sim) if n % 2 == 0 else (sim, viewer)
        packets.append(pcapgen.udp(t, src, dst, unit.payload))
        t += 0.01
    for n, unit in enumerate(avara_units()):
        src, dst = (player, server) if n % 2 == 0 else (server, player)
        packets.append(pcapgen.udp(t, src, dst, unit.payload))
        t += 0.01
    conn = pcapgen.TcpConnection(("10.0.0.4", 50_003), ("10.0.0.1", 47200), time=t)
    packets += conn.open()
    exchanges = json.loads((DATA / "bzrc" / "basic_four_ls.json").read_text())["exchanges"]
    for exchange in exchanges:
        if exchange["send"]:
            packets += conn.send("to_server", exchange["send"].encode())
        if exchange["recv"]:
            packets += conn.send("to_client", exchange["recv"].encode())
    packets += conn.close()
    return packets
