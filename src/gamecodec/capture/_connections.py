"""TCP connections in a capture: reassembly, the protocol choice, the stream decoders."""

from __future__ import annotations

from collections.abc import Iterator

from gamecodec.capture._detect import Guess, Override, port_guess, tcp_content, verdict
from gamecodec.capture._ip import address
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, StreamDecoder, Unit
from gamecodec.capture._streams import stream_decoder
from gamecodec.capture._tally import FlowStats, Tally
from gamecodec.capture._tcp import ACK_GRACE, Piece, TcpStream

__all__ = ["Connections"]

_SYN, _FIN, _RST, _ACK = 0x02, 0x01, 0x04, 0x10
_DIRECTIONS: tuple[Direction, Direction] = ("to_server", "to_client")
_OTHER: dict[Direction, Direction] = {"to_server": "to_client", "to_client": "to_server"}
_FIRST_BYTES = 4096  # bytes of each direction detection looks at
_HOLD_LIMIT = 64 * 1024  # bytes of a TCP connection held while its protocol is unknown
_HOLD_PIECES = 4096  # pieces (bytes or gaps) of a TCP connection held while it is unknown
_CLOSED_LINGER = 30.0  # seconds a closed connection stays to absorb its last packets


class _Conn:
    """One TCP connection: its two streams, and its decoder once the protocol is known."""

    __slots__ = (
        "checked",
        "client",
        "closed",
        "decoder",
        "first",
        "flow",
        "guess",
        "held",
        "held_bytes",
        "index",
        "oriented",
        "pos",
        "seen",
        "server",
        "stats",
        "streams",
    )

    def __init__(
        self, client: tuple[bytes, int], server: tuple[bytes, int], index: int, oriented: bool
    ) -> None:
        self.client = client
        self.server = server
        self.index = index
        self.oriented = oriented  # by a SYN: the client is known
        self.streams: dict[str, TcpStream] = {}
        self.flow: Flow | None = None
        self.decoder: StreamDecoder | None = None
        self.guess: Guess | None = None
        self.held: list[tuple[Direction, Piece, float, int]] = []
        self.held_bytes = 0
        self.pos: dict[Direction, int] = {"to_server": 0, "to_client": 0}  # stream offsets fed
        self.seen: set[Direction] = set()  # directions whose first bytes were looked at
        self.first: dict[Direction, bytearray] = {
            "to_server": bytearray(),
            "to_client": bytearray(),
        }
        """Each direction's first contiguous bytes (up to 4 KiB), for detection."""
        self.checked: dict[Direction, int] = {"to_server": -1, "to_client": -1}
        """How many of them detection has looked at (-1: none)."""
        self.closed = False
        self.stats: FlowStats | None = None


class Connections:
    """The TCP connections of one capture, by address pair (both ways round).

    Holds at most ``max_flows`` open connections (the longest idle tenth is
    closed to make room), each direction at most ``max_pending`` bytes out of
    order; a connection idle for ``timeout`` seconds is closed. A hole the other
    side acknowledged with nothing captured after it waits ``ack_grace`` seconds
    for its bytes (an ack can be recorded before the data it covers).
    """

    def __init__(
        self,
        tally: Tally,
        overrides: tuple[Override, ...],
        max_flows: int,
        max_pending: int,
        timeout: float,
        *,
        ack_grace: float = ACK_GRACE,
    ) -> None:
        self.tally = tally
        self.overrides = overrides
        self.max_flows = max_flows
        self.max_pending = max_pending
        self.timeout = timeout
        self.ack_grace = ack_grace
        self.table: dict[tuple[bytes, int, bytes, int], tuple[_Conn, Direction]] = {}

    def sweep(self, now: float) -> Iterator[Item]:
        """Close the connections idle for ``timeout``; forget closed ones after a while;
        give up the acknowledged holes that waited long enough."""
        conns = {id(c): c for c, _ in self.table.values()}
        for conn in conns.values():
            idle = now - conn.stats.last if conn.stats is not None else 0.0
            if not conn.closed and idle > self.timeout:
                yield from self.close(conn, now, self.tally.packets)
            elif not conn.closed and (conn.flow is None or conn.decoder is not None):
                yield from self._expire(conn, now, self.tally.packets)
                if not conn.closed and self._ended(conn):
                    yield from self.close(conn, now, self.tally.packets)
            if conn.closed and idle > _CLOSED_LINGER:
                self.forget(conn)

    def finish(self, ts: float, n: int) -> Iterator[Item]:
        """The capture ended: close every connection."""
        conns = {id(c): c for c, _ in self.table.values()}
        for conn in conns.values():
            yield from self.close(conn, ts, n)
        self.table.clear()
        for conn in conns.values():
            assert conn.stats is not None
            self.tally.ended(conn.stats)

    def forget(self, conn: _Conn) -> None:
        """Drop a closed connection from the table (later packets start a new one)."""
        (c_host, c_port), (s_host, s_port) = conn.client, conn.server
        followed = False
        for key in ((c_host, c_port, s_host, s_port), (s_host, s_port, c_host, c_port)):
            entry = self.table.get(key)
            if entry is not None and entry[0] is conn:
                del self.table[key]
                followed = True
        if followed and conn.stats is not None:
            self.tally.ended(conn.stats)

    def segment(self, src: bytes, dst: bytes, seg: bytes, ts: float, n: int) -> list[Item]:
        if len(seg) < 20 or (seg[12] >> 4) * 4 < 20 or (seg[12] >> 4) * 4 > len(seg):
            return [self.tally.error(CaptureError("tcp", "TCP header cut short or bad", ts, n))]
        sport = seg[0] << 8 | seg[1]
        dport = seg[2] << 8 | seg[3]
        seq = int.from_bytes(seg[4:8], "big")
        ack = int.from_bytes(seg[8:12], "big")
        flags = seg[13]
        data = seg[(seg[12] >> 4) * 4 :]
        key = (src, sport, dst, dport)
        entry = self.table.get(key)
        items: list[Item] = []
        if entry is not None and flags & _SYN and not flags & _ACK:
            conn = entry[0]
            stream = conn.streams[entry[1]]
            if conn.closed or stream.next != (seq + 1) & 0xFFFFFFFF:
                items += self.close(conn, ts, n)
                self.forget(conn)
                entry = None
        if entry is None:
            if flags & _RST or (not data and not flags & (_SYN | _FIN)):
                return items  # a stray ack or reset of a connection not followed
            if len(self.table) >= 2 * self.max_flows:
                items += self._make_room()
            entry = self._new_conn(src, sport, dst, dport, flags)
        conn, direction = entry
        stats = conn.stats
        assert stats is not None
        stats.packets += 1
        stats.bytes += len(data)
        stats.last = ts
        if conn.closed:
            return items
        if conn.flow is not None and conn.decoder is None:  # nothing to decode: watch the end
            if flags & _FIN:
                conn.streams[direction].fin(seq)
            if flags & _RST or all(s.fin_at is not None for s in conn.streams.values()):
                items += self.close(conn, ts, n)
            return items
        other_dir: Direction = "to_client" if direction == "to_server" else "to_server"
        stream = conn.streams[direction]
        other = conn.streams[other_dir]
        if flags & _SYN:
            stream.syn(seq)
            seq = (seq + 1) & 0xFFFFFFFF
        if flags & _ACK and other.started:
            pieces = other.ack(ack, ts)
            if pieces:
                items += self._deliver(conn, other_dir, pieces, ts, n)
        if data:
            started = stream.started
            pieces = stream.add(seq, data)
            if not started and stream.picked_up:
                pieces.insert(0, 0)
            if pieces:
                items += self._deliver(conn, direction, pieces, ts, n)
        if flags & _FIN:
            stream.fin((seq + len(data)) & 0xFFFFFFFF)
        if stream.acked_to > stream.offset or other.acked_to > other.offset:
            items += self._expire(conn, ts, n)  # a hole waits for acknowledged bytes
        if flags & _RST or (
            stream.fin_at is not None
            and other.fin_at is not None
            and stream.next == stream.fin_at
            and other.next == other.fin_at
        ):
            items += self.close(conn, ts, n)
        return items

    def _expire(self, conn: _Conn, ts: float, n: int) -> list[Item]:
        """Gaps for the acknowledged holes of ``conn`` that waited too long for their bytes."""
        items: list[Item] = []
        for stream in conn.streams.values():  # (turning the connection round makes a new dict)
            pieces = stream.expire(ts)
            if pieces:  # detection may have turned the connection round: look the direction up
                direction: Direction = (
                    "to_server" if conn.streams["to_server"] is stream else "to_client"
                )
                items += self._deliver(conn, direction, pieces, ts, n)
        return items

    @staticmethod
    def _ended(conn: _Conn) -> bool:
        """Both sides sent a FIN and every byte before them came out."""
        return all(s.fin_at is not None and s.next == s.fin_at for s in conn.streams.values())

    def _new_conn(
        self, src: bytes, sport: int, dst: bytes, dport: int, flags: int
    ) -> tuple[_Conn, Direction]:
        guess = port_guess("tcp", sport, dport, self.overrides)
        if flags & _SYN:
            client_is_src = not flags & _ACK
        else:
            client_is_src = not (guess is not None and guess.port == sport and guess.port != dport)
        a, b = (src, sport), (dst, dport)
        client, server = (a, b) if client_is_src else (b, a)
        conn = _Conn(client, server, self.tally.new_index(), bool(flags & _SYN))
        conn.guess = guess
        conn.streams = {
            "to_server": TcpStream(self.max_pending, self.ack_grace),
            "to_client": TcpStream(self.max_pending, self.ack_grace),
        }
        conn.stats = FlowStats(
            self._make_flow(conn, None, "not yet recognised"),
            first=self.tally.now,
            last=self.tally.now,
        )
        self.tally.add_flow(conn.stats)
        self.table[(client[0], client[1], server[0], server[1])] = (conn, "to_server")
        self.table[(server[0], server[1], client[0], client[1])] = (conn, "to_client")
        return (conn, "to_server" if client_is_src else "to_client")

    def _make_room(self) -> list[Item]:
        """Too many connections: forget the closed ones, then close the longest idle
        tenth. Returns what closing them found (the rest of their units, errors)."""
        conns = {id(c): c for c, _ in self.table.values()}
        for conn in conns.values():
            if conn.closed:
                self.forget(conn)
        items: list[Item] = []
        if len(self.table) < 2 * self.max_flows:
            return items
        live = sorted(
            (c for c in conns.values() if not c.closed),
            key=lambda c: c.stats.last if c.stats else 0.0,
        )
        for conn in live[: max(1, len(live) // 10)]:
            items += self.close(conn, self.tally.now, self.tally.packets)
            self.forget(conn)
        return items

    def _make_flow(self, conn: _Conn, protocol: str | None, reason: str) -> Flow:
        client = address(*conn.client)
        server = address(*conn.server)
        return Flow("tcp", client, server, protocol, reason, conn.index)

    def _deliver(
        self, conn: _Conn, direction: Direction, pieces: list[Piece], ts: float, n: int
    ) -> list[Item]:
        if conn.flow is None:
            first = conn.first[direction]
            for piece in pieces:
                conn.held.append((direction, piece, ts, n))
                if isinstance(piece, int):
                    if first:  # a gap ends the first bytes
                        conn.checked[direction] = max(conn.checked[direction], _FIRST_BYTES)
                else:
                    conn.held_bytes += len(piece)
                    if conn.checked[direction] < _FIRST_BYTES and len(first) < _FIRST_BYTES:
                        first += piece[: _FIRST_BYTES - len(first)]
            found = self._decide(conn, direction, ts, n)
            if found is None:
                return []
            held, conn.held, conn.held_bytes = conn.held, [], 0
            items: list[Item] = found
            for d, piece, t, k in held:
                items += self._feed(conn, d, [piece], t, k)
            return items
        return self._feed(conn, direction, pieces, ts, n)

    def _feed(
        self, conn: _Conn, direction: Direction, pieces: list[Piece], ts: float, n: int
    ) -> list[Item]:
        decoder = conn.decoder
        flow = conn.flow
        items: list[Item] = []
        pos = conn.pos
        for piece in pieces:
            if isinstance(piece, int):
                if piece == 0:
                    message = "the connection's start was not captured: it is picked up here"
                else:
                    message = f"{piece} bytes of the stream were not captured"
                items.append(CaptureError("tcp", message, ts, n, flow, direction, pos[direction]))
                pos[direction] += piece
                if decoder is not None:
                    items += decoder.gap(direction, piece, ts, n)
            else:
                pos[direction] += len(piece)
                if decoder is not None:
                    items += decoder.feed(direction, piece, ts, n)
        return self._count(conn, items)

    def _count(self, conn: _Conn, items: list[Item]) -> list[Item]:
        stats = conn.stats
        assert stats is not None
        for item in items:
            if item.__class__ is Unit:
                stats.units += 1
            else:
                stats.errors += 1
                self.tally.error(item)  # type: ignore[arg-type]
        return items

    def _decide(
        self, conn: _Conn, direction: Direction, ts: float, n: int, final: bool = False
    ) -> list[Item] | None:
        """Choose the connection's protocol if its first bytes allow (else ``None``).

        Returns what choosing found: a flow on a known port whose content is not
        that protocol's, a protocol without a stream decoder.
        """
        guess = conn.guess
        content = None
        if guess is None or not guess.override:
            for d in (direction, _OTHER[direction]):
                first = conn.first[d]
                if first:
                    conn.seen.add(d)
                if len(first) > conn.checked[d] and first:  # looked at only when it grew
                    conn.checked[d] = len(first)
                    content = tcp_content(bytes(first))
                    if content is not None:
                        turned = content.from_server is not None and content.from_server != (
                            d == "to_client"
                        )
                        if turned and not conn.oriented:
                            self._swap(conn)
                        break
            waiting = (
                len(conn.seen) < 2
                and conn.held_bytes < _HOLD_LIMIT
                and len(conn.held) < _HOLD_PIECES
            )
            if content is None and waiting and not final:
                return None
        if guess is not None and guess.override:
            protocol: str | None = guess.protocol
            reason = guess.why
        else:
            protocol, reason = verdict(
                guess,
                None if content is None else content.protocol,
                None if content is None else content.why,
            )
            if not conn.held_bytes and guess is not None and content is None:
                protocol, reason = guess.protocol, f"{guess.why}; no data to confirm it"
        flow = self._make_flow(conn, protocol, reason)
        conn.flow = flow
        assert conn.stats is not None
        conn.stats.flow = flow
        if protocol is None:
            if guess is not None:
                return self._count(conn, [CaptureError("detect", reason, ts, n, flow)])
            return []
        decoder = stream_decoder(protocol, flow)
        if isinstance(decoder, str):
            return self._count(conn, [CaptureError("decode", decoder, ts, n, flow)])
        conn.decoder = decoder
        return []

    def _swap(self, conn: _Conn) -> None:
        """The first bytes showed the client is the other end: turn the connection round."""
        conn.client, conn.server = conn.server, conn.client
        conn.oriented = True
        conn.streams = {
            "to_server": conn.streams["to_client"],
            "to_client": conn.streams["to_server"],
        }
        conn.pos = {"to_server": conn.pos["to_client"], "to_client": conn.pos["to_server"]}
        flip = _OTHER
        conn.held = [(flip[d], p, t, k) for d, p, t, k in conn.held]
        conn.seen = {flip[d] for d in conn.seen}
        conn.first = {"to_server": conn.first["to_client"], "to_client": conn.first["to_server"]}
        conn.checked = {
            "to_server": conn.checked["to_client"],
            "to_client": conn.checked["to_server"],
        }
        (c_host, c_port), (s_host, s_port) = conn.client, conn.server
        for key in ((c_host, c_port, s_host, s_port), (s_host, s_port, c_host, c_port)):
            entry = self.table.get(key)
            if entry is not None and entry[0] is conn:
                self.table[key] = (conn, flip[entry[1]])

    def close(self, conn: _Conn, ts: float, n: int) -> list[Item]:
        if conn.closed:
            return []
        conn.closed = True
        items: list[Item] = []
        for direction in _DIRECTIONS:
            pieces = conn.streams[direction].flush()
            if pieces:
                items += self._deliver(conn, direction, pieces, ts, n)
        if conn.flow is None:
            items += self._decide(conn, "to_server", ts, n, final=True) or []
            held, conn.held = conn.held, []
            for d, piece, t, k in held:
                items += self._feed(conn, d, [piece], t, k)
        if conn.decoder is not None:
            items += self._count(conn, conn.decoder.close(ts, n))
        return items
