"""The Sans-IO peer: both roles of the handshake, FIFO replies, events, errors."""

from __future__ import annotations

import hashlib
import weakref
from pathlib import Path

import pytest

from gamecodec import ywindow
from gamecodec.errors import LocalProtocolError, RemoteProtocolError
from gamecodec.ywindow import (
    Authenticated,
    AuthenticationFailed,
    Call,
    ConnectionClosed,
    Greeting,
    Keyword,
    Notification,
    Peer,
    PeerEvent,
    Reply,
    Role,
    State,
)

AUTH = bytes(range(256))
C_COOKIE = b"\xcc" * 256
S_COOKIE = b"\x55" * 256


def md5(data: bytes) -> bytes:
    return hashlib.md5(data).digest()


_INBOX: weakref.WeakKeyDictionary[Peer, list[PeerEvent]] = weakref.WeakKeyDictionary()


def receive(peer: Peer, data: bytes) -> None:
    """Feed ``peer`` at time 0; keep what the call returned for :func:`taken`."""
    _INBOX.setdefault(peer, []).extend(peer.receive_data(data, 0.0))


def taken(peer: Peer) -> list[PeerEvent]:
    """Every event not yet taken: those receive_data returned, then events()."""
    return _INBOX.pop(peer, []) + peer.events()


def peers(client_auth: bytes = AUTH, server_auth: bytes = AUTH) -> tuple[Peer, Peer]:
    client = Peer.client(client_auth, software="cli", cookie=C_COOKIE)
    server = Peer.server(server_auth, software="srv", cookie=S_COOKIE)
    return client, server


def pump(a: Peer, b: Peer) -> None:
    """Move bytes both ways until neither side has anything to send."""
    while True:
        x, y = a.data_to_send(), b.data_to_send()
        if not x and not y:
            return
        if x and not b.closed:
            receive(b, x)
        if y and not a.closed:
            receive(a, y)


def state(peer: Peer) -> State:
    """The state, un-narrowed (it changes behind mypy's back)."""
    return peer.state


def opened() -> tuple[Peer, Peer]:
    client, server = peers()
    pump(client, server)
    taken(client)
    taken(server)
    return client, server


def test_handshake_wire_bytes_in_order() -> None:
    """Greetings, cookies, then the client's digest and only then the server's."""
    client, server = peers()
    assert client.data_to_send() == b""
    server_hello = server.data_to_send()
    assert server_hello == b"Yserver 0.0 srv\n"
    receive(client, server_hello)
    assert taken(client) == [Greeting(Role.SERVER, 0, 0, "srv")]
    assert client.data_to_send() == b"Yclient 0.0 cli\n" + C_COOKIE
    assert state(client) is State.COOKIE
    receive(server, b"Yclient 0.0 cli\n" + C_COOKIE)
    assert taken(server) == [Greeting(Role.CLIENT, 0, 0, "cli")]
    assert server.data_to_send() == S_COOKIE  # its digest waits for the client's
    assert state(server) is State.DIGEST
    receive(client, S_COOKIE)
    assert client.data_to_send() == md5(AUTH + S_COOKIE)
    assert state(client) is State.DIGEST
    receive(server, md5(AUTH + S_COOKIE))
    assert taken(server) == [Authenticated(S_COOKIE)]
    assert state(server) is State.OPEN
    assert server.data_to_send() == md5(AUTH + C_COOKIE)
    receive(client, md5(AUTH + C_COOKIE))
    assert taken(client) == [Authenticated(S_COOKIE)]
    assert state(client) is State.OPEN


def test_handshake_one_byte_at_a_time() -> None:
    client, server = peers()
    for _ in range(4):
        for src, dst in ((server, client), (client, server)):
            for b in src.data_to_send():
                receive(dst, bytes((b,)))
    assert client.state is server.state is State.OPEN
    assert [type(e) for e in taken(client)] == [Greeting, Authenticated]


def test_wrong_client_digest_closes_the_server_without_its_digest() -> None:
    client, server = peers(server_auth=bytes(256))
    pump(client, server)
    assert isinstance(taken(server)[-1], AuthenticationFailed)
    assert server.closed
    assert state(client) is State.DIGEST  # never answered: nothing learnt
    with pytest.raises(LocalProtocolError):
        server.call("goto")
    receive(client, b"")
    assert client.closed


def test_wrong_server_digest_closes_the_client() -> None:
    client, _ = peers()
    receive(client, b"Yserver 0.0 srv\n" + S_COOKIE)
    assert client.data_to_send() == b"Yclient 0.0 cli\n" + C_COOKIE + md5(AUTH + S_COOKIE)
    receive(client, md5(bytes(256) + C_COOKIE))
    assert [type(e) for e in taken(client)] == [Greeting, AuthenticationFailed]
    assert client.closed
    with pytest.raises(LocalProtocolError):
        client.call("goto")


def test_server_refuses_its_own_cookie_reflected() -> None:
    """A client that sends the server's cookie back must not get the digest it
    would then echo (the login without the authority an audit found)."""
    server = Peer.server(AUTH, cookie=S_COOKIE)
    server.data_to_send()
    receive(server, b"Yclient 0.0 evil\n")
    cookie = server.data_to_send()
    assert cookie == S_COOKIE
    receive(server, cookie)
    assert server.data_to_send() == b""
    assert isinstance(taken(server)[-1], AuthenticationFailed)
    assert server.closed
    receive(server, b"")
    assert server.state is State.CLOSED


def test_client_refuses_its_own_cookie_reflected() -> None:
    client, _ = peers()
    receive(client, b"Yserver 0.0 srv\n" + C_COOKIE)
    assert client.data_to_send() == b"Yclient 0.0 cli\n" + C_COOKIE  # no digest
    assert isinstance(taken(client)[-1], AuthenticationFailed)
    assert client.closed


@pytest.mark.parametrize(
    "line",
    [
        b"Yclient 0.0 x\n",  # the server's own role
        b"Yserver 0.0" + b"x" * 100,  # no newline in 100 bytes
        b"Yserver 0.0 " + b"s" * 41 + b"\n",  # software over 40 characters
        b"Yserver zero\n",
        b"Yserver 0.0 \xff\n",
    ],
)
def test_bad_server_greeting(line: bytes) -> None:
    client, _ = peers()
    with pytest.raises(RemoteProtocolError):
        receive(client, line)
    assert client.closed


def test_greeting_limits() -> None:
    assert ywindow.parse_greeting(b"Yserver 3.14\n", Role.SERVER) == Greeting(
        Role.SERVER, 3, 14, ""
    )
    assert (
        ywindow.encode_greeting(Role.CLIENT, "é" * 40)
        == ("Yclient 0.0 " + "é" * 40 + "\n").encode()
    )
    with pytest.raises(ValueError, match="40"):
        Peer.client(AUTH, software="x" * 41)
    with pytest.raises(ValueError, match="one line"):
        Peer.client(AUTH, software="a\nb")
    with pytest.raises(ValueError, match="100"):
        ywindow.encode_greeting(Role.CLIENT, "\U0001f600" * 40)


def test_authority_and_cookie_sizes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="255 bytes"):
        Peer.client(AUTH[:-1])
    with pytest.raises(ValueError, match="cookie"):
        Peer.client(AUTH, cookie=b"x")
    path = tmp_path / "Yauthority"
    secret = ywindow.save_authority(path=path)
    assert len(secret) == 256
    assert path.stat().st_mode & 0o777 == 0o600
    assert ywindow.load_authority(path) == secret
    path.write_bytes(b"short")
    with pytest.raises(ValueError, match="5 bytes"):
        ywindow.load_authority(path)
    assert ywindow.digest(AUTH, C_COOKIE) == md5(AUTH + C_COOKIE)


def test_authority_from_file_logs_in(tmp_path: Path) -> None:
    path = tmp_path / ".Yauthority"
    ywindow.save_authority(AUTH, path)
    client = Peer.client(ywindow.load_authority(path))
    server = Peer.server(AUTH)
    pump(client, server)
    assert client.state is server.state is State.OPEN


def test_packets_right_behind_the_digest() -> None:
    client, server = peers()
    receive(client, server.data_to_send())
    receive(server, client.data_to_send())
    receive(client, server.data_to_send())
    receive(server, client.data_to_send())
    assert taken(server)[-1] == Authenticated(S_COOKIE)
    server.notify("mouse_moved", 1, 2)
    receive(client, server.data_to_send())  # digest and the event, one chunk
    assert taken(client)[-2:] == [Authenticated(S_COOKIE), Notification("mouse_moved", (1, 2))]


def test_calls_resolve_in_fifo_order_with_events_between() -> None:
    client, server = opened()
    handles = [client.call("goto", i, i) for i in range(3)]
    receive(server, client.data_to_send())
    calls = [e for e in taken(server) if isinstance(e, Call)]
    assert calls == [Call(i, "goto", (i, i)) for i in range(3)]
    server.reply(calls[2], Keyword("ok"), 2)
    assert server.data_to_send() == b""  # held until calls 0 and 1 are answered
    server.notify("mouse_moved", -1, 2)
    server.reply(0, Keyword("ok"), 0)
    server.reply(calls[1], "one")
    wire = server.data_to_send()
    assert wire == (
        ywindow.notify("mouse_moved", -1, 2)
        + ywindow.reply(Keyword("ok"), 0)
        + ywindow.reply("one")
        + ywindow.reply(Keyword("ok"), 2)
    )
    assert not handles[0].done
    receive(client, wire)
    assert taken(client) == [
        Notification("mouse_moved", (-1, 2)),
        Reply(0, (Keyword("ok"), 0)),
        Reply(1, ("one",)),
        Reply(2, (Keyword("ok"), 2)),
    ]
    assert [h.values for h in handles] == [(Keyword("ok"), 0), ("one",), (Keyword("ok"), 2)]
    assert client.pending_calls == ()
    assert server.unanswered_calls == ()


def test_notifications_from_the_client_get_no_reply() -> None:
    client, server = opened()
    client.notify("goto", 10, 10)
    receive(server, client.data_to_send())
    assert taken(server) == [Notification("goto", (10, 10))]
    assert server.unanswered_calls == ()


def test_reply_without_pending_call_is_a_protocol_error() -> None:
    client, _ = opened()
    with pytest.raises(RemoteProtocolError, match="no pending call"):
        receive(client, ywindow.reply(Keyword("ok")))
    assert client.closed


@pytest.mark.parametrize("wire", [ywindow.encode("c", [1, 2]), ywindow.encode("v", [])])
def test_call_without_method_is_a_protocol_error(wire: bytes) -> None:
    _, server = opened()
    with pytest.raises(RemoteProtocolError, match="method keyword"):
        receive(server, wire)


def test_decode_errors_carry_absolute_offsets_and_earlier_events() -> None:
    _, server = opened()
    handshake = len(b"Yclient 0.0 cli\n") + 256 + 16
    good = ywindow.notify("tick")
    with pytest.raises(RemoteProtocolError, match=f"at byte {handshake + len(good)}"):
        receive(server, good + b"?")
    assert taken(server) == [Notification("tick", ())]
    assert server.closed


def test_local_misuse() -> None:
    client, server = peers()
    with pytest.raises(LocalProtocolError):
        client.call("goto")
    client, server = opened()
    with pytest.raises(LocalProtocolError, match="no unanswered incoming call 0"):
        server.reply(0)
    client.call("a")
    receive(server, client.data_to_send())
    server.reply(0)
    with pytest.raises(LocalProtocolError):
        server.reply(0)
    server.close()
    with pytest.raises(LocalProtocolError):
        server.notify("x")
    with pytest.raises(LocalProtocolError):
        receive(server, b"x")


def test_end_of_stream() -> None:
    client, server = opened()
    first = client.call("a")
    receive(client, b"")
    assert taken(client) == [ConnectionClosed((first.id,))]
    assert client.closed
    client, server = opened()
    with pytest.raises(RemoteProtocolError, match="stream ended inside a message"):
        receive(server, ywindow.call("x")[:-1])
        receive(server, b"")
