"""The public API reads as one library: docstrings, session shapes, no import cycles."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import gamecodec

PUBLIC_MODULES = [
    "gamecodec",
    "gamecodec.errors",
    "gamecodec.sessions",
    *(f"gamecodec.{name}" for name in gamecodec.PROTOCOLS),
    *(f"gamecodec.{name}.aio" for name in gamecodec.PROTOCOLS),
    "gamecodec.archipelago.compat",
    "gamecodec.archipelago.frames",
    "gamecodec.archipelago.session",
    "gamecodec.archipelago.testing",
    "gamecodec.avara.payloads",
    "gamecodec.avara.session",
    "gamecodec.bzrc.session",
    "gamecodec.bzrc.compat",
    "gamecodec.archipelago.names",
    "gamecodec.archipelago.datapackage",
    "gamecodec.capture",
    "gamecodec.lludp.circuit",
    "gamecodec.lludp.template",
    "gamecodec.ywindow.authority",
    "gamecodec.ywindow.greeting",
    "gamecodec.ywindow.session",
]

# Words that belong in a development log, not in what users read.
DEV_LOG = re.compile(r"\bissue \d|\bsession \d|\.\./shared|\bspecs?/\w+\.md|§\d")

# A Python import statement at any indentation (in a .pyx file).
_PY_IMPORT = re.compile(
    r"^[ \t]*((?:from\s+[\w.]+\s+import\s+(?:\([^)]*\)|[^\n]*))|import\s+[^\n]*)", re.M
)

# A facade loading a twin by name.
_TWIN_LOAD = re.compile(r"_accel\.load\(\s*\"([\w.]+)\",\s*\"(\w+)\"")

# Docstrings Python writes itself for classes that have none.
_GENERATED = re.compile(r"^\w+\(.*\)$", re.S)


def _public_names(module: ModuleType) -> list[tuple[str, Any]]:
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module.__name__} has no __all__"
    return [(name, getattr(module, name)) for name in names]


def _own_doc(obj: Any) -> str | None:
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    if not doc or _GENERATED.match(doc.strip()):
        return None
    return str(doc)


def _documented_objects() -> list[tuple[str, Any]]:
    found: dict[int, tuple[str, Any]] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        found[id(module)] = (module_name, module)
        for name, obj in _public_names(module):
            if inspect.isclass(obj) or inspect.isroutine(obj):
                found.setdefault(id(obj), (f"{module_name}.{name}", obj))
            if inspect.isclass(obj) and obj.__module__.startswith("gamecodec"):
                for attr, raw in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    member = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
                    if inspect.isfunction(member) or isinstance(member, property):
                        found.setdefault(id(member), (f"{module_name}.{name}.{attr}", member))
    return list(found.values())


def test_every_public_name_has_a_docstring() -> None:
    missing = [name for name, obj in _documented_objects() if _own_doc(obj) is None]
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def test_docstrings_speak_to_users() -> None:
    leaks = [
        f"{name}: {match.group(0)!r}"
        for name, obj in _documented_objects()
        if (doc := _own_doc(obj)) and (match := DEV_LOG.search(doc))
    ]
    assert not leaks, leaks


def _imports(path: Path, package: str) -> set[str]:
    """The gamecodec modules ``path`` imports (anywhere but under TYPE_CHECKING
    and in ``_deprecated*`` functions, which serve old names)."""
    source = path.read_text()
    if path.suffix == ".pyx":  # Cython: keep its Python import statements only
        statements = _PY_IMPORT.findall(source)
        source = "\n".join(st for st in statements if " cimport " not in st)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_deprecated"):
            return  # serves an old name for one release, only when it is used
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                found.add(f"{base}.{alias.name}")
                found.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    # a facade picking a twin at run time: _accel.load("gamecodec.x", "_codec", ...)
    for package_name, stem in _TWIN_LOAD.findall(path.read_text()):
        found.update((f"{package_name}.{stem}_py", f"{package_name}.{stem}_c"))
    return found


def _module_graph() -> dict[str, set[str]]:
    """Explicit import edges between gamecodec's modules (a package is its __init__)."""
    root = Path(gamecodec.__file__).parent
    files: dict[str, Path] = {}
    for path in root.rglob("*"):
        if path.suffix not in (".py", ".pyx"):
            continue
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
        edges = set()
        for target in _imports(path, package):
            # "from pkg import name": the module pkg.name if there is one, else pkg itself
            if target in files:
                edges.add(target)
        graph[name] = {t for t in edges if t != name}
    for name, edges in graph.items():
        # "from pkg import module" also names pkg: keep only the most specific target
        graph[name] = {t for t in edges if not any(o.startswith(t + ".") for o in edges)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycles() -> None:
    """Twins import models and errors; only facades import twins: no module
    imports one that imports it back."""
    assert _cycles(_module_graph()) == []
