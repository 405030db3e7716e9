"""The ywindow stream decoder of captures, and how it finds the next message after a gap."""

from __future__ import annotations

import re
from typing import Any

from gamecodec import ywindow
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, Unit
from gamecodec.errors import DecodeError, GameCodecError

__all__ = ["RESYNC_MESSAGES", "RESYNC_REACH", "RESYNC_WORDS", "YwindowStream"]

RESYNC_MESSAGES = 5
"""Messages in a row that must parse from a place before ywindow reading resumes
there after a gap (or fewer, ending exactly where the stream ends)."""
RESYNC_WORDS = 64
"""Words a message may announce to count towards a resynchronisation."""
RESYNC_REACH = 1 << 16
"""Bytes the messages that confirm a resynchronisation may span."""

_RESYNC_HEADER = re.compile(rb"[cvr]\x04\x00\x00\x00[\x00-%s]" % re.escape(bytes([RESYNC_WORDS])))
"""A lowercase header word announcing 0 to ``RESYNC_WORDS`` words."""
_HEADERS = frozenset(b"cvr")
_K, _I, _S = b"kis"
_WIDE = frozenset(b"SB")
_PENDING_HEADER = 5  # a header starting in the last 5 bytes is not matched yet


class _Resync:
    """Finds where ywindow messages start again in the bytes after a gap.

    A place is taken when ``RESYNC_MESSAGES`` messages parse from it, each
    announcing at most ``RESYNC_WORDS`` words, spanning at most ``RESYNC_REACH``
    bytes, written as the encoder writes them (lowercase words, the uppercase
    ``S``/``B`` only past 255 bytes) and valid for the decoder (fixed sizes,
    keywords, code points); a call's first word must be its method's keyword.
    Candidates are tried in order, each once, and a candidate's check keeps its
    place across calls, and a long string is checked once whatever the
    candidates that reach it: the work is linear in the bytes whatever their
    segmentation, and what is held is at most the reach.
    """

    __slots__ = ("at", "base", "buf", "keyword", "long_strings", "messages", "pos", "remaining")

    def __init__(self, base: int) -> None:
        self.buf = bytearray()
        self.base = base
        """The stream offset of ``buf[0]``."""
        self.at = -1
        """The candidate's index in ``buf`` (-1: none)."""
        self.pos = 0
        self.messages = 0
        self.remaining = 0
        self.keyword = False
        self.long_strings: dict[int, bool] = {}
        """Whether the ``S`` word at a stream offset holds valid code points."""

    def feed(self, data: bytes, final: bool = False) -> int | None:
        """Take the next bytes; the stream offset where messages start again
        (``buf`` then starts there), or None (``final``: the stream ended)."""
        buf = self.buf
        buf += data
        search = 0
        while True:
            if self.at < 0:
                found = _RESYNC_HEADER.search(buf, search)
                if found is None:
                    self._drop(max(search, len(buf) - _PENDING_HEADER))
                    return None
                self.at = self.pos = found.start()
                self.messages = self.remaining = 0
                self.keyword = False
            verdict = self._check()
            if verdict is None and final:
                verdict = self.messages > 0 and not self.remaining and self.pos == len(buf)
            if verdict is None:
                self._drop(self.at)
                return None
            if verdict:
                self._drop(self.at)
                return self.base
            search = self.at + 1
            self.at = -1

    def _drop(self, count: int) -> None:
        del self.buf[:count]
        self.base += count
        if self.long_strings and count:
            base = self.base
            self.long_strings = {k: v for k, v in self.long_strings.items() if k >= base}
        if self.at >= 0:
            self.at -= count
            self.pos -= count

    def _string(self, start: int, end: int, long: bool) -> bool:
        """Whether ``buf[start:end]`` is code points (a long string is checked once)."""
        offset = self.base + start
        valid = self.long_strings.get(offset) if long else None
        if valid is None:
            try:
                bytes(self.buf[start:end]).decode("utf-32-be")
                valid = True
            except UnicodeDecodeError:
                valid = False
            if long:
                self.long_strings[offset] = valid
        return valid

    def _check(self) -> bool | None:
        """Whether the candidate starts ``RESYNC_MESSAGES`` messages (None: the
        bytes so far end before that is known)."""
        buf = self.buf
        n = len(buf)
        at, pos = self.at, self.pos
        messages, remaining, keyword = self.messages, self.remaining, self.keyword
        try:
            while True:
                if not remaining:
                    if messages == RESYNC_MESSAGES:
                        return True
                    if n - pos < 6:
                        return None
                    kind = buf[pos]
                    count = int.from_bytes(buf[pos + 2 : pos + 6], "big", signed=True)
                    if kind not in _HEADERS or buf[pos + 1] != 4 or not 0 <= count <= RESYNC_WORDS:
                        return False
                    pos += 6
                    remaining = count
                    keyword = kind != ord("r")
                    if not count:
                        messages += 1
                    continue
                if n - pos < 2:
                    return None
                kind = buf[pos]
                if kind in _WIDE:
                    if n - pos < 5:
                        return None
                    head, size = 5, int.from_bytes(buf[pos + 1 : pos + 5], "big")
                    if size < 256:
                        return False
                    kind |= 0x20
                else:
                    head, size = 2, buf[pos + 1]
                if (
                    (keyword and kind != _K)
                    or (kind == _I and size != 4)
                    or (kind == _S and size & 3)
                    or kind not in b"kisb"
                ):
                    return False
                end = pos + head + size
                if end - at > RESYNC_REACH:
                    return False
                if end > n:
                    return None
                if kind == _K:
                    payload = bytes(buf[pos + 2 : end])
                    if not payload.isascii() or b"\0" in payload:
                        return False
                elif kind == _S and not self._string(pos + head, end, head == 5):
                    return False
                pos = end
                keyword = False
                remaining -= 1
                if not remaining:
                    messages += 1
        finally:
            self.pos, self.messages, self.remaining, self.keyword = (
                pos,
                messages,
                remaining,
                keyword,
            )


def _sizes(buf: bytearray, count: int) -> list[int]:
    """The sizes of the first ``count`` messages in ``buf``, which the decoder
    took (as written: a wide header or word is one even where the encoder
    would write it short)."""
    sizes = []
    pos = 0
    for _ in range(count):
        start = pos
        remaining = -1  # the header comes first
        while remaining:
            if buf[pos] & 0x20:
                head, size = 2, buf[pos + 1]
            else:
                head, size = 5, int.from_bytes(buf[pos + 1 : pos + 5], "big")
            end = pos + head + size
            if remaining < 0:
                remaining = int.from_bytes(buf[pos + head : end], "big", signed=True)
            else:
                remaining -= 1
            pos = end
        sizes.append(pos - start)
    return sizes


class _YDirection:
    __slots__ = (
        "buf", "dead", "decoder", "phase", "pos", "resync", "skip_from", "skipped", "words_at",
    )  # fmt: skip

    def __init__(self) -> None:
        self.phase = "start"
        self.buf = bytearray()
        self.decoder: Any = None
        self.pos = 0
        self.dead = False
        self.words_at = 0  # where the messages start (after the greeting, cookie and digest)
        self.resync: _Resync | None = None
        self.skip_from = 0  # while resynchronising: where the captured bytes given up start
        self.skipped = 0  # and how many there are so far

    @property
    def end(self) -> int:
        """The stream offset of the next byte."""
        if self.resync is not None:
            return self.resync.base + len(self.resync.buf)
        return self.pos + len(self.buf)


class YwindowStream:
    """ywindow: the greeting line, the 256-byte cookie and 16-byte digest, then messages.

    Units: ``("greeting",)`` (a :class:`gamecodec.ywindow.Greeting`), ``("cookie",)``
    and ``("digest",)`` (the raw bytes), then one per message (a
    :class:`gamecodec.ywindow.Message`, ``names`` its method or its kind). A
    stream picked up after its start is read from its greeting if it starts with
    one, else from its first message found as after a gap. After a gap in the
    cookie or digest, the messages start where they would have; after a gap
    elsewhere, or a message the decoder refuses, reading resumes at the first
    place that ``RESYNC_MESSAGES`` well-formed messages follow (see
    :class:`_Resync`), and the captured bytes skipped are one located error.
    """

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self._dirs: dict[Direction, _YDirection] = {
            "to_server": _YDirection(),
            "to_client": _YDirection(),
        }
        self._time = 0.0
        self._packet = 0

    def feed(self, direction: Direction, data: bytes, time: float, packet: int) -> list[Item]:
        """The units (and errors) that ``data`` completes."""
        state = self._dirs[direction]
        items: list[Item] = []
        self._time, self._packet = time, packet
        if state.dead:
            state.pos += len(data)
            return items
        while data and not state.dead:
            if state.phase == "start":
                state.phase = "greeting" if data[:1] == b"Y" else "words"
            elif state.phase == "picked up":  # the greeting, or anything
                if data[:1] == b"Y":
                    state.phase = "greeting"
                else:
                    self._start_resync(state, state.pos, 0)
            if state.phase == "greeting":
                data = self._greeting(state, direction, data, items)
            elif state.phase in {"cookie", "digest"}:
                data = self._blob(state, direction, data, items)
            elif state.phase == "skip":
                take = min(len(data), state.words_at - state.pos)
                state.pos += take
                data = data[take:]
                if state.pos == state.words_at:
                    state.phase = "words"
            elif state.phase == "resync":
                data = self._resync(state, direction, data, items)
            else:
                data = self._words(state, direction, data, items)
        return items

    def _unit(self, direction: Direction, name: str, value: object, payload: bytes) -> Unit:
        return Unit(
            self._time, self._packet, self.flow, direction, "ywindow", (name,), value,
            len(payload), payload,
        )  # fmt: skip

    def _error(self, direction: Direction, message: str, offset: int) -> CaptureError:
        return CaptureError(
            "decode", message, self._time, self._packet, self.flow, direction, offset
        )

    def _greeting(
        self, state: _YDirection, direction: Direction, data: bytes, items: list[Item]
    ) -> bytes:
        room = ywindow.MAX_GREETING - len(state.buf)
        nl = data.find(b"\n", 0, room)
        if nl < 0:
            state.buf += data[:room]
            if len(state.buf) >= ywindow.MAX_GREETING:
                self._die(state, direction, "no greeting line in the first 100 bytes", items)
            return b""
        line = bytes(state.buf + data[: nl + 1])
        role = ywindow.Role.SERVER if direction == "to_client" else ywindow.Role.CLIENT
        try:
            greeting = ywindow.parse_greeting(line, role)
        except GameCodecError as exc:
            self._die(state, direction, str(exc), items)
            return b""
        items.append(self._unit(direction, "greeting", greeting, line))
        state.pos += len(line)
        state.words_at = state.pos + ywindow.COOKIE_SIZE + ywindow.DIGEST_SIZE
        state.buf.clear()
        state.phase = "cookie"
        return data[nl + 1 :]

    def _blob(
        self, state: _YDirection, direction: Direction, data: bytes, items: list[Item]
    ) -> bytes:
        size = ywindow.COOKIE_SIZE if state.phase == "cookie" else ywindow.DIGEST_SIZE
        take = size - len(state.buf)
        state.buf += data[:take]
        if len(state.buf) == size:
            blob = bytes(state.buf)
            items.append(self._unit(direction, state.phase, blob, blob))
            state.pos += size
            state.buf.clear()
            state.phase = "digest" if state.phase == "cookie" else "words"
        return data[take:]

    def _words(
        self, state: _YDirection, direction: Direction, data: bytes, items: list[Item]
    ) -> bytes:
        """Decode messages; after a message the decoder refuses, the bytes to
        search for the next one (the phase is then ``resync``)."""
        if state.decoder is None:
            state.decoder = ywindow.Decoder(offset=state.pos)
        try:
            messages = state.decoder.feed(data)
        except DecodeError as exc:
            state.buf += data
            self._emit(state, direction, exc.partial or [], items)
            items.append(self._error(direction, str(exc), exc.offset))
            held = bytes(state.buf)  # from the refused message's start: look after it
            self._start_resync(state, state.pos + 1, 1)
            return held[1:]
        state.buf += data
        self._emit(state, direction, messages, items)
        return b""

    def _emit(
        self, state: _YDirection, direction: Direction, messages: list[Any], items: list[Item]
    ) -> None:
        """Units for ``messages``, the next ones in ``state.buf``."""
        if not messages:
            return
        sizes = _sizes(state.buf, len(messages))
        at = 0
        for message, size in zip(messages, sizes, strict=True):
            payload = bytes(state.buf[at : at + size])
            at += size
            items.append(self._unit(direction, message.method or message.kind, message, payload))
        del state.buf[:at]
        state.pos += at

    def _start_resync(self, state: _YDirection, base: int, given_up: int) -> None:
        """Look for the next message from stream offset ``base``, after
        ``given_up`` captured bytes (just before ``base``) were dropped."""
        if state.resync is None:
            state.skip_from = base - given_up
            state.skipped = 0
        state.skipped += given_up
        state.phase = "resync"
        state.resync = _Resync(base)
        state.pos = base
        state.buf.clear()
        state.decoder = None

    def _resync(
        self,
        state: _YDirection,
        direction: Direction,
        data: bytes,
        items: list[Item],
        final: bool = False,
    ) -> bytes:
        """Feed the search; once it finds the next message, the bytes to read from there."""
        resync = state.resync
        assert resync is not None
        state.skipped += len(data)
        found = resync.feed(data, final)
        state.pos = resync.base
        if found is None:
            return b""
        rest = bytes(resync.buf)
        state.skipped -= len(rest)
        if state.skipped:
            items.append(
                self._error(
                    direction,
                    f"{state.skipped} captured bytes skipped to find the next message "
                    f"(reading resumes at offset {found})",
                    state.skip_from,
                )
            )
        state.phase = "words"
        state.resync = None
        return rest

    def _die(
        self, state: _YDirection, direction: Direction, message: str, items: list[Item]
    ) -> None:
        if message:
            items.append(self._error(direction, message, state.pos))
        state.dead = True
        state.buf.clear()
        state.decoder = None

    def gap(self, direction: Direction, size: int, time: float, packet: int) -> list[Item]:
        """``size`` bytes of ``direction`` were never captured: find where messages go on."""
        state = self._dirs[direction]
        self._time, self._packet = time, packet
        end = state.end + size
        if state.dead:
            state.pos = end
        elif state.phase == "start" and not size:
            state.phase = "picked up"
        elif state.phase in {"cookie", "digest", "skip"} and end <= state.words_at:
            state.buf.clear()  # the messages start where they would have
            state.pos = end
            state.phase = "skip" if end < state.words_at else "words"
        else:
            partial = 0 if state.phase == "resync" else len(state.buf)
            self._start_resync(state, end, 0)
            if partial:  # the start of what the gap cut is given up too
                state.skip_from -= partial + size
                state.skipped += partial
        return []

    def close(self, time: float, packet: int) -> list[Item]:
        """The connection ended: a message left incomplete, or the bytes given up, as errors."""
        items: list[Item] = []
        self._time, self._packet = time, packet
        for direction, state in self._dirs.items():
            data = b""
            while not state.dead and (state.phase == "resync" or data):
                if state.phase == "resync":
                    data = self._resync(state, direction, data, items, final=True)
                    if state.phase == "resync":
                        message = f"{state.skipped} captured bytes skipped: no message in them"
                        if state.skipped:
                            items.append(self._error(direction, message, state.skip_from))
                        state.dead = True
                else:
                    data = self._words(state, direction, data, items)
            if not state.dead and state.buf:
                what = "message" if state.phase == "words" else state.phase
                items.append(self._error(direction, f"the stream ended inside a {what}", state.pos))
        return items
