"""BZRC and ywindow streams after a gap: where reading resumes, and what it gives."""

from __future__ import annotations

import io
import itertools
import random
from collections.abc import Sequence
from typing import Any

from gamecodec import bzrc, capture, ywindow
from gamecodec.capture import _bzrc_stream, _ywindow_stream
from gamecodec.ywindow.sample import sample_messages
from tests.bzrc.conftest import load_transcript
from tests.capture import pcapgen
from tests.capture.conftest import bzrc_streams

CLIENT, SERVER = ("10.0.0.2", 40000), ("10.0.0.1", 47200)
FLOW = capture.Flow("tcp", capture.Address("a", 1), capture.Address("b", 2), "bzrc", "", 1)
YFLOW = capture.Flow("tcp", capture.Address("a", 1), capture.Address("b", 2), "ywindow", "", 1)


def _read(packets: list[pcapgen.Packet]) -> list[capture.Item]:
    return list(capture.read(io.BytesIO(pcapgen.capture(packets))))


def _units(items: Sequence[capture.Item], direction: str) -> list[capture.Unit]:
    return [i for i in items if isinstance(i, capture.Unit) and i.direction == direction]


def _errors(items: Sequence[capture.Item]) -> list[capture.CaptureError]:
    return [i for i in items if isinstance(i, capture.CaptureError)]


def _cut(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    """``data`` cut at the offsets ``cuts``."""
    return [data[a:b] for a, b in itertools.pairwise([0, *cuts, len(data)]) if b > a]


# -- BZRC ---------------------------------------------------------------------


def _bzrc_capture(
    server_pieces: list[bytes],
    drop: int,
    client_pieces: list[bytes] | None = None,
    client_drop: int | None = None,
) -> list[capture.Item]:
    """The recorded session's commands pipelined, then the server's bytes in
    ``server_pieces`` (the first is the greeting) with piece ``drop`` lost."""
    sent, _received = bzrc_streams()
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open() + conn.send("to_client", server_pieces[0])
    client = client_pieces if client_pieces is not None else [sent]
    for k, piece in enumerate(client):
        segment = conn.segment("to_server", piece)
        if k != client_drop:
            packets.append(segment)
    for k, piece in enumerate(server_pieces[1:], 1):
        segment = conn.segment("to_client", piece)
        if k != drop:
            packets.append(segment)
    return _read(packets + conn.close())


def _responses(data: bytes) -> list[object]:
    decoder = bzrc.Decoder()
    return decoder.feed(data) + decoder.close()


def _ack_lines(data: bytes) -> list[int]:
    return [k + 1 for k in range(len(data) - 4) if data[k : k + 5] == b"\nack "]


def test_bzrc_ack_line_cut_right_after_a_gap_is_read() -> None:
    """A gap ends inside a listing; the next segment holds the listing's end and
    the first two bytes of the next ack line; everything from that line is read."""
    _sent, received = bzrc_streams()
    acks = _ack_lines(received)
    resume = acks[4]  # the 'flags' response
    cuts = [len(b"bzrobots 1\n"), acks[3] + 30, resume - 10, resume + 2]
    pieces = _cut(received, cuts)
    items = _bzrc_capture(pieces, drop=2)
    got = [u.value for u in _units(items, "to_client")]
    expected = _responses(received[: acks[3]]) + _responses(received[resume:])
    assert got == expected
    assert [e.where for e in _errors(items)] == ["tcp"]


def test_bzrc_resumes_wherever_the_segments_cut_the_ack_line() -> None:
    """The bytes after a gap in any two pieces, or in random pieces: the same units."""
    _sent, received = bzrc_streams()
    acks = _ack_lines(received)
    resume = acks[6]
    after = received[resume - 7 :]  # the end of a listing, then an ack line
    expected = _responses(received[resume:])
    splits: list[list[int]] = [[k] for k in range(1, 20)]
    rng = random.Random(3)
    for _ in range(20):
        splits.append(sorted(rng.sample(range(1, len(after)), 40)))
    for cuts in splits:
        stream = _bzrc_stream.BzrcStream(FLOW)
        got: list[capture.Item] = []
        got += stream.gap("to_client", 100, 1.0, 1)
        for piece in _cut(after, cuts):
            got += stream.feed("to_client", piece, 1.0, 1)
        got += stream.close(1.0, 1)
        assert [u.value for u in got if isinstance(u, capture.Unit)] == expected, cuts
        assert _errors(got) == []


def test_bzrc_first_command_after_a_client_gap() -> None:
    """The client's first line after a gap is a command when it starts with a
    command's name; otherwise it is the rest of a line the gap cut."""
    cases = [
        (b"agent 1\nteams\n", 6, b"flags\nshots\n", ["agent", "teams", "flags", "shots"]),
        (b"agent 1\nteams\nmy", 3, b"nks\nshots\n", ["agent", "teams", "shots"]),
        (b"agent 1\nteams\n", 5, b"ts 0\nshots\n", ["agent", "teams", "shots"]),
        (b"agent 1\n", 3, b"\nshoot 0\n", ["agent", "shoot"]),
    ]
    for before, size, after, names in cases:
        stream = _bzrc_stream.BzrcStream(FLOW)
        units = stream.feed("to_server", before, 1.0, 1)
        units += stream.gap("to_server", size, 1.0, 1)
        for k in range(len(after)):  # byte by byte
            units += stream.feed("to_server", after[k : k + 1], 1.0, 1)
        assert [u.names[0] for u in units] == names, (before, after)  # type: ignore[union-attr]


Row = tuple[tuple[Any, Any], tuple[Any, Any]]


def _pairs(items: Sequence[capture.Item]) -> list[Row]:
    """The bzrc table's rows: (command, its fields), (response, its fields)."""
    rows = capture.tables(items)["bzrc"].to_pylist()
    return [
        ((r["command"], r["command_fields"]), (r["response"], r["response_fields"])) for r in rows
    ]


def _kinds(pairs: list[Row]) -> list[tuple[Any, Any]]:
    return [(c[0], r[0]) for c, r in pairs]


def test_bzrc_a_fail_whose_ack_was_lost_is_not_taken_for_a_response() -> None:
    """A gap cuts an ack line: its ``fail`` line must not answer another
    command; reading resumes at the next ack."""
    greeting = b"bzrobots 1\n"
    server = greeting + b"ack 0.5 shoot 99\nfail Invalid tank ID: 99\nack 0.6 shots\nbegin\nend\n"
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open() + conn.send("to_client", greeting)
    packets += conn.send("to_server", b"agent 1\nshoot 99\nshots\n")
    rest = server[len(greeting) :]
    conn.send("to_client", rest[:6])  # 'ack 0.' is lost
    for line in rest[6:].splitlines(keepends=True):  # each line whole in its segment
        packets += conn.send("to_client", line)
    items = _read(packets + conn.close())
    responses = _units(items, "to_client")
    assert [u.names for u in responses] == [("Greeting",), ("Listing",)]
    assert _kinds(_pairs(items)) == [
        (None, "Greeting"),
        ("agent", None),
        ("shoot", None),
        ("shots", "Listing"),
    ]


def test_bzrc_responses_after_a_server_gap_pair_with_their_commands() -> None:
    """Responses lost in a gap leave their commands unanswered; every other row
    is the one the whole capture gives."""
    _sent, received = bzrc_streams()
    acks = _ack_lines(received)
    pieces = _cut(received, [len(b"bzrobots 1\n"), acks[2] + 5, acks[5] - 3, acks[5] + 1])
    items = _bzrc_capture(pieces, drop=2)  # the responses acks[2] to acks[4] are cut or lost
    whole = _pairs(_bzrc_capture(_cut(received, [len(b"bzrobots 1\n")]), drop=-1))
    lost = whole[4:7]  # rows 0 and 1: the greeting and 'agent 1'
    assert [c[0] for c, _r in lost] == ["bases", "flags", "shots"]
    assert _pairs(items) == whole[:4] + [(c, (None, None)) for c, _r in lost] + whole[7:]


def _bzrc_batches(lost_command: int | None = None, batch: int = 4) -> list[capture.Item]:
    """The recorded session as a pipelining agent plays it: ``batch`` commands
    sent at once, then their responses; command ``lost_command`` is not captured."""
    exchanges = load_transcript("basic_four_ls.json")["exchanges"]
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open()
    sent = 0
    for first in range(0, len(exchanges), batch):
        group = exchanges[first : first + batch]
        for exchange in group:
            if exchange["send"]:
                segment = conn.segment("to_server", exchange["send"].encode("latin-1"))
                if sent != lost_command:
                    packets.append(segment)
                sent += 1
        for exchange in group:
            if exchange["recv"]:
                packets += conn.send("to_client", exchange["recv"].encode("latin-1"))
    return _read(packets + conn.close())


def test_bzrc_a_response_whose_command_was_lost_answers_no_other() -> None:
    """A pipelined command is lost: its response has no command, and the
    responses after it keep theirs."""
    whole = _pairs(_bzrc_batches())
    assert whole[4][0][0] == "bases"
    items = _bzrc_batches(lost_command=3)
    assert [e.where for e in _errors(items)] == ["tcp"]
    expected = [*whole[:4], ((None, None), whole[4][1]), *whole[5:]]
    # ids count the lines captured: compare the command names and the responses
    assert [(c[0], r) for c, r in _pairs(items)] == [(c[0], r) for c, r in expected]


# -- ywindow ------------------------------------------------------------------


def _ywindow_feed(
    messages: list[bytes], start: int, size: int, rng: random.Random | None = None
) -> list[capture.Item]:
    """``messages`` as one client stream, ``size`` bytes from ``start`` lost, fed
    whole or (with ``rng``) in random pieces."""
    data = b"".join(messages)
    stream = _ywindow_stream.YwindowStream(YFLOW)
    items: list[capture.Item] = []

    def feed(part: bytes) -> None:
        at = 0
        while at < len(part):
            step = len(part) if rng is None else rng.randrange(1, 40)
            items.extend(stream.feed("to_server", part[at : at + step], 1.0, 1))
            at += step

    feed(data[:start])
    items += stream.gap("to_server", size, 1.0, 1)
    feed(data[start + size :])
    return items + stream.close(1.0, 1)


def _outside(messages: list[bytes], start: int, size: int) -> tuple[list[bytes], list[bytes]]:
    """The messages wholly before ``start``, and those from the first that starts
    at or after ``start + size``."""
    before: list[bytes] = []
    at = 0
    for k, message in enumerate(messages):
        if at >= start + size:
            return before, messages[k:]
        if at + len(message) <= start:
            before.append(message)
        at += len(message)
    return before, []


def test_ywindow_gap_resynchronises_on_the_next_message() -> None:
    conn = pcapgen.TcpConnection(CLIENT, ("10.0.0.1", 7000))
    packets = conn.open()
    packets += conn.send("to_client", b"Yserver 0.0 ywin\n" + bytes(range(256)))
    packets += conn.send("to_server", b"Yclient 0.0 gamecodec\n" + bytes(256))
    packets += conn.send("to_client", b"\x11" * 16)
    packets += conn.send("to_server", b"\x22" * 16)
    calls = [ywindow.call("goto", k, 2 * k) for k in range(30)]
    segments = conn.send("to_server", b"".join(calls), segment=50)
    del segments[5]  # bytes 250 to 300 of the messages: calls 10 to 12 are cut
    items = _read(packets + segments + conn.close())
    words = [u.payload for u in _units(items, "to_server")[3:]]
    assert words == calls[:10] + calls[13:]
    head = 22 + 256 + 16
    tcp, skipped = _errors(items)
    assert tcp.where == "tcp" and tcp.offset == head + 250
    assert skipped.where == "decode" and skipped.offset == head + 240
    assert skipped.message == (
        "22 captured bytes skipped to find the next message "
        f"(reading resumes at offset {head + 312})"
    )


def test_ywindow_gap_in_the_cookie_resumes_exactly() -> None:
    greeting = b"Yclient 0.0 gamecodec\n"
    calls = [ywindow.call("goto", k, k) for k in range(3)]
    data = greeting + bytes(range(256)) + b"\x22" * 16 + b"".join(calls)
    stream = _ywindow_stream.YwindowStream(YFLOW)
    items = stream.feed("to_server", data[:100], 1.0, 1)
    items += stream.gap("to_server", 150, 1.0, 1)
    items += stream.feed("to_server", data[250:], 1.0, 1) + stream.close(1.0, 1)
    assert [u.names for u in items] == [("greeting",), ("goto",), ("goto",), ("goto",)]  # type: ignore[union-attr]


def test_ywindow_random_gaps_never_misread() -> None:
    """Gaps of 1 to 3,000 bytes at random places in the sample traffic, fed whole
    and in random pieces: every message wholly before the gap is read, and
    reading resumes at the first message after it."""
    pool = sample_messages(3000, seed=11)
    rng = random.Random(7)
    for trial in range(300):
        first = rng.randrange(0, len(pool) - 120)
        messages = pool[first : first + 120]
        total = sum(map(len, messages))
        start = rng.randrange(0, total - 1)
        size = min(rng.choice([1, 3, 5, 13, 50, 500, 3000]), total - start - 1)
        items = _ywindow_feed(messages, start, size, rng if trial % 2 else None)
        before, after = _outside(messages, start, size)
        assert [u.payload for u in _units(items, "to_server")] == before + after, (first, start)
        assert len(_errors(items)) <= 1


def test_ywindow_resync_in_any_segmentation() -> None:
    pool = sample_messages(200, seed=3)
    whole = _ywindow_feed(pool, 1000, 37)
    before, after = _outside(pool, 1000, 37)
    assert [u.payload for u in _units(whole, "to_server")] == before + after
    for seed in range(10):
        assert _ywindow_feed(pool, 1000, 37, random.Random(seed)) == whole


def test_ywindow_refused_message_resynchronises() -> None:
    calls = [ywindow.call("goto", k, k) for k in range(12)]
    data = b"".join(calls[:4]) + b"\xff\x01" + b"".join(calls[4:])
    stream = _ywindow_stream.YwindowStream(YFLOW)
    items = stream.feed("to_server", data, 1.0, 1) + stream.close(1.0, 1)
    assert [u.payload for u in _units(items, "to_server")] == calls
    errors = _errors(items)
    assert [e.offset for e in errors] == [96, 96]
    assert errors[1].message.startswith("2 captured bytes skipped")


def test_ywindow_garbage_is_held_within_the_reach() -> None:
    """Bytes with no messages in them: the search holds at most its reach."""
    rng = random.Random(1)
    stream = _ywindow_stream.YwindowStream(YFLOW)
    stream.gap("to_server", 0, 1.0, 1)
    state = stream._dirs["to_server"]
    fake = b"c\x04\x00\x00\x00\x01k\x01a" * 4 + b"B\x00\x00\xff\xff"  # waits for a big blob
    for _ in range(30):
        data = fake + rng.randbytes(20_000)
        assert stream.feed("to_server", data, 1.0, 1) == []
        assert state.resync is not None
        assert len(state.resync.buf) < _ywindow_stream.RESYNC_REACH
    [error] = stream.close(1.0, 1)
    assert isinstance(error, capture.CaptureError)
    assert error.message == f"{30 * len(data)} captured bytes skipped: no message in them"


def test_ywindow_picked_up_mid_stream() -> None:
    """A direction whose start was not captured: read from its greeting if it
    starts with one, else from the first message found."""
    calls = [ywindow.call("goto", k, k) for k in range(8)]
    data = b"".join(calls)
    stream = _ywindow_stream.YwindowStream(YFLOW)
    items = stream.gap("to_server", 0, 1.0, 1)
    items += stream.feed("to_server", data[30:], 1.0, 1) + stream.close(1.0, 1)
    assert [u.payload for u in _units(items, "to_server")] == calls[2:]
    [skipped] = _errors(items)
    assert (skipped.offset, skipped.message.split(" (")[0]) == (
        0,
        "18 captured bytes skipped to find the next message",
    )
    greeting = b"Yclient 0.0 gamecodec\n"
    stream = _ywindow_stream.YwindowStream(YFLOW)
    items = stream.gap("to_server", 0, 1.0, 1)
    items += stream.feed("to_server", greeting + bytes(272) + data, 1.0, 1)
    assert [u.names[0] for u in items] == ["greeting", "cookie", "digest"] + ["goto"] * 8  # type: ignore[union-attr]
