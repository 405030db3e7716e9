"""Types of the compiled compat codec (the same functions as ``_compat_py``)."""

from collections.abc import Callable
from typing import Any

__all__ = ["decode", "encode", "encode_bytes", "past_depth"]

def decode(data: str | bytes | bytearray | memoryview, *, max_depth: int = 16) -> Any:
    """``NetUtils.decode`` of a text frame (``str``, or UTF-8 ``bytes``)."""

def encode(obj: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """``NetUtils.encode``: the wire text of ``obj``."""

def encode_bytes(obj: Any, *, default: Callable[[Any], Any] | None = None) -> bytes:
    """:func:`encode` as UTF-8 bytes."""

def past_depth(data: str | bytes | bytearray | memoryview, max_depth: int = 16) -> int:
    """The byte offset of the bracket where the reference's nesting count first
    exceeds ``max_depth``, or -1."""
