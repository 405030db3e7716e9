"""Type stub of the compiled BZRC decoder twin (same API as ``_codec_py``)."""

from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_RESPONSE,
    Number,
    Response,
)

__all__ = ["Decoder", "parse_number"]

def parse_number(token: bytes | bytearray | memoryview) -> Number | None:
    """A wire number: ``int`` for ``[+-]?digits`` (at most 18 digits), else
    whatever ``float()`` accepts without underscores; None if neither."""

class Decoder:
    """Bytes in any chunking -> typed responses, in order (compiled twin)."""

    @property
    def max_line(self) -> int:
        """The longest line accepted, without its newline."""
    @property
    def max_grid_cells(self) -> int:
        """The largest occgrid W*H accepted."""
    @property
    def max_response(self) -> int:
        """The most bytes a list or help output may span."""
    @property
    def max_items(self) -> int:
        """The most a list may hold (items, and obstacle or base corners)."""
    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
        max_response: int = DEFAULT_MAX_RESPONSE,
        max_items: int = DEFAULT_MAX_ITEMS,
    ) -> None: ...
    @property
    def offset(self) -> int:
        """Absolute stream offset of the first byte not yet consumed."""
    @property
    def bytes_scanned(self) -> int:
        """Bytes this decoder has read from its buffer, summed over its feeds (its work)."""
    @property
    def idle(self) -> bool:
        """True between responses with no partial line buffered."""
    def feed(self, data: bytes | bytearray | memoryview) -> list[Response]:
        """Consume ``data``; return the responses it completed."""
    def flush(self) -> list[Response]:
        """Return what only the next line could complete."""
    def close(self) -> list[Response]:
        """End of stream: :meth:`flush`, then raise TruncatedError if incomplete."""

def _uses_fast_tuples() -> bool: ...
