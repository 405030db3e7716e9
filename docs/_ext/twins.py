"""A griffe extension for the API reference: names a facade takes from a twin.

A protocol package picks its compiled or pure twin at import time
(``_codec = _accel.load("gamecodec.avara", "_codec", "avara")``) and re-exports
its functions (``decode = _codec.decode``). Static analysis cannot follow that
choice (a ``TYPE_CHECKING`` import of the pure twin under the same name
counts as the load), so this makes each such name an alias of the pure twin's object
(``gamecodec.avara._codec_py.decode``), whose source holds the signature and
docstring the compiled twin shares.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_LOAD = re.compile(r"\bload\(\s*['\"]([\w.]+)['\"]\s*,\s*['\"](\w+)['\"]")
_FROM_TWIN = re.compile(r"^(\w+)\.(\w+)$")


class TwinAliases(griffe.Extension):
    """Turn ``name = <twin>.<name>`` attributes into aliases of the pure twin."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        """Called once the members of a module are loaded."""
        values = {
            name: str(member.value)
            for name, member in mod.members.items()
            if isinstance(member, griffe.Attribute) and member.value is not None
        }
        twins = {}
        for name, value in values.items():
            load = _LOAD.search(value)
            if load:
                twins[name] = f"{load[1]}.{load[2]}_py"
        for name, member in mod.members.items():
            # ``if TYPE_CHECKING: from gamecodec.avara import _codec_py as _codec``
            if member.is_alias and str(member.target_path).endswith("_py"):
                twins.setdefault(name, str(member.target_path))
        for name, value in values.items():
            ref = _FROM_TWIN.match(value)
            if ref and ref[1] in twins:
                alias = griffe.Alias(name, f"{twins[ref[1]]}.{ref[2]}", parent=mod)
                mod.set_member(name, alias)
