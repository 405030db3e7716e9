"""LLUDP's declaration (see :mod:`gamecodec._protocols`): cheap to import."""

from gamecodec._protocols import Port, Protocol

PROTOCOL = Protocol(
    name="lludp",
    title="LLUDP",
    transport="udp",
    ports=(
        Port(9000, 9050, "OpenSimulator's region ports"),
        Port(13000, 13050, "Second Life's region ports"),
    ),
    sniffer="gamecodec.capture._detect:sniff_lludp",
    twins=("gamecodec.lludp._codec", "gamecodec.lludp._circuit"),
    capture_decoder="gamecodec.capture._udp:lludp_datagrams",
    capture_table="gamecodec.capture._tables:LLUDP_TABLE",
    cli_decoder="gamecodec.cli:_decode_lludp",
    cli_text=False,
    bench_suites=("gamecodec.lludp._bench", "gamecodec.lludp._bench_circuit"),
    fuzz_targets=(
        "lludp.decode",
        "lludp.decode_strict",
        "lludp.peek",
        "lludp.forward",
        "lludp.zero_decode",
        "lludp.circuit",
    ),
    docs_page="docs/lludp.md",
)
"""LLUDP: Second Life / OpenSimulator message-template UDP."""
