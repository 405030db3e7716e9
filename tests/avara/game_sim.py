"""Two peers of a game on a lossy link: the game (``cpp_model.CppPeer``)
against another game, or against a gamecodec ``Connection``.

Each peer sends one kpKeyAndMouse (p1 -8, p3 the frame, urgent, as
CPlayerManager.cpp:447-460 does) every frame to the other, so every datagram
carries an ack block for the other direction, as in a game. The first
``commands`` of the game's stream are measured; the frames go on until every
one of them is acked (so the measured ones see steady traffic to the end). The clock is the
game's: whole milliseconds; the game's ProcessQueue runs every millisecond.
Each datagram is lost with probability ``loss`` and otherwise arrives after
``delay`` + a uniform 0..``jitter`` ms (so datagrams reorder). Seeded, so a
run replays. Both pairings are measured the same way, on the game's stream
toward the other peer: what its reader dropped that the other peer never
received, its resends (totalResent) per command, and the serials the other
peer's skip rule gave up.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gamecodec import avara
from tests.avara.cpp_model import CppPeer

KM = 17
GAME, OTHER = 2, 1  # slot ids


@dataclass
class GameStats:
    """The game's stream toward the other peer, and the reverse stream's resends."""

    commands: int = 0
    delivered: int = 0  # of the game's commands, delivered in order by the other peer
    dropped_unreceived: int = 0  # the game's reader dropped them; the other peer never had them
    game_resends: int = 0  # the game's totalResent
    given_up: int = 0  # serials of the game's stream the other peer's skip rule gave up
    other_resends: int = 0  # the other peer's resends of its own stream
    mean_round_trip: float = 0.0  # the game's meanRoundTripTime, ms, averaged over frames
    retransmit_time: float = 0.0  # the game's retransmitTime, ms, averaged over frames
    finished_ms: int = 0  # when the game's last command was acked

    @property
    def resends_per_command(self) -> float:
        """The game's resends per command it made."""
        return self.game_resends / self.commands


class _OtherGame:
    """The other peer as the game."""

    def __init__(self) -> None:
        self.peer = CppPeer(my_id=OTHER, peer_id=GAME)

    def frame(self, frame: int, now: int) -> list[bytes]:
        out = self.peer.send(KM, -8, frame, now, urgent=True)
        return [out] if out is not None else []

    def receive(self, datagram: bytes, now: int, game_has: set[int]) -> list[bytes]:
        self.peer.receive(datagram, now, game_has)
        out = self.peer.async_write(now)  # ReadComplete's AsyncWrite
        return [out] if out is not None else []

    def poll(self, now: int) -> list[bytes]:
        return self.peer.process_queue(now)

    def done(self, end: int) -> bool:
        return all(p.serial >= end for p in self.peer.queue)

    def given_up(self, end: int) -> int:
        return sum(s < end for s in self.peer.writer.skipped)

    def delivered(self, end: int) -> int:
        return sum(s < end for s in self.peer.writer.delivered)

    def resends(self, end: int) -> int:
        return sum(n for s, n in self.peer.resent.items() if s < end)


class _Gamecodec:
    """The other peer as a gamecodec Connection (seconds on its clock)."""

    def __init__(self, twin: ModuleType, **kwargs: Any) -> None:
        self.conn = twin.Connection(my_id=OTHER, peer_id=GAME, now=0.0, **kwargs)
        self.skipped: list[int] = []
        self.got: list[int] = []

    def frame(self, frame: int, now: int) -> list[bytes]:
        self.conn.send(KM, p1=-8, p3=frame, urgent=True, now=now / 1000)
        return self.poll(now)

    def receive(self, datagram: bytes, now: int, game_has: set[int]) -> list[bytes]:
        del game_has
        self.got += [c.serial for c in self.conn.receive_datagram(datagram, now / 1000)]
        self.skipped += [e.serial for e in self.conn.events() if isinstance(e, avara.SerialSkipped)]
        return self.poll(now)

    def poll(self, now: int) -> list[bytes]:
        out: list[bytes] = self.conn.datagrams_to_send(now / 1000)
        return out

    def done(self, end: int) -> bool:
        return all(s >= end for s in self.conn.unacked_serials)

    def given_up(self, end: int) -> int:
        return sum(s < end for s in self.skipped)

    def delivered(self, end: int) -> int:
        return sum(s < end for s in self.got)

    def resends(self, end: int) -> int:
        """All resends (the Connection does not count them per serial)."""
        del end
        return int(self.conn.total_resent)


def simulate(
    twin: ModuleType | None,
    *,
    seed: int,
    commands: int = 1000,
    loss: float = 0.2,
    delay: int = 20,
    jitter: int = 30,
    frame_time: int = 16,
    horizon_ms: int = 600_000,
    **connection_kwargs: Any,
) -> GameStats:
    """The game against another game (``twin`` None) or a gamecodec twin's
    Connection, until both streams are acked (or ``horizon_ms``)."""
    rng = random.Random(seed)
    game = CppPeer(my_id=GAME, peer_id=OTHER, frame_time=frame_time)
    other: _OtherGame | _Gamecodec = (
        _OtherGame() if twin is None else _Gamecodec(twin, **connection_kwargs)
    )
    wire: list[tuple[int, int, str, bytes]] = []  # (arrival ms, order, to, datagram)
    order = 0
    other_has: set[int] = set()  # serials of the game's stream that reached the other peer
    game_has: set[int] = set()  # serials of the other's stream that reached the game
    stats = GameStats(commands=commands)
    rtt_sum = rt_sum = 0.0
    frames_sampled = 0

    def post(to: str, datagrams: list[bytes], now: int) -> None:
        nonlocal order
        for datagram in datagrams:
            if rng.random() < loss:
                continue
            order += 1
            heapq.heappush(wire, (now + delay + rng.randrange(jitter + 1), order, to, datagram))

    frame = 0
    end = 2 * commands  # the first serial not measured
    t = 0
    while t < horizon_ms:
        while wire and wire[0][0] <= t:
            _, _, to, datagram = heapq.heappop(wire)
            serials = {c.serial for c in avara.decode(datagram).commands}
            if to == "game":
                game_has |= serials
                lost = game.receive(datagram, t, other_has)
                stats.dropped_unreceived += sum(s < end for s in lost)
                out = game.async_write(t)
                post("other", [out] if out is not None else [], t)
            else:
                other_has |= serials
                post("game", other.receive(datagram, t, game_has), t)
        if t % frame_time == 0:
            frame += 1
            out = game.send(KM, -8, frame, t, urgent=True)
            post("other", [out] if out is not None else [], t)
            post("game", other.frame(frame, t), t)
            if frame <= commands:
                rtt_sum += game.timers.mean
                rt_sum += game.timers.retransmit
                frames_sampled += 1
        post("other", game.process_queue(t), t)
        post("game", other.poll(t), t)
        if frame > commands and not stats.finished_ms and all(p.serial >= end for p in game.queue):
            stats.finished_ms = t
        if stats.finished_ms and other.done(end):
            break
        t += 1
    stats.delivered = other.delivered(end)
    stats.game_resends = sum(n for s, n in game.resent.items() if s < end)
    stats.given_up = other.given_up(end)
    stats.other_resends = other.resends(end)
    stats.mean_round_trip = rtt_sum / frames_sampled
    stats.retransmit_time = rt_sum / frames_sampled
    return stats


def table(seeds: int = 8, commands: int = 2000) -> list[str]:
    """The rows of docs/avara.md's table (``python -m tests.avara.game_sim``)."""
    from tests.conftest import load_twin

    twin = load_twin("gamecodec.avara", "_session", "c")
    rows = []
    for loss, name, other, kwargs in (
        (0.2, "the game", None, {}),
        (0.2, "gamecodec, peer_lead=2.0", twin, {"peer_lead": 2.0}),
        (0.2, "gamecodec, default", twin, {}),
        (0.0, "the game", None, {}),
        (0.0, "gamecodec, peer_lead=2.0", twin, {"peer_lead": 2.0}),
        (0.0, "gamecodec, peer_cram_data=3", twin, {"peer_cram_data": 3}),
    ):
        runs = [
            simulate(other, seed=s, commands=commands, loss=loss, **kwargs) for s in range(seeds)
        ]
        dropped = sum(r.dropped_unreceived for r in runs)
        resends = sum(r.game_resends for r in runs)
        given_up = sum(r.given_up for r in runs)
        others = sum(r.other_resends for r in runs)
        rtt = sum(r.mean_round_trip for r in runs) / seeds
        rt = sum(r.retransmit_time for r in runs) / seeds
        rows.append(
            f"| {loss:.0%} | {name} | {dropped} | {resends / (seeds * commands):.3f} "
            f"({resends}) | {given_up} | {others} | {rtt:.0f} | {rt:.0f} |"
        )
    return rows


if __name__ == "__main__":
    print("\n".join(table()))
