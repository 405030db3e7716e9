"""The "new protocol" checklist as code: what a protocol's declaration lacks.

``missing_parts(protocol)`` lists every part of one declaration
(:class:`gamecodec._protocols.Protocol`) that is absent or does not resolve, and
every place in the repository that should name the protocol and does not;
``tests/test_protocols.py`` runs it on each declared protocol (and on a fake one,
so that it is known to fail). ``docs/new-protocol.md`` is the same list in prose.

``python -m tools.protocol_parts`` prints what is missing (status 1 if anything is).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path

from gamecodec._protocols import NAMES, Protocol, protocols, resolve

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gamecodec"

_FUZZ_TARGET = re.compile(r"""target\(\s*["']([\w.]+)["']""")
_LOAD_EVERY = re.compile(r"^from gamecodec import ([\w, ]+?)\s+# noqa: F401\s+\(load every", re.M)
_PARITY_BRACES = re.compile(r"tests/\{([\w,]+)\}/test_parity\.py")
PROTOCOL_LISTS = (".ci/run", "tools/sanitize.sh")
"""Scripts that spell out the protocols (the checker holds them to the declarations)."""


def _resolves(target: str) -> tuple[object, str | None]:
    try:
        return resolve(target), None
    except (ImportError, AttributeError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def _check_callable(problems: list[str], part: str, target: str) -> object:
    obj, error = _resolves(target)
    if error is not None:
        problems.append(f"{part} {target!r} does not resolve ({error})")
    elif not callable(obj):
        problems.append(f"{part} {target!r} is not callable")
    return obj


def _check_twins(problems: list[str], p: Protocol, compiled: bool) -> None:
    folder = PACKAGE / p.name
    on_disk = {
        f"gamecodec.{p.name}.{path.name[: -len('_c' + path.suffix)]}"
        for path in [*folder.glob("*_c.pyx"), *folder.glob("*_c.pxd")]
    }
    for twin in sorted(on_disk - set(p.twins)):
        problems.append(f"twin {twin} (a _c.pyx or _c.pxd in {p.name}/) is not declared")
    forms = ("_py", "_c") if compiled else ("_py",)
    for twin in p.twins:
        if twin not in on_disk:
            problems.append(f"twin {twin} has no {twin.rsplit('.', 1)[1]}_c.pyx or _c.pxd")
        for form in forms:
            try:
                importlib.import_module(twin + form)
            except ImportError as exc:
                problems.append(f"twin {twin}{form} does not import ({exc})")


def _check_capture(problems: list[str], p: Protocol) -> None:
    _check_callable(problems, "capture decoder", p.capture_decoder)
    table, error = _resolves(p.capture_table)
    if error is not None:
        problems.append(f"capture table {p.capture_table!r} does not resolve ({error})")
        return
    from gamecodec.capture._tables import COMMON, SCHEMAS, Table

    if not isinstance(table, Table):
        problems.append(f"capture table {p.capture_table!r} is not a capture._tables.Table")
    elif table.schema.names[: len(COMMON)] != COMMON.names:
        problems.append(f"capture table {p.capture_table!r} does not start with COMMON")
    elif SCHEMAS.get(p.name) is not table.schema:
        problems.append(f"capture._tables.SCHEMAS[{p.name!r}] is not its table's schema")


def _check_cli_help(problems: list[str], p: Protocol) -> None:
    from gamecodec import cli

    if not re.search(rf"^  (\w+, )*{re.escape(p.name)}\b", cli._DECODE_EPILOG, re.M):
        problems.append(f"gamecodec decode --help does not say how {p.name} input is given")


def _check_bench(problems: list[str], p: Protocol) -> None:
    if not p.bench_suites:
        problems.append("no bench suite")
    for suite in p.bench_suites:
        try:
            module = importlib.import_module(suite)
        except ImportError as exc:
            problems.append(f"bench suite {suite} does not import ({exc})")
            continue
        for function in ("rows", "contests"):
            if not callable(getattr(module, function, None)):
                problems.append(f"bench suite {suite} has no {function}(config)")


def _check_fuzz(problems: list[str], p: Protocol) -> None:
    module = ROOT / "tools" / "fuzz" / f"{p.name}.py"
    if not module.is_file():
        problems.append(f"no fuzz target module tools/fuzz/{p.name}.py")
        return
    registered = set(_FUZZ_TARGET.findall(module.read_text(encoding="utf-8")))
    declared = set(p.fuzz_targets)
    if not declared:
        problems.append("no fuzz targets declared")
    for name in sorted(declared - registered):
        problems.append(f"fuzz target {name} is declared but tools/fuzz/{p.name}.py lacks it")
    for name in sorted(registered - declared):
        problems.append(f"fuzz target {name} in tools/fuzz/{p.name}.py is not declared")
    for name in sorted(declared):
        if not name.startswith(p.name + "."):
            problems.append(f"fuzz target {name} is not named {p.name}.<what>")
        elif not (ROOT / "tools" / "fuzz" / "corpus" / name).is_dir():
            problems.append(f"fuzz target {name} has no corpus (python -m tools.fuzz corpus)")


def _check_files(problems: list[str], p: Protocol) -> None:
    docs = ROOT / p.docs_page
    if not docs.is_file():
        problems.append(f"docs page {p.docs_page} does not exist")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    page = (
        Path(p.docs_page).relative_to("docs").as_posix() if p.docs_page.startswith("docs/") else ""
    )
    if not page or not re.search(rf":\s*{re.escape(page)}\s*$", nav, re.M):
        problems.append(f"docs page {p.docs_page} is not in mkdocs.yml's nav")
    for needed in (f"docs/api/{p.name}.md", f"tests/{p.name}/test_parity.py"):
        if not (ROOT / needed).is_file():
            problems.append(f"{needed} does not exist")
    if p.title not in (ROOT / "README.md").read_text(encoding="utf-8"):
        problems.append(f"README.md does not name {p.title}")
    for script in PROTOCOL_LISTS:
        text = (ROOT / script).read_text(encoding="utf-8")
        lists = [m.replace(" ", "").split(",") for m in _LOAD_EVERY.findall(text)]
        lists += [m.split(",") for m in _PARITY_BRACES.findall(text)]
        for names in lists:
            if p.name not in names:
                problems.append(f"{script} has a protocol list without {p.name}: {','.join(names)}")


def missing_parts(p: Protocol, *, compiled: bool = True) -> list[str]:
    """What ``p`` lacks, one sentence each (empty: every part is there).

    ``compiled``: also import each twin's compiled form (a build without
    extensions checks the pure twins only)."""
    problems: list[str] = []
    if p.name not in NAMES:
        problems.append(f"{p.name} is not in gamecodec._protocols.NAMES")
    try:
        own = importlib.import_module(f"gamecodec.{p.name}._protocol").PROTOCOL
    except (ImportError, AttributeError) as exc:
        problems.append(f"gamecodec.{p.name}._protocol has no PROTOCOL ({exc})")
    else:
        if own != p:
            problems.append(f"gamecodec.{p.name}._protocol.PROTOCOL is another declaration")
    if p.transport not in ("udp", "tcp"):
        problems.append(f"transport {p.transport!r} is neither udp nor tcp")
    for port in p.ports:
        if not 0 <= port.first <= port.last <= 65535 or not port.what:
            problems.append(f"port range {port} is not valid")
    checks: list[Callable[[list[str], Protocol], object]] = [
        lambda out, q: _check_callable(out, "sniffer", q.sniffer),
        lambda out, q: _check_twins(out, q, compiled),
        _check_capture,
        lambda out, q: _check_callable(out, "CLI decoder", q.cli_decoder),
        _check_cli_help,
        _check_bench,
        _check_fuzz,
        _check_files,
    ]
    for check in checks:
        check(problems, p)
    return problems


def undeclared_packages() -> list[str]:
    """Subpackages of gamecodec with a ``_protocol.py`` that NAMES leaves out."""
    return sorted(
        path.parent.name for path in PACKAGE.glob("*/_protocol.py") if path.parent.name not in NAMES
    )


def main() -> int:
    """Print each protocol's missing parts; 1 if any is missing."""
    status = 0
    for name in undeclared_packages():
        print(f"{name}: has a _protocol.py but is not in gamecodec._protocols.NAMES")
        status = 1
    for p in protocols():
        for problem in missing_parts(p):
            print(f"{p.name}: {problem}")
            status = 1
    if status == 0:
        print(f"every part of {', '.join(NAMES)} is there")
    return status


if __name__ == "__main__":
    sys.exit(main())
