"""Pick the compiled or the pure implementation of each hot-path module.

``GAMECODEC_NO_EXTENSIONS`` (any non-empty value) is read once, at import
time. Non-CPython interpreters and missing compiled modules fall back to the
pure twin; importing gamecodec never fails because an extension is missing.
"""

from __future__ import annotations

import importlib
import os
import platform
from types import ModuleType

__all__ = ["NO_EXTENSIONS", "active", "load"]

NO_EXTENSIONS: bool = bool(os.environ.get("GAMECODEC_NO_EXTENSIONS")) or (
    platform.python_implementation() != "CPython"
)

_active: dict[str, str] = {}


def load(package: str, module: str, protocol: str) -> ModuleType:
    """Import ``package.module_c`` (or ``package.module_py``) and record which.

    ``protocol`` names the entry reported by :func:`gamecodec.implementation`.
    """
    if not NO_EXTENSIONS:
        try:
            mod = importlib.import_module(f"{package}.{module}_c")
        except ImportError:
            pass
        else:
            _active[protocol] = "c"
            return mod
    mod = importlib.import_module(f"{package}.{module}_py")
    _active[protocol] = "py"
    return mod


def active() -> dict[str, str]:
    """Which implementation each loaded protocol uses: ``"c"`` or ``"py"``."""
    return dict(_active)
