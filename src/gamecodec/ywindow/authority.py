"""The 256-byte shared secret of the ywindow handshake (the authority).

The server generates it at startup and writes it to a file (by default
``~/.Yauthority``) that clients read. These helpers are the only file I/O of
the package; :class:`~gamecodec.ywindow.Peer` takes the bytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from gamecodec._public import public_dir
from gamecodec.ywindow._models import AUTHORITY_SIZE

__all__ = [
    "check_authority",
    "default_path",
    "digest",
    "load_authority",
    "new_authority",
    "save_authority",
]


def default_path() -> Path:
    """``~/.Yauthority``, where servers and clients keep the authority by default."""
    return Path.home() / ".Yauthority"


def new_authority() -> bytes:
    """256 fresh random bytes."""
    return os.urandom(AUTHORITY_SIZE)


def check_authority(authority: bytes) -> bytes:
    """``authority`` as bytes, refusing anything but exactly 256 bytes."""
    if not isinstance(authority, bytes | bytearray | memoryview):
        raise TypeError(f"authority must be bytes, not {type(authority).__name__}")
    data = bytes(authority)
    if len(data) != AUTHORITY_SIZE:
        raise ValueError(f"authority of {len(data)} bytes, not {AUTHORITY_SIZE}")
    return data


def load_authority(path: str | os.PathLike[str] | None = None) -> bytes:
    """Read the authority from ``path`` (default ``~/.Yauthority``)."""
    data = Path(default_path() if path is None else path).read_bytes()
    return check_authority(data)


def save_authority(
    authority: bytes | None = None, path: str | os.PathLike[str] | None = None
) -> bytes:
    """Write ``authority`` (fresh random bytes by default) to ``path`` (default
    ``~/.Yauthority``), readable by its owner only; return the bytes."""
    data = new_authority() if authority is None else check_authority(authority)
    target = Path(default_path() if path is None else path)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return data


def digest(authority: bytes, cookie: bytes) -> bytes:
    """MD5(authority || cookie): the 16-byte answer to a cookie."""
    return hashlib.md5(authority + cookie, usedforsecurity=False).digest()


__dir__ = public_dir(__name__)
