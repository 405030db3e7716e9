"""Per-flow statistics: counts, sequence gaps and duplicates, round trips, errors."""

from __future__ import annotations

import dataclasses
import json

import pytest

pytest.importorskip("dpkt")  # gamecodec.capture reads captures with dpkt

from gamecodec import avara, lludp
from gamecodec.capture import Unit
from gamecodec.capture._stats import CaptureStats, SequenceStats, collect

from . import unitgen


def _lludp(
    seq: int, direction: str, t: float, *, flags: int = 0, acks=(), name="AgentUpdate", **blocks
):  # type: ignore[no-untyped-def]
    template = lludp.default_template()
    m = (
        lludp.build(name, template=template, flags=flags, sequence=seq, acks=tuple(acks), **blocks)
        if blocks
        else None
    )
    if m is None:
        m = lludp.decode(
            lludp.encode(
                unitgen.lludp_units()[0].value._replace(flags=flags, sequence=seq, acks=tuple(acks))
            )
        )  # type: ignore[attr-defined]
    wire = lludp.encode(m)
    return Unit(
        t,
        int(t * 100),
        unitgen.flow("lludp", 1),
        direction,
        "lludp",
        (m.name,),
        lludp.decode(wire),
        len(wire),
        wire,
    )  # type: ignore[arg-type]


def test_counts_bytes_and_rates_per_flow() -> None:
    items = unitgen.all_items()
    data = collect(items).as_dict()
    flows = {f["protocol"]: f for f in data["flows"]}
    units = [i for i in items if isinstance(i, Unit)]
    assert data["units"] == len(units)
    for protocol, flow in flows.items():
        mine = [u for u in units if u.protocol == protocol]
        assert sum(flow["units"].values()) == len(mine)
        assert sum(flow["bytes"].values()) == sum(u.size for u in mine)
        assert flow["seconds"] == mine[-1].time - mine[0].time
    assert flows["lludp"]["messages"]["AgentUpdate"] == 1
    json.dumps(data)  # plain data


def test_sequence_gaps_duplicates_and_late_packets() -> None:
    s = SequenceStats()
    for n in (1, 2, 3, 6, 6, 4, 7, 2**32 - 1):
        s.see(n, 1, 1 << 32)
    assert (s.gaps, s.missing, s.duplicates, s.late) == (1, 2, 1, 2)
    s = SequenceStats()
    for n in (65530, 65532, 65534, 0, 2, 8):  # Avara serials: step 2, wrapping at 16 bits
        s.see(n, 2, 1 << 16)
    assert (s.gaps, s.missing, s.duplicates, s.late) == (1, 2, 0, 0)


def test_lludp_resends_and_round_trips_from_acks_and_pings() -> None:
    stats = CaptureStats()
    ping = lludp.build("StartPingCheck", PingID=[{"PingID": 7, "OldestUnacked": 0}], sequence=3)
    pong = lludp.build("CompletePingCheck", PingID=[{"PingID": 7}], sequence=4)
    units = [
        _lludp(1, "to_server", 10.0, flags=lludp.RELIABLE),
        _lludp(1, "to_server", 10.5, flags=lludp.RELIABLE | lludp.RESENT),
        _lludp(9, "to_client", 10.2, acks=[1]),
    ]
    for m, t, d in ((ping, 11.0, "to_client"), (pong, 11.05, "to_server")):
        wire = lludp.encode(m)
        units.append(
            Unit(
                t,
                0,
                unitgen.flow("lludp", 1),
                d,
                "lludp",
                (m.name,),
                lludp.decode(wire),
                len(wire),
                wire,
            )
        )  # type: ignore[arg-type]
    for u in units:
        stats.add(u)
    flow = stats.as_dict()["flows"][0]
    assert flow["sequences"]["to_server"]["resends"] == 1
    assert flow["sequences"]["to_server"]["duplicates"] == 1
    assert flow["ack_rtt"]["samples"] == 1
    assert abs(flow["ack_rtt"]["median_ms"] - 200) < 1e-6
    assert flow["ping_rtt"]["samples"] == 1
    assert abs(flow["ping_rtt"]["median_ms"] - 50) < 1e-6


def test_avara_round_trip_from_the_ack_field() -> None:
    f = unitgen.flow("avara", 2, port=19567)
    command = avara.Command(
        serial=2,
        send_count=0,
        flags=0,
        command=17,
        distribution=None,
        p1=0,
        p2=0,
        p3=0,
        sender=None,
        data=b"",
    )

    def unit(t: float, direction: str, d: avara.Datagram) -> Unit:
        wire = avara.encode(d)
        value = avara.decode(wire)
        return Unit(t, 0, f, direction, "avara", (), value, len(wire), wire)  # type: ignore[arg-type]

    second = command._replace(serial=4)
    stats = collect(
        [
            unit(1.0, "to_server", avara.Datagram(True, 0xFFFE, None, (command,))),
            unit(1.0, "to_server", avara.Datagram(True, 0xFFFE, None, (second,))),
            unit(1.03, "to_client", avara.Datagram(True, 4, None, ())),
        ]
    )
    flow = stats.as_dict()["flows"][0]
    assert flow["ack_rtt"]["samples"] == 2
    assert abs(flow["ack_rtt"]["median_ms"] - 30) < 1e-6


def test_errors_are_counted_and_located() -> None:
    data = collect(unitgen.errors()).as_dict()
    assert data["errors"] == 2
    assert data["errors_by_where"] == {"file": 1, "decode": 1}
    assert data["error_list"][0]["offset"] == 1234
    (flow,) = data["flows"]
    assert flow["errors"] == 1
    assert flow["error_list"][0]["offset"] == 6


def test_errors_of_many_flows_of_no_protocol_are_summed() -> None:
    """A scan on a known port: the first flows of no protocol listed, the rest counted."""
    from gamecodec.capture import CaptureError
    from gamecodec.capture._cli import _text_report
    from gamecodec.capture._stats import OTHER_FLOWS_KEPT

    stats = CaptureStats()
    count = OTHER_FLOWS_KEPT + 500
    for index in range(1, count + 1):
        flow = dataclasses.replace(unitgen.flow("lludp", index), protocol=None)
        stats.add(CaptureError("detect", "not lludp", float(index), index, flow))
    stats.add(unitgen.errors(count + 1)[1])  # a flow of a protocol is always listed
    assert stats.errors == count + 1
    assert len(stats.flows) == OTHER_FLOWS_KEPT + 1
    assert stats.other_errors == {"detect": 500}
    data = stats.as_dict()
    assert sum(f["errors"] for f in data["flows"]) + sum(data["other_errors"].values()) == count + 1
    assert f"500 errors in flows of no protocol past the first {OTHER_FLOWS_KEPT}" in (
        _text_report(data)
    )


def test_flows_that_gave_nothing_are_counted(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A flow on no known port whose content is not recognised gives no item; the
    statistics still say how many there were, so an empty report has a reason."""
    from gamecodec.cli import main
    from tests.capture import pcapgen
    from tests.capture.conftest import CLIENT, SERVER, lludp_wires

    packets = [pcapgen.udp(1.0 + k, CLIENT, SERVER, w) for k, w in enumerate(lludp_wires()[:5])]
    packets += [pcapgen.udp(2.0, ("10.0.0.5", 5353), ("10.0.0.6", 5353), b"\x00" * 30)] * 2
    web = pcapgen.TcpConnection(("10.0.0.2", 41000), ("10.0.0.1", 8080), time=3.0)
    http = web.open() + web.send("to_server", b"GET / HTTP/1.1\r\n\r\n") + web.close()
    packets += http
    path = pcapgen.write(tmp_path / "c.pcap", packets)
    silent = collect(path).as_dict()["silent_flows"]
    assert silent == {"flows": 2, "packets": 2 + len(http), "bytes": 60 + 18}
    assert main(["stats", str(path)]) == 0
    expected = f"2 other flows ({2 + len(http)} packets, 78 bytes) were not decoded"
    assert expected in capsys.readouterr().out
    assert main(["stats", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["silent_flows"] == silent
