"""Timeouts that fit a busy server (issue 30): the default limit is on
silence (no byte for ``timeout`` seconds), a total only when asked, and the
drop-in, as the reference ``bzrc.py`` (a blocking ``sock.makefile``, no
timeout at all: bzagents/bzrc.py ``BZRC.__init__``, lines 27-38), waits
unless told otherwise.

The servers trickle one answer in ``CHUNKS`` pieces ``GAP`` seconds apart:
the whole answer takes longer than ``IDLE`` (sleeps never end early, so
``CHUNKS * GAP`` is a lower bound), every gap is far shorter. The tests count
the pieces that arrived, not the time.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import BinaryIO

import pytest

from gamecodec.bzrc import aio
from gamecodec.bzrc.compat import BZRC
from tests.bzrc.test_compat import one_shot_server

CHUNKS = 16
GAP = 0.05
IDLE = 0.3  # CHUNKS * GAP = 0.8 s > IDLE, and IDLE = 6 gaps
assert CHUNKS * GAP > 2 * IDLE

HEAD = b"ack 0.1 mytanks\nbegin\n"


def tank_line(i: int) -> bytes:
    return b"mytank %d red%d alive 10 0 - %d 2 0.5 0 0 0\n" % (i, i, i)


def trickling_script(sent: list[int], done: threading.Event) -> object:
    """A raw server: greets, answers ``mytanks`` one tank line per piece."""

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        try:
            conn.sendall(b"bzrobots 1\n")
            assert lines.readline() == b"agent 1\n"
            assert lines.readline() == b"mytanks\n"
            conn.sendall(HEAD)
            for i in range(CHUNKS):
                time.sleep(GAP)
                conn.sendall(tank_line(i))
                sent.append(i)
            conn.sendall(b"end\n")
            done.wait(10)
        except OSError:  # the client gave up and closed
            pass

    return script


@pytest.fixture
def trickle() -> Iterator[tuple[int, list[int], threading.Event]]:
    sent: list[int] = []
    done = threading.Event()
    for port in one_shot_server(trickling_script(sent, done)):  # type: ignore[arg-type]
        yield port, sent, done
        done.set()


def test_compat_idle_timeout_waits_for_an_answer_still_arriving(
    trickle: tuple[int, list[int], threading.Event],
) -> None:
    port, sent, _ = trickle
    bzrc = BZRC("127.0.0.1", port, timeout=IDLE)
    tanks = bzrc.get_mytanks()
    assert [t.index for t in tanks] == list(range(CHUNKS)) and sent == list(range(CHUNKS))
    bzrc.close()


def test_compat_total_timeout_only_when_asked(
    trickle: tuple[int, list[int], threading.Event],
) -> None:
    port, _, _ = trickle
    bzrc = BZRC("127.0.0.1", port, total_timeout=IDLE)
    with pytest.raises(TimeoutError, match="no answer to mytanks within"):
        bzrc.get_mytanks()
    with pytest.raises(ConnectionError):  # closed: a late answer cannot be matched
        bzrc.get_mytanks()
    bzrc.close()


def test_compat_has_no_timeout_unless_given() -> None:
    """bzrflag spent 61 s generating another team's grids before it greeted;
    the reference waited (connected after 19 s), so does the drop-in: no
    limit, a blocking socket."""
    done = threading.Event()

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        done.wait(10)

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port)
        assert (bzrc.timeout, bzrc.total_timeout) == (None, None)
        assert bzrc._sock.gettimeout() is None
        done.set()
        bzrc.close()


def test_compat_idle_timeout_fires_on_silence() -> None:
    done = threading.Event()

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        lines.readline()
        lines.readline()
        conn.sendall(HEAD + tank_line(0))  # then silence
        done.wait(10)

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=IDLE)
        with pytest.raises(TimeoutError, match=r"no byte from the server for 0\.3 s"):
            bzrc.get_mytanks()
        done.set()
        bzrc.close()


async def trickling(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The asyncio twin of :func:`trickling_script` (counts in ``SENT``)."""
    try:
        writer.write(b"bzrobots 1\n")
        assert await reader.readline() == b"agent 1\n"
        assert await reader.readline() == b"mytanks\n"
        writer.write(HEAD)
        for i in range(CHUNKS):
            await asyncio.sleep(GAP)
            writer.write(tank_line(i))
            await writer.drain()
            SENT.append(i)
        writer.write(b"end\n")
        await reader.read()
    except OSError:
        pass
    finally:
        writer.close()


SENT: list[int] = []


async def with_trickle(body: object) -> None:
    SENT.clear()
    server = await asyncio.start_server(trickling, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await body(port)  # type: ignore[operator]
    finally:
        server.close()
        await server.wait_closed()


def test_aio_idle_timeout_waits_for_an_answer_still_arriving() -> None:
    async def body(port: int) -> None:
        bot = await aio.connect("127.0.0.1", port, timeout=IDLE)
        assert (bot.timeout, bot.total_timeout) == (IDLE, None)
        tanks = await bot.mytanks()
        assert [t.idx for t in tanks] == list(range(CHUNKS)) and list(range(CHUNKS)) == SENT
        await bot.close()

    asyncio.run(asyncio.wait_for(with_trickle(body), 30))


def test_aio_total_timeout_only_when_asked() -> None:
    async def body(port: int) -> None:
        bot = await aio.connect("127.0.0.1", port, timeout=None, total_timeout=IDLE)
        with pytest.raises(TimeoutError, match=r"no answer to mytanks within 0\.3 s"):
            await bot.mytanks()
        with pytest.raises(ConnectionError):
            await bot.timer()
        await bot.close()

    asyncio.run(asyncio.wait_for(with_trickle(body), 30))


def test_aio_idle_timeout_counts_bytes_for_any_pending_command() -> None:
    """A command queued behind a long answer is not timed out while that
    answer keeps arriving: the server is busy, not silent."""

    async def body(port: int) -> None:
        bot = await aio.connect("127.0.0.1", port, timeout=IDLE)
        first = asyncio.ensure_future(bot.mytanks())
        await asyncio.sleep(0)
        second = asyncio.ensure_future(bot.command("timer"))  # never answered
        assert len(await first) == CHUNKS
        with pytest.raises(TimeoutError, match=r"no byte from the server for 0\.3 s"):
            await second
        await bot.close()

    asyncio.run(asyncio.wait_for(with_trickle(body), 30))
