"""The active LLUDP codec twin (compiled or pure), chosen once by ``_accel``.

The package's functions and a :class:`~gamecodec.lludp.Circuit` built without
``codec=`` (of either circuit twin) use it. Never compiled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gamecodec import _accel

__all__ = ["codec"]

if TYPE_CHECKING:
    import gamecodec.lludp._codec_py as codec
else:
    codec = _accel.load("gamecodec.lludp", "_codec", "lludp")
