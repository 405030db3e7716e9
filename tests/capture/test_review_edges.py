"""Edge cases found in review: work and results of the capture reader on hostile input."""

from __future__ import annotations

import pytest

from gamecodec.capture import _ip
from gamecodec.capture._ip import Defragmenter


@pytest.mark.parametrize("src", [b"\x0a\x00\x00\x01", bytes(15) + b"\x01"])
def test_fragments_after_the_last_do_not_rebuild_the_packet(
    src: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the last fragment is in, a packet is put together only when its
    bytes are all there, not again for each fragment that comes after."""
    built: list[int] = []

    def counting_bytearray(size: int) -> bytearray:
        built.append(size)
        return bytearray(size)

    monkeypatch.setattr(_ip, "bytearray", counting_bytearray, raising=False)
    defrag = Defragmenter()
    key = (17, src, src, 7)
    total = 8 * 1000
    assert defrag.add(key, total - 8, False, bytes(8), 0.0)[0] is None
    for start in range(0, total - 8, 8):
        whole, dropped = defrag.add(key, start, True, bytes(8), 0.0)
        assert not dropped
        assert (whole is None) == (start < total - 16)
    assert whole == bytes(total)
    assert len(built) <= 1
