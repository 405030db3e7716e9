"""Facts about the deployed game's ack code, as executable models.

Read from ``avaraline/Avara`` at the spec's commit (aaa5e633,
``src/net/CUDPConnection.cpp``); the tests feed them our ack blocks and
compare. They model the game: nothing in gamecodec imports them.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from gamecodec import avara

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

    ``receive(sn)`` is ReceivedPacket for one command; ``block()`` is what
    WriteAcks writes now. ackBase/ackBitmap are recomputed only when the
    receive queue changed, with ``1 << k`` masked as on x86. ``skip_after``
    is PACKET_CLEANUP (4 / fpsScale, :665-671; None: off): once that many
    commands are queued the missing serial is given up by a recursive
    ReceivedPacket(nullptr) (:609-614) whose own change flag alone decides the
    recompute (a skip that releases nothing keeps the older block).
    """

    receive_serial: int = 0
    queue: list[int] = field(default_factory=list)
    ack_base: int = 0
    ack_bitmap: int = 0
    recomputed: bool = False  # whether the last receive() recomputed the block
    skip_after: int | None = None
    delivered: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)

    def receive(self, sn: int) -> None:
        changed = False
        rs = self.receive_serial
        if serial_diff(sn, rs) < 0:
            self.recomputed = False
            return  # already delivered
        if sn == rs:
            self.receive_serial = (rs + 2) & 0xFFFF
            self.delivered.append(sn)
            changed = self._release()
        elif sn not in self.queue:
            self.queue.append(sn)
            changed = True
            if self.skip_after is not None and len(self.queue) >= self.skip_after:
                self.skipped.append(self.receive_serial)
                self.receive_serial = (self.receive_serial + 2) & 0xFFFF
                changed = self._release()
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
                        self.delivered.append(q)
                    changed = True
                    break
            else:
                return changed

    def block(self) -> tuple[int, int | None]:
        if self.ack_base & 1:
            return self.ack_base, self.ack_bitmap
        return (self.receive_serial - 2) & 0xFFFF, None


# -- the game's sender and receiver, for the two-peer simulation (game_sim) --------------
#
# CUDPConnection.cpp and CUDPComm.cpp at the commit above, for one peer
# connection, in the game's units (ClockTick = whole ms, CUDPComm.h:29 and
# CUDPComm.cpp:1244-1253). Facts used, with their lines:
# - the receive side: ReceivedPacket (CUDPConnection.cpp:597-709) with the skip
#   rule PACKET_CLEANUP = 4 / fpsScale queued (:665-671, via ReceivedPacket(nullptr)
#   :609-614), ReceiveQueuedPackets (:711-755), WriteAcks (:757-779): CppAckWriter
#   with ``skip_after``;
# - the send side: ProcessBusyQueue (:174-191), FindBestPacket (:193-301),
#   GetOutPacket (:303-354, totalResent counts a packet whose birthDate differs
#   from its nextSendTime), ValidatePacket's statistics (:377-488: CppTimers),
#   ValidatePackets (:523-568) and RunValidate (:505-521);
# - AsyncWrite (CUDPComm.cpp:948-1242): the byte quota (kUnitQuota 3 per ms,
#   kHeaderQuota 12, kMaxAllowedQuota 360, :943-1034, 1153, 1160, 1181), packing
#   while the datagram is under CRAMPACKSIZE 64 bytes (:1151-1157), the early
#   picks (cramCount = min(cramData, conn->cramData) - 1, :1036-1040), the
#   requeue with birthDate and nextSendTime (:1183-1212), nextWriteTime when
#   nothing was written (:1238); ProcessQueue writes while AsyncWrite writes
#   (:349-359); SendPacket writes at once (:166).
# - cramData of a connection is 0 until a kpPacketProtocolControl arrives
#   (IUDPConnection :94, FreshClient :868, ReceiveControlPacket :923-933); the
#   simulation sends none, so urgent first sends use retransmitTime (:1191-1201).

CLASSIC_FRAME_MS = 64
CRAM_PACK_SIZE = 64
CRAM_TIME_MS = 5000
ACK_RETRANSMIT_BASE_MS = 41
ULP_TIMEOUT_MS = 120_000
MAX_TRANSMIT_QUEUE = 1024
MAX_RESENDS_WITHOUT_RECEIVE = 3
UNIT_QUOTA, HEADER_QUOTA, MAX_ALLOWED_QUOTA = 3, 12, 3 * 120
URGENT_FLAG = 0x01  # kpUrgentFlag (CCommManager.h:33), also wire bit p1


def _f32(x: float) -> float:
    """A C ``float``."""
    return struct.unpack("f", struct.pack("f", x))[0]


@dataclass
class CppTimers:
    """``CUDPConnection::ValidatePacket``'s statistics (:377-488), in its
    units: ms and C floats.

    Facts: RTTSMOOTHFACTOR_UP = RTTSMOOTHFACTOR_DOWN = 100 (:31-32);
    CommandMultiplierForStats (:356-375): kpKeyAndMouse fpsScale, kpPing with
    p3 > 0 CLASSICFRAMETIME * 0.4, anything else 0 (not timed); ``long
    roundTrip`` (:382-384), so a ping's ``roundTrip *= 0.82`` (:401) truncates
    to whole ms; a ping more than 64 ms above the mean is de-weighted by
    max(4, diff^2 / var) (:411-422); retransmitTime = mean + (long)(2.5 sigma)
    clamped to [urgentResendTime, 4000] (:443-447); urgentRetransmitTime = 2 LT
    64 - mean - 16 clamped to [urgentResendTime, retransmitTime] (:457-462);
    while (u16) maxValid <= 10 the mean is primed by the best round trip
    (:387-392). At first retransmitTime 2000, urgentRetransmitTime
    urgentResendTime (2 frames: FreshClient :859-860, which every peer-to-peer
    and server-side connection passes through, CUDPComm.cpp:579 and
    CUDPConnection.cpp:836).
    """

    fps_scale: float
    latency_tolerance: float
    urgent_resend: int  # itsOwner->urgentResendTime = 2 frames, ms (CUDPComm.cpp:1272)
    mean: float = 500.0
    var: float = float(64 * 64)
    retransmit: int = 2000
    urgent: int = -1  # set from urgent_resend

    def __post_init__(self) -> None:
        if self.urgent < 0:
            self.urgent = self.urgent_resend

    def validate(self, round_trip: int, command: int, p3: int, max_valid: int) -> None:
        """ValidatePacket for a command of ``round_trip`` whole ms."""
        if max_valid & 0xFFFF <= 10:
            if round_trip < self.mean:
                self.mean = _f32(round_trip)
                self.var = _f32(min(round_trip * round_trip, 64 * 64))
            return
        if command == 17:
            multiplier = _f32(self.fps_scale)
        elif command == 31 and p3 > 0:
            multiplier = _f32(64 * 0.4)
        else:
            return
        if command == 31:
            round_trip = int(round_trip * 0.82)  # long roundTrip *= 0.82
        difference = _f32(round_trip - self.mean)
        if command == 31 and difference > 64:
            reduction = max(4.0, float(_f32(difference * difference) / self.var))
            multiplier = _f32(multiplier / reduction)
        alpha = _f32(multiplier / _f32(100))
        increment = _f32(alpha * difference)
        self.mean = _f32(self.mean + increment)
        self.var = _f32(_f32(1 - alpha) * _f32(self.var + _f32(difference * increment)))
        stdev = _f32(math.sqrt(self.var))
        retransmit = int(_f32(self.mean + _f32(int(2.5 * stdev))))
        self.retransmit = min(max(retransmit, self.urgent_resend), 4000)
        urgent = int(2 * self.latency_tolerance * 64 - self.mean - 16.0)
        self.urgent = min(max(urgent, self.urgent_resend), self.retransmit)


@dataclass
class CppPacket:
    """A UDPPacketInfo of the transmit queue (CUDPConnection.h:25-35)."""

    serial: int
    command: int
    p1: int
    p3: int
    flags: int  # in memory: kpUrgentFlag until the first write, then the wire flags
    birth: int = 0
    next_send: int = 0
    send_count: int = 0  # a u8 on the wire, counted here without wrapping


@dataclass
class CppPeer:
    """The game's side of one peer connection: its transmit queue and timers
    (the sender whose commands travel toward the other peer) and its receive
    queue (CppAckWriter, skip rule on), reading and writing real datagrams.

    ``dropped_unreceived(serial)`` is called by the simulation to tell whether
    the other peer has the serial the reader is about to drop.
    """

    my_id: int
    peer_id: int
    frame_time: int = 16
    own_cram: int = 3  # CUDPComm::cramData (Preferences.h:124)
    peer_cram: int = 0  # conn->cramData: 0 until a kpPacketProtocolControl
    latency_tolerance: float = 0.0
    writer: CppAckWriter = field(default_factory=CppAckWriter)
    queue: list[CppPacket] = field(default_factory=list)  # kTransmitQ, in queue order
    busy: list[tuple[int, int, int, int]] = field(default_factory=list)  # kBusyQ
    serial: int = 0
    max_valid: int = 0xFFFE
    valid_time: int = 0
    nrwr: int = 0  # numResendsWithoutReceive
    have_to_send_ack: bool = True
    next_ack_time: int = ACK_RETRANSMIT_BASE_MS
    conn_next_write: int = ACK_RETRANSMIT_BASE_MS
    comm_next_write: int = 0
    quota: int = 0
    last_quota_time: int = 0
    total_sent: int = 0
    total_resent: int = 0
    created: int = 0
    killed: str = ""
    timers: CppTimers = field(init=False)
    resent: dict[int, int] = field(default_factory=dict)  # serial -> resends counted in totalResent

    def __post_init__(self) -> None:
        fps_scale = self.frame_time / CLASSIC_FRAME_MS
        self.timers = CppTimers(fps_scale, self.latency_tolerance, 2 * self.frame_time)
        self.writer.skip_after = int(4.0 / fps_scale)

    # -- sending ---------------------------------------------------------

    def send(self, command: int, p1: int, p3: int, now: int, *, urgent: bool) -> bytes | None:
        """SendPacket (CUDPComm.cpp:120-176): queue, then one AsyncWrite."""
        self.busy.append((command, p1, p3, URGENT_FLAG if urgent else 0))
        return self.async_write(now)

    def process_queue(self, now: int) -> list[bytes]:
        """ProcessQueue's write loop (CUDPComm.cpp:349-359)."""
        out: list[bytes] = []
        if self.comm_next_write - now < 0:
            while (datagram := self.async_write(now)) is not None:
                out.append(datagram)
        return out

    def _process_busy(self, now: int) -> None:
        for command, p1, p3, flags in self.busy:
            self.queue.append(CppPacket(self.serial, command, p1, p3, flags, now, now))
            self.serial = (self.serial + 2) & 0xFFFF
            self.created += 1
        self.busy.clear()

    def _find_best(self, now: int, cram_time: int, urgency: int) -> CppPacket | None:
        """FindBestPacket (CUDPConnection.cpp:193-301)."""
        queue = self.queue
        allow = self.nrwr < MAX_RESENDS_WITHOUT_RECEIVE
        i = 0
        while i < len(queue) and not (
            now >= queue[i].next_send and (queue[i].send_count == 0 or allow)
        ):
            i += 1
        length = 0
        oldest = now
        while (
            i < len(queue) and serial_diff(queue[i].serial, self.max_valid) > 2 * MAX_TRANSMIT_QUEUE
        ):
            length += 1
            i += 1
        if i < len(queue) and queue[i].birth != queue[i].next_send:
            oldest = queue[i].birth
        best = None
        if i < len(queue):
            best = queue[i]
            best_time = best.next_send - (urgency if best.flags & URGENT_FLAG else 0)
            length += 1
            for p in queue[i + 1 :]:
                length += 1
                if serial_diff(p.serial, self.max_valid) <= 2 * MAX_TRANSMIT_QUEUE:
                    t = p.next_send
                    if p.birth - oldest < 0 and p.birth != t:
                        oldest = p.birth
                    if p.flags & URGENT_FLAG:
                        t -= urgency
                    if best_time > t and (p.send_count == 0 or allow):
                        best_time = t
                        best = p
            taken = None
            if serial_diff(best.serial, self.max_valid) > 0:
                if best_time - cram_time - now <= 0:
                    queue.remove(best)
                    taken = best
            else:
                self._validate(best, now)
            best = taken
        if now - oldest > ULP_TIMEOUT_MS and now - self.valid_time > ULP_TIMEOUT_MS:
            self.killed = "birthdate too old"
        if length > MAX_TRANSMIT_QUEUE:
            self.killed = "transmit queue overflow"
        return best

    def _get_out(self, now: int, cram_time: int, urgency: int) -> CppPacket | str | None:
        """GetOutPacket (CUDPConnection.cpp:303-354); "ack" for kPleaseSendAcknowledge."""
        self._process_busy(now)
        packet: CppPacket | str | None = self._find_best(now, cram_time, urgency)
        if packet is None and self.have_to_send_ack and self.next_ack_time - now <= 0:
            packet = "ack"
        if packet is not None:
            self.have_to_send_ack = False
            self.next_ack_time = now + ACK_RETRANSMIT_BASE_MS + self.timers.retransmit
            self.conn_next_write = now + self.timers.retransmit
            if isinstance(packet, CppPacket):
                self.total_sent += 1
                if packet.birth != packet.next_send:
                    self.total_resent += 1
                    self.nrwr += 1
                    self.resent[packet.serial] = self.resent.get(packet.serial, 0) + 1
        return packet

    def async_write(self, now: int) -> bytes | None:
        """AsyncWrite for this one connection (CUDPComm.cpp:948-1242)."""
        if self.killed:
            return None
        delta = (now - self.last_quota_time) * UNIT_QUOTA
        self.last_quota_time = now
        # deltaQuotas[i] = (i + 1) * delta up to our cramData (:965-972)
        self.quota += delta * (min(self.peer_cram, self.own_cram) + 1)
        packet = self._get_out(now, 0, 0) if self.quota >= 0 else None
        if packet is None:
            self.comm_next_write = now + (self.frame_time * 2 >> 2) + 1
            return None
        self.quota = min(self.quota, MAX_ALLOWED_QUOTA)
        cram = min(self.own_cram, self.peer_cram)
        orig_cram = cram
        cram -= 1
        ack, bitmap = self.writer.block()
        length = 2 + (6 if bitmap is not None else 2)
        written: list[CppPacket] = []
        picked: list[CppPacket] = []
        if packet == "ack":
            extra = self._get_out(now, CRAM_TIME_MS if cram > 0 else 0, CRAM_TIME_MS)
            cram -= 1
            if isinstance(extra, CppPacket):
                picked.append(extra)  # marked as sent, never written (:1050-1051, 1184)
        else:
            assert isinstance(packet, CppPacket)
            while isinstance(packet, CppPacket):
                written.append(packet)
                picked.append(packet)
                length += command_size(packet)
                if length < CRAM_PACK_SIZE and length < self.quota:
                    packet = self._get_out(now, CRAM_TIME_MS if cram > 0 else 0, CRAM_TIME_MS)
                    cram -= 1
                else:
                    packet = None
        commands = [
            avara.Command.make(
                p.serial,
                p.command,
                p1=p.p1,
                p3=p.p3,
                sender=self.my_id,
                send_count=p.send_count & 0xFF,
            )
            for p in written
        ]
        datagram = avara.encode(ack, commands, bitmap)
        self.quota -= HEADER_QUOTA + len(datagram)
        for p in reversed(picked):  # packetList is a stack: the last picked first
            if p.send_count == 0:
                p.birth = now
                if orig_cram and p.flags & URGENT_FLAG:
                    p.next_send = now + self.timers.urgent
                else:
                    p.next_send = now + self.timers.retransmit
            else:
                p.next_send = now + self.timers.retransmit
            p.flags = wire_flags(p, self.my_id)  # p->flags = flags (:1131)
            p.send_count += 1
            self.queue.append(p)
        return datagram

    # -- receiving -------------------------------------------------------

    def receive(self, datagram: bytes, now: int, received_by_peer: set[int]) -> list[int]:
        """ReadComplete (CUDPComm.cpp:724-908; its closing AsyncWrite is the
        caller's). Returns our serials the reader dropped from the transmit
        queue that ``received_by_peer`` lacks (the peer never got them)."""
        ack = datagram[2] | datagram[3] << 8
        bitmap = int.from_bytes(datagram[4:8], "little", signed=True) if ack & 1 else None
        lost = self._validate_packets(ack, bitmap, now, received_by_peer)
        for c in avara.decode(datagram).commands:
            self.have_to_send_ack = True  # ReceivedPacket (:607)
            self.writer.receive(c.serial)
            if c.command == -4 and c.p1 == 0:
                self.peer_cram = c.p2
        return lost

    def _validate_packets(
        self, ack: int, bitmap: int | None, now: int, received_by_peer: set[int]
    ) -> list[int]:
        """ValidatePackets (CUDPConnection.cpp:523-568)."""
        self.nrwr = 0
        lost: list[int] = []
        base = ack & 0xFFFE
        if ack & 1:
            bits = (bitmap or 0) & 0xFFFFFFFF
            for p in list(self.queue):
                if bits >> reader_bit(p.serial, base) & 1:
                    if serial_diff(p.serial, base) > 0 and p.serial not in received_by_peer:
                        lost.append(p.serial)
                    self._validate(p, now)
        self.valid_time = now
        if serial_diff(self.max_valid, base) < 0:
            self.max_valid = base
            for p in list(self.queue):  # RunValidate (:505-521)
                if serial_diff(p.serial, self.max_valid) <= 0:
                    self._validate(p, self.valid_time)
        return lost

    def _validate(self, packet: CppPacket, when: int) -> None:
        """ValidatePacket (CUDPConnection.cpp:377-488)."""
        self.queue.remove(packet)
        self.timers.validate(when - packet.birth, packet.command, packet.p3, self.max_valid)


def wire_flags(p: CppPacket, my_id: int) -> int:
    """The flag byte AsyncWrite computes (CUDPComm.cpp:1091-1130), distribution never."""
    flags = 0
    if p.p3 & ~0xFFFF:
        flags |= 0x04
    elif p.p3:
        flags |= 0x20
    if p.p1:
        flags |= 0x01
    if serial_diff(p.serial, 100) <= 0:  # serialNumber <= SERIAL_NUMBER_UDP_SETTLE
        flags |= 0x80
    del my_id  # the sender is always ours
    return flags


def command_size(p: CppPacket) -> int:
    """The wire size of a queued command (no data, no p2)."""
    flags = wire_flags(p, 0)
    size = 5 + (flags & 0x01) + (flags >> 7)
    if flags & 0x04:
        size += 4
    elif flags & 0x20:
        size += 2
    return size
