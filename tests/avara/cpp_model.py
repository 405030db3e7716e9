"""Facts about the deployed game's ack code, as executable models.

Read from ``avaraline/Avara`` at the spec's commit (aaa5e633,
``src/net/CUDPConnection.cpp``); the tests feed them our ack blocks and
compare. They model the game: nothing in gamecodec imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCE = "avaraline/Avara@aaa5e63335ad21cdef9d730978e9224c769e6b1a src/net/CUDPConnection.cpp"

# ValidatePackets (:523-568). For each queued command, with base = ack & ~1:
#     if (ackMap & (1 << (((sn - base) >> 1) - 1))) ValidatePacket(...)
# sn - base is RolloverCounter's int difference (-32768..32768); >> is an
# arithmetic shift; 1 << n on a 32-bit int compiles to x86 SHL, which masks
# the count to its low 5 bits (n & 31), so a count of 32 or more, or a
# negative one, picks an unrelated bit. Then, if base is past maxValid, every
# command with sn <= base is validated (RunValidate, :505-521).
X86_SHIFT_MASK = 31


def serial_diff(a: int, b: int) -> int:
    """RolloverCounter<uint16_t>'s ``a - b``."""
    return ((a - b + 0x8000) & 0xFFFF) - 0x8000


def reader_bit(serial: int, base: int) -> int:
    """The bitmap bit the C++ reader tests for ``serial`` (x86 masking included)."""
    return ((serial_diff(serial, base) >> 1) - 1) & X86_SHIFT_MASK


def reader_drops(ack: int, bitmap: int | None, queue: set[int], max_valid: int) -> set[int]:
    """The queued serials the C++ reader validates (drops, never to resend)
    on reading the ack block ``(ack, bitmap)``."""
    dropped: set[int] = set()
    base = ack & 0xFFFE
    if ack & 1:
        bits = (bitmap or 0) & 0xFFFFFFFF
        dropped = {sn for sn in queue if bits >> reader_bit(sn, base) & 1}
    if serial_diff(base, max_valid) > 0:
        dropped |= {sn for sn in queue if serial_diff(sn, base) <= 0}
    return dropped


@dataclass
class CppAckWriter:
    """ReceivedPacket's ack state (:597-709) and WriteAcks (:757-779), per command.

    ``receive(sn)`` is ReceivedPacket for one command (the skip rule off);
    ``block()`` is what WriteAcks writes now. ackBase/ackBitmap are recomputed
    only when the receive queue changed, with ``1 << k`` masked as on x86.
    """

    receive_serial: int = 0
    queue: list[int] = field(default_factory=list)
    ack_base: int = 0
    ack_bitmap: int = 0
    recomputed: bool = False  # whether the last receive() recomputed the block

    def receive(self, sn: int) -> None:
        changed = False
        rs = self.receive_serial
        if serial_diff(sn, rs) < 0:
            return  # already delivered
        if sn == rs:
            self.receive_serial = (rs + 2) & 0xFFFF
            changed = self._release()
        elif sn not in self.queue:
            self.queue.append(sn)
            changed = True
        self.recomputed = changed
        if changed:
            self.ack_base = (self.receive_serial - 2) & 0xFFFF
            if self.queue:
                bits = 0
                for q in self.queue:
                    bits |= 1 << (((serial_diff(q, self.ack_base) >> 1) - 1) & X86_SHIFT_MASK)
                self.ack_bitmap = bits
                self.ack_base += 1

    def _release(self) -> bool:
        changed = False
        while True:
            for q in self.queue:
                if serial_diff(q, self.receive_serial) <= 0:
                    self.queue.remove(q)
                    if q == self.receive_serial:
                        self.receive_serial = (q + 2) & 0xFFFF
                    changed = True
                    break
            else:
                return changed

    def block(self) -> tuple[int, int | None]:
        if self.ack_base & 1:
            return self.ack_base, self.ack_bitmap
        return (self.receive_serial - 2) & 0xFFFF, None
