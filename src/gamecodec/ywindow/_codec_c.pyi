"""Type stub of the compiled ywindow decoder twin (same API as ``_codec_py``)."""

from gamecodec.ywindow._models import MAX_MESSAGE, Message

__all__ = ["Decoder", "decode"]

Buffer = bytes | bytearray | memoryview

class Decoder:
    """Bytes in any chunking -> complete :class:`Message` objects (compiled twin)."""

    def __init__(self, *, max_message: int = MAX_MESSAGE, offset: int = 0) -> None: ...
    @property
    def offset(self) -> int:
        """The absolute offset of the next byte to be fed."""
    @property
    def buffered(self) -> int:
        """Bytes held back: the start of an incomplete word."""
    @property
    def bytes_scanned(self) -> int:
        """Bytes this decoder has scanned, summed over its feeds (its work)."""
    @property
    def at_boundary(self) -> bool:
        """Whether the stream so far ends between messages."""
    def feed(self, data: Buffer) -> list[Message]:
        """Decode what ``data`` completes; keep the rest for the next call."""
    def close(self) -> None:
        """End of stream: raise TruncatedError if it ended inside a message."""

def decode(data: Buffer, *, max_message: int = MAX_MESSAGE) -> list[Message]:
    """Decode a complete stream of messages; it must end between messages."""
