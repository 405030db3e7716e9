"""An on-disk DataPackage cache, where and as CommonClient keeps it.

CommonClient stores each game's package as
``<user cache dir>/Archipelago/datapackage/<game>/<checksum>.json`` (the game's
name without ``<>:"/\\|?*``, the file UTF-8 with a BOM). :class:`DataPackageCache`
reads and writes the same files, so a bot and the reference client share one
download; pass it as ``data_packages=`` to :func:`~gamecodec.archipelago.aio.connect`
or :class:`~gamecodec.archipelago.ClientSession`.

>>> cache = DataPackageCache("/tmp/ap-cache")  # doctest: +SKIP
>>> client = await aio.connect(url, name="Bot", game=None, data_packages=cache)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, MutableMapping
from pathlib import Path

import msgspec

from gamecodec._public import public_dir
from gamecodec.archipelago import commands as C

__all__ = ["DataPackageCache", "default_directory", "safe_name"]

_UNSAFE = frozenset('<>:"/\\|?*')


def safe_name(name: str) -> str:
    """``name`` without the characters a file name may not hold (as the reference)."""
    return "".join(c for c in name if c not in _UNSAFE)


def default_directory() -> Path:
    """The reference client's cache directory (``platformdirs.user_cache_dir("Archipelago")``)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "Archipelago" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "Archipelago"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "Archipelago"


def _plain_file_name(name: str) -> bool:
    """Whether ``name`` is one file name: no separator, ``.``/``..`` or NUL."""
    return safe_name(name) == name and name not in ("", ".", "..") and "\x00" not in name


class DataPackageCache(MutableMapping[str, C.GameData]):
    """DataPackages by checksum, kept in memory and in ``directory``
    (default: :func:`default_directory`). A file that cannot be read or does
    not hold the package its name promises is treated as missing; a package
    that cannot be written, or whose game or checksum (given by the server) is
    not one plain file name (empty, ``.``, ``..``, a NUL), is kept in memory only."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_directory()
        self._memory: dict[str, C.GameData] = {}

    def _path(self, game: str, checksum: str) -> Path | None:
        """The file of ``game``'s package, or None where a name the server gave
        would not stay one file name inside the cache directory."""
        folder = safe_name(game)
        if not _plain_file_name(folder) or not _plain_file_name(checksum):
            return None
        return self.directory / "datapackage" / folder / f"{checksum}.json"

    def lookup(self, game: str, checksum: str) -> C.GameData | None:
        """The package of ``game`` with ``checksum``, from memory or disk."""
        found = self._memory.get(checksum)
        path = self._path(game, checksum)
        if found is not None or path is None:
            return found
        try:
            data = msgspec.convert(json.loads(path.read_text("utf-8-sig")), C.GameData)
        except (OSError, ValueError, msgspec.ValidationError):
            return None
        if data.checksum != checksum:
            return None
        self._memory[checksum] = data
        return data

    def store(self, game: str, data: C.GameData) -> None:
        """Keep ``data`` (``game``'s package) in memory and write its file."""
        checksum = data.checksum
        if not isinstance(checksum, str) or not checksum:
            return
        self._memory[checksum] = data
        path = self._path(game, checksum)
        if path is None:
            return
        document = {
            "item_name_to_id": data.item_name_to_id,
            "location_name_to_id": data.location_name_to_id,
            "checksum": checksum,
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(
                json.dumps(document, ensure_ascii=False, separators=(",", ":")),
                encoding="utf-8-sig",
            )
            os.replace(temporary, path)
        except OSError:
            pass

    # the mapping view: what is in memory (a lookup by checksum alone cannot
    # find a file, whose folder is the game's)

    def __getitem__(self, checksum: str) -> C.GameData:
        return self._memory[checksum]

    def __setitem__(self, checksum: str, data: C.GameData) -> None:
        self._memory[checksum] = data

    def __delitem__(self, checksum: str) -> None:
        del self._memory[checksum]

    def __iter__(self) -> Iterator[str]:
        return iter(self._memory)

    def __len__(self) -> int:
        return len(self._memory)


__dir__ = public_dir(__name__)
