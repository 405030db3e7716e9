"""Archipelago's declaration (see :mod:`gamecodec._protocols`): cheap to import."""

from gamecodec._protocols import Port, Protocol

PROTOCOL = Protocol(
    name="archipelago",
    title="Archipelago",
    transport="tcp",
    ports=(Port(38281, 38281, "Archipelago's server port"),),
    sniffer="gamecodec.capture._detect:sniff_archipelago",
    twins=("gamecodec.archipelago._compat",),
    capture_decoder="gamecodec.capture._archipelago:ArchipelagoStream",
    capture_table="gamecodec.capture._tables:ARCHIPELAGO_TABLE",
    cli_decoder="gamecodec.cli:_decode_archipelago",
    cli_text=True,
    bench_suites=("gamecodec.archipelago._bench",),
    fuzz_targets=(
        "archipelago.decode",
        "archipelago.compat_decode",
        "archipelago.decode_many",
        "archipelago.session",
    ),
    docs_page="docs/archipelago.md",
)
"""Archipelago: JSON lists of commands over WebSocket text frames."""
