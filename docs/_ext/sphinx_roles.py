"""A griffe extension for the API reference: Sphinx roles in docstrings as code.

The docstrings cross-reference with Sphinx roles (``:class:`~gamecodec.x.Y```);
Markdown shows those as plain text. This turns each into inline code of the
name a reader sees (``Y`` for a ``~`` target), before mkdocstrings renders it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    short, target = match.groups()
    target = target.strip().lstrip(".")
    if short:
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx cross-reference roles as inline code."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called for every module, class, function and attribute loaded."""
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
