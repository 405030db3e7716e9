"""LLUDP's entry points take bytes-like input only, like the other decoders (issue 35 item 7).

``bytes(40)`` is 40 zero bytes, so ``decode(40)`` used to decode a message named
``Unknown:0x0`` where ``avara.decode(40)`` raises TypeError; both twins now read
their input through a memoryview, as Avara's decoders do, with the same message.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from gamecodec import avara
from gamecodec.lludp import default_template

PING = bytes.fromhex("40 00000007 00 01 09 05000000")  # StartPingCheck 9, 5


def _entry_points(codec: ModuleType) -> dict[str, Any]:
    template = default_template()
    return {
        "decode": lambda data: codec.decode(data, template),
        "decode_many": lambda data: codec.decode_many([data], template),
        "peek": lambda data: codec.peek(data, template),
        "zero_decode": codec.zero_decode,
        "zero_encode": codec.zero_encode,
        "forward": lambda data: codec.forward(data, None, None, None),
    }


@pytest.mark.parametrize(
    "name", ["decode", "decode_many", "peek", "zero_decode", "zero_encode", "forward"]
)
@pytest.mark.parametrize("value", [40, "x" * 40, [0] * 40, None])
def test_not_bytes_like_is_a_type_error(codec: ModuleType, name: str, value: object) -> None:
    with pytest.raises(TypeError) as info:
        _entry_points(codec)[name](value)
    with pytest.raises(TypeError) as avara_info:
        avara.decode(value)  # type: ignore[arg-type]
    assert str(info.value) == str(avara_info.value)  # one wording across protocols


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_bytes_like_input_still_decodes(codec: ModuleType, kind: type) -> None:
    got = codec.decode(kind(PING), default_template())
    assert got.name == "StartPingCheck" and got.PingID[0].PingID == 9


def test_the_circuit_refuses_an_int_datagram(twin: ModuleType) -> None:
    circuit = twin.Circuit()
    with pytest.raises(TypeError, match="bytes-like"):
        circuit.receive_datagram(40, 0.0)
