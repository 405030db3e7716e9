"""The room's frame log: the most recent frames, bounded in count and size."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["FrameLog"]


class FrameLog(Sequence[tuple[str, str]]):
    """The last frames as ``("c2s" | "s2c", text)``, oldest first.

    At most ``max_frames`` frames and ``max_chars`` characters of text are kept;
    older frames are dropped (counted in :attr:`dropped`). ``max_frames=0``
    keeps nothing; a frame longer than ``max_chars`` is not kept.
    """

    def __init__(self, max_frames: int = 10_000, max_chars: int = 8 * 1024 * 1024) -> None:
        if max_frames < 0 or max_chars < 0:
            raise ValueError("max_frames and max_chars must be >= 0")
        self.max_frames = max_frames
        self.max_chars = max_chars
        self.dropped = 0
        """Frames dropped (or never kept) to stay within the bounds."""
        self._frames: deque[tuple[str, str]] = deque()
        self._chars = 0

    def append(self, frame: tuple[str, str]) -> None:
        """Keep ``frame``, dropping the oldest as needed."""
        size = len(frame[1])
        if self.max_frames == 0 or size > self.max_chars:
            self.dropped += 1
            return
        self._frames.append(frame)
        self._chars += size
        while len(self._frames) > self.max_frames or self._chars > self.max_chars:
            self._chars -= len(self._frames.popleft()[1])
            self.dropped += 1

    def clear(self) -> None:
        """Forget every kept frame."""
        self._frames.clear()
        self._chars = 0

    @property
    def chars(self) -> int:
        """Characters of text kept."""
        return self._chars

    def __len__(self) -> int:
        return len(self._frames)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._frames)

    @overload
    def __getitem__(self, index: int) -> tuple[str, str]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, str]]: ...
    def __getitem__(self, index: int | slice) -> tuple[str, str] | list[tuple[str, str]]:
        if isinstance(index, slice):
            return list(self._frames)[index]
        return self._frames[index]

    def __repr__(self) -> str:
        return f"<FrameLog {len(self)} frames, {self._chars} chars, {self.dropped} dropped>"
