"""BZRC's declaration (see :mod:`gamecodec._protocols`): cheap to import."""

from gamecodec._protocols import Protocol

PROTOCOL = Protocol(
    name="bzrc",
    title="BZRC",
    transport="tcp",
    ports=(),  # bzrflag's agents listen on whatever port each team is given
    sniffer="gamecodec.capture._detect:sniff_bzrc",
    twins=("gamecodec.bzrc._codec",),
    capture_decoder="gamecodec.capture._bzrc_stream:BzrcStream",
    capture_table="gamecodec.capture._tables:BZRC_TABLE",
    cli_decoder="gamecodec.cli:_decode_bzrc",
    cli_text=False,
    bench_suites=("gamecodec.bzrc._bench",),
    fuzz_targets=("bzrc.feed", "bzrc.decode", "bzrc.session"),
    docs_page="docs/bzrc.md",
)
"""BZRC: bzrflag / BZFlag remote-control text lines over TCP."""
