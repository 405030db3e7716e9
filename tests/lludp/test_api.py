"""The shape of gamecodec.lludp every protocol shares: the session protocol, the
event classes, the import graph, the types and the docstrings."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from gamecodec import lludp, sessions
from gamecodec.errors import (
    DecodeError,
    EncodeError,
    GameCodecError,
    LocalProtocolError,
    TruncatedError,
)
from gamecodec.lludp import aio, circuit, template
from tests.conftest import IMPLS, MYPYPATH, PACKAGE_ROOT, ROOT
from tests.lludp.conftest import numbered

HERE = Path(__file__).resolve().parent


def test_a_circuit_is_a_datagram_session(twin: ModuleType) -> None:
    c = twin.Circuit(now=0.0)
    assert isinstance(c, sessions.DatagramSession)
    assert isinstance(lludp.Circuit(now=0.0), sessions.DatagramSession)


def test_events_are_one_set_of_frozen_dataclasses() -> None:
    assert lludp.PeerLost is circuit.PeerLost is sessions.PeerLost
    for cls in (lludp.MessageDropped, lludp.BadDatagram):
        assert dataclasses.is_dataclass(cls) and issubclass(cls, sessions.Event)
        assert cls is getattr(circuit, cls.__name__)
    event = lludp.MessageDropped(1, b"x", 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.sequence = 2  # type: ignore[misc]
    assert event == lludp.MessageDropped(1, b"x", 2.0) and hash(event)


def test_both_twins_report_the_same_event_classes(twin: ModuleType) -> None:
    c = twin.Circuit(
        now=0.0,
        ping_interval=1.0,
        circuit_timeout=3.0,
        max_resends=0,
        reliable_timeout_factor=0.0,
        minimum_reliable_timeout=0.5,
    )
    c.send(numbered(1), reliable=True, now=0.0)
    c.datagrams_to_send(0.0)
    assert c.receive_datagram(b"\x00\x00", 0.25) == []
    c.datagrams_to_send(1.0)  # due at 0.5: given up
    c.datagrams_to_send(10.0)  # no ping answered for 3 s: lost
    events = c.events()
    kinds = [type(e) for e in events]
    assert kinds == [lludp.BadDatagram, lludp.MessageDropped, sessions.PeerLost]
    assert all(isinstance(e, sessions.Event) for e in events)
    assert isinstance(events[0].error, TruncatedError) and events[0].error.protocol == "lludp"
    assert (events[1].sequence, events[1].at, events[2].at) == (1, 1.0, 10.0)


LLUDP_SOURCES = sorted((ROOT / "src/gamecodec/lludp").glob("*.py")) + sorted(
    (ROOT / "src/gamecodec/lludp").glob("*.pyx")
)


def _module_name(path: Path) -> str:
    return "gamecodec.lludp" if path.stem == "__init__" else f"gamecodec.lludp.{path.stem}"


def _imports(path: Path) -> set[str]:
    """The gamecodec.lludp modules ``path`` imports, anywhere in it (at module
    level or in a function; a .pyx is read line by line: its Python imports
    have the same form)."""
    if path.suffix == ".py":
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        lines += [
            f"import {alias.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
    found = set()
    for line in lines:
        words = line.replace("(", " ").replace(",", " ").split()
        if len(words) >= 4 and words[0] == "from" and words[2] == "import":
            base = words[1]
            if base == "gamecodec.lludp":  # from gamecodec.lludp import _impl, circuit
                names = [w for w in words[3:] if w != "as"]
                found |= {f"{base}.{n}" for n in names}
            elif base.startswith("gamecodec.lludp."):
                found.add(base)
        elif len(words) >= 2 and words[0] == "import" and words[1].startswith("gamecodec.lludp."):
            found.add(words[1])
    return found - {_module_name(path)}


def test_the_lludp_modules_import_no_cycle() -> None:
    """Leaving out the package itself (whose ``__init__`` imports the facades),
    the imports between lludp's modules form no cycle."""
    names = {_module_name(p) for p in LLUDP_SOURCES}
    graph = {
        _module_name(p): {m for m in _imports(p) if m in names and m != "gamecodec.lludp"}
        for p in LLUDP_SOURCES
        if p.stem != "__init__"
    }
    assert "gamecodec.lludp.circuit" not in graph["gamecodec.lludp._circuit_py"]
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        assert name not in path, " -> ".join([*path, name])
        if name in done:
            return
        for nxt in sorted(graph.get(name, ())):
            visit(nxt, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


_IMPORT_FIRST = """
import importlib, sys
importlib.import_module({first!r})
import gamecodec.lludp
from gamecodec.lludp import aio, circuit
twin = sys.modules[circuit.Circuit.__module__]
assert twin.MessageDropped is gamecodec.lludp.MessageDropped, twin
assert not hasattr(twin, "_facade"), twin
print(twin.__name__)
"""


@pytest.mark.parametrize(
    "first",
    [
        "gamecodec.lludp._circuit_py",
        "gamecodec.lludp._circuit_c",
        "gamecodec.lludp._codec_c",
        "gamecodec.lludp._models",
        "gamecodec.lludp._impl",
        "gamecodec.lludp.circuit",
        "gamecodec.lludp.aio",
    ],
)
@pytest.mark.parametrize("pure", ["", "1"])
def test_each_module_imports_first_in_a_fresh_interpreter(first: str, pure: str) -> None:
    """Imported first in a fresh interpreter, each module loads and the
    package works, whichever twins are active."""
    if first.endswith("_c") and "c" not in IMPLS:
        pytest.skip("GAMECODEC_TEST_IMPLS excludes the compiled twins")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(ROOT)]),
        "GAMECODEC_NO_EXTENSIONS": pure,
    }
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_FIRST.format(first=first)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    active = "gamecodec.lludp._circuit_" + ("py" if pure else "c")
    assert done.stdout.strip() == active


def test_typed_usage_passes_mypy_strict() -> None:
    """The typed example (attribute access on decoded messages and blocks,
    circuits, endpoints, errors) passes ``mypy --strict`` as written."""
    api = pytest.importorskip("mypy.api")
    old = os.environ.pop("MYPYPATH", None)
    if MYPYPATH is not None:
        os.environ["MYPYPATH"] = MYPYPATH
    try:
        out, err, status = api.run(
            [
                "--strict",
                "--no-incremental",
                "--cache-dir",
                os.devnull,
                "--python-version",
                f"{sys.version_info.major}.{sys.version_info.minor}",
                str(HERE / "typed_usage.py"),
            ]
        )
    finally:
        os.environ.pop("MYPYPATH", None)
        if old is not None:
            os.environ["MYPYPATH"] = old
    assert status == 0, out + err


def test_typed_usage_runs() -> None:
    """The typed example also runs, so what it claims is true."""
    spec = importlib.util.spec_from_file_location("typed_usage", HERE / "typed_usage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main() == b"hi"


PUBLIC_MODULES = [lludp, circuit, aio, template]


def _public(module: ModuleType) -> list[tuple[str, object]]:
    return [(name, getattr(module, name)) for name in module.__all__]


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
def test_every_public_name_has_a_docstring_for_users(module: ModuleType) -> None:
    """Every public class (its own docstring, not an inherited one), function,
    method and property is documented, without pointers to files users do not have."""
    assert module.__doc__
    missing = []
    texts = [module.__doc__]
    for name, value in _public(module):
        if inspect.isclass(value):
            doc = vars(value).get("__doc__")
        elif inspect.isfunction(value) or inspect.isbuiltin(value):
            doc = value.__doc__
        else:
            continue
        if not doc:
            missing.append(name)
            continue
        texts.append(doc)
        for attr, member in vars(value).items() if inspect.isclass(value) else ():
            if attr.startswith("_") or not (callable(member) or isinstance(member, property)):
                continue
            member_doc = inspect.getdoc(member)
            if member_doc:
                texts.append(member_doc)
            else:
                missing.append(f"{name}.{attr}")
    assert missing == []
    for text in texts:
        assert "specs/" not in text and "../shared" not in text and "section 9" not in text


def test_every_error_carries_the_protocol(codec: ModuleType, twin: ModuleType) -> None:
    template = lludp.default_template()
    ping = lludp.encode(lludp.build("StartPingCheck", PingID={"PingID": 1, "OldestUnacked": 0}))
    errors: list[GameCodecError] = []
    for bad in (b"", ping[:7], ping + b"\x01", b"\x80" + bytes(5) + b"\x00\x00" * 8):
        try:
            codec.decode(bad, template, True, 64)
        except DecodeError as exc:
            errors.append(exc)
    errors += [e for e in codec.decode_many([b"\x00"], template, False, 8192)]
    message = lludp.decode(ping)
    for call in (
        lambda: codec.encode(message._replace(sequence=-1), template, "flag"),
        lambda: codec.encode(message._replace(name="NoSuch"), template, "flag"),
        lambda: codec.forward(ping, None, None, tuple(range(251))),
        lambda: codec.encode_packet(
            message._replace(acks=(-1,)), template, "flag", 0, 1, [], 0, 1200
        ),
    ):
        with pytest.raises(EncodeError) as info:
            call()
        errors.append(info.value)
    c = twin.Circuit(now=0.0, codec=codec, ping_interval=1.0, circuit_timeout=2.0)
    with pytest.raises(EncodeError) as encode_info:
        c.send(message._replace(blocks={"PingID": ()}), now=0.0)
    errors.append(encode_info.value)
    c.datagrams_to_send(5.0)
    with pytest.raises(LocalProtocolError) as lost_info:
        c.send(message, now=5.0)
    errors.append(lost_info.value)
    with pytest.raises(LocalProtocolError) as restart_info:
        c.restart_clock(6.0)
    errors.append(restart_info.value)
    assert len(errors) == 12
    assert [e.protocol for e in errors] == ["lludp"] * 12, errors
