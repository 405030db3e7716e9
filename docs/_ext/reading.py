"""A griffe extension for the API reference: pages a reader can use.

- Docstring examples (``>>>`` sessions, reST doctest blocks) become fenced
  ``pycon`` code: Markdown would otherwise read the prompts as three levels
  of blockquote and the code as one line of prose.
- An attribute shows its value only when the value is a literal (``64``,
  ``"ok"``, ``(1, 2)``): a computed value (``{cls.tag: cls for cls in ...}``,
  ``errors = errors``) is source text, not documentation.
- A module's entries come in reading order (``members_order: __all__`` reads
  the order set here): the verbs first (``read``, ``decode``, ``decode_many``,
  ``encode``, ...), then the other functions, the classes, the exceptions,
  the constants and last the submodules; ``__all__`` order within each.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import griffe

_PROMPT = re.compile(r"^(\s*)>>> ")
_VERBS = (
    "read",
    "decode",
    "decode_many",
    "encode",
    "Decoder",
    "connect",
    "open_endpoint",
    "serve",
)


def fence_doctests(text: str) -> str:
    """``text`` with each run of doctest lines (a ``>>>`` line up to the next
    blank line) inside a fenced ``pycon`` block."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    fenced = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        prompt = None if fenced else _PROMPT.match(line)
        if prompt is None:
            out.append(line)
            i += 1
            continue
        indent = prompt[1]
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        if out and out[-1].strip():
            out.append("")
        out += [f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"]
    return "\n".join(out)


def _is_literal(value: object) -> bool:
    try:
        ast.literal_eval(str(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _rank(member: griffe.Object | griffe.Alias) -> int:
    """0 verbs, 1 functions, 2 classes, 3 exceptions, 4 attributes, 5 modules."""
    try:
        kind = member.kind
        if member.name in _VERBS:
            return 0
        if kind is griffe.Kind.FUNCTION:
            return 1
        if kind is griffe.Kind.CLASS:
            bases = " ".join(str(b) for b in getattr(member, "bases", ()))
            return 3 if ("Error" in bases or "Exception" in bases) else 2
        if kind is griffe.Kind.MODULE:
            return 5
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return 4
    return 4


class ReadingOrder(griffe.Extension):
    """Fence doctests, hide computed attribute values, order module entries."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called for every module, class, function and attribute loaded."""
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Called once a package is loaded: set each module's reading order."""
        for module in [pkg, *_submodules(pkg)]:
            _hide_computed_values(module)
            exports = module.exports
            if not exports:
                continue
            names = [str(n) for n in exports]
            order = {n: k for k, n in enumerate(names)}

            def key(
                name: str, module: griffe.Module = module, order: dict[str, int] = order
            ) -> tuple[int, int, int]:
                member = module.members.get(name)
                verb = _VERBS.index(name) if name in _VERBS else 0
                rank = _rank(member) if member is not None else 4
                return (rank, verb, order[name])

            module.exports = sorted(names, key=key)


def _hide_computed_values(obj: griffe.Object) -> None:
    """No value on attributes (of ``obj`` and its classes) whose value is not a literal."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, griffe.Attribute):
            if member.value is not None and not _is_literal(member.value):
                member.value = None
        elif isinstance(member, griffe.Class):
            _hide_computed_values(member)


def _submodules(module: griffe.Module) -> list[griffe.Module]:
    found = []
    for member in module.members.values():
        if not member.is_alias and isinstance(member, griffe.Module):
            found += [member, *_submodules(member)]
    return found
