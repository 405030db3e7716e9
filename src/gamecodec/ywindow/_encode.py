"""ywindow encoders: Python values -> words -> messages.

A word is a type letter, a length (one byte, or four big-endian bytes for
the uppercase letter) and the payload. ``int`` -> ``i`` (int32 BE),
:class:`Keyword` -> ``k`` (ASCII), ``str`` -> ``s`` (UCS-4 BE),
``bytes``/``bytearray``/``memoryview`` -> ``b``. Only ``s`` and ``b`` switch
to the uppercase, 4-byte-length form, and only for payloads over 255 bytes.
A message is a ``c``/``v``/``r`` header word (its payload: the word count,
int32 BE) and then that many words. Bad values raise
:class:`~gamecodec.EncodeError`.
"""

from __future__ import annotations

from collections.abc import Iterable

from gamecodec.ywindow._errors import encode_error
from gamecodec.ywindow._models import Encodable, Keyword, Message

__all__ = ["call", "encode", "encode_into", "encode_word", "notify", "reply"]

_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1
_MAX_LONG = 0xFFFFFFFF


def _keyword_bytes(word: str) -> bytes:
    if not word.isascii() or "\0" in word:
        raise encode_error(f"keyword {word!r} is not ASCII 0x01..0x7f")
    if len(word) > 255:
        raise encode_error(f"keyword of {len(word)} bytes, more than 255")
    return word.encode("ascii")


def _sized(letter: int, payload: bytes) -> bytes:
    n = len(payload)
    if n <= 255:
        return bytes((letter, n)) + payload
    if n > _MAX_LONG:
        raise encode_error(f"payload of {n} bytes, more than {_MAX_LONG}")
    return bytes((letter - 0x20,)) + n.to_bytes(4) + payload


def encode_word(value: Encodable) -> bytes:
    """One word for a Python value (see the module docstring)."""
    if type(value) is Keyword:
        raw = _keyword_bytes(value)
        return bytes((0x6B, len(raw))) + raw
    if isinstance(value, bool):
        raise encode_error("bool has no word type (use an int or a Keyword)")
    if isinstance(value, int):
        if not _INT32_MIN <= value <= _INT32_MAX:
            raise encode_error(f"int {value} outside int32")
        return b"i\x04" + value.to_bytes(4, signed=True)
    if isinstance(value, Keyword):
        return encode_word(Keyword(str(value)))
    if isinstance(value, str):
        try:
            payload = value.encode("utf-32-be")
        except UnicodeEncodeError as exc:
            raise encode_error(f"string holds a surrogate at index {exc.start}") from None
        return _sized(0x73, payload)
    if isinstance(value, bytes | bytearray | memoryview):
        return _sized(0x62, memoryview(value).tobytes())
    raise encode_error(f"{type(value).__name__} has no word type")


def _header(kind: str, count: int) -> bytes:
    if kind not in ("c", "v", "r"):
        raise encode_error(f"message kind {kind!r} is not 'c', 'v' or 'r'")
    if count > _INT32_MAX:
        raise encode_error(f"{count} words, more than {_INT32_MAX}")
    return bytes((ord(kind), 4)) + count.to_bytes(4)


def encode(message: Message | str, words: Iterable[Encodable] = ()) -> bytes:
    """A header word and its words: ``encode("c", [Keyword("goto"), 1])``
    or ``encode(Message(...))``."""
    if isinstance(message, Message):
        kind, items = message.kind, tuple[Encodable, ...](message.words)
    else:
        kind, items = message, tuple(words)
    out = [_header(kind, len(items))]
    out += [encode_word(w) for w in items]
    return b"".join(out)


def encode_into(message: Message, buf: bytearray, offset: int = 0) -> int:
    """Encode into ``buf`` at ``offset`` (growing it as needed); return the
    number of bytes written."""
    if not isinstance(buf, bytearray):
        raise TypeError("buf must be a bytearray")
    if not 0 <= offset <= len(buf):
        raise ValueError(f"offset {offset} outside 0..{len(buf)}")
    out = encode(message)
    buf[offset : offset + len(out)] = out
    return len(out)


def _method(method: str) -> Keyword:
    if not isinstance(method, str):
        raise encode_error(f"method must be a str, not {type(method).__name__}")
    return Keyword(method)


def call(method: str, *args: Encodable) -> bytes:
    """A ``c`` message (expects a reply): ``call("goto", 10, 10)``."""
    return encode("c", (_method(method), *args))


def notify(method: str, *args: Encodable) -> bytes:
    """A ``v`` message (no reply): a notification or an event."""
    return encode("v", (_method(method), *args))


def reply(*values: Encodable) -> bytes:
    """An ``r`` message: ``reply(Keyword("ok"))``."""
    return encode("r", values)
