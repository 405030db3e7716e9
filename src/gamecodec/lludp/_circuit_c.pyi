"""Types of the compiled LLUDP circuit, compiled from ``_circuit_py.py``: the same names."""

from gamecodec.lludp._circuit_py import *  # noqa: F403
from gamecodec.lludp._circuit_py import Circuit as Circuit

__all__ = ["Circuit"]
