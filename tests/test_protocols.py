"""Each protocol is one declaration, complete, and everything that lists protocols reads it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tools import protocol_parts

import gamecodec
from gamecodec import _protocols, cli
from gamecodec._protocols import Port, Protocol
from tests.conftest import IMPLS, ROOT


@pytest.mark.parametrize("protocol", gamecodec.protocols(), ids=lambda p: p.name)
def test_every_part_of_the_declaration_is_there(protocol: Protocol) -> None:
    assert protocol_parts.missing_parts(protocol, compiled="c" in IMPLS) == []


def test_every_protocol_package_is_declared() -> None:
    assert protocol_parts.undeclared_packages() == []
    assert tuple(p.name for p in gamecodec.protocols()) == gamecodec.PROTOCOLS


def _fake(**parts: object) -> Protocol:
    """A sixth protocol, declared but with none of its parts written."""
    fields: dict[str, object] = {
        "name": "quake",
        "title": "Quake",
        "transport": "udp",
        "ports": (Port(27960, 27960, "Quake III's server port"),),
        "sniffer": "gamecodec.capture._detect:sniff_quake",
        "twins": ("gamecodec.quake._codec",),
        "capture_decoder": "gamecodec.capture._udp:quake_datagrams",
        "capture_table": "gamecodec.capture._tables:QUAKE_TABLE",
        "cli_decoder": "gamecodec.cli:_decode_quake",
        "cli_text": False,
        "bench_suites": ("gamecodec.quake._bench",),
        "fuzz_targets": ("quake.decode",),
        "docs_page": "docs/quake.md",
    }
    fields.update(parts)
    return Protocol(**fields)  # type: ignore[arg-type]


def test_a_sixth_protocol_without_its_parts_is_reported() -> None:
    report = "\n".join(protocol_parts.missing_parts(_fake()))
    for part in (
        "not in gamecodec._protocols.NAMES",
        "gamecodec.quake._protocol has no PROTOCOL",
        "sniffer 'gamecodec.capture._detect:sniff_quake' does not resolve",
        "twin gamecodec.quake._codec has no _codec_c.pyx or _c.pxd",
        "twin gamecodec.quake._codec_py does not import",
        "capture decoder 'gamecodec.capture._udp:quake_datagrams' does not resolve",
        "capture table 'gamecodec.capture._tables:QUAKE_TABLE' does not resolve",
        "CLI decoder 'gamecodec.cli:_decode_quake' does not resolve",
        "gamecodec decode --help does not say how quake input is given",
        "bench suite gamecodec.quake._bench does not import",
        "no fuzz target module tools/fuzz/quake.py",
        "docs page docs/quake.md does not exist",
        "docs page docs/quake.md is not in mkdocs.yml's nav",
        "docs/api/quake.md does not exist",
        "tests/quake/test_parity.py does not exist",
        "README.md does not name Quake",
        ".ci/run has a protocol list without quake",
        "tools/sanitize.sh has a protocol list without quake",
    ):
        assert part in report, part


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"docs_page": "docs/snippets/benchmarks.md"}, "benchmarks.md is not in mkdocs.yml"),
        ({"twins": ("gamecodec.avara._codec",)}, "twin gamecodec.avara._session"),
        ({"fuzz_targets": ("avara.decode",)}, "fuzz target avara.decode_many in"),
        (
            {"fuzz_targets": (*_protocols.declaration("avara").fuzz_targets, "avara.gone")},
            "fuzz target avara.gone is declared",
        ),
        ({"bench_suites": ("gamecodec.avara._models",)}, "has no rows(config)"),
        ({"capture_table": "gamecodec.capture._tables:LLUDP_TABLE"}, "SCHEMAS['avara']"),
        ({"cli_decoder": "gamecodec.cli:PROTOCOLS"}, "does not resolve"),
        ({"sniffer": "gamecodec.capture._detect:PORTS"}, "is not callable"),
        ({"ports": (Port(19567, 70000, "?"),)}, "is not valid"),
    ],
)
def test_one_missing_part_of_a_real_protocol_is_reported(
    change: dict[str, object], problem: str
) -> None:
    broken = _protocols.declaration("avara")._replace(**change)
    report = protocol_parts.missing_parts(broken, compiled=False)
    assert any(problem in line for line in report), report


def test_what_iterates_over_the_protocols_reads_the_declarations() -> None:
    pytest.importorskip("pyarrow")
    from gamecodec.capture import _detect, _streams, _tables

    declared = gamecodec.protocols()
    assert _detect.PROTOCOLS == _tables.PROTOCOLS == gamecodec.PROTOCOLS
    tcp = {p.name for p in declared if p.transport == "tcp"}
    assert set(_streams.STREAM_DECODERS) == tcp
    assert {port[3] for port in _detect.PORTS} == {p.name for p in declared if p.ports}
    assert set(_tables.protocol_tables()) == set(gamecodec.PROTOCOLS)
    assert set(_tables.SCHEMAS) == {*gamecodec.PROTOCOLS, "errors"}
    decode = cli.build_parser().parse_args(["decode", "ywindow", "00"])
    assert decode.protocol == "ywindow"
    assert (*gamecodec.PROTOCOLS, "capture") == cli._BENCHES
    for p in declared:
        assert cli._suites(p.name) == p.bench_suites
        assert cli._datagrams(p.name) == (p.transport == "udp")


def test_reading_the_declarations_imports_no_protocol() -> None:
    # the declarations name the heavy parts by string, and are read without
    # their packages: listing the protocols imports none of them
    code = (
        "import sys, gamecodec\n"
        "assert len(gamecodec.protocols()) == len(gamecodec.PROTOCOLS)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('numpy', 'msgspec', 'pyarrow', 'dpkt', 'tools')"
        " or m.startswith('gamecodec.capture')"
        " or m.count('.') == 1 and m[10:] in gamecodec.PROTOCOLS))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    assert done.stdout.strip() == "[]"


def test_the_packages_import_as_usual_after_their_declarations() -> None:
    code = (
        "import sys, gamecodec\n"
        "first = gamecodec.protocols()\n"
        "from gamecodec.avara import _protocol\n"
        "import gamecodec.lludp._protocol\n"
        "print(_protocol.PROTOCOL == first[1], gamecodec.lludp._protocol.PROTOCOL == first[3],"
        " 'gamecodec.bzrc' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    assert done.stdout.split() == ["True", "True", "False"]


def test_a_declaration_not_on_disk_is_imported_the_ordinary_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an install whose files are not plain files (a zip) still finds the declarations
    real = _protocols.os.path.isfile
    monkeypatch.setattr(
        _protocols.os.path, "isfile", lambda path: not path.endswith("_protocol.py") and real(path)
    )
    _protocols.declaration.cache_clear()
    try:
        assert _protocols.declaration("bzrc") == gamecodec.protocols()[2]
    finally:
        _protocols.declaration.cache_clear()
