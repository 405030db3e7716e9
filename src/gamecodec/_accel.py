"""Pick the compiled or the pure implementation of each hot-path module.

Two environment variables, read once at import time, each taking 1/true/yes/on
for yes and 0/false/no/off or empty for no (any case):

- ``GAMECODEC_NO_EXTENSIONS``: use the pure twins only.
- ``GAMECODEC_REQUIRE_EXTENSIONS``: a missing compiled twin is an ImportError
  instead of a silent fallback (``GAMECODEC_NO_EXTENSIONS`` wins over it).

Otherwise non-CPython interpreters and missing compiled modules fall back to
the pure twin; importing gamecodec never fails because an extension is missing.
On CPython such a fallback says so, once per process, in one line on stderr
(an install built without a C compiler is slower, and pip hides the build's
output); choosing the pure twins with ``GAMECODEC_NO_EXTENSIONS`` is quiet.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
import warnings
from types import ModuleType

__all__ = ["NO_EXTENSIONS", "REQUIRE_EXTENSIONS", "active", "env_flag", "load"]

_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """Read a yes/no environment variable: unset means no; an unknown value
    warns and means no. setup.py reads the build-time variables the same way."""
    value = os.environ.get(name, "").strip().lower()
    if value not in _YES and value not in _NO:
        warnings.warn(
            f"{name}={value!r} is not one of 1/true/yes/on or 0/false/no/off: read as off",
            RuntimeWarning,
            stacklevel=2,
        )
    return value in _YES


NO_EXTENSIONS: bool = env_flag("GAMECODEC_NO_EXTENSIONS") or (
    platform.python_implementation() != "CPython"
)
REQUIRE_EXTENSIONS: bool = env_flag("GAMECODEC_REQUIRE_EXTENSIONS") and not NO_EXTENSIONS

_active: dict[str, str] = {}
_told: set[str] = set()  # the fallbacks already told (one line per process)

FALLBACK_NOTICE = (
    "gamecodec: the compiled twins are not installed ({missing} first; built without a C "
    "compiler?): the pure-Python twins run instead, slower. `gamecodec info` lists them; "
    "GAMECODEC_NO_EXTENSIONS=1 chooses them without this notice."
)


def _tell_fallback(missing: str) -> None:
    """One line on stderr, the first time a compiled twin is missing."""
    if not _told:
        _told.add(missing)
        print(FALLBACK_NOTICE.format(missing=missing), file=sys.stderr)


def load(package: str, module: str, protocol: str) -> ModuleType:
    """Import ``package.module_c`` (or ``package.module_py``) and record which.

    ``protocol`` names the entry reported by :func:`gamecodec.implementation`.
    """
    if not NO_EXTENSIONS:
        try:
            mod = importlib.import_module(f"{package}.{module}_c")
        except ImportError:
            if REQUIRE_EXTENSIONS:
                raise
            _tell_fallback(f"{package}.{module}_c")
        else:
            _active[protocol] = "c"
            return mod
    mod = importlib.import_module(f"{package}.{module}_py")
    _active[protocol] = "py"
    return mod


def active() -> dict[str, str]:
    """Which implementation each loaded protocol uses: ``"c"`` or ``"py"``."""
    return dict(_active)
