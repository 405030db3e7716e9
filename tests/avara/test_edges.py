"""Avara's decoders at the edges of the contract (issue 35 item 7), on both twins.

* The game reads datagrams into a 16384-byte buffer (``UDPSTREAMBUFFERSIZE``,
  avaraline/Avara ``src/net/AvaraTCP.h:15``, used by ``AvaraTCP.cpp:275-283``):
  nothing longer reaches its reader, so the decoders refuse a longer input at
  byte ``MAX_DATAGRAM`` before decoding (or copying) any of it.
* A command without the 0x40 / 0x80 flag has no distribution / sender on the
  wire (the game then uses the receiver's own bit and the sending peer's slot,
  ``CUDPComm.cpp:807-810, 817-823``): ``decode_array`` reads them as 0 like a
  real 0, and its ``has_distribution`` / ``has_sender`` columns tell them apart.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec.avara import MAX_DATAGRAM, Command, OversizeDatagramError, Status
from gamecodec.errors import DecodeError

KM = bytes.fromhex("7ab00200040000b111d20406d001000000010005")  # spec V5


def _long(codec: ModuleType, size: int) -> bytes:
    """A valid datagram of keep-alive commands padded to ``size`` bytes."""
    one = codec.encode(2, [Command.make(4, 17)])
    per = len(one) - 4
    count = (size - 4) // per
    out = codec.encode(2, [Command.make(4 + 2 * k, 17) for k in range(count)])
    assert len(out) == 4 + per * count
    return out


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_decode_refuses_more_than_the_receive_buffer(codec: ModuleType, kind: type) -> None:
    data = kind(KM + bytes(MAX_DATAGRAM + 1 - len(KM)))
    with pytest.raises(OversizeDatagramError) as info:
        codec.decode(data)
    assert isinstance(info.value, DecodeError)
    assert info.value.offset == MAX_DATAGRAM and info.value.reason == "oversize"
    assert info.value.protocol == "avara"
    assert str(MAX_DATAGRAM + 1) in str(info.value)


def test_decode_takes_exactly_the_receive_buffer(codec: ModuleType) -> None:
    full = _long(codec, MAX_DATAGRAM)
    assert MAX_DATAGRAM - 5 < len(full) <= MAX_DATAGRAM
    assert len(codec.decode(full).commands) == (len(full) - 4) // 5


def test_decode_many_gives_the_oversize_error_in_place(codec: ModuleType) -> None:
    got = codec.decode_many([KM, bytes(MAX_DATAGRAM + 1), bytearray(2 * MAX_DATAGRAM), KM])
    assert got[0] == got[3] == codec.decode(KM)
    for err in got[1:3]:
        assert isinstance(err, OversizeDatagramError) and err.offset == MAX_DATAGRAM


def test_decode_array_marks_an_oversize_datagram(codec: ModuleType) -> None:
    batch = codec.decode_array([KM, bytes(MAX_DATAGRAM + 1), memoryview(bytes(20000)), KM])
    rows = batch.datagrams
    assert list(rows["status"]) == [Status.OK, Status.OVERSIZE, Status.OVERSIZE, Status.OK]
    assert list(rows["error_offset"]) == [0, MAX_DATAGRAM, MAX_DATAGRAM, 0]
    assert list(rows["command_count"]) == [1, 0, 0, 1]
    assert list(rows["first_command"]) == [0, 1, 1, 1]
    assert list(batch.commands["datagram"]) == [0, 3]


def test_decode_array_tells_an_absent_distribution_and_sender_from_0(
    codec: ModuleType,
) -> None:
    absent = Command.make(4, 17)
    present = Command.make(6, 17, distribution=0, sender=0)
    data = codec.encode(2, [absent, present])
    decoded = codec.decode(data).commands
    assert (decoded[0].distribution, decoded[0].sender) == (None, None)
    assert (decoded[1].distribution, decoded[1].sender) == (0, 0)
    cmds = codec.decode_array([data]).commands
    assert list(cmds["distribution"]) == [0, 0] and list(cmds["sender"]) == [0, 0]
    assert list(cmds["has_distribution"]) == [False, True]
    assert list(cmds["has_sender"]) == [False, True]
