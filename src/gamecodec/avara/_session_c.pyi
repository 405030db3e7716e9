"""Types of the compiled Avara session, built from ``_session_py.py`` (the same names)."""

from gamecodec.avara._session_py import Connection as Connection
from gamecodec.avara._session_py import serial_diff as serial_diff

__all__ = ["Connection", "serial_diff"]
