"""A Sans-IO Archipelago client session: no sockets, no clock.

Feed it the text of each websocket frame with :meth:`ClientSession.receive_frame`
(and the current time); it returns events, and queues frames to send, which
:meth:`ClientSession.frames_to_send` hands over. It follows
:class:`gamecodec.sessions.FrameSession`, and implements:

* the handshake: RoomInfo -> GetDataPackage for the games whose checksum is not
  in the cache -> Connect -> Connected (:class:`LoggedIn`) or ConnectionRefused
  (:class:`LoginRefused`). A handshake command out of turn (a second RoomInfo,
  Connected before our Connect, two steps in one frame) is a
  :class:`~gamecodec.errors.RemoteProtocolError`, raised before the frame changes anything; a
  DataPackage we did not ask for is a :class:`CommandReceived` and leaves the
  cache alone;
* the ReceivedItems index rules: index 0 replaces the list, the next index
  appends, any other index means we are out of step: the session sends Sync
  and its checked locations again and ignores the frame;
* a DataPackage cache keyed by each game's checksum (pass the same dict to the
  next session to skip the download);
* request/reply matching: Get and Set carry a ``request_id`` extra key that the
  server echoes in Retrieved/SetReply; LocationScouts replies come in order;
* DeathLink: :meth:`ClientSession.death_link` bounces a death to the
  ``DeathLink`` tag, :class:`DeathLinkReceived` reports other players' deaths;
* request timeouts through :meth:`next_deadline` / :meth:`handle_timeout`;
  :meth:`ClientSession.cancel` drops a request whose caller went away (its
  reply, when it comes, is consumed without an event and answers no other
  request);
  a request the server refuses (an InvalidPacket naming its command: a Set of
  a read-only ``_read_`` key, a refused scout) ends at once with a
  :class:`RequestRefused`;
* names: :attr:`ClientSession.names` looks ids up in the DataPackage and
  renders PrintJSON messages with names; ``players``, ``slot_info`` and
  ``hint_points`` follow Connected and RoomUpdate;
* hints: :meth:`ClientSession.create_hints`, :meth:`ClientSession.update_hint`,
  and the ``_read_hints_{team}_{slot}`` key read or watched with
  :meth:`ClientSession.get_hints` / :meth:`ClientSession.watch_hints`, each
  answer a :class:`HintsChanged`.

Memory: requests waiting for a reply are the application's own (each expires
after ``request_timeout``; with ``None`` they wait for good, unless
cancelled); cancelled scouts, Gets and Sets, our own
deaths and Sets or Gets the reference refuses (awaiting it) are remembered up
to ``MAX_LATE_SCOUTS``, ``MAX_CANCELLED``, ``MAX_SENT_DEATHS`` and
``MAX_REFUSABLE_SETS``; the frames :meth:`ClientSession.frames_to_send` has not
taken are the application's commands, the handshake's, and at most one
resync (Sync and LocationChecks) however many ReceivedItems come out of step
meanwhile. ``items``, ``checked_locations`` and ``games`` are the room's state
as the server sends it. Events are returned, never queued.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gamecodec._public import public_dir
from gamecodec.archipelago import commands as C
from gamecodec.archipelago import compat
from gamecodec.archipelago._errors import local, remote
from gamecodec.archipelago._models import Hint, HintStatus
from gamecodec.archipelago._requests import (
    MAX_CANCELLED,
    MAX_LATE_SCOUTS,
    MAX_REFUSABLE_SETS,
    PendingRequests,
    Unmatched,
)
from gamecodec.archipelago.frames import decode, encode
from gamecodec.archipelago.names import Names
from gamecodec.errors import DecodeError
from gamecodec.sessions import Event

if TYPE_CHECKING:
    from gamecodec.sessions import FrameSession

__all__ = [
    "MAX_CANCELLED",
    "MAX_LATE_SCOUTS",
    "MAX_REFUSABLE_SETS",
    "BounceReceived",
    "ClientSession",
    "CommandReceived",
    "DataPackageReady",
    "DeathLinkReceived",
    "Event",
    "HintsChanged",
    "ItemsReceived",
    "LocationsScouted",
    "LoggedIn",
    "LoginRefused",
    "MessageReceived",
    "RequestRefused",
    "RequestTimedOut",
    "RoomInfoReceived",
    "State",
    "StorageChanged",
    "StorageRead",
]

DEATH_LINK = "DeathLink"
MAX_SENT_DEATHS = 256
"""Our own deaths remembered so that their echo is not reported as another
player's (an echo that never comes, DeathLink off on the server, is forgotten)."""


class State(enum.Enum):
    """Where the handshake is."""

    AWAIT_ROOM_INFO = "await_room_info"
    AWAIT_DATA_PACKAGE = "await_data_package"
    AWAIT_CONNECTED = "await_connected"
    CONNECTED = "connected"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class RoomInfoReceived(Event):
    """The server's RoomInfo, the first thing it sends: the handshake goes on."""

    room: C.RoomInfo


@dataclass(frozen=True, slots=True)
class DataPackageReady(Event):
    """The room's games are in the cache (downloaded or cached); ``missing``
    names the games we asked for that the server's DataPackage lacked (their
    names and ids are unknown; the login goes ahead, as the reference client's)."""

    games: dict[str, C.GameData]
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoggedIn(Event):
    """The server accepted our Connect (its Connected: slot, team, players)."""

    connected: C.Connected


@dataclass(frozen=True, slots=True)
class LoginRefused(Event):
    """The server refused our Connect; ``errors`` are its reasons (``InvalidSlot``, ...)."""

    errors: list[str]


@dataclass(frozen=True, slots=True)
class ItemsReceived(Event):
    """New items (``index`` is where they start in :attr:`ClientSession.items`)."""

    index: int
    items: list[C.Item]


@dataclass(frozen=True, slots=True)
class LocationsScouted(Event):
    """The answer to scout ``request_id``: the item at each location asked about."""

    request_id: int
    locations: list[C.Item]


@dataclass(frozen=True, slots=True)
class StorageRead(Event):
    """A Retrieved: the data storage ``keys`` read by Get ``request_id``
    (``None``: a Retrieved that answers none of our requests)."""

    request_id: int | None
    keys: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StorageChanged(Event):
    """A SetReply: ``request_id`` is ours for a Set we sent with ``want_reply``,
    ``None`` for a SetNotify notice."""

    request_id: int | None
    key: str
    value: Any
    original_value: Any
    reply: C.SetReply


@dataclass(frozen=True, slots=True)
class DeathLinkReceived(Event):
    """Another DeathLink player died: at Unix ``time``, of ``cause``, named ``source``."""

    time: float
    cause: str
    source: str


@dataclass(frozen=True, slots=True)
class BounceReceived(Event):
    """A Bounced that is not a DeathLink for us (data another client bounced)."""

    bounced: C.Bounced


@dataclass(frozen=True, slots=True)
class MessageReceived(Event):
    """A PrintJSON: a chat line, an item sent, a hint, a join, ..."""

    message: C.PrintJSON

    @property
    def text(self) -> str:
        """The message as plain text (ids not resolved to names)."""
        return self.message.text


@dataclass(frozen=True, slots=True)
class HintsChanged(Event):
    """Our hints (the ``_read_hints_{team}_{slot}`` key), read by
    :meth:`ClientSession.get_hints` (``request_id``) or changed (``None``)."""

    request_id: int | None
    hints: list[Hint]


@dataclass(frozen=True, slots=True)
class RequestTimedOut(Event):
    """Request ``request_id`` (``kind``: its command) got no reply in time."""

    request_id: int
    kind: str


@dataclass(frozen=True, slots=True)
class RequestRefused(Event):
    """The server answered request ``request_id`` with an InvalidPacket (a
    LocationScouts whose ids it refused, a Set of a read-only key: it sends no
    reply then)."""

    request_id: int
    kind: str
    invalid: C.InvalidPacket


@dataclass(frozen=True, slots=True)
class CommandReceived(Event):
    """Any other command (RoomUpdate, InvalidPacket, unknown ones as dicts)."""

    command: C.Command | dict[str, Any]


def _death_time(value: Any) -> float | None:
    """A DeathLink's time as a float: any float (NaN and infinities, which the
    reference relays, included) or an int within float range (float() of a
    400-digit int raised OverflowError out of receive_frame); else None."""
    if type(value) is int:
        return float(value) if -(2**1023) < value < 2**1023 else None
    return value if type(value) is float else None


def _hint(value: Any) -> Hint | None:
    """A hint of a ``_read_hints_`` value (a ``"class": "Hint"`` dict), or None."""
    if type(value) is not dict:
        return None
    try:
        return Hint(
            int(value["receiving_player"]),
            int(value["finding_player"]),
            int(value["location"]),
            int(value["item"]),
            bool(value["found"]),
            str(value.get("entrance", "")),
            int(value.get("item_flags", 0)),
            HintStatus(value.get("status", 0)),
        )
    except (KeyError, TypeError, ValueError, OverflowError):
        return None


def _hints(value: Any) -> list[Hint]:
    items = value if isinstance(value, list) else []
    return [h for h in map(_hint, items) if h is not None]


def _echoed_id(command: C.Command) -> int | None:
    """The ``request_id`` a Retrieved or SetReply echoes, if it is an int."""
    request_id = command.extra.get("request_id")
    return request_id if type(request_id) is int else None


def _reference_only(data: str | bytes) -> list[dict[str, Any]] | None:
    """The commands of a frame the typed codec refused but the reference reads
    (plain values), or ``None`` if the reference refuses it too."""
    try:
        value = compat.decode(data)
    except (DecodeError, TypeError):
        return None
    if type(value) is not list or not all(
        type(c) is dict and type(c.get("cmd")) is str for c in value
    ):
        return None
    return value


@dataclass
class ClientSession:
    """One client connection's protocol state (a
    :class:`~gamecodec.sessions.FrameSession`).

    ``name``, ``game``, ``password``, ``uuid``, ``version``, ``items_handling``,
    ``tags`` and ``slot_data`` go into the Connect; ``death_link_enabled`` adds
    the ``DeathLink`` tag (and the tag turns it on); ``request_timeout`` is how
    long a scout, Get or Set waits for its reply (``None``: forever).
    ``data_packages`` is the DataPackage cache, ``{checksum: GameData}``; share
    one dict between sessions to download each game's package once, or pass a
    :class:`~gamecodec.archipelago.datapackage.DataPackageCache` to keep them on
    disk where CommonClient does.
    """

    name: str
    game: str | None
    password: str | None = None
    uuid: str = ""
    version: tuple[int, int, int] = (0, 6, 8)
    items_handling: int = 0b111
    tags: list[str] = field(default_factory=lambda: ["AP"])
    slot_data: bool = True
    death_link_enabled: bool = False
    request_timeout: float | None = 30.0
    data_packages: MutableMapping[str, C.GameData] = field(default_factory=dict)

    state: State = field(default=State.AWAIT_ROOM_INFO, init=False)
    room: C.RoomInfo | None = field(default=None, init=False)
    connected: C.Connected | None = field(default=None, init=False)
    items: list[C.Item] = field(default_factory=list, init=False)
    checked_locations: set[int] = field(default_factory=set, init=False)
    games: dict[str, C.GameData] = field(default_factory=dict, init=False)
    players: list[C.Player] = field(default_factory=list, init=False)
    slot_info: dict[int, C.Slot] = field(default_factory=dict, init=False)
    hint_points: int = field(default=0, init=False)
    hints: list[Hint] = field(default_factory=list, init=False)
    names: Names = field(default_factory=Names, init=False)

    def __post_init__(self) -> None:
        self.tags = list(self.tags)
        if self.death_link_enabled and DEATH_LINK not in self.tags:
            self.tags = [*self.tags, DEATH_LINK]
        self.death_link_enabled = DEATH_LINK in self.tags
        self.names.games = self.games
        self._outbox: list[str] = []
        self.requests = PendingRequests()
        """The requests awaiting their reply, and the replies still due."""
        self._watched: set[str] = set()  # SetNotify keys: a cancelled Set's reply tells them
        self._sent_deaths: dict[tuple[float, str], None] = {}  # oldest first
        self._wanted: list[str] = []  # games asked for with GetDataPackage
        self._resync_queued = False  # a Sync for out-of-step items waits in the outbox

    # ------------------------------------------------------------------ output

    def frames_to_send(self) -> list[str]:
        """The frames queued since the last call (each a websocket text frame)."""
        out, self._outbox = self._outbox, []
        self._resync_queued = False
        return out

    def _send(self, *commands: C.Command) -> None:
        self._outbox.append(encode(list(commands)))

    @property
    def pending_requests(self) -> int:
        """Requests sent whose reply is awaited (answered, refused, timed-out
        and cancelled requests are not)."""
        return len(self.requests)

    def cancel(self, request_id: int) -> bool:
        """Drop request ``request_id``, whose caller went away: it is no longer
        pending, times out never, and its reply (or refusal), when it comes, is
        consumed without an event (a Set's on a key watched with
        :meth:`set_notify` excepted: it is that key's notice, a
        :class:`StorageChanged` with no request id). It answers no later request: Get and Set
        replies carry their request's id, and a cancelled scout keeps its place
        in the line of scouts, whose replies come in order, so the next reply
        goes to the next scout. False if the request was not pending (already
        answered, refused, timed out, or not ours)."""
        return self.requests.cancel(request_id)

    def _require_login(self) -> None:
        if self.state is not State.CONNECTED:
            raise local(f"not logged in (state {self.state.value})")

    # ------------------------------------------------------------------ commands

    def check_locations(self, locations: Iterable[int]) -> None:
        """Report checked locations (LocationChecks)."""
        self._require_login()
        ids = list(locations)
        self.checked_locations.update(ids)
        self._send(C.LocationChecks(ids))

    def scout_locations(self, locations: Iterable[int], now: float, create_as_hint: int = 0) -> int:
        """Ask what is at ``locations``; the reply is a :class:`LocationsScouted`.
        Ids must be ints (not bools): the server refuses anything else."""
        self._require_login()
        ids = list(locations)
        if any(type(i) is not int for i in ids):
            raise TypeError("location ids must be ints (the server refuses other types)")
        request_id = self.requests.add("LocationScouts", now)
        self._send(C.LocationScouts(ids, create_as_hint))
        return request_id

    def say(self, text: str) -> None:
        """Send a chat message (or a ``!command``) to the room (Say)."""
        self._require_login()
        self._send(C.Say(text))

    def status_update(self, status: int) -> None:
        """Report our state, a :class:`~gamecodec.archipelago.ClientStatus` (StatusUpdate)."""
        self._require_login()
        self._send(C.StatusUpdate(int(status)))

    def sync(self) -> None:
        """Ask the server for every item again (Sync: a ReceivedItems from index 0)."""
        self._require_login()
        self._send(C.Sync())

    def get(self, keys: Iterable[str], now: float) -> int:
        """Read data storage keys; the reply is a :class:`StorageRead`."""
        self._require_login()
        request_id = self.requests.add("Get", now)
        command = C.Get(list(keys))
        command.set_extra({"request_id": request_id})
        self._send(command)
        return request_id

    def set(
        self,
        key: str,
        operations: Iterable[tuple[str, Any] | C.DataStorageOperation],
        now: float,
        *,
        default: Any = C.UNSET,
        want_reply: bool = True,
    ) -> int | None:
        """Change a data storage key; with ``want_reply`` the reply is a :class:`StorageChanged`.
        Without ``default`` the key is left out and the server starts a new key from 0."""
        self._require_login()
        ops = [
            op if isinstance(op, C.DataStorageOperation) else C.DataStorageOperation(*op)
            for op in operations
        ]
        command = C.Set(key, default, want_reply, ops)
        refusable = key.startswith("_read_")  # read-only: the reference refuses it (InvalidPacket)
        request_id = None
        if want_reply:
            request_id = self.requests.add("Set", now, refusable=refusable)
            command.set_extra({"request_id": request_id})
        elif refusable:
            self.requests.add_untracked("Set", refusable=True)
        self._send(command)
        return request_id

    def set_notify(self, keys: Iterable[str]) -> None:
        """Be told (:class:`StorageChanged` with ``request_id=None``) when keys change."""
        self._require_login()
        keys = list(keys)
        self._watched.update(keys)
        self._send(C.SetNotify(keys))

    def bounce(
        self,
        data: Mapping[str, Any],
        *,
        games: list[str] | None = None,
        slots: list[int] | None = None,
        tags: list[str] | None = None,
    ) -> None:
        """Send ``data`` to the clients that match ``games``, ``slots`` or ``tags`` (Bounce)."""
        self._require_login()
        self._send(
            C.Bounce(
                games if games is not None else C.UNSET,
                slots if slots is not None else C.UNSET,
                tags if tags is not None else C.UNSET,
                dict(data),
            )
        )

    def death_link(self, now: float, cause: str = "", source: str | None = None) -> None:
        """Tell every DeathLink client that we died (``now`` is the death's time)."""
        self._require_login()
        source = self.name if source is None else source
        self._sent_deaths[(now, source)] = None
        while len(self._sent_deaths) > MAX_SENT_DEATHS:
            del self._sent_deaths[next(iter(self._sent_deaths))]
        self.bounce({"time": now, "cause": cause, "source": source}, tags=[DEATH_LINK])

    def update_tags(self, tags: Iterable[str]) -> None:
        """Replace our tags (ConnectUpdate). With ``DeathLink`` among them other
        players' deaths are reported (:class:`DeathLinkReceived`), without it not."""
        self._require_login()
        self.tags = list(dict.fromkeys(tags))
        self.death_link_enabled = DEATH_LINK in self.tags
        self._send(C.ConnectUpdate(tags=list(self.tags)))

    def set_death_link(self, enabled: bool) -> None:
        """Add or remove the ``DeathLink`` tag (:meth:`update_tags`)."""
        others = [tag for tag in self.tags if tag != DEATH_LINK]
        self.update_tags([*others, DEATH_LINK] if enabled else others)

    def send(self, *commands: C.Command | Mapping[str, Any]) -> None:
        """Send any commands (typed, or plain dicts written as the reference
        writes them) in one frame; their replies arrive as events."""
        self._require_login()
        frame = encode([c if isinstance(c, C.Command) else dict(c) for c in commands])
        for command in json.loads(frame):
            self._note_unmatched(command)
        self._outbox.append(frame)

    def _note_unmatched(self, command: Any) -> None:
        """Keep the place of a reply to a command sent with :meth:`send` that
        carries no id of ours (a LocationInfo, a refusal), so that it is not
        taken for the reply to one of our requests."""
        if not isinstance(command, dict):
            return
        cmd = command.get("cmd")
        if cmd == "LocationScouts":
            self.requests.add_untracked(cmd)  # a place in line that is not ours
        elif cmd == "Set":
            key = command.get("key")
            if (
                not isinstance(key, str)
                or key.startswith("_read_")
                or not isinstance(command.get("operations"), list)
            ):
                self.requests.add_untracked(cmd, refusable=True)
        elif cmd == "Get" and not isinstance(command.get("keys"), list):
            self.requests.add_untracked(cmd, refusable=True)

    # ------------------------------------------------------------------ hints

    @property
    def hints_key(self) -> str:
        """The data storage key of our hints, ``_read_hints_{team}_{slot}``."""
        self._require_login()
        return f"_read_hints_{self.names.team}_{self.names.slot}"

    def get_hints(self, now: float) -> int:
        """Read our hints; the reply is a :class:`HintsChanged` (and a :class:`StorageRead`)."""
        return self.get([self.hints_key], now)

    def watch_hints(self) -> None:
        """Be told of every change to our hints (:class:`HintsChanged` with ``request_id=None``)."""
        self.set_notify([self.hints_key])

    def create_hints(
        self, locations: Iterable[int], *, player: int | None = None, status: int = 0
    ) -> None:
        """Hint ``player``'s (default: our) ``locations`` (CreateHints; costs no hint points)."""
        self._require_login()
        self._send(
            C.CreateHints(
                list(locations),
                C.UNSET if player is None else player,
                int(status) if status else C.UNSET,
            )
        )

    def update_hint(self, player: int, location: int, status: int) -> None:
        """Set the priority of the hint for ``player``'s ``location`` (UpdateHint;
        a :class:`~gamecodec.archipelago.HintStatus` other than ``HINT_FOUND``)."""
        self._require_login()
        self._send(C.UpdateHint(player, location, int(status)))

    # ------------------------------------------------------------------ timers

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` should be called next (``None``: no timer)."""
        return self.requests.next_deadline(self.request_timeout)

    def handle_timeout(self, now: float) -> list[Event]:
        """Expire the requests whose reply is overdue at ``now``; returns a
        :class:`RequestTimedOut` for each."""
        expired = self.requests.expire(now, self.request_timeout)
        return [RequestTimedOut(request_id, kind) for request_id, kind in expired]

    # ------------------------------------------------------------------ input

    def events(self) -> list[Event]:
        """The events raised other than by :meth:`receive_frame` and
        :meth:`handle_timeout`, each returned once.

        Every event of this session comes from a received frame or a timer,
        and those two return theirs, so this list is always empty; it is here
        so that code can drain any :class:`~gamecodec.sessions.FrameSession`
        alike.
        """
        return []

    def receive_frame(self, frame: str | bytes, now: float) -> list[Event]:
        """Handle one frame from the server; returns the events it caused.

        Raises :class:`~gamecodec.errors.RemoteProtocolError` for a frame that
        is not JSON Archipelago reads, or a handshake step out of turn (then
        nothing of the frame was handled)."""
        try:
            commands = decode(frame)
        except DecodeError as exc:
            plain = _reference_only(frame)
            if plain is None:
                raise remote(f"bad frame from the server: {exc}") from exc
            # JSON the reference reads and the typed codec does not (NaN, Infinity,
            # 1e400: a player's Bounce carries whatever it was sent): delivered
            # untyped, as unknown commands are, rather than ending the session
            return [CommandReceived(command) for command in plain]
        self._check_handshake(commands)
        events: list[Event] = []
        for command in commands:
            events.extend(self._handle(command, now))
        return events

    def _check_handshake(self, commands: list[Any]) -> None:
        """Refuse a frame whose handshake commands come out of turn, before any
        of it is handled. Each step makes us send something (GetDataPackage,
        Connect), so its answer cannot be in the same frame."""
        state: State | None = self.state
        for command in commands:
            if isinstance(command, C.RoomInfo):
                expected = State.AWAIT_ROOM_INFO
            elif isinstance(command, (C.Connected, C.ConnectionRefused)):
                expected = State.AWAIT_CONNECTED
            elif isinstance(command, C.DataPackage) and state in (State.AWAIT_DATA_PACKAGE, None):
                expected = State.AWAIT_DATA_PACKAGE
            else:
                continue
            if state is not expected:
                where = (
                    "after a handshake step in the same frame"
                    if state is None
                    else (f"in state {state.value}")
                )
                raise remote(
                    f"{type(command).__name__} out of turn ({where}; expected in {expected.value})"
                )
            state = None

    def _handle(self, command: C.Command | dict[str, Any], now: float) -> list[Event]:
        if isinstance(command, C.RoomInfo):
            return self._on_room_info(command)
        if isinstance(command, C.DataPackage):
            return self._on_data_package(command)
        if isinstance(command, C.Connected):
            self.state = State.CONNECTED
            self.connected = command
            self.checked_locations = set(command.checked_locations)
            self._on_connected(command)
            return [LoggedIn(command)]
        if isinstance(command, C.ConnectionRefused):
            self.state = State.REFUSED
            return [LoginRefused(list(command.errors or []))]
        if isinstance(command, C.ReceivedItems):
            return self._on_items(command)
        if isinstance(command, C.LocationInfo):
            answer = self.requests.answer_scout()
            if isinstance(answer, int):
                return [LocationsScouted(answer, command.locations)]
            # cancelled (eaten), timed out, sent with send(), or no scout due
            return [] if answer is Unmatched.EATEN else [CommandReceived(command)]
        if isinstance(command, C.Retrieved):
            return self._on_retrieved(command)
        if isinstance(command, C.SetReply):
            original = None if command.original_value is C.UNSET else command.original_value
            events: list[Event] = []
            # a cancelled Set's reply is the only notice a watcher of its key gets
            # (the server sends it once): then it is told, as of another's change
            if not self.requests.eaten(_echoed_id(command), "Set") or command.key in self._watched:
                events.append(
                    StorageChanged(
                        self.requests.resolve(_echoed_id(command), "Set"),
                        command.key,
                        command.value,
                        original,
                        command,
                    )
                )
            if self.state is State.CONNECTED and command.key == self.hints_key:
                self.hints = _hints(command.value)
                events.append(HintsChanged(None, list(self.hints)))
            return events
        if isinstance(command, C.Bounced):
            return self._on_bounced(command)
        if isinstance(command, C.InvalidPacket):
            return self._on_invalid(command)
        if isinstance(command, C.PrintJSON):
            return [MessageReceived(command)]
        if isinstance(command, C.RoomUpdate):
            self._on_room_update(command)
        return [CommandReceived(command)]

    def _on_connected(self, command: C.Connected) -> None:
        self.players = list(command.players)
        self.slot_info = {}
        for key, slot in command.slot_info.items():
            digits = key.removeprefix("-")
            if digits.isascii() and digits.isdigit():  # not "\u00b2": isdigit, but not int()
                self.slot_info[int(key)] = slot
        self.hint_points = command.hint_points
        self.names.team, self.names.slot = command.team, command.slot
        self.names.players = self.players
        self.names.slot_info = self.slot_info

    def _on_room_update(self, command: C.RoomUpdate) -> None:
        if isinstance(command.checked_locations, list):
            self.checked_locations.update(command.checked_locations)
        if isinstance(command.players, list):
            self.players = list(command.players)
            self.names.players = self.players
        if isinstance(command.hint_points, int):
            self.hint_points = command.hint_points

    def _on_retrieved(self, command: C.Retrieved) -> list[Event]:
        eaten = self.requests.eaten(_echoed_id(command), "Get")
        if self.state is State.CONNECTED and self.hints_key in command.keys:
            self.hints = _hints(command.keys[self.hints_key])  # the room's state all the same
        if eaten:
            return []
        request_id = self.requests.resolve(_echoed_id(command), "Get")
        events: list[Event] = [StorageRead(request_id, command.keys)]
        if self.state is State.CONNECTED and self.hints_key in command.keys:
            events.append(HintsChanged(request_id, list(self.hints)))
        return events

    def _on_invalid(self, command: C.InvalidPacket) -> list[Event]:
        """Match a refusal to the request it refuses: the server answers a
        refused scout, Get or Set with this and nothing else. Scouts are answered
        in order; a refused Set or Get is the oldest one sent that the reference
        refuses (a read-only key, a missing list), ours or one sent with
        :meth:`send`, so no other request is ended by it."""
        kind = command.original_cmd if isinstance(command.original_cmd, str) else command.text
        # the oldest scout (replies come in order), or the next reply goes astray
        answer = self.requests.answer_scout() if kind == "LocationScouts" else None
        if answer is None:  # only a request the reference refuses
            answer = self.requests.answer_refusal(kind)
        if isinstance(answer, int):
            return [RequestRefused(answer, kind, command)]
        return [] if answer is Unmatched.EATEN else [CommandReceived(command)]

    def _on_room_info(self, room: C.RoomInfo) -> list[Event]:
        self.room = room
        events: list[Event] = [RoomInfoReceived(room)]
        wanted = []
        for game, checksum in room.datapackage_checksums.items():
            lookup = getattr(self.data_packages, "lookup", None)
            cached = lookup(game, checksum) if lookup else self.data_packages.get(checksum)
            if cached is None:
                wanted.append(game)
            else:
                self.games[game] = cached
        if wanted:
            self.state = State.AWAIT_DATA_PACKAGE
            self._wanted = wanted
            self._send(C.GetDataPackage(wanted))
        else:
            events.append(DataPackageReady(dict(self.games)))
            self._connect()
        return events

    def _on_data_package(self, package: C.DataPackage) -> list[Event]:
        if self.state is not State.AWAIT_DATA_PACKAGE:
            # not an answer of ours: reported, and kept out of the shared cache
            return [CommandReceived(package)]
        store = getattr(self.data_packages, "store", None)
        for game, data in package.data.games.items():
            self.games[game] = data
            if isinstance(data.checksum, str):
                if store is not None:
                    store(game, data)
                else:
                    self.data_packages[data.checksum] = data
        self.names.forget_games()
        missing = tuple(g for g in self._wanted if g not in package.data.games)
        self._wanted = []
        self._connect()
        return [DataPackageReady(dict(self.games), missing)]

    def _connect(self) -> None:
        self.state = State.AWAIT_CONNECTED
        major, minor, build = self.version
        self._send(
            C.Connect(
                password=self.password,
                name=self.name,
                version=C.VersionInfo(major, minor, build),
                tags=list(self.tags),
                items_handling=self.items_handling,
                uuid=self.uuid,
                game=self.game,
                slot_data=self.slot_data,
            )
        )

    def _on_items(self, command: C.ReceivedItems) -> list[Event]:
        if command.index == 0:
            self.items = list(command.items)
        elif command.index == len(self.items):
            self.items.extend(command.items)
        else:
            # out of step: ask for the whole list again and repeat our checks
            # (once per frames_to_send: more frames out of step meanwhile add none)
            if not self._resync_queued:
                self._send(C.Sync(), C.LocationChecks(sorted(self.checked_locations)))
                self._resync_queued = True
            return []
        return [ItemsReceived(command.index, list(command.items))]

    def _on_bounced(self, command: C.Bounced) -> list[Event]:
        tags = command.tags if isinstance(command.tags, list) else []
        data = command.data if isinstance(command.data, dict) else {}
        if DEATH_LINK in tags and self.death_link_enabled:
            time = _death_time(data.get("time"))
            source = str(data.get("source", ""))
            if time is not None:  # any player's Bounce reaches us: a bad one is a Bounce
                if not math.isnan(time) and (time, source) in self._sent_deaths:
                    del self._sent_deaths[(time, source)]
                    return []
                return [DeathLinkReceived(time, str(data.get("cause", "")), source)]
        return [BounceReceived(command)]


if TYPE_CHECKING:

    def _is_a_frame_session(session: ClientSession) -> FrameSession:
        return session  # mypy checks that ClientSession follows the protocol


__dir__ = public_dir(__name__)
