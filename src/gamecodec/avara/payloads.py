"""Payload helpers for the Avara commands that matter.

A command's ``data`` (and, for kpKeyAndMouse, its p1/p2/p3) to typed values
and back. Pure Python only: these run a few times per game, except
:func:`decode_key_and_mouse`, which is a handful of integer operations.

Every decoder takes ``bytes``/``bytearray``/``memoryview`` and raises only
:class:`~gamecodec.errors.DecodeError` subclasses (:class:`TruncatedError`
when the data is short), whose ``offset`` is relative to the start of the
payload. Every encoder raises :class:`~gamecodec.errors.EncodeError` for a
value that does not fit its field. Names, passwords and chat stay ``bytes``:
the classic game wrote MacRoman, the SDL port writes whatever bytes SDL's
text input gave it, so no single text encoding is right.
"""

from __future__ import annotations

import ipaddress
import re
import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

from gamecodec._public import public_dir
from gamecodec.avara._models import MAX_DATA_LEN
from gamecodec.errors import DecodeError, EncodeError, TruncatedError

__all__ = [
    "BUTTON_MASK",
    "NO_DOWN",
    "NO_HELD",
    "NO_MOUSE_H",
    "NO_MOUSE_V",
    "NO_UP",
    "PLAYER_CONFIG_SIZE",
    "RESULTS_SIZE",
    "TOC_SIZE",
    "KeyAndMouse",
    "PlayerConfig",
    "PlayerResult",
    "ResultsReport",
    "TocEntry",
    "decode_json",
    "decode_key_and_mouse",
    "decode_level_tag",
    "decode_pascal",
    "decode_player_config",
    "decode_results",
    "decode_toc",
    "decode_win_frame",
    "encode_json",
    "encode_key_and_mouse",
    "encode_level_tag",
    "encode_pascal",
    "encode_player_config",
    "encode_results",
    "encode_toc",
    "encode_win_frame",
]

_PROTOCOL = "avara"

Buffer = bytes | bytearray | memoryview

# -- kpKeyAndMouse p1 bits (src/game/KeyFuncs.h) ------------------------------

BUTTON_MASK = 0x07
"""buttonStatus bits of p1: 0x01 mouse down, 0x02 went down, 0x04 went up."""
NO_DOWN = 0x80
NO_UP = 0x40
NO_HELD = 0x20
NO_MOUSE_V = 0x10
NO_MOUSE_H = 0x08

TOC_SIZE = 56
PLAYER_CONFIG_SIZE = 32
RESULTS_SIZE = 228

_PLAYERS = 8
_TEAMS = 9
_TOC_SLOTS = 7

_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")
_WIN_FRAME = struct.Struct("<i")
_CONFIG = struct.Struct(">hhhhHHhhIIII")
_RESULTS = struct.Struct(">57i")

_I16_RANGE = (-(1 << 15), (1 << 15) - 1)
_U16_RANGE = (0, (1 << 16) - 1)
_I32_RANGE = (-(1 << 31), (1 << 31) - 1)
_U32_RANGE = (0, (1 << 32) - 1)


class KeyAndMouse(NamedTuple):
    """One frame of a player's input (kpKeyAndMouse 17 / kpKeyAndMouseRequest 18).

    ``frame`` is p3, ``buttons`` the buttonStatus bits of p1 (0..7),
    ``down``/``up``/``held`` key-function bitmasks, ``mouse_v``/``mouse_h``
    the mouse deltas, ``msg_char`` the typed character (p2, usually 0).
    """

    frame: int
    buttons: int
    down: int
    up: int
    held: int
    mouse_v: int
    mouse_h: int
    msg_char: int


class TocEntry(NamedTuple):
    """One occupied slot of a kpPacketProtocolTOC table.

    ``padding`` is the 2 stale bytes after the port, kept so that encoding a
    decoded table gives back the same bytes.
    """

    slot: int
    host: str
    port: int
    padding: bytes = b"\x00\x00"


class PlayerConfig(NamedTuple):
    """PlayerConfigRecord, sent by kpStartSynch 16 and kpSendConfig 33.

    Colours are 32-bit ARGB.
    """

    num_grenades: int
    num_missiles: int
    num_boosters: int
    hull_type: int
    frame_latency_min: int
    frame_latency_max: int
    frame_time: int
    spawn_order: int
    hull_color: int
    trim_color: int
    cockpit_color: int
    gun_color: int


class PlayerResult(NamedTuple):
    """One player's row of a kpResultsReport (an absent player has lives -1)."""

    points: int
    team: int
    exit_rank: int
    lives: int
    kills: int
    server_wins: int


class ResultsReport(NamedTuple):
    """kpResultsReport 30: 8 player rows and 9 team totals."""

    players: tuple[PlayerResult, ...]
    team_points: tuple[int, ...]


# -- shared helpers ------------------------------------------------------------


def _bytes(data: Buffer) -> bytes:
    return data if type(data) is bytes else memoryview(data).tobytes()


def _exact(buf: bytes, size: int, what: str, starts: Sequence[int], strict: bool) -> None:
    """Refuse ``buf`` if shorter than ``size`` bytes (or longer, when strict);
    ``starts`` are field offsets. The game reads its fixed-size records and
    ignores what follows them, so only strict mode refuses trailing bytes."""
    n = len(buf)
    if n < size:
        at = max(s for s in starts if s <= n)
        raise TruncatedError(f"{what} needs {size} bytes, got {n}", at, _PROTOCOL)
    if strict and n > size:
        raise DecodeError(f"{what} is {size} bytes, got {n - size} more", size, _PROTOCOL)


def _check(name: str, value: object, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if not isinstance(value, int):
        raise EncodeError(f"{name} must be an int, not {type(value).__name__}", protocol=_PROTOCOL)
    if not low <= value <= high:
        raise EncodeError(f"{name} {value} outside {low}..{high}", protocol=_PROTOCOL)
    return value


def _fits(what: str, payload: bytes) -> bytes:
    if len(payload) > MAX_DATA_LEN:
        raise EncodeError(
            f"{what} of {len(payload)} bytes, more than {MAX_DATA_LEN}", protocol=_PROTOCOL
        )
    return payload


# -- kpKeyAndMouse / kpKeyAndMouseRequest ---------------------------

_KM_FIELDS = (
    (NO_DOWN, 4, "down"),
    (NO_UP, 4, "up"),
    (NO_HELD, 4, "held"),
    (NO_MOUSE_V, 2, "mouse_v"),
    (NO_MOUSE_H, 2, "mouse_h"),
)


def decode_key_and_mouse(
    p1: int, p2: int, p3: int, data: Buffer, *, strict: bool = False
) -> KeyAndMouse:
    """Decode a kpKeyAndMouse command from its p1, p2, p3 and data.

    The "absent" bits of p1 say which of down, up, held (u32 BE) and mouse
    v, h (i16 BE) ``data`` holds, in that order; the others are 0. ``p1`` may
    be given signed (as decoded, -128..127) or unsigned (0..255). Bytes after
    the announced values are ignored, as the game ignores them, unless
    ``strict=True``.
    """
    buf = _bytes(data)
    if not isinstance(p1, int) or not -128 <= p1 <= 255:
        raise DecodeError(f"p1 {p1!r} is not a byte", 0, _PROTOCOL)
    size = len(buf)
    pos = 0
    values = [0, 0, 0, 0, 0]
    for i, (bit, width, what) in enumerate(_KM_FIELDS):
        if p1 & bit:
            continue
        if size - pos < width:
            raise TruncatedError(f"{what} needs {width} bytes, {size - pos} remain", pos, _PROTOCOL)
        values[i] = (_U32 if width == 4 else _I16).unpack_from(buf, pos)[0]
        pos += width
    if strict and pos != size:
        raise DecodeError(f"{size - pos} bytes after the values p1 announces", pos, _PROTOCOL)
    down, up, held, mouse_v, mouse_h = values
    return KeyAndMouse(p3, p1 & BUTTON_MASK, down, up, held, mouse_v, mouse_h, p2)


def encode_key_and_mouse(
    frame: int,
    *,
    buttons: int = 0,
    down: int = 0,
    up: int = 0,
    held: int = 0,
    mouse_v: int = 0,
    mouse_h: int = 0,
    msg_char: int = 0,
) -> tuple[int, int, int, bytes]:
    """Encode one frame of input as the game's writer does: ``(p1, p2, p3, data)``.

    ``p1`` is signed (an idle frame gives -8), ready for ``Command.make``.
    To encode a decoded :class:`KeyAndMouse`: ``encode_key_and_mouse(**km._asdict())``.
    """
    _check("frame", frame, _I32_RANGE)
    _check("buttons", buttons, (0, BUTTON_MASK))
    _check("msg_char", msg_char, _I16_RANGE)
    p1 = buttons | NO_DOWN | NO_UP | NO_HELD | NO_MOUSE_V | NO_MOUSE_H
    out = bytearray()
    for name, value, bit in (("down", down, NO_DOWN), ("up", up, NO_UP), ("held", held, NO_HELD)):
        if _check(name, value, _U32_RANGE):
            p1 &= ~bit
            out += _U32.pack(value)
    for name, value, bit in (("mouse_v", mouse_v, NO_MOUSE_V), ("mouse_h", mouse_h, NO_MOUSE_H)):
        if _check(name, value, _I16_RANGE):
            p1 &= ~bit
            out += _I16.pack(value)
    return (p1 - 256 if p1 > 127 else p1), msg_char, frame, bytes(out)


# -- kpPacketProtocolTOC -------------------------------------------


def decode_toc(data: Buffer, *, strict: bool = False) -> tuple[TocEntry | None, ...]:
    """Decode the 56-byte TOC into 7 entries; entry i is slot i+1.

    An entry whose 8 bytes are all zero is an empty slot and decodes to
    ``None``; anything else (even host 0.0.0.0) is a :class:`TocEntry`.
    """
    buf = _bytes(data)
    _exact(buf, TOC_SIZE, "TOC", range(0, TOC_SIZE, 8), strict)
    entries: list[TocEntry | None] = []
    for i in range(_TOC_SLOTS):
        raw = buf[8 * i : 8 * i + 8]
        if not any(raw):
            entries.append(None)
            continue
        host = ".".join(str(b) for b in raw[:4])
        entries.append(TocEntry(i + 1, host, int.from_bytes(raw[4:6], "big"), raw[6:8]))
    return tuple(entries)


def encode_toc(entries: Sequence[TocEntry | None]) -> bytes:
    """Encode 7 entries (``None`` for an empty slot); entry i must be slot i+1."""
    if len(entries) != _TOC_SLOTS:
        raise EncodeError(f"a TOC has {_TOC_SLOTS} entries, not {len(entries)}", protocol=_PROTOCOL)
    out = bytearray()
    for i, entry in enumerate(entries):
        if entry is None:
            out += bytes(8)
            continue
        slot, host, port, padding = entry
        if slot != i + 1:
            raise EncodeError(f"TOC entry {i} is slot {i + 1}, not {slot!r}", protocol=_PROTOCOL)
        try:
            addr = ipaddress.IPv4Address(host).packed
        except ValueError as exc:
            raise EncodeError(
                f"slot {slot}: host {host!r} is not an IPv4 address", protocol=_PROTOCOL
            ) from exc
        _check(f"slot {slot}: port", port, _U16_RANGE)
        if not isinstance(padding, bytes | bytearray) or len(padding) != 2:
            raise EncodeError(
                f"slot {slot}: padding must be 2 bytes, not {padding!r}", protocol=_PROTOCOL
            )
        out += addr + port.to_bytes(2, "big") + padding
    return bytes(out)


# -- PlayerConfigRecord ----------------------------------------------

_CONFIG_RANGES = (_I16_RANGE,) * 4 + (_U16_RANGE,) * 2 + (_I16_RANGE,) * 2 + (_U32_RANGE,) * 4
_CONFIG_STARTS = (*range(0, 16, 2), *range(16, 32, 4))


def decode_player_config(data: Buffer, *, strict: bool = False) -> PlayerConfig:
    """Decode the 32-byte big-endian PlayerConfigRecord of kpStartSynch / kpSendConfig."""
    buf = _bytes(data)
    _exact(buf, PLAYER_CONFIG_SIZE, "PlayerConfigRecord", _CONFIG_STARTS, strict)
    return PlayerConfig._make(_CONFIG.unpack_from(buf))


def encode_player_config(config: PlayerConfig) -> bytes:
    """Encode a :class:`PlayerConfig` (any 12-field sequence) to 32 bytes."""
    if len(config) != len(PlayerConfig._fields):
        raise EncodeError(f"a PlayerConfig has 12 fields, not {len(config)}", protocol=_PROTOCOL)
    for name, value, bounds in zip(PlayerConfig._fields, config, _CONFIG_RANGES, strict=True):
        _check(name, value, bounds)
    return _CONFIG.pack(*config)


# -- kpResultsReport ---------------------------------------------------


def decode_results(data: Buffer, *, strict: bool = False) -> ResultsReport:
    """Decode the 228-byte kpResultsReport: 57 big-endian int32."""
    buf = _bytes(data)
    _exact(buf, RESULTS_SIZE, "results report", range(0, RESULTS_SIZE, 4), strict)
    values = _RESULTS.unpack_from(buf)
    players = tuple(PlayerResult._make(values[6 * i : 6 * i + 6]) for i in range(_PLAYERS))
    return ResultsReport(players, values[6 * _PLAYERS :])


def encode_results(report: ResultsReport) -> bytes:
    """Encode 8 :class:`PlayerResult` rows and 9 team totals to 228 bytes."""
    players, team_points = report
    if len(players) != _PLAYERS or len(team_points) != _TEAMS:
        raise EncodeError(
            f"a results report has {_PLAYERS} players and {_TEAMS} team totals, "
            f"not {len(players)} and {len(team_points)}",
            protocol=_PROTOCOL,
        )
    values: list[int] = []
    for i, row in enumerate(players):
        if len(row) != len(PlayerResult._fields):
            raise EncodeError(
                f"player {i}: a PlayerResult has 6 fields, not {len(row)}", protocol=_PROTOCOL
            )
        for name, value in zip(PlayerResult._fields, row, strict=True):
            values.append(_check(f"player {i}: {name}", value, _I32_RANGE))
    for team, value in enumerate(team_points):
        values.append(_check(f"team {team} points", value, _I32_RANGE))
    return _RESULTS.pack(*values)


# -- kpPlayerStatusChange ------------------------------------------------------


def decode_win_frame(data: Buffer, *, strict: bool = False) -> int:
    """Decode kpPlayerStatusChange's winFrame: int32, native little-endian.

    Older builds sent a native ``long`` (8 bytes on 64-bit macOS/Linux); the
    game reads the first 4 bytes either way, and so does this (``strict=True``
    accepts exactly 4 or 8 bytes).
    """
    buf = _bytes(data)
    if len(buf) == 8:
        buf = buf[:4]
    _exact(buf, 4, "winFrame", (0,), strict)
    return int(_WIN_FRAME.unpack_from(buf)[0])


def encode_win_frame(win_frame: int) -> bytes:
    """Encode a winFrame (-1 when there is none) as 4 little-endian bytes."""
    return _WIN_FRAME.pack(_check("win_frame", win_frame, _I32_RANGE))


# -- Pascal strings: login password, kpNameChange, kpRealName -----------------------


def decode_pascal(data: Buffer, *, strict: bool = False) -> bytes:
    """Decode a Pascal string (length byte, then that many bytes); bytes after
    it are ignored unless ``strict=True``."""
    buf = _bytes(data)
    if not buf:
        raise TruncatedError("Pascal string needs a length byte", 0, _PROTOCOL)
    n = buf[0]
    if len(buf) - 1 < n:
        raise TruncatedError(f"Pascal string needs {n} bytes, {len(buf) - 1} remain", 1, _PROTOCOL)
    if strict and len(buf) - 1 > n:
        raise DecodeError(f"{len(buf) - 1 - n} bytes after the Pascal string", 1 + n, _PROTOCOL)
    return buf[1 : 1 + n]


def encode_pascal(value: bytes) -> bytes:
    """Encode up to 255 bytes as a Pascal string."""
    if not isinstance(value, bytes | bytearray | memoryview):
        raise EncodeError(
            f"a Pascal string holds bytes, not {type(value).__name__}", protocol=_PROTOCOL
        )
    raw = _bytes(value)
    if len(raw) > 255:
        raise EncodeError(f"Pascal string of {len(raw)} bytes, more than 255", protocol=_PROTOCOL)
    return bytes((len(raw),)) + raw


# -- kpLoadLevel / kpLevelLoaded / kpLevelLoadErr --------------------------------------


def decode_level_tag(data: Buffer, *, strict: bool = False) -> str:
    """Decode a "set/levelTag" + NUL payload (UTF-8) to the tag without its NUL;
    like the game's C string, anything after the NUL is ignored unless
    ``strict=True``."""
    buf = _bytes(data)
    end = buf.find(b"\x00")
    if end < 0:
        raise TruncatedError("level tag has no terminating NUL", len(buf), _PROTOCOL)
    if strict and end != len(buf) - 1:
        raise DecodeError(f"{len(buf) - 1 - end} bytes after the level tag", end + 1, _PROTOCOL)
    try:
        return buf[:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"level tag is not UTF-8: {exc.reason}", exc.start, _PROTOCOL) from None


def encode_level_tag(tag: str) -> bytes:
    """Encode a level tag as UTF-8 + NUL."""
    if not isinstance(tag, str):
        raise EncodeError(f"a level tag is a str, not {type(tag).__name__}", protocol=_PROTOCOL)
    if "\x00" in tag:
        raise EncodeError("a level tag cannot contain NUL", protocol=_PROTOCOL)
    try:
        raw = tag.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(
            f"level tag is not encodable as UTF-8: {exc.reason}", protocol=_PROTOCOL
        ) from None
    return _fits("level tag", raw + b"\x00")


# -- kpJSON -----------------------------------------------------------------------

_BYTE_AT = re.compile(r"\(byte (\d+)\)")


def decode_json(data: Buffer) -> Any:
    """Decode kpJSON's text (UTF-8 JSON, no NUL) with msgspec."""
    import msgspec  # imported on first use: most programs never see kpJSON

    buf = _bytes(data)
    try:
        buf.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"JSON is not UTF-8: {exc.reason}", exc.start, _PROTOCOL) from None
    try:
        return msgspec.json.decode(buf)
    except msgspec.DecodeError as exc:
        text = str(exc)
        if "truncated" in text:
            raise TruncatedError(f"JSON: {text}", len(buf), _PROTOCOL) from None
        found = _BYTE_AT.search(text)
        at = int(found[1]) if found else 0
        if "trailing characters" in text:
            at -= 1  # msgspec names the byte after the first trailing one
        why = _BYTE_AT.sub("", text).strip()
        raise DecodeError(f"JSON: {why}", max(0, min(at, len(buf))), _PROTOCOL) from None
    except RecursionError:
        raise DecodeError("JSON nested too deeply", 0, _PROTOCOL) from None


def encode_json(value: Any) -> bytes:
    """Encode a value as kpJSON text with msgspec (at most 984 bytes)."""
    import msgspec

    try:
        raw = msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise EncodeError(f"cannot encode as JSON: {exc}", protocol=_PROTOCOL) from None
    return _fits("JSON", raw)


__dir__ = public_dir(__name__)
