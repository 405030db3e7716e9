"""Sans-IO sessions: the client against canned bytes, the server against commands."""

from __future__ import annotations

import pytest

from gamecodec import bzrc
from gamecodec.bzrc import Ack, Error, Fail, Greeting, Listing, Ok, Team, Timer
from gamecodec.bzrc._help import TOPICS
from gamecodec.bzrc.session import Answer, Closed, Connected, Request, Unsolicited
from gamecodec.errors import EncodeError, LocalProtocolError, RemoteProtocolError


def test_client_handshake_and_pipelining() -> None:
    client = bzrc.ClientSession()
    r1 = client.send("teams")
    r2 = client.send("shoot", 0)
    assert client.data_to_send() == b""  # held until the greeting
    events = client.receive_data(b"bzrobots 1\n", 0.0)
    assert events == [Connected(Greeting("bzrobots", 1))]
    assert client.data_to_send() == b"agent 1\nteams\nshoot 0\n"
    events = client.receive_data(b"ack 0.1 teams\nbegin\nteam red 1\nend\nack 0.2 sho", 0.0)
    assert events == [Answer(r1, Listing(Ack(0.1, "teams", ()), [Team("red", 1)]))]
    assert client.pending == (r2,)
    events = client.receive_data(b"ot 0\nok\n", 0.0)
    assert events == [Answer(r2, Ok(Ack(0.2, "shoot", ("0",))))]
    r3 = client.send("speed", 0, 2)
    assert client.data_to_send() == b"speed 0 2\n"
    assert client.receive_data(b"ack 1 speed 0\nfail Invalid parameter(s)\nfail\n", 0.0) == [
        Answer(r3, Fail(Ack(1, "speed", ("0",)), "Invalid parameter(s)", True))
    ]


def test_send_many_is_all_or_none() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    client.data_to_send()
    with pytest.raises(ValueError):
        client.send_many([("speed", 0, 1.0), ("shoot", 0), ("speed", 0, "fast")])
    assert client.data_to_send() == b"" and client.pending == ()  # the shot did not go
    r1, r2 = client.send_many([("speed", 0, 1.0), ("shoot", 0)])
    assert client.data_to_send() == b"speed 0 1.0\nshoot 0\n"
    assert client.pending == (r1, r2) and r2.id == r1.id + 1
    assert client.send("timer").id == r2.id + 1


def test_client_errors_and_ackless_fails() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    r1 = client.send("teams")
    r2 = client.send("occgrid", 1)
    events = client.receive_data(
        b"error Connection Stalled.  RC stopped reading data!\nerror Invalid request teams\nfail\n",
        0.0,
    )
    assert events == [
        Unsolicited(Error("Connection Stalled.  RC stopped reading data!")),
        Answer(r1, Error("Invalid request teams")),
        Answer(r2, Fail(None, "", False)),
    ]
    assert client.receive_data(b"error late\n", 0.0) == [Unsolicited(Error("late"))]


def test_client_help_and_close() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    r1 = client.send("help")
    assert client.receive_data(b":a\n:b\n", 0.0) == []
    assert client.end_help() == [Answer(r1, bzrc.Help((":a", ":b")))]
    r2 = client.send("quit")
    r3 = client.send("timer")
    assert client.receive_data(b"ack 1 quit\nok\n", 0.0) == [Answer(r2, Ok(Ack(1, "quit", ())))]
    assert client.receive_data(b"", 0.0) == [Closed((r3,))]
    assert client.closed
    with pytest.raises(LocalProtocolError):
        client.send("teams")


@pytest.mark.parametrize(
    "data",
    [
        b"ok\n",  # before the greeting
        b"bzrobots 1\nok\n",  # answers nothing
        b"bzrobots 1\nbzrobots 1\n",
        b"bzrobots 1\nfail Unrecognized handshake\n",
        b"bzrobots 1\nerror agent expected\n",
        b"bzrobots 1\nack 1 teams\nbegin\nnonsense\n",
    ],
)
def test_client_remote_errors(data: bytes) -> None:
    client = bzrc.ClientSession()
    with pytest.raises(RemoteProtocolError):
        client.receive_data(data, 0.0)
    assert client.closed


def test_client_ack_mismatch() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    client.send("teams")
    with pytest.raises(RemoteProtocolError):
        client.receive_data(b"ack 1 shots\nbegin\nend\n", 0.0)


def test_server_handshake_refused() -> None:
    server = bzrc.ServerSession(0.0)
    assert server.data_to_send() == b"bzrobots 1\n"
    assert server.receive_data(b"\n  \nAGENT 1\n", 1.0) == []
    assert server.data_to_send() == b"fail Unrecognized handshake\n"
    assert server.closed


def test_server_in_order_answers() -> None:
    server = bzrc.ServerSession(10.0)
    server.data_to_send()
    reqs = server.receive_data(b"agent 1\nteams\ntimer\nshoot +2\nangvel 0 1e0\n", 11.0)
    assert reqs == [
        Request(0, "teams", ()),
        Request(1, "timer", ()),
        Request(2, "shoot", (2,)),
        Request(3, "angvel", (0, 1.0)),
    ]
    server.respond(reqs[1], Timer(None, 1.5, 300000), 12.0)
    assert server.data_to_send() == b""  # teams comes first
    server.respond(reqs[0], Listing(None, [Team("red", 1)]), 12.5)
    server.ok(reqs[2], 13.0)
    server.fail(reqs[3], 13.0, "nope")
    assert server.data_to_send() == (
        b"ack 2.5 teams\nbegin\nteam red 1\nend\nack 2.0 timer\ntimer 1.5 300000\n"
        b"ack 3.0 shoot 2\nok\nack 3.0 angvel 0 1.0\nfail nope\n"
    )
    with pytest.raises(LocalProtocolError):
        server.ok(reqs[0], 14.0)
    assert server.unanswered == ()


def test_server_end_of_stream_answers_what_is_pending_then_closes() -> None:
    server = bzrc.ServerSession(10.0)
    server.data_to_send()
    (request,) = server.receive_data(b"agent 1\ntimer\n", 11.0)
    assert server.receive_data(b"", 11.5) == []  # the client closed its end
    assert not server.closed  # the timer request is still to be answered
    assert server.receive_data(b"timer\n", 11.6) == []  # nothing is read after the end
    server.respond(request, Timer(None, 1.5, 300000), 12.0)
    assert server.data_to_send() == b"ack 2.0 timer\ntimer 1.5 300000\n"
    assert server.closed


SPEED_HELP = "".join(line + "\n" for line in TOPICS["speed"]).encode()


def test_server_automatic_answers() -> None:
    server = bzrc.ServerSession(0.0, dialect="cpp")
    server.data_to_send()
    server.receive_data(b"agent 1\r\n", 0.0)
    reqs = server.receive_data(
        b"foo\nteams extra\nspeed 0 x\nspeed 0 nan\nhelp speed\nhelp nope\naccelx 0 1\n"
        b"help speed extra\nhelp nope extra\noccgrid 00\n",
        1.0,
    )
    assert reqs == [Request(9, "occgrid", (0,))]
    server.respond(reqs[0], Fail(None, "", False), 2.0, ack=False)
    assert (
        server.data_to_send()
        == (
            b"fail invalid command\n"
            b"ack 1.000000 teams extra\nfail Invalid parameter(s)\n"
            b"ack 1.000000 speed 0 x\nfail Invalid parameter(s)\nfail\n"
            b"ack 1.000000 speed 0 nan\nfail not a number\n"
            + SPEED_HELP
            + b'fail invalid command "nope"\n'
            b"fail invalid command\n"
            # bzrflag reads the first argument of help only
             + SPEED_HELP + b'fail invalid command "nope"\n'
            b"fail\n"
        )
    )
    legacy = bzrc.ServerSession(0.0, legacy_accel=True)
    legacy.receive_data(b"agent 1\n", 0.0)
    assert legacy.receive_data(b"accelx 0 1\n", 0.0) == [Request(0, "accelx", (0, 1.0))]


def test_server_line_cap_and_respond_checks() -> None:
    server = bzrc.ServerSession(0.0, max_line=10)
    with pytest.raises(RemoteProtocolError):
        server.receive_data(b"x" * 11, 0.0)
    server = bzrc.ServerSession(0.0)
    server.receive_data(b"agent 1\n", 0.0)
    (req,) = server.receive_data(b"teams\n", 0.0)
    with pytest.raises(LocalProtocolError):
        server.respond(req, Error("x"), 0.0)  # type: ignore[arg-type]


def test_server_help_of_an_added_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry added to ``HELP`` is listed and answered; text latin-1 cannot
    write is replaced, not raised."""
    monkeypatch.setitem(bzrc.session.HELP, "dance", (":dance",))
    monkeypatch.setitem(
        bzrc.session.HELP, "wave", (":wave [tankid]", "", "        wave \N{WAVING HAND SIGN}")
    )
    server = bzrc.ServerSession(0.0)
    server.data_to_send()
    assert server.receive_data(b"agent 1\nhelp dance\nhelp wave\nhelp\n", 1.0) == []
    out = server.data_to_send()
    assert out.startswith(b":dance\n:wave [tankid]\n\n        wave ?\n:angvel ")
    assert b"\n:constants\n:dance\n:flags\n" in out and out.endswith(b":timer\n:wave [tankid]\n")


def test_client_send_line_as_typed() -> None:
    """``send_line`` is the reference client's ``sendline`` (bzagents/bzrc.py
    63-65: ``print >>self.conn, line``): the line goes out as typed, held
    until the greeting like any command, and its answer is matched by order."""
    client = bzrc.ClientSession()
    shoot = client.send_line("shoot  00")
    assert shoot == Request(0, "shoot", ("00",))
    assert client.send_line("  ") is None  # the server ignores a blank line
    assert client.data_to_send() == b""
    client.receive_data(b"bzrobots 1\n", 0.0)
    assert client.data_to_send() == b"agent 1\nshoot  00\n  \n"
    teams = client.send("teams")
    assert client.data_to_send() == b"teams\n"
    assert client.receive_data(b"ack 1 shoot 0\nok\nack 2 teams\nbegin\nend\n", 1.0) == [
        Answer(shoot, Ok(Ack(1, "shoot", ("0",)))),
        Answer(teams, Listing(Ack(2, "teams", ()), [])),
    ]
    for bad in ("teams\nshots", "taunt \N{WAVING HAND SIGN}"):
        with pytest.raises(EncodeError):
            client.send_line(bad)
    assert client.data_to_send() == b"" and not client.pending
