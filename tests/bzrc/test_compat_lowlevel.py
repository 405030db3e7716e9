"""The reference client's low-level methods on the drop-in (issue 30):
``sendline``, ``read_arr``, ``expect``, ``expect_multi``, ``die_confused``,
``read_ack``, ``read_bool``, ``read_teams`` .. ``read_constants``,
``read_occgrid``, ``handshake`` and ``conn``, over the same session as the
high-level methods. Each behaves as in bzagents/bzrc.py (ricksmt/BZRFlag at
37eb537): read_arr is ``conn.readline().split()`` (49-61), expect a prefix
match returning the words after it (75-94), expect_multi the first
alternative that matches and the words after it (96-113), die_confused
raises ``UnexpectedResponse(expected, ' '.join(got))`` (67-73), the readers
read ``begin``, items, ``end`` (133-318)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import BinaryIO

import pytest

from gamecodec import EncodeError
from gamecodec.bzrc._help import TOPICS
from gamecodec.bzrc.compat import BZRC, Answer, Command, UnexpectedResponse
from tests.bzrc.test_compat import REFERENCE_ATTRIBUTES, World, one_shot_server, run_server


def plain(value: object) -> object:
    """Answers as their attribute dicts, inside lists too (they compare by identity)."""
    if isinstance(value, Answer):
        return vars(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def bzrc(world: World) -> Iterator[BZRC]:
    for port in run_server(world.handle):
        client = BZRC("127.0.0.1", port, timeout=10)
        yield client
        client.close()


def test_sendline_read_ack_read_mytanks_then_high_level(bzrc: BZRC) -> None:
    bzrc.sendline("mytanks")
    bzrc.read_ack()
    low = bzrc.read_mytanks()
    high = bzrc.get_mytanks()
    assert [vars(t) for t in low] == [vars(t) for t in high] and len(low) == 3
    assert list(vars(low[0])) == REFERENCE_ATTRIBUTES["mytanks"]
    assert isinstance(low[0].index, int) and isinstance(low[0].x, float)


@pytest.mark.parametrize(
    ("command", "reader", "getter"),
    [
        ("teams", "read_teams", "get_teams"),
        ("obstacles", "read_obstacles", "get_obstacles"),
        ("flags", "read_flags", "get_flags"),
        ("shots", "read_shots", "get_shots"),
        ("othertanks", "read_othertanks", "get_othertanks"),
        ("bases", "read_bases", "get_bases"),
        ("constants", "read_constants", "get_constants"),
        ("occgrid 0", "read_occgrid", None),
    ],
)
def test_every_reader_returns_what_the_high_level_method_does(
    bzrc: BZRC, command: str, reader: str, getter: str | None
) -> None:
    bzrc.shoot(0)  # a shot in flight, for shots
    bzrc.sendline(command)
    bzrc.read_ack()
    low = getattr(bzrc, reader)()
    high = getattr(bzrc, getter)() if getter else bzrc.get_occgrid(0)
    assert plain(low) == plain(high) and high


def test_answers_interleave_with_high_level_calls(bzrc: BZRC) -> None:
    """A line sent with sendline and not read yet does not confuse a
    high-level call made in between (the reference would read its answer)."""
    bzrc.sendline("flags")
    bzrc.sendline("constants")
    assert len(bzrc.get_mytanks()) == 3
    assert bzrc.speed(0, 0.5) is True
    bzrc.read_ack()
    assert [f.poss_color for f in bzrc.read_flags()] == ["none", "green"]
    assert len(bzrc.get_othertanks()) == 3
    bzrc.read_ack()
    assert bzrc.read_constants() == {"team": "red", "worldsize": "800"}


def test_read_arr_expect_expect_multi_die_confused(bzrc: BZRC) -> None:
    bzrc.sendline("shoot 0")
    words = bzrc.read_arr()
    assert words[0] == "ack" and words[2:] == ["shoot", "0"] and float(words[1]) >= 0
    assert bzrc.read_arr() == ["ok"]
    bzrc.sendline("constants")
    rest = bzrc.expect("ack")
    assert isinstance(rest, list) and rest[1:] == ["constants"]
    assert bzrc.expect(("begin",), True) is True
    assert bzrc.expect_multi(("constant", "team"), ("end",)) == (0, ["red"])
    assert bzrc.expect_multi(("end",), ("constant",)) == (1, ["worldsize", "800"])
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.expect("begin")  # the list's "end"
    assert (info.value.expected, info.value.got) == ("begin", "end")
    assert str(info.value) == 'BZRC: Expected "begin".  Instead got "end".'
    bzrc.sendline("teams")
    bzrc.read_ack()
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.expect_multi(("team",), ("end",), full=True)  # "begin" matches neither
    assert (info.value.expected, info.value.got) == ("team or end", "begin")
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.expect(("team", "red"), True)  # "team red 3": a prefix, not all of it
    assert info.value.got == "team red 3"
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.die_confused("flag or end", ["shot", "1", "2"])
    assert (info.value.expected, info.value.got) == ("flag or end", "shot 1 2")


def test_readers_die_confused_as_the_reference(bzrc: BZRC) -> None:
    bzrc.sendline("flags")
    bzrc.read_ack()
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.read_teams()
    assert info.value.expected == "team or end"
    assert info.value.got == "flag red none -370.0 0"
    bzrc.sendline("shots")
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.read_flags()  # a line of the flags list is still unread
    assert info.value.expected == "begin"


def test_read_bool_and_the_double_fail(bzrc: BZRC) -> None:
    """bzrflag answers ``speed 0 x`` with ack, ``fail Invalid parameter(s)``
    and a second ``fail`` (server.py:275-276); the reference's read_bool
    leaves the second to answer the next command, the drop-in does not."""
    bzrc.sendline("speed 0 x")
    bzrc.read_ack()
    assert bzrc.read_bool() is False
    bzrc.sendline("shoot 0")
    bzrc.read_ack()
    assert bzrc.read_bool() is True
    bzrc.sendline("shoot 0")  # reloading
    bzrc.read_ack()
    assert bzrc.read_bool() is False


def test_dead_tank_occgrid_low_level(bzrc: BZRC) -> None:
    """The ack-less ``fail`` (server.py:376-378) fails read_ack, as in the
    reference's get_occgrid; the connection stays in step."""
    bzrc.sendline("occgrid 2")
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.read_ack()
    assert (info.value.expected, info.value.got) == ("ack", "fail")
    bzrc.sendline("occgrid 9")  # acked fail: read_occgrid returns None
    bzrc.read_ack()
    assert bzrc.read_occgrid() is None
    assert len(bzrc.get_mytanks()) == 3


def test_read_arr_with_nothing_to_come_raises(bzrc: BZRC) -> None:
    with pytest.raises(UnexpectedResponse, match="no line sent with sendline"):
        bzrc.read_arr()
    bzrc.sendline("   ")  # blank: the server ignores it, nothing to read
    with pytest.raises(UnexpectedResponse):
        bzrc.read_arr()


def test_conn_as_a_file(bzrc: BZRC) -> None:
    print("teams", file=bzrc.conn)  # the reference's print >>self.conn
    bzrc.conn.flush()
    line = bzrc.conn.readline()
    assert line.startswith("ack ") and line.endswith(" teams\n")
    assert [t.color for t in bzrc.read_teams()] == ["red", "blue", "green"]
    bzrc.conn.write("mytanks\nshots\n")
    assert bzrc.conn.readline().endswith(" mytanks\n")
    assert bzrc.conn.readline() == "begin\n"
    assert bzrc.conn.readline().startswith("mytank 0 red0 alive ")
    assert isinstance(bzrc.conn.fileno(), int) and not bzrc.conn.closed
    bzrc.conn.close()
    assert bzrc.conn.closed
    with pytest.raises(ConnectionError):
        bzrc.get_teams()


def test_help_and_quit_through_sendline(bzrc: BZRC) -> None:
    """Help output has no terminator: read_arr takes it as complete once the
    server is quiet (HELP_QUIET). quit: ack, ok, then the server closes."""
    bzrc.sendline("help shoot")
    lines = [bzrc.read_arr() for _ in TOPICS["shoot"]]
    assert lines == [line.split() for line in TOPICS["shoot"]]
    bzrc.sendline("timer")
    bzrc.read_ack()
    assert bzrc.read_arr()[0] == "fail"  # the test world answers timer with fail
    bzrc.sendline("quit")
    bzrc.read_ack()
    assert bzrc.read_bool() is True
    with pytest.raises(ConnectionError):
        bzrc.get_mytanks()


def test_handshake_done_by_the_constructor(bzrc: BZRC) -> None:
    assert bzrc.session.greeting is not None
    bzrc.handshake()  # nothing left to do
    assert len(bzrc.get_teams()) == 3


def test_values_the_server_cannot_parse_raise_encode_error(world: World, bzrc: BZRC) -> None:
    """The reference writes ``'speed %s %s' % (0, True)`` and bzrflag answers
    ``fail Invalid parameter(s)`` plus a second ``fail`` that shifts every
    later answer; the drop-in refuses to send it (bools are refused), and
    nothing of a batch is sent."""
    with pytest.raises(EncodeError):
        bzrc.speed(0, True)
    with pytest.raises(EncodeError):
        bzrc.shoot(True)
    with pytest.raises(EncodeError):
        bzrc.angvel(0, "fast")  # type: ignore[arg-type]
    with pytest.raises(EncodeError):
        bzrc.get_occgrid(0.5)  # type: ignore[arg-type]
    with pytest.raises(EncodeError):
        bzrc.do_commands([Command(0, 1, 0, True), Command(1, "fast", 0, False)])  # type: ignore[arg-type]
    assert world.orders == [] and len(bzrc.get_mytanks()) == 3
    with pytest.raises(EncodeError):
        bzrc.sendline("taunt \N{WAVING HAND SIGN}")


def test_words_are_the_words_bzrflag_sent() -> None:
    """read_arr gives the words of the wire, for bzrflag's number forms too
    (spec 1.4 and 1.8: the 28-space mytank gap, ints, 12-digit floats,
    exponent form, -0.0, nan, inf)."""
    replies = [
        b"ack 0.609892845154 mytanks\nbegin\n"
        b"mytank 0 red0 alive 10 0 -                            -375 -10 0.72128152706 0.0 0.0 0\n"
        b"mytank 1 red1 alive 10 -0.00166 -                            -362 4 2.34822803052 -0.0 "
        b"0.0 0.2120945\nend\n",
        b"ack 1.5 shots\nbegin\nshot 5.19573633741e-15 1e+16 nan -inf\nend\n",
        b"ack 2.40705680847 timer\ntimer 5.264403 300000\n",
        b"ack 3 occgrid\nbegin\nat -400,-19\nsize 2x3\n010\n001\nend\n",
    ]
    done = threading.Event()

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        lines.readline()
        for reply in replies:
            lines.readline()
            conn.sendall(reply)
        done.wait(10)

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=10)
        for command, reply in zip(["mytanks", "shots", "timer", "occgrid 0"], replies, strict=True):
            bzrc.sendline(command)
            expected = [line.split() for line in reply.decode().splitlines()]
            assert [bzrc.read_arr() for _ in expected] == expected
        done.set()
        bzrc.close()


def test_an_empty_help_line_matches_nothing(bzrc: BZRC) -> None:
    """The reference's expect compares with ``zip``, so an empty line (help
    output has them) passed for any expected words; here it matches none."""
    bzrc.sendline("help shoot")
    assert bzrc.read_arr() == [":shoot", "[tankid]"]
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.expect("ack")  # the empty second line
    assert info.value.got == ""
    with pytest.raises(UnexpectedResponse):
        bzrc.expect_multi(("ok",), ("fail",))  # "Request the tank indexed ..."


def test_an_error_line_answering_a_command_fails_the_ack() -> None:
    """The BZFlag C++ server answers a bad request with ``error Invalid
    request ...`` and no ack (RCLink.cxx); the reference's read_ack raises on
    it, and so does every drop-in method (``shoot`` gave False before)."""
    done = threading.Event()

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        lines.readline()
        lines.readline()
        conn.sendall(b"error Invalid request shoot\n")
        lines.readline()
        conn.sendall(b"ack 1.000000 shoot 0\nok\n")
        done.wait(10)

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=10)
        with pytest.raises(UnexpectedResponse) as info:
            bzrc.shoot(0)
        assert (info.value.expected, info.value.got) == ("ack", "error Invalid request shoot")
        assert bzrc.shoot(0) is True and bzrc.errors == []
        done.set()
        bzrc.close()
