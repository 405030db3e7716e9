"""gamecodec: fast, correct codecs for game network protocols.

Each protocol lives in its own subpackage (``gamecodec.avara``, ...). Hot
paths are compiled with Cython and have pure-Python twins;
:func:`implementation` says which one each protocol uses.
"""

from __future__ import annotations

from gamecodec import _accel
from gamecodec._protocols import NAMES, Protocol, protocols
from gamecodec._public import public_dir
from gamecodec.errors import (
    DecodeError,
    EncodeError,
    GameCodecError,
    LocalProtocolError,
    RemoteProtocolError,
    SessionError,
    TruncatedError,
)

__version__ = "0.1.0"

PROTOCOLS: tuple[str, ...] = NAMES
"""The protocols this version ships (:func:`protocols` gives their declarations)."""


def implementation() -> dict[str, str]:
    """Which implementation each protocol uses: ``"c"`` (compiled) or ``"py"``.

    Session twins loaded so far appear as ``"<protocol>.<module>"``
    (``"avara.session"``, ``"lludp.circuit"``).
    """
    import importlib

    for name in PROTOCOLS:
        importlib.import_module(f"gamecodec.{name}")
    return _accel.active()


__all__ = [
    "PROTOCOLS",
    "DecodeError",
    "EncodeError",
    "GameCodecError",
    "LocalProtocolError",
    "Protocol",
    "RemoteProtocolError",
    "SessionError",
    "TruncatedError",
    "__version__",
    "implementation",
    "protocols",
]

__dir__ = public_dir(__name__)
