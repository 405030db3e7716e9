"""Avara's declaration (see :mod:`gamecodec._protocols`): cheap to import."""

from gamecodec._protocols import Port, Protocol

PROTOCOL = Protocol(
    name="avara",
    title="Avara",
    transport="udp",
    ports=(Port(19567, 19567, "Avara's server port"),),
    sniffer="gamecodec.capture._detect:sniff_avara",
    twins=("gamecodec.avara._codec", "gamecodec.avara._session"),
    capture_decoder="gamecodec.capture._udp:avara_datagrams",
    capture_table="gamecodec.capture._tables:AVARA_TABLE",
    cli_decoder="gamecodec.cli:_decode_avara",
    cli_text=False,
    bench_suites=("gamecodec.avara._bench",),
    fuzz_targets=(
        "avara.decode",
        "avara.decode_many",
        "avara.decode_array",
        "avara.payloads",
        "avara.decode_punch",
        "avara.connection",
    ),
    docs_page="docs/avara.md",
)
"""Avara: UDP datagrams of command packets."""
