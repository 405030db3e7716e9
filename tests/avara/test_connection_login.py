"""A game client's login on one Connection: login as slot -1, TOC, control, stream."""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec import avara
from gamecodec.avara import CommandId
from gamecodec.errors import LocalProtocolError

SEED = 60
SLOT = 3


def _commands(datagrams: list[bytes]) -> list[avara.Command]:
    return [c for d in datagrams for c in avara.decode(d).commands]


def test_client_login_sequence(twin: ModuleType) -> None:
    client = twin.Connection(my_id=-1, peer_id=0, now=0.0)
    # the server's connection to slot 3: it consumed the login (serial 0) itself
    server = twin.Connection(my_id=0, peer_id=SLOT, now=0.0, first_receive_serial=2)

    client.send(CommandId.kpPacketProtocolLogin, p3=SEED, data=b"\x00", now=0.0)
    (login,) = _commands(client.datagrams_to_send(0.0))
    assert (login.serial, login.command, login.sender) == (0, -8, -1)

    server.send(CommandId.kpPacketProtocolTOC, p1=SLOT, p3=SEED, data=bytes(56), now=0.01)
    (toc,) = [c for d in server.datagrams_to_send(0.01) for c in client.receive_datagram(d, 0.02)]
    assert toc.command == CommandId.kpPacketProtocolTOC and toc.p3 == SEED
    client.my_id = toc.p1  # the game's ReadFromTOC: myId = p1

    client.send(CommandId.kpPacketProtocolControl, p1=0, p2=3, now=0.02)
    client.send(CommandId.kpLogin, p2=1, now=0.02)
    sent = client.datagrams_to_send(0.02)
    assert [(c.serial, c.sender) for c in _commands(sent)] == [(2, SLOT), (4, SLOT)]
    got = [c for d in sent for c in server.receive_datagram(d, 0.03)]
    assert [(c.command, c.p2) for c in got] == [(-4, 3), (0, 1)]
    assert server.receive_serial == 6


def test_a_command_queued_before_keeps_its_sender(twin: ModuleType) -> None:
    """As the game's packets keep the sender they were made with: a resend of
    the login still says -1, and a command past serial 100 queued before the
    TOC gets the sender byte (it differs from our id now)."""
    client = twin.Connection(
        my_id=-1, peer_id=0, now=0.0, peer_cram_data=0, max_resends_without_receive=None
    )
    for _ in range(52):  # serials 0..102
        client.send(6, data=b"x", now=0.0)
    client.my_id = SLOT
    client.send(6, data=b"y", now=0.0)  # serial 104: ours, past 100, no sender byte
    first = _commands(client.datagrams_to_send(0.0))
    assert [(c.serial, c.sender) for c in first][-3:] == [(100, -1), (102, -1), (104, None)]
    again = {c.serial: c for c in _commands(client.datagrams_to_send(2.0))}  # resends
    assert (again[0].sender, again[0].send_count) == (-1, 1)


def test_my_id_is_set_once(twin: ModuleType) -> None:
    conn = twin.Connection(my_id=-1, peer_id=0, now=0.0)
    assert conn.my_id == -1
    conn.my_id = -1  # the same value: nothing changes
    conn.my_id = 2
    assert conn.my_id == 2
    conn.my_id = 2
    with pytest.raises(LocalProtocolError, match="once"):
        conn.my_id = 4
    assert conn.my_id == 2
    fresh = twin.Connection(my_id=-1, peer_id=0, now=0.0)
    for bad in (128, -129, "1", None):
        with pytest.raises(ValueError, match="signed byte"):
            fresh.my_id = bad
    assert fresh.my_id == -1
