"""The real bzrflag server's help output parses, on both twins and in the
client session, whatever the chunking, and ``ServerSession`` answers
``help`` with exactly those bytes (data: ``gamecodec.bzrc._help``, read from
bzrflag's ``server.py`` at ``37eb537``, the ``bzrc_*`` docstrings and
``Handler.bzrc_help``, lines 207-229)."""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec import bzrc
from gamecodec.bzrc import Ack, Answer, Fail, Help, Listing, Ok, Team
from gamecodec.bzrc._help import LISTING, TOPICS, UNDOCUMENTED_FAIL, unknown_fail

UNKNOWN = unknown_fail("nope")
UNDOCUMENTED = UNDOCUMENTED_FAIL


def wire(lines: tuple[str, ...]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("latin-1")


AFTER = b"ack 0.5 teams\nbegin\nteam red 10\nend\n"
AFTER_RESPONSE = Listing(Ack(0.5, "teams", ()), [Team("red", 10)])


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def feed_chunks(codec: ModuleType, data: bytes, size: int) -> list[object]:
    decoder = codec.Decoder()
    out: list[object] = []
    for chunk in chunked(data, size):
        out += decoder.feed(chunk)
    return out + decoder.flush()


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_every_topic_then_a_response(codec: ModuleType, topic: str) -> None:
    data = wire(TOPICS[topic]) + AFTER
    for size in (1, 2, 3, 7, 64, len(data)):
        assert feed_chunks(codec, data, size) == [Help(TOPICS[topic]), AFTER_RESPONSE]


def test_every_topic_back_to_back(codec: ModuleType) -> None:
    """Pipelined ``help`` commands: each topic's ``:`` line starts a new help."""
    data = b"".join(wire(TOPICS[t]) for t in sorted(TOPICS)) + b"ack 1 quit\nok\n"
    expected = [Help(TOPICS[t]) for t in sorted(TOPICS)] + [Ok(Ack(1, "quit", ()))]
    for size in (1, 5, 13, len(data)):
        assert feed_chunks(codec, data, size) == expected


def test_listing_then_topic(codec: ModuleType) -> None:
    """A bare help's ``:`` lines stay one response; the topic that follows is
    told apart by its indented or empty second line."""
    data = wire(LISTING) + wire(TOPICS["shoot"]) + wire(LISTING) + AFTER
    expected = [Help(LISTING), Help(TOPICS["shoot"]), Help(LISTING), AFTER_RESPONSE]
    for size in (1, 9, len(data)):
        assert feed_chunks(codec, data, size) == expected


def test_shoot_and_speed_keep_ok_and_fail_lines(codec: ModuleType) -> None:
    assert "            ok [comment]" in TOPICS["shoot"]
    assert TOPICS["speed"][-1] == "        fail"
    decoder = codec.Decoder()
    assert decoder.feed(wire(TOPICS["speed"])) == []
    assert decoder.flush() == [Help(TOPICS["speed"])]
    assert decoder.idle


def test_help_failures(codec: ModuleType) -> None:
    data = wire(TOPICS["timer"]) + (UNKNOWN + "\n" + UNDOCUMENTED + "\n").encode()
    assert codec.Decoder().feed(data) == [
        Help(TOPICS["timer"]),
        Fail(None, 'invalid command "nope"', False),
        Fail(None, "'NoneType' object has no attribute 'strip'", False),
    ]


@pytest.mark.parametrize("size", [1, 4, 11, 1 << 16])
def test_client_session_with_real_help(size: int) -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    asked = [client.send("help", t) for t in ("shoot", "speed", "mytanks")]
    bare = client.send("help")
    teams = client.send("teams")
    nope = client.send("help", "nope")
    timer = client.send("help", "timer")
    data = (
        b"".join(wire(TOPICS[t]) for t in ("shoot", "speed", "mytanks"))
        + wire(LISTING)
        + AFTER
        + (UNKNOWN + "\n").encode()
        + wire(TOPICS["timer"])
    )
    events: list[object] = []
    for chunk in chunked(data, size):
        events += client.receive_data(chunk, 0.0)
    events += client.end_help()
    assert events == [
        Answer(asked[0], Help(TOPICS["shoot"])),
        Answer(asked[1], Help(TOPICS["speed"])),
        Answer(asked[2], Help(TOPICS["mytanks"])),
        Answer(bare, Help(LISTING)),
        Answer(teams, AFTER_RESPONSE),
        Answer(nope, Fail(None, 'invalid command "nope"', False)),
        Answer(timer, Help(TOPICS["timer"])),
    ]
    assert not client.pending and not client.closed


def test_two_bare_helps_in_a_row(codec: ModuleType) -> None:
    """A bare help's listing is one ``:`` line per command, each once: its
    first line coming again starts the next bare help's output."""
    data = wire(LISTING) + wire(LISTING) + wire(TOPICS["angvel"]) + AFTER
    expected = [Help(LISTING), Help(LISTING), Help(TOPICS["angvel"]), AFTER_RESPONSE]
    for size in (1, 6, len(data)):
        assert feed_chunks(codec, data, size) == expected


def test_client_session_two_bare_helps() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    first, second = client.send("help"), client.send("help")
    teams = client.send("teams")
    events = client.receive_data(wire(LISTING) + wire(LISTING) + AFTER, 0.0)
    assert events == [
        Answer(first, Help(LISTING)),
        Answer(second, Help(LISTING)),
        Answer(teams, AFTER_RESPONSE),
    ]
    assert not client.pending and not client.closed


def served(commands: bytes) -> bytes:
    """What a ``ServerSession`` sends for ``commands`` after the handshake."""
    server = bzrc.ServerSession(0.0)
    assert server.data_to_send() == b"bzrobots 1\n"
    assert server.receive_data(b"agent 1\n" + commands, 1.0) == []
    return server.data_to_send()


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_server_session_answers_each_topic_as_bzrflag(topic: str) -> None:
    """``help <topic>``: ``":%s\\n" % docstring.strip()`` (server.py:223-227)."""
    assert served(f"help {topic}\n".encode()) == wire(TOPICS[topic])
    # bzrflag reads the first argument only (``args[1]``)
    assert served(f"help {topic} extra words\n".encode()) == wire(TOPICS[topic])


def test_server_session_listing_and_failures_as_bzrflag() -> None:
    """A bare ``help`` lists the 16 documented commands in ``dir()`` order
    (server.py:213-221); ``taunt`` and ``endgame`` have no docstring, so
    ``help taunt`` fails in ``None.strip()`` (answered by found_terminator's
    exception handler, server.py:155-166); an unknown name gets
    ``fail invalid command "<name>"`` (server.py:229). None has an ack."""
    assert len(LISTING) == 16 and list(LISTING) == sorted(LISTING)
    assert tuple(TOPICS[name][0] for name in sorted(TOPICS)) == LISTING
    assert served(b"help\n") == wire(LISTING)
    assert served(b"help taunt\nhelp endgame\nhelp nope\nhelp Teams\n") == wire(
        (UNDOCUMENTED, UNDOCUMENTED, UNKNOWN, unknown_fail("Teams"))
    )
    # the teams docstring has no blank line after its first (server.py teams)
    assert TOPICS["teams"][1] == "        Request a list of teams."


def test_server_session_help_round_trips_through_the_client() -> None:
    """The session's answers decode to the same ``Help`` values as the real
    server's bytes, pipelined with other commands."""
    out = served(b"help shoot\nhelp\nhelp speed\nhelp nope\n")
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    asked = [client.send("help", "shoot"), client.send("help"), client.send("help", "speed")]
    nope = client.send("help", "nope")
    events = client.receive_data(out, 0.0)
    assert events == [
        Answer(asked[0], Help(TOPICS["shoot"])),
        Answer(asked[1], Help(LISTING)),
        Answer(asked[2], Help(TOPICS["speed"])),
        Answer(nope, Fail(None, 'invalid command "nope"', False)),
    ]
