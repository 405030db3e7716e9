"""Both UDP sessions refuse a bad ``now`` alike on both twins: the compiled twins
turned an int into a double first (OverflowError for 10**400, a float in the
message for 2**33 + 1) where the pure twins raise check_time's ValueError."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import load_twin

BAD_TIMES = [2**33 + 1, -(2**33) - 1, 10**30, 10**400, float("nan"), float("inf"), "soon", None]


def sessions(impl: str) -> dict[str, Any]:
    avara = load_twin("gamecodec.avara", "_session", impl)
    lludp = load_twin("gamecodec.lludp", "_circuit", impl)
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    return {
        "avara": avara.Connection(my_id=1, peer_id=2, now=0.0),
        "lludp": lludp.Circuit(now=0.0, codec=codec),
    }


def outcome(call: Any) -> tuple[str, str]:
    try:
        call()
    except Exception as exc:  # compared between the twins: type and text
        return type(exc).__name__, str(exc)
    return "no error", ""


@pytest.mark.parametrize("now", BAD_TIMES, ids=repr)
@pytest.mark.parametrize("protocol", ["avara", "lludp"])
@pytest.mark.parametrize("method", ["datagrams_to_send", "receive_datagram", "send"])
def test_a_bad_now_is_refused_alike(impl: str, protocol: str, method: str, now: Any) -> None:
    session = sessions(impl)[protocol]
    pure = sessions("py")[protocol]

    def call(s: Any) -> Any:
        if method == "datagrams_to_send":
            return lambda: s.datagrams_to_send(now)
        if method == "receive_datagram":
            return lambda: s.receive_datagram(b"\x00" * 8, now)
        if protocol == "avara":
            return lambda: s.send(17, now=now)
        from gamecodec import lludp

        message = lludp.build("StartPingCheck", PingID={"PingID": 1, "OldestUnacked": 0})
        return lambda: s.send(message, now=now)

    got = outcome(call(session))
    assert got == outcome(call(pure))
    if isinstance(now, int):
        assert got[0] == "ValueError" and str(now)[:20] in got[1]
