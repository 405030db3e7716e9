"""The compat codec, pure twin: ``NetUtils.encode`` / ``NetUtils.decode`` semantics.

This is the straightforward stdlib-``json`` implementation of the reference's
codec, and the semantics the compiled twin (``_compat_c.pyx``) is held to:

* :func:`encode` runs the reference pre-pass (every NamedTuple becomes a dict
  of its fields plus a trailing ``"class"``; tuples, lists, sets and
  frozensets become arrays; a NamedTuple's field values are not walked) and
  then a ``json.JSONEncoder`` with ``ensure_ascii=False``, compact separators
  and ``check_circular=False``.
* :func:`decode` runs the reference's bracket-depth scan (a per-character
  loop, like the reference run from source) and a ``json.JSONDecoder`` whose
  object hook builds ``Version`` (case-insensitive keys, ``int()``-coerced) and
  the allow-listed ``NetworkItem`` / ``NetworkPlayer`` / ``NetworkSlot``.

Errors: malformed JSON, nesting past the limit, bad UTF-8 in ``bytes`` input and
a ``"class"``-tagged object that cannot be built raise
:class:`~gamecodec.errors.DecodeError` with the byte offset in the UTF-8 text
(offset 0 for an object that cannot be built: the hook does not know where it
is). Encode errors are the reference's own (``TypeError`` for an unsupported
value, ``ValueError`` for an int past Python's digit limit, ``RecursionError``).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from gamecodec.archipelago import _errors
from gamecodec.archipelago._errors import decode_error, invalid_utf8, utf8_offset
from gamecodec.archipelago._models import ALLOWLIST, DEFAULT_MAX_DEPTH, version_of
from gamecodec.archipelago._stack import on_fresh_stack, retrying

__all__ = ["decode", "encode", "encode_bytes", "object_hook", "past_depth", "tag", "version_of"]

_SEQUENCES = (tuple, list, set, frozenset)


def tag(obj: Any) -> Any:
    """The reference pre-pass: NamedTuples to tagged dicts, sequences and sets to tuples."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        named: Any = obj  # a NamedTuple
        data: dict[str, Any] = named._asdict()
        data["class"] = obj.__class__.__name__
        return data
    if isinstance(obj, _SEQUENCES):
        return tuple([tag(item) for item in obj])
    if isinstance(obj, dict):
        return {key: tag(value) for key, value in obj.items()}
    return obj


_encode = json.JSONEncoder(
    ensure_ascii=False,
    check_circular=False,
    separators=(",", ":"),
).encode


def _encoder(default: Callable[[Any], Any] | None) -> Callable[[Any], str]:
    if default is None:
        return _encode
    return json.JSONEncoder(
        ensure_ascii=False,
        check_circular=False,
        separators=(",", ":"),
        default=lambda value: tag(default(value)),
    ).encode


def encode(obj: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """``NetUtils.encode``: the wire text of ``obj``. ``default(value)`` replaces a
    value the encoder does not know (as in ``json``); without it such a value
    raises ``TypeError``, as in the reference."""
    return _encoder(default)(tag(obj))


def encode_bytes(obj: Any, *, default: Callable[[Any], Any] | None = None) -> bytes:
    """:func:`encode` as UTF-8 bytes (a lone surrogate raises ``UnicodeEncodeError``)."""
    return _encoder(default)(tag(obj)).encode("utf-8")


class _BuildError(Exception):
    """A ``"class"``-tagged object that cannot be built (raised inside the hook)."""


_HOOKS = {"Version": version_of}


def object_hook(obj: dict[str, Any]) -> Any:
    """The reference object hook; a failure to build raises ``_BuildError``."""
    name = obj.get("class")
    if name is None:
        return obj
    try:
        hook = _HOOKS.get(name)
        if hook:
            return hook(obj)
        cls = ALLOWLIST.get(name)
        if cls:
            fields = cls._fields
            for key in tuple(obj):
                if key not in fields:
                    del obj[key]
            return cls(**obj)
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise _BuildError(
            f"cannot build a {name!r}-tagged object: {type(exc).__name__}: {exc}"
        ) from exc
    return obj


_decode = json.JSONDecoder(object_hook=object_hook).decode


def _check_depth(text: str, max_depth: int) -> None:
    """The reference's scan: a count that starts at 1, +1 per ``[``/``{`` outside
    strings, and may not exceed ``max_depth``. Unbalanced brackets are left to
    the JSON parser, which always rejects them with a precise position."""
    depth = 1
    in_string = False
    escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                raise decode_error("JSON document too complex", utf8_offset(text, index))
        elif char in "]}":
            depth -= 1


def past_depth(
    data: str | bytes | bytearray | memoryview, max_depth: int = DEFAULT_MAX_DEPTH
) -> int:
    """The byte offset (in the UTF-8 text) of the bracket where the reference's
    nesting count first exceeds ``max_depth``, or -1 if it never does."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if raw.count(b"[") + raw.count(b"{") < max_depth:  # the count cannot get there
        return -1
    # the brackets outside strings, and the count they reach (C loops only), a chunk
    # at a time so that a frame too deep early costs no more than its first chunk
    brackets = _STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS)
    count = 1
    for start in range(0, len(brackets), _CHUNK):
        steps = map(_STEP.__getitem__, brackets[start : start + _CHUNK])
        counts = list(accumulate(steps, initial=count))
        if max(counts) > max_depth:
            return _errors.past_depth(raw, max_depth)  # where: one pass that stops there
        count = counts[-1]
    return -1


_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_CHUNK = 4096  # brackets counted at a time
_STEP = [0] * 256
for _byte in b"[{":
    _STEP[_byte] = 1
for _byte in b"]}":
    _STEP[_byte] = -1


def _text(data: str | bytes | bytearray | memoryview) -> str:
    if isinstance(data, str):
        return data
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected str or bytes, not {type(data).__name__}")
    raw = bytes(data)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid_utf8(exc) from None


def decode(
    data: str | bytes | bytearray | memoryview, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> Any:
    """``NetUtils.decode`` of a text frame (``str``, or UTF-8 ``bytes``)."""
    text = _text(data)
    _check_depth(text, max_depth)
    try:
        return _decode(text)
    except json.JSONDecodeError as exc:
        raise decode_error(exc.msg, utf8_offset(text, exc.pos)) from None
    except _BuildError as exc:
        raise decode_error(str(exc), 0) from None
    except RecursionError:
        # the text passed the depth check: the caller's own stack was too deep
        if not retrying():
            return on_fresh_stack(decode, data, max_depth=max_depth)
        raise decode_error("JSON document too complex", 0) from None
    except ValueError:  # int() past sys.get_int_max_str_digits() (the reference fails too)
        start, digits = _long_int(text)
        raise decode_error(
            f"integer literal of {digits} digits, past Python's limit for int()",
            utf8_offset(text, start),
        ) from None


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?(\d+)(\.\d+)?([eE][-+]?\d+)?')


def _long_int(text: str) -> tuple[int, int]:
    """The start and length of the first integer literal (outside strings) with
    more digits than ``int()`` converts; (0, 0) if there is none."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    for token in _TOKENS.finditer(text):
        digits, fraction, exponent = token.groups()  # None, None, None for a string
        if digits and fraction is None and exponent is None and len(digits) > limit > 0:
            return token.start(), len(digits)
    return 0, 0
