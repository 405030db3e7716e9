"""ywindow's declaration (see :mod:`gamecodec._protocols`): cheap to import."""

from gamecodec._protocols import Protocol

PROTOCOL = Protocol(
    name="ywindow",
    title="ywindow",
    transport="tcp",
    ports=(),  # no well-known port: a server listens where it is told
    sniffer="gamecodec.capture._detect:sniff_ywindow",
    twins=("gamecodec.ywindow._codec",),
    capture_decoder="gamecodec.capture._ywindow_stream:YwindowStream",
    capture_table="gamecodec.capture._tables:YWINDOW_TABLE",
    cli_decoder="gamecodec.cli:_decode_ywindow",
    cli_text=False,
    bench_suites=("gamecodec.ywindow._bench",),
    fuzz_targets=("ywindow.feed", "ywindow.decode", "ywindow.parse_greeting", "ywindow.session"),
    docs_page="docs/ywindow.md",
)
"""ywindow: typed-word RPC over a TCP stream."""
