"""The package's shape: verbs, deprecated names, events, session protocol,
import graph and import cost."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import gamecodec.errors
from gamecodec import avara, sessions
from gamecodec.avara import session
from tests.conftest import PACKAGE_ROOT, load_twin

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src"  # the checkout's sources (an installed copy has no .pyx)
PACKAGE = SOURCE / "gamecodec" / "avara"


@pytest.fixture(scope="session")
def twin(impl: str) -> ModuleType:
    """The session twin under test."""
    return load_twin("gamecodec.avara", "_session", impl)


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        (avara, "decode_datagram", "decode"),
        (avara, "encode_datagram", "encode"),
        (gamecodec.errors, "CrcMismatchError", "CrcMismatchError"),
        (gamecodec.errors, "ShortDatagramError", "ShortDatagramError"),
    ],
)
def test_old_names_warn_and_are_the_new_ones(module: ModuleType, old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=old) as record:
        assert getattr(module, old) is getattr(avara, new)
    assert record[0].filename == __file__  # the warning names the line that used the name
    assert old not in module.__all__


@pytest.mark.parametrize("module", [avara, session])
def test_connection_event_is_the_union(module: ModuleType) -> None:
    with pytest.warns(DeprecationWarning, match="ConnectionEvent") as record:
        union = module.ConnectionEvent
    assert record[0].filename == __file__
    assert union == avara.SerialSkipped | avara.PeerLost
    assert "ConnectionEvent" not in module.__all__


def test_unknown_names_still_raise_attribute_error() -> None:
    for module in (avara, session, gamecodec.errors):
        with pytest.raises(AttributeError):
            _ = module.no_such_name


def test_old_error_import_keeps_working() -> None:
    with pytest.warns(DeprecationWarning):
        from gamecodec.errors import CrcMismatchError
    assert CrcMismatchError is avara.CrcMismatchError
    assert issubclass(avara.ShortDatagramError, gamecodec.errors.TruncatedError)


def test_events_are_the_library_events(twin: ModuleType) -> None:
    assert avara.PeerLost is sessions.PeerLost is session.PeerLost
    assert issubclass(avara.SerialSkipped, sessions.Event)
    assert dataclasses.is_dataclass(avara.SerialSkipped)
    event = avara.SerialSkipped(4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.serial = 6  # type: ignore[misc]
    # the twin under test emits exactly these classes
    conn = twin.Connection(skip_after=1)
    conn.receive_datagram(avara.encode(0, [avara.Command.make(2, 6, sender=0)]), 0.0)
    assert [type(e) for e in conn.events()] == [avara.SerialSkipped]
    conn = twin.Connection(now=0.0)
    for _ in range(1025):
        conn.send(17, now=0.0)
    conn.datagrams_to_send(0.0)
    lost = conn.events()
    assert [type(e) for e in lost] == [sessions.PeerLost]


def test_connection_is_a_datagram_session(twin: ModuleType) -> None:
    assert isinstance(twin.Connection(), sessions.DatagramSession)
    assert isinstance(avara.Connection(), sessions.DatagramSession)


def test_session_errors_carry_the_protocol(twin: ModuleType) -> None:
    conn = twin.Connection()
    with pytest.raises(gamecodec.errors.EncodeError) as info:
        conn.send(300, now=0.0)
    assert info.value.protocol == "avara"


def _gamecodec_imports(path: Path) -> set[str]:
    """The gamecodec modules ``path`` imports (``from pkg import mod`` names the module)."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("gamecodec"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gamecodec"):
            assert node.module is not None
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = (SOURCE / (sub.replace(".", "/") + ".py")).exists()
                out.add(sub if is_module else node.module)
    return out


def _modules() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PACKAGE.glob("*.py")):
        name = "gamecodec.avara" + ("" if path.stem == "__init__" else f".{path.stem}")
        graph[name] = _gamecodec_imports(path)
    return graph


def test_no_import_cycle_among_the_modules() -> None:
    """Apart from the package itself (which imports its modules), no module's
    imports lead back to it."""
    graph = {
        name: {m for m in deps if m != "gamecodec.avara"}
        for name, deps in _modules().items()
        if name != "gamecodec.avara"
    }

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            mod = todo.pop()
            if mod == goal:
                return True
            if mod not in seen:
                seen.add(mod)
                todo.extend(graph.get(mod, ()))
        return False

    assert [name for name in graph if reaches(name, name)] == []


def test_twins_import_only_models_errors_and_leaves() -> None:
    """Both session twins come from one source; the codec twins must not
    import the facades (``session``, the package) either."""
    allowed = {
        "gamecodec.avara._models",
        "gamecodec.avara._errors",
        "gamecodec.avara._arrays",  # numpy, only inside decode_array
        "gamecodec.avara.punch",  # decode_punch: imports only _models and gamecodec.errors
        "gamecodec.errors",
        "gamecodec._clock",
        "gamecodec._public",  # punch's __dir__: a leaf, importing nothing of gamecodec
    }
    graph = _modules()
    assert graph["gamecodec.avara._codec_py"] <= allowed
    assert graph["gamecodec.avara._session_py"] <= allowed | {"gamecodec.avara._codec_py"}
    assert graph["gamecodec.avara.punch"] <= allowed
    pyx = _gamecodec_imports_pyx(PACKAGE / "_codec_c.pyx")
    assert pyx <= allowed
    assert "cimport" in (PACKAGE / "_session_c.pxd").read_text()


def _gamecodec_imports_pyx(path: Path) -> set[str]:
    out = set()
    for line in path.read_text().splitlines():
        words = line.split()
        if words[:1] == ["from"] and words[1].startswith("gamecodec") and "import" in words:
            module = words[1]
            names = line.split("import", 1)[1].replace("(", "").strip()
            sub = f"{module}.{names.split(',')[0].split()[0]}" if names else module
            out.add(sub if (SOURCE / (sub.replace(".", "/") + ".py")).exists() else module)
    return out


FRESH = r"""
import importlib, json, sys
mod = importlib.import_module(sys.argv[1])
print(json.dumps({"file": getattr(mod, "__file__", None)}))
"""


@pytest.mark.parametrize("no_ext", ["", "1"])
def test_each_module_imports_fresh(no_ext: str) -> None:
    """Each module imported first, in a fresh interpreter, on either twin."""
    env = {**os.environ, "GAMECODEC_NO_EXTENSIONS": no_ext, "PYTHONPATH": str(PACKAGE_ROOT)}
    names = [
        *sorted(_modules()),
        "gamecodec.avara._codec_c",
        "gamecodec.avara._session_c",
    ]
    for name in names:
        proc = subprocess.run(
            [sys.executable, "-c", FRESH, name],
            check=False,
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, (name, proc.stderr)


NUMPY = r"""
import json, sys
import gamecodec.avara as avara
from gamecodec.avara import aio
seen = ["numpy" in sys.modules]
wire = avara.encode(20, [avara.Command.make(2, 6, data=b"hi")])
avara.decode(wire); avara.decode_many([wire, b"xx"]); avara.encode_into(20, bytearray())
a, b = avara.Connection(my_id=1, peer_id=0), avara.Connection(my_id=0, peer_id=1)
a.send(6, data=b"x", now=0.0)
for dg in a.datagrams_to_send(0.0):
    b.receive_datagram(dg, 0.0)
seen.append("numpy" in sys.modules)
avara.COMMAND_DTYPE
seen.append("numpy" in sys.modules)
print(json.dumps({"seen": seen, "impl": avara._codec.__name__}))
"""


@pytest.mark.parametrize("no_ext", ["", "1"])
def test_numpy_loads_only_for_the_arrays(no_ext: str) -> None:
    env = {**os.environ, "GAMECODEC_NO_EXTENSIONS": no_ext, "PYTHONPATH": str(PACKAGE_ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", NUMPY], env=env, capture_output=True, text=True, check=True
    )
    got = json.loads(proc.stdout)
    assert got["seen"] == [False, False, True]
    assert got["impl"].endswith("_py" if no_ext else "_c")


def test_decode_array_loads_numpy_in_either_twin() -> None:
    code = (
        "import sys, gamecodec.avara._codec_{0} as c; "
        "assert 'numpy' not in sys.modules; "
        "b = c.decode_array([bytes.fromhex('26081400')]); "
        "assert 'numpy' in sys.modules and len(b.datagrams) == 1"
    )
    for impl in ("py", "c"):
        env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
        subprocess.run([sys.executable, "-c", code.format(impl)], env=env, check=True)


def test_public_names_have_docstrings() -> None:
    from gamecodec.avara import aio, payloads, punch

    missing = []
    for module in (avara, session, aio, payloads, punch):
        assert module.__doc__ and "spec" not in module.__doc__.lower()
        for name in module.__all__:
            if name in ("COMMAND_DTYPE", "DATAGRAM_DTYPE") or name.isupper():
                continue
            obj = getattr(module, name)
            if isinstance(obj, ModuleType) or not callable(obj):
                continue
            if not (obj.__doc__ or "").strip():
                missing.append(f"{module.__name__}.{name}")
            for attr, value in vars(obj).items() if isinstance(obj, type) else ():
                if attr.startswith("_") or not callable(value):
                    continue
                if not (getattr(value, "__doc__", None) or "").strip():
                    missing.append(f"{module.__name__}.{name}.{attr}")
    assert missing == []


@pytest.mark.parametrize("module", ["_codec_c", "_session_c"])
def test_stubs_match_the_compiled_modules(module: str) -> None:
    """Each compiled module has a stub naming what it exports, with its
    functions' parameters."""
    compiled = load_twin("gamecodec.avara", module.removesuffix("_c"), "c")
    tree = ast.parse((PACKAGE / f"{module}.pyi").read_text())
    exported = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    assert sorted(exported) == sorted(compiled.__all__)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            args = node.args
            names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            actual = inspect.signature(getattr(compiled, node.name)).parameters
            assert names == list(actual), node.name
