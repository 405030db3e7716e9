"""LLUDP data model: template specs, messages, blocks, headers, circuit events
and constants (never compiled: both twins of the codec and of the circuit
return these classes).

A :class:`Template` is a set of :class:`MessageSpec`; each has blocks
(:class:`BlockSpec`) of fields (:class:`FieldSpec`). Decoded packets are
:class:`Message` tuples whose blocks are per-block tuple classes made from
the template (:func:`block_class`), so ``msg["AgentData"][0]["AgentID"]`` and
``msg.AgentData[0].AgentID`` both work.
"""

from __future__ import annotations

import collections
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import TYPE_CHECKING, Any, NamedTuple

from gamecodec.errors import DecodeError
from gamecodec.lludp._errors import build_error
from gamecodec.sessions import Event, PeerLost

__all__ = [
    "ACK",
    "ACK_COLLECT_TIME",
    "AVERAGED_PING_ALPHA",
    "AVERAGED_PING_MAX",
    "AVERAGED_PING_MIN",
    "CIRCUIT_TIMEOUT",
    "COLLECT_ACK_TIME_MAX",
    "DUPLICATE_WINDOW",
    "FIELD_SIZES",
    "INITIAL_PING",
    "MAX_ACKS",
    "MAX_APPENDED_ACKS",
    "MAX_BAD_DATAGRAMS",
    "MAX_DATAGRAM",
    "MAX_OUT_PACKET_ID",
    "MAX_PACKET_ACK_IDS",
    "MAX_PENDING_ACKS",
    "MAX_RESENDS",
    "MINIMUM_RELIABLE_TIMEOUT",
    "MTU",
    "PING_INTERVAL",
    "RELIABLE",
    "RELIABLE_TIMEOUT_FACTOR",
    "RESENT",
    "ZEROCODED",
    "BadDatagram",
    "Block",
    "BlockKind",
    "BlockSpec",
    "CircuitEvent",
    "Deprecation",
    "FieldSpec",
    "FieldType",
    "Flag",
    "Frequency",
    "Header",
    "Message",
    "MessageDropped",
    "MessageSpec",
    "PeerLost",
    "StrictDecodeFailed",
    "block_class",
    "message_code",
    "split_code",
]


class Flag(IntFlag):
    """Bits of header byte 0."""

    ZEROCODED = 0x80
    RELIABLE = 0x40
    RESENT = 0x20
    ACK = 0x10


ZEROCODED = 0x80
"""Header flag: the body after the extra header is zero-coded."""
RELIABLE = 0x40
"""Header flag: the receiver must ack this packet."""
RESENT = 0x20
"""Header flag: this packet is a resend."""
ACK = 0x10
"""Header flag: acks are appended after the body (count in the last byte)."""
MAX_ACKS = 250
"""The most acks LL appends to one packet."""
MTU = 1200
"""LL's ``MTUBYTES``: acks are appended only while the packet stays within it."""

# -- circuit constants: the LL viewer's values, each a Circuit parameter's default --

PING_INTERVAL = 5.0
"""Seconds between StartPingChecks (the viewer's circuit heartbeat)."""
CIRCUIT_TIMEOUT = 100.0
"""Seconds without a CompletePingCheck before the peer is lost."""
RELIABLE_TIMEOUT_FACTOR = 5.0
"""A reliable packet is resent after this times the averaged ping ..."""
MINIMUM_RELIABLE_TIMEOUT = 1.0
"""... and at least this many seconds."""
MAX_RESENDS = 3
"""Resends of a reliable packet before it is given up."""
INITIAL_PING = 1.0
"""The averaged ping, in seconds, before the first round trip is measured."""
AVERAGED_PING_ALPHA = 0.2
"""The weight of a new, lower round trip in the averaged ping (a rise counts at once)."""
AVERAGED_PING_MIN = 0.1
"""The averaged ping's floor, in seconds."""
AVERAGED_PING_MAX = 2.0
"""The averaged ping's cap, in seconds."""
ACK_COLLECT_TIME = 0.1
"""Seconds an owed ack waits for an outgoing packet to ride on before a PacketAck."""
COLLECT_ACK_TIME_MAX = 2.0
"""The largest ack collect time a circuit takes (larger values are clamped)."""
MAX_APPENDED_ACKS = MAX_ACKS
"""The most acks a circuit appends to one packet."""
MAX_PACKET_ACK_IDS = 255
"""The most ids one PacketAck message carries (its Variable block's limit)."""
MAX_OUT_PACKET_ID = 0x01000000
"""Sequence numbers wrap at this value (24 bits)."""
DUPLICATE_WINDOW = 1 << 17
"""The most reliable sequence numbers a circuit remembers to catch duplicates."""
MAX_PENDING_ACKS = 4096
"""The most acks a circuit owes the peer at once: an ack past it is not queued
(the peer resends that packet, and its duplicate is acked then)."""
MAX_BAD_DATAGRAMS = 1024
"""The most :class:`BadDatagram` and :class:`StrictDecodeFailed` events a
circuit keeps until :meth:`events` takes them (with its other events): later
ones are counted in ``bad_datagrams_dropped`` or ``strict_failures_dropped``
only."""
MAX_DATAGRAM = 65507
"""The largest UDP payload over IPv4: no packet a circuit sends is longer."""


class Frequency(IntEnum):
    """How the message number is written: the value is its size on the wire."""

    HIGH = 1
    MEDIUM = 2
    LOW = 4
    FIXED = 5  # written like LOW: FF FF FF xx


class Deprecation(IntEnum):
    """A template message's deprecation mark (the optional fifth header word)."""

    NONE = 0
    DEPRECATED = 1
    UDP_DEPRECATED = 2
    UDP_BLACKLISTED = 3


class BlockKind(IntEnum):
    """How many instances a block has: one, a fixed N, or a count byte's worth."""

    SINGLE = 1
    MULTIPLE = 2
    VARIABLE = 3


class FieldType(IntEnum):
    """Template field types; the codes drive the compiled field walk."""

    U8 = 1
    U16 = 2
    U32 = 3
    U64 = 4
    S8 = 5
    S16 = 6
    S32 = 7
    S64 = 8
    F32 = 9
    F64 = 10
    LLVECTOR3 = 11
    LLVECTOR3D = 12
    LLVECTOR4 = 13
    LLQUATERNION = 14
    LLUUID = 15
    BOOL = 16
    IPADDR = 17
    IPPORT = 18
    FIXED = 19
    VARIABLE = 20


FIELD_SIZES: dict[FieldType, int] = {
    FieldType.U8: 1,
    FieldType.U16: 2,
    FieldType.U32: 4,
    FieldType.U64: 8,
    FieldType.S8: 1,
    FieldType.S16: 2,
    FieldType.S32: 4,
    FieldType.S64: 8,
    FieldType.F32: 4,
    FieldType.F64: 8,
    FieldType.LLVECTOR3: 12,
    FieldType.LLVECTOR3D: 24,
    FieldType.LLVECTOR4: 16,
    FieldType.LLQUATERNION: 12,
    FieldType.LLUUID: 16,
    FieldType.BOOL: 1,
    FieldType.IPADDR: 4,
    FieldType.IPPORT: 2,
}
"""Wire size of every fixed-size type (Fixed N is N; Variable is its prefix + data)."""


class FieldSpec(NamedTuple):
    """One field: for FIXED ``size`` is N, for VARIABLE the length-prefix size (1, 2 or 4)."""

    name: str
    type: FieldType
    size: int


# the functional form: the field ``count`` (the template's word) shadows tuple.count
BlockSpec = NamedTuple(  # noqa: UP014 (the class form cannot type a field named count)
    "BlockSpec",
    [("name", str), ("kind", BlockKind), ("count", int), ("fields", tuple[FieldSpec, ...])],
)
BlockSpec.__doc__ = """One block: ``count`` is N for MULTIPLE, 1 for SINGLE, 0 for VARIABLE."""


class MessageSpec(NamedTuple):
    """One template message. ``number`` as the template writes it (Fixed: 0xFFFFFFxx)."""

    name: str
    frequency: Frequency
    number: int
    trusted: bool
    zerocoded: bool
    deprecation: Deprecation
    blocks: tuple[BlockSpec, ...]

    @property
    def code(self) -> int:
        """The message id as one integer: the number bytes read as big-endian."""
        return message_code(self.frequency, self.number)

    def show(self) -> str:
        """Its blocks (Single, Multiple(n), Variable) and their fields' types and
        sizes, one a line: ``print(template["ChatFromSimulator"].show())``."""
        from gamecodec.lludp._show import describe_message

        return describe_message(self)


def message_code(frequency: Frequency, number: int) -> int:
    """The wire message number as one integer (High n, Medium 0xFF00|n, Low 0xFFFF0000|n)."""
    if frequency == Frequency.HIGH:
        return number
    if frequency == Frequency.MEDIUM:
        return 0xFF00 | number
    if frequency == Frequency.LOW:
        return 0xFFFF0000 | number
    return number


def split_code(code: int) -> tuple[Frequency, int]:
    """Inverse of :func:`message_code`: ``FF FF FF xx`` reads as Fixed."""
    if code < 0xFF:
        return Frequency.HIGH, code
    if code < 0xFFFF:
        return Frequency.MEDIUM, code & 0xFF
    if code >= 0xFFFFFF00:
        return Frequency.FIXED, code
    return Frequency.LOW, code & 0xFFFF


class Block(tuple[Any, ...]):
    """Base of the per-block classes: a tuple of field values, indexable by field name.

    Each block class (one per template block) has one attribute per field:
    ``block.AgentID``, ``block["AgentID"]`` and ``block[0]`` read the same
    value. A field named like a tuple method (``count``, ``index``) or
    starting with ``_`` is read by name only: ``block["count"]``.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _index: dict[str, int] = {}  # noqa: RUF012 (replaced per subclass)

    if TYPE_CHECKING:  # the field attributes, for type checkers (none at run time:
        # a __getattr__ would slow every field read)
        def __getattr__(self, name: str) -> Any:
            """A field's value (each block class has one attribute per field)."""
            raise AttributeError(name)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key])
            except KeyError:
                raise KeyError(f"{type(self).__name__} has no field {key!r}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> tuple[str, ...]:
        """The field names, in template order."""
        return self._fields

    def items(self) -> list[tuple[str, Any]]:
        """``(field name, value)`` pairs, in template order."""
        return list(zip(self._fields, self, strict=True))

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def _replace(self, **changes: Any) -> Block:
        values = list(self)
        for key, value in changes.items():
            try:
                values[self._index[key]] = value
            except KeyError:
                raise TypeError(f"{type(self).__name__} has no field {key!r}") from None
        return tuple.__new__(type(self), values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({inner})"

    def __getnewargs__(self) -> tuple[Any, ...]:
        return (tuple(self),)

    def __new__(cls, values: Iterable[Any] = ()) -> Block:
        made = tuple.__new__(cls, values)
        if len(made) != len(cls._fields):
            raise TypeError(f"{cls.__name__} takes {len(cls._fields)} values, got {len(made)}")
        return made


_tuplegetter = getattr(collections, "_tuplegetter", None)


def block_class(spec: BlockSpec) -> type[Block]:
    """A fresh :class:`Block` subclass with one property per field of ``spec``."""
    names = tuple(f.name for f in spec.fields)
    namespace: dict[str, Any] = {
        "__slots__": (),
        "_fields": names,
        "_index": {name: i for i, name in enumerate(names)},
        "_spec": spec,
    }
    for i, name in enumerate(names):
        if name in namespace or name.startswith("_") or hasattr(Block, name):
            continue  # reachable by index or by ["name"]
        if _tuplegetter is not None:
            namespace[name] = _tuplegetter(i, None)
        else:  # pragma: no cover - other interpreters
            namespace[name] = property(operator.itemgetter(i))
    return type(spec.name, (Block,), namespace)


class Message(NamedTuple):
    """A decoded (or built) LLUDP packet: header, message and blocks.

    ``blocks`` maps every template block, in template order, to the tuple of
    its instances (``_replace`` makes a changed copy). ``excess`` holds bytes
    found after the last block, ``absent`` the Variable blocks whose count
    byte was missing, ``truncated`` whether a field ran off the end
    (zero-filled), ``bool_bytes`` the BOOL fields whose byte was neither 0
    nor 1 (read as ``True``, as the LL viewer does), each as ``(block, index,
    field, byte)``; with them an unmodified message re-encodes to the bytes it
    came from (a field listed in ``bool_bytes`` and still ``True`` is written
    as its byte). An unknown message keeps its raw ``body`` and no blocks.
    """

    name: str
    blocks: dict[str, tuple[Block, ...]]
    flags: int = 0
    sequence: int = 0
    acks: tuple[int, ...] = ()
    extra: bytes = b""
    frequency: Frequency = Frequency.LOW
    number: int = 0
    excess: bytes = b""
    absent: tuple[str, ...] = ()
    truncated: bool = False
    body: bytes | None = None
    bool_bytes: tuple[tuple[str, int, str, int], ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self.blocks[key]
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> tuple[Block, ...]:
        try:
            return self.blocks[name]
        except KeyError:
            raise AttributeError(f"message {self.name} has no block {name!r}") from None

    @property
    def reliable(self) -> bool:
        """The RELIABLE flag: the receiver must ack this packet."""
        return bool(self.flags & RELIABLE)

    @property
    def zerocoded(self) -> bool:
        """The ZEROCODED flag: the body is zero-coded on the wire."""
        return bool(self.flags & ZEROCODED)

    @property
    def resent(self) -> bool:
        """The RESENT flag: the packet is a resend."""
        return bool(self.flags & RESENT)

    @property
    def known(self) -> bool:
        """False for a message number the template does not have."""
        return self.body is None

    @property
    def code(self) -> int:
        """The message id as one integer: the number bytes read as big-endian."""
        return message_code(self.frequency, self.number)

    def show(self) -> str:
        """The message indented, one field a line (text fields as text where they
        decode as UTF-8, other bytes in hex): ``print(message.show())``."""
        from gamecodec.lludp._show import show_message

        return show_message(self, Flag)

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """The blocks as plain dicts."""
        return {name: [b._asdict() for b in blocks] for name, blocks in self.blocks.items()}

    def __repr__(self) -> str:
        parts = [f"{self.name}", f"flags=0x{self.flags:02x}", f"sequence={self.sequence}"]
        if self.acks:
            parts.append(f"acks={self.acks!r}")
        if self.extra:
            parts.append(f"extra={self.extra!r}")
        if self.body is not None:
            parts.append(f"body={self.body!r}")
        for name, blocks in self.blocks.items():
            parts.append(f"{name}={blocks!r}")
        if self.excess:
            parts.append(f"excess={self.excess!r}")
        if self.absent:
            parts.append(f"absent={self.absent!r}")
        if self.truncated:
            parts.append("truncated=True")
        if self.bool_bytes:
            parts.append(f"bool_bytes={self.bool_bytes!r}")
        return f"Message({', '.join(parts)})"


class Header(NamedTuple):
    """What :func:`peek` reads without touching the body.

    ``body_end`` is where the appended acks start: ``data[6:body_end]``, after
    the 6-byte header, is the (possibly zero-coded) message, forwarded as it
    is by :func:`forward`.
    ``name`` is ``None`` for a message number the template does not have.
    """

    flags: int
    sequence: int
    extra_length: int
    frequency: Frequency
    number: int
    name: str | None
    acks: tuple[int, ...]
    body_end: int

    @property
    def reliable(self) -> bool:
        """The RELIABLE flag: the receiver must ack this packet."""
        return bool(self.flags & RELIABLE)

    @property
    def zerocoded(self) -> bool:
        """The ZEROCODED flag: the body is zero-coded on the wire."""
        return bool(self.flags & ZEROCODED)

    @property
    def resent(self) -> bool:
        """The RESENT flag: the packet is a resend."""
        return bool(self.flags & RESENT)

    @property
    def code(self) -> int:
        """The message id as one integer: the number bytes read as big-endian."""
        return message_code(self.frequency, self.number)


def blocks_from_mapping(
    spec: MessageSpec, classes: Mapping[str, type[Block]], given: Mapping[str, Any]
) -> dict[str, tuple[Block, ...]]:
    """Turn ``{block: dict | [dict | Block, ...]}`` into the ``blocks`` of a Message.

    Raises :class:`~gamecodec.EncodeError` for an unknown or missing block or
    field (the values themselves are checked by the encoder).
    """
    unknown = set(given) - {b.name for b in spec.blocks}
    if unknown:
        raise build_error(f"{spec.name} has no block(s) {sorted(unknown)}")
    out: dict[str, tuple[Block, ...]] = {}
    for block in spec.blocks:
        cls = classes[block.name]
        where = f"{spec.name}.{block.name}"
        value = given.get(block.name)
        if value is None:
            if block.kind == BlockKind.VARIABLE:
                out[block.name] = ()
                continue
            raise build_error(f"{spec.name}: block {block.name} is required")
        if isinstance(value, (Mapping, Block)):
            value = [value]
        elif isinstance(value, (str, bytes, bytearray)) or not isinstance(value, Iterable):
            raise build_error(f"{where}: expected a dict or a list of dicts, got {value!r}")
        items: list[Block] = []
        for item in value:
            if isinstance(item, Block):
                if len(item) != len(cls._fields):
                    raise build_error(
                        f"{where}: expected {len(cls._fields)} values, got {len(item)}"
                    )
                items.append(cls(item))
                continue
            if not isinstance(item, Mapping):
                raise build_error(f"{where}: expected a dict, got {item!r}")
            missing = [f.name for f in block.fields if f.name not in item]
            extra = set(item) - set(cls._fields)
            if missing or extra:
                raise build_error(
                    f"{where}: missing fields {missing}, unknown {sorted(extra, key=repr)}"
                )
            items.append(cls(item[name] for name in cls._fields))
        out[block.name] = tuple(items)
    return out


# -- circuit events ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageDropped(Event):
    """A reliable packet was given up after ``max_resends`` resends.

    ``data`` is the packet as first sent (without appended acks). The peer may
    still have received it: only its ack is known to be missing.
    """

    sequence: int
    """The packet's sequence number."""
    data: bytes
    """The packet's bytes as first sent, without appended acks."""
    at: float
    """When it was given up (the circuit's clock)."""


@dataclass(frozen=True, slots=True)
class BadDatagram(Event):
    """A received datagram the circuit did not read (the codec refused it, or
    the template lacks its message number): not acked; nothing changed but its
    appended acks, applied as the LL viewer applies them."""

    error: DecodeError
    """Why it was refused, with the byte offset."""
    data: bytes
    """The datagram as received."""
    at: float
    """When it arrived (the circuit's clock)."""


@dataclass(frozen=True, slots=True)
class StrictDecodeFailed(Event):
    """A packet the strict decode refused and the tolerant one (the LL viewer's
    reader) took, on a circuit with ``strict=True``.

    The circuit treated it as the viewer does: acked it if reliable, applied
    its appended acks and, for PacketAck and the pings, acted on it. The
    application gets this event instead of the message.
    """

    name: str
    """The message's name."""
    error: DecodeError
    """Why the strict decode refused it, with the byte offset."""
    data: bytes
    """The datagram as received."""
    message: Message
    """The tolerant decode, for an application that wants it anyway."""
    at: float
    """When it arrived (the circuit's clock)."""


CircuitEvent = PeerLost | MessageDropped | BadDatagram | StrictDecodeFailed
"""What :meth:`Circuit.events` returns (delivered messages are returned by
:meth:`Circuit.receive_datagram` itself)."""
