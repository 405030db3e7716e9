"""Names for ids: items, locations and players from the DataPackage and the
login, and PrintJSON messages rendered to text with them.

:class:`Names` is what a :class:`~gamecodec.archipelago.ClientSession` keeps
(as ``session.names``): the games' DataPackages, each slot's game and the
players' names and aliases. Ids are looked up in the game of the slot they
belong to, as CommonClient does; an id no package names reads
``Unknown item (ID: 7)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gamecodec._public import public_dir
from gamecodec.archipelago import commands as C

__all__ = ["ARCHIPELAGO", "Names"]

ARCHIPELAGO = "Archipelago"
"""Slot 0: the server itself (the sender of start inventory and cheats), whose
game is ``Archipelago``, as CommonClient names it."""


@dataclass
class Names:
    """Id-to-name lookups for one login (``team`` and ``slot`` are ours)."""

    games: dict[str, C.GameData] = field(default_factory=dict)
    slot_info: dict[int, C.Slot] = field(default_factory=dict)
    players: list[C.Player] = field(default_factory=list)
    team: int = 0
    slot: int = 0

    def __post_init__(self) -> None:
        self._reversed: dict[tuple[str, str], dict[int, str]] = {}

    def _table(self, game: str | None, kind: str) -> Mapping[int, str]:
        if game is None or game not in self.games:
            return {}
        key = (game, kind)
        table = self._reversed.get(key)
        if table is None:
            data = self.games[game]
            forward = data.item_name_to_id if kind == "item" else data.location_name_to_id
            table = {number: name for name, number in forward.items()}
            self._reversed[key] = table
        return table

    def forget_games(self) -> None:
        """Drop the reversed tables (call after changing :attr:`games`)."""
        self._reversed.clear()

    def game_of(self, slot: int | None = None) -> str | None:
        """The game ``slot`` plays (default: ours); ``None`` if unknown."""
        slot = self.slot if slot is None else slot
        info = self.slot_info.get(slot)
        if info is None:
            return ARCHIPELAGO if slot == 0 else None  # the server's own slot
        return info.game

    def item_name(self, item: int, slot: int | None = None) -> str:
        """The name of item ``item`` in the game of ``slot`` (default: ours)."""
        name = self._table(self.game_of(slot), "item").get(item)
        return name if name is not None else f"Unknown item (ID: {item})"

    def location_name(self, location: int, slot: int | None = None) -> str:
        """The name of location ``location`` in the game of ``slot`` (default: ours)."""
        name = self._table(self.game_of(slot), "location").get(location)
        return name if name is not None else f"Unknown location (ID: {location})"

    def item_id(self, name: str, game: str | None = None) -> int | None:
        """The id of the item called ``name`` in ``game`` (default: ours)."""
        data = self.games.get(game or self.game_of() or "")
        return None if data is None else data.item_name_to_id.get(name)

    def location_id(self, name: str, game: str | None = None) -> int | None:
        """The id of the location called ``name`` in ``game`` (default: ours)."""
        data = self.games.get(game or self.game_of() or "")
        return None if data is None else data.location_name_to_id.get(name)

    def player(self, slot: int, team: int | None = None) -> C.Player | None:
        """The player of ``slot`` on ``team`` (default: ours)."""
        team = self.team if team is None else team
        for player in self.players:
            if player.slot == slot and player.team == team:
                return player
        return None

    def player_name(self, slot: int, team: int | None = None) -> str:
        """The slot's name as the room shows it: its alias if it has one (the
        server sends ``"Alias (Name)"`` then), else its name."""
        player = self.player(slot, team)
        if player is not None:
            return player.alias or player.name
        info = self.slot_info.get(slot)
        if info is not None:
            return info.name
        return ARCHIPELAGO if slot == 0 else f"Unknown player (slot {slot})"

    def render(self, message: C.PrintJSON) -> str:
        """The message as plain text, ids replaced by names (as CommonClient
        prints it, without colours)."""
        return "".join(self.render_part(part) for part in message.data)

    def render_part(self, part: C.MessagePart) -> str:
        """One part of a PrintJSON message as text."""
        text = part.text if isinstance(part.text, str) else ""
        kind = part.type if isinstance(part.type, str) else "text"
        owner = part.player if isinstance(part.player, int) else None
        if kind in ("player_id", "item_id", "location_id"):
            try:
                number = int(text)
            except ValueError:
                return text
            if kind == "player_id":
                return self.player_name(number)
            if kind == "item_id":
                return self.item_name(number, owner)
            return self.location_name(number, owner)
        return text


__dir__ = public_dir(__name__)
