"""The public API: exports, old names, the active twin, docs, stubs, imports."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pydoc
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import gamecodec
from gamecodec import archipelago
from gamecodec.archipelago import aio, commands, compat, frames, sample, session, testing
from gamecodec.errors import DecodeError

PACKAGE = Path(archipelago.__file__).parent
MODULES = sorted(
    f"gamecodec.archipelago.{path.stem}"
    for path in PACKAGE.iterdir()
    if path.suffix in {".py", ".pyx"} and path.stem != "__init__"
)


def test_all_is_complete() -> None:
    assert set(archipelago.__all__) <= set(dir(archipelago))
    for name in ("decode", "decode_many", "encode", "encode_bytes", "compat", "ClientSession"):
        assert name in archipelago.__all__


OLD_NAMES = {
    "decode_frame": "decode",
    "encode_frame": "encode",
    "encode_frame_bytes": "encode_bytes",
}


@pytest.mark.parametrize("module", [archipelago, frames], ids=["archipelago", "frames"])
@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_old_names_warn_and_are_the_new_ones(module: ModuleType, old: str) -> None:
    assert old not in module.__all__
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; use {OLD_NAMES[old]}"):
        value = getattr(module, old)
    assert value is getattr(module, OLD_NAMES[old])
    with pytest.warns(DeprecationWarning):
        exec(f"from {module.__name__} import {old}", {})
    with pytest.raises(AttributeError):
        _ = module.no_such_name


def test_decode_many_gives_each_frame_its_result() -> None:
    good = '[{"cmd":"Say","text":"hi"}]'
    results = archipelago.decode_many([good, b"[1 2]", good.encode(), "{}"])
    assert results[0] == archipelago.decode(good) and results[2] == results[0]
    assert isinstance(results[1], DecodeError) and results[1].offset == 3
    assert isinstance(results[3], DecodeError) and results[3].offset == 0
    assert all(r.protocol == "archipelago" for r in results if isinstance(r, DecodeError))
    assert archipelago.decode_many([]) == []


def test_compat_uses_the_active_twin() -> None:
    active = gamecodec._accel.active()["archipelago"]
    assert compat.decode.__module__.endswith(f"_compat_{active}")
    assert compat.encode.__module__.endswith(f"_compat_{active}")


@pytest.mark.parametrize("module", [archipelago, compat, frames, testing])
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0


def test_help_shows_user_docs() -> None:
    text = pydoc.render_doc(archipelago.decode, renderer=pydoc.plaintext)
    assert "decode(data" in text and "DecodeError" in text
    for word in ("spec", "issue", "session ", "TODO", "msgspec"):
        assert word not in text


def _public_names(module: ModuleType) -> list[tuple[str, object]]:
    names = getattr(module, "__all__", [])
    return [(name, getattr(module, name)) for name in names]


@pytest.mark.parametrize(
    "module",
    [archipelago, aio, commands, compat, frames, sample, session, testing],
    ids=lambda m: m.__name__,
)
def test_every_public_class_and_function_has_a_docstring(module: ModuleType) -> None:
    assert module.__doc__
    missing = []
    for name, value in _public_names(module):
        if not (inspect.isclass(value) or inspect.isroutine(value)):
            continue
        if not inspect.getdoc(value):
            missing.append(name)
        if inspect.isclass(value) and value.__module__.startswith("gamecodec."):
            for attr, member in vars(value).items():
                if attr.startswith("_") or not (
                    inspect.isfunction(member) or isinstance(member, property)
                ):
                    continue
                if not inspect.getdoc(member):
                    missing.append(f"{name}.{attr}")
    assert not missing


def test_no_docstring_points_outside_the_package() -> None:
    for path in PACKAGE.glob("*.py*"):
        text = path.read_text(encoding="utf-8")
        for word in ("spec §", "specs/"):
            assert word not in text, (path.name, word)


def test_the_compat_stub_matches_the_twins() -> None:
    stub = ast.parse((PACKAGE / "_compat_c.pyi").read_text(encoding="utf-8"))
    stubbed = {node.name: node for node in stub.body if isinstance(node, ast.FunctionDef)}
    pure = importlib.import_module("gamecodec.archipelago._compat_py")
    compiled = importlib.import_module("gamecodec.archipelago._compat_c")
    assert set(stubbed) == set(compiled.__all__)
    for name, node in stubbed.items():
        params = inspect.signature(getattr(pure, name)).parameters
        assert [a.arg for a in node.args.args] == [
            p for p, v in params.items() if v.kind is v.POSITIONAL_OR_KEYWORD
        ]
        assert [a.arg for a in node.args.kwonlyargs] == [
            p for p, v in params.items() if v.kind is v.KEYWORD_ONLY
        ]


def test_no_type_ignore_in_the_package() -> None:
    for path in PACKAGE.glob("*.py*"):
        assert "type: ignore" not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports_on_its_own(name: str) -> None:
    """A module imported first (nothing else of the package loaded) must not
    meet a partly initialised one: no import cycle."""
    code = f"import {name}"
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_no_import_cycle_between_the_package_modules() -> None:
    """The package's own module-level imports form no cycle."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        deps = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module == "gamecodec":
                if any(alias.name == "archipelago" for alias in node.names):
                    deps.add("__init__")
            elif isinstance(node, ast.ImportFrom) and node.module == "gamecodec.archipelago":
                deps.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("gamecodec.archipelago."):
                    deps.add(node.module.rsplit(".", 1)[1])
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("gamecodec.archipelago."):
                        deps.add(alias.name.rsplit(".", 1)[1])
        graph[path.stem] = deps - {path.stem}
    assert graph["frames"] and graph["__init__"]

    def visit(name: str, path: tuple[str, ...]) -> None:
        for dep in graph.get(name, ()):
            assert dep not in path, " -> ".join((*path, dep))
            visit(dep, (*path, dep))

    for name in graph:
        visit(name, (name,))
