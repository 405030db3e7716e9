"""The active decoder twin (compiled or pure), chosen once by ``_accel``."""

from __future__ import annotations

from gamecodec import _accel
from gamecodec.ywindow import _codec_py

__all__ = ["Decoder", "decode"]

_codec = _accel.load("gamecodec.ywindow", "_codec", "ywindow")

Decoder: type[_codec_py.Decoder] = _codec.Decoder
decode = _codec.decode
