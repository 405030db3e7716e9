"""Hints as the reference server makes, keeps, sends and rechecks them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gamecodec.archipelago import commands as C
from gamecodec.archipelago._netutils import Hint, HintStatus
from gamecodec.archipelago.testing._common import hint_message

if TYPE_CHECKING:
    from gamecodec.archipelago.testing._room import Room

__all__ = ["for_item", "for_location", "get", "notify", "recheck", "recheck_one"]

_TRAP = 0b100


def _auto_status(flags: int) -> HintStatus:
    return HintStatus.HINT_AVOID if flags & _TRAP else HintStatus.HINT_PRIORITY


def get(room: Room, finder: int, location: int) -> Hint | None:
    """The hint kept for ``finder``'s ``location``, if any."""
    for hint in room.hints.get(finder, ()):
        if hint.location == location and hint.finding_player == finder:
            return hint
    return None


def for_location(
    room: Room, finder: int, location: int, status: HintStatus | None = HintStatus.HINT_UNSPECIFIED
) -> list[Hint]:
    """``collect_hint_location_id``: the hint for one location (``[]`` if unknown)."""
    previous = get(room, finder, location)
    if previous:
        return [previous]
    entry = room.slots[finder - 1].locations.get(location)
    if entry is None or not any(entry):
        return []
    item, receiver, flags = entry
    found = location in room.checked[finder]
    if found:
        status = HintStatus.HINT_FOUND
    elif status is None:
        status = _auto_status(flags)
    entrance = room.entrances.get(finder, {}).get(location, "")
    return [Hint(receiver, finder, location, item, found, entrance, flags, status)]


def for_item(room: Room, slot: int, item_id: int) -> list[Hint]:
    """``collect_hints``: a hint for every place holding ``item_id`` for ``slot``."""
    hints = []
    for finder, other in enumerate(room.slots, 1):
        for location, (item, receiver, flags) in other.locations.items():
            if receiver != slot or item != item_id:
                continue
            previous = get(room, finder, location)
            if previous:
                hints.append(previous)
                continue
            found = location in room.checked[finder]
            status = HintStatus.HINT_FOUND if found else _auto_status(flags)
            entrance = room.entrances.get(finder, {}).get(location, "")
            hints.append(Hint(receiver, finder, location, item, found, entrance, flags, status))
    return hints


def notify(
    room: Room,
    hints: Iterable[Hint],
    *,
    only_new: bool = False,
    persist_even_if_found: bool = False,
    recipients: Iterable[int] | None = None,
) -> None:
    """``notify_hints``: keep new hints (for finder and receiver) and send each
    concerned slot's clients its hint messages."""
    hints = list(hints)
    if only_new:
        hints = [h for h in hints if h not in room.hints[h.finding_player]]
    if not hints:
        return
    new_for: set[int] = set()
    concerns: dict[int, list[Hint]] = {}
    for hint in sorted(hints, key=lambda h: h.found, reverse=True):
        concerns.setdefault(hint.receiving_player, []).append(hint)
        finder_list = concerns.setdefault(hint.finding_player, [])
        if not hint.local and hint not in finder_list:
            finder_list.append(hint)
        if (not hint.found or persist_even_if_found) and hint not in room.hints[
            hint.finding_player
        ]:
            room.hints[hint.finding_player].add(hint)
            room.hints[hint.receiving_player].add(hint)
            new_for |= {hint.finding_player, hint.receiving_player}
    for slot in sorted(new_for):
        room.on_changed_hints(slot)
        room._broadcast(room._clients_of(slot), [C.RoomUpdate(hint_points=room.points(slot))])
    chosen = None if recipients is None else set(recipients)
    for slot, concerned in concerns.items():
        if chosen is not None and slot not in chosen:
            continue
        ordered = sorted(concerned, key=lambda h: h.finding_player != slot)
        messages = [hint_message(h) for h in ordered]
        targets = [c for c in room._clients_of(slot) if not c.no_text]
        for client in targets:
            room._broadcast([client], list(messages))


def recheck_one(room: Room, hint: Hint) -> Hint:
    """``hint`` marked found if its location is checked (``Hint.re_check``)."""
    if hint.found and hint.status == HintStatus.HINT_FOUND:
        return hint
    if hint.location in room.checked[hint.finding_player]:
        return hint._replace(found=True, status=HintStatus.HINT_FOUND)
    return hint


def recheck(room: Room, slot: int) -> set[int]:
    """``recheck_hints`` for one slot: hints on checked locations become found;
    returns the slots whose hints changed."""
    changed: set[int] = set()
    new_hints: set[Hint] = set()
    for hint in room.hints[slot]:
        new = recheck_one(room, hint)
        new_hints.add(new)
        if new == hint:
            continue
        for player in {hint.receiving_player, hint.finding_player}:
            changed.add(player)
            if player != slot and hint in room.hints[player]:
                room.hints[player].remove(hint)
                room.hints[player].add(new)
    room.hints[slot] = new_hints
    return changed
