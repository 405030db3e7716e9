"""Chat and the ``!`` commands a client can run through ``Say``, answered as the
reference's ``ClientMessageProcessor`` answers them (``PrintJSON`` texts)."""

from __future__ import annotations

import inspect
import random
import shlex
import traceback
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from gamecodec.archipelago._netutils import ClientStatus, Hint
from gamecodec.archipelago.testing import _hints
from gamecodec.archipelago.testing._common import TEAM, Client

if TYPE_CHECKING:
    from gamecodec.archipelago.testing._room import Room

__all__ = ["COMMANDS", "intended_text", "say"]


def say(room: Room, client: Client, text: str) -> None:
    """Broadcast ``text`` as Chat, then run it if it is a ``!`` command."""
    if not text.startswith("!admin"):
        room.broadcast_text(
            f"{room.aliased_name(client.slot)}: {text}",
            type="Chat",
            team=TEAM,
            slot=client.slot,
            message=text,
        )
    _Processor(room, client)(text)


def _fuzzy(word: str, candidates: Collection[str]) -> list[tuple[str, int]]:
    """The two best candidates with the reference's score (101 exact, 100 when
    only the case differs, else 100 x (1 - edit distance / longer length))."""

    def ratio(candidate: str) -> float:
        if word == candidate:
            return 1.01
        longest = max(len(word), len(candidate)) or 1
        return 1 - _distance(word.lower(), candidate.lower()) / longest

    ranked = sorted(((c, ratio(c)) for c in candidates), key=lambda pair: pair[1], reverse=True)
    return [(name, int(score * 100)) for name, score in ranked[:2]]


def _distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance, as the reference's ``jellyfish``: adjacent
    transpositions count one, and edits may follow one (``ca`` -> ``abc`` is 2;
    the restricted "optimal string alignment" variant says 3)."""
    far = len(a) + len(b)
    # rows and columns shifted by one: row/column 0 is the "far" border
    table = [[far] * (len(b) + 2)] + [[far] + [0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i + 1][1] = i
    for j in range(len(b) + 1):
        table[1][j + 1] = j
    last_row: dict[str, int] = {}  # the last row of a where each character was seen
    for i in range(1, len(a) + 1):
        last_match_column = 0
        for j in range(1, len(b) + 1):
            row_k = last_row.get(b[j - 1], 0)
            column_l = last_match_column
            cost = 1
            if a[i - 1] == b[j - 1]:
                cost = 0
                last_match_column = j
            table[i + 1][j + 1] = min(
                table[i][j] + cost,
                table[i + 1][j] + 1,
                table[i][j + 1] + 1,
                table[row_k][column_l] + (i - row_k - 1) + 1 + (j - column_l - 1),
            )
        last_row[a[i - 1]] = i
    return table[len(a) + 1][len(b) + 1]


def intended_text(text: str, candidates: Collection[str]) -> tuple[str, bool, str]:
    """The reference's ``get_intended_text``: (best name, usable, response)."""
    picks = _fuzzy(text, candidates)
    if not picks:
        return "", False, f"Didn't find something that closely matches '{text}'"
    best, score = picks[0]
    unsure = f"'{text}', did you mean '{best}'? ({score}% sure)"
    if len(picks) > 1:
        if score == 101:
            return best, True, "Perfect Match"
        if score == 100:
            return best, True, "Case Insensitive Perfect Match"
        if score < 75:
            return best, False, f"Didn't find something that closely matches {unsure}"
        if score - picks[1][1] > 5:
            return best, True, "Close Match"
        return best, False, f"Too many close matches for {unsure}"
    if score > 90:
        return best, True, "Only Option Match"
    return best, False, f"Didn't find something that closely matches {unsure}"


_SIMPLE_OPTIONS = (
    "hint_cost",
    "location_check_points",
    "server_password",
    "password",
    "release_mode",
    "remaining_mode",
    "collect_mode",
    "countdown_mode",
    "item_cheat",
    "compatibility",
)
"""The reference's ``Context.simple_options``, in its order (``!options``)."""

_RAW: set[str] = set()


def _raw(function: Callable[..., bool]) -> Callable[..., bool]:
    """The command takes the rest of the line as one argument (``mark_raw``)."""
    _RAW.add(function.__name__)
    return function


class _Processor:
    marker = "!"

    def __init__(self, room: Room, client: Client) -> None:
        self.room = room
        self.client = client
        self.slot = client.slot

    def output(self, text: str) -> None:
        self.room.notify_client(self.client, [text], type="CommandResult")

    def __call__(self, raw: str) -> None:
        if not raw:
            return
        try:
            try:
                words = shlex.split(raw, comments=False)
            except ValueError:
                words = raw.split()
            if not words or not words[0].startswith(self.marker):
                return
            name = words[0][1:].lower()
            method = COMMANDS.get(name)
            if method is None:
                known = ", ".join(COMMANDS)
                self.output(f"Could not find command {words[0][1:]}. Known commands: {known}")
            elif method.__name__ in _RAW:
                rest = raw.split(maxsplit=1)
                method(self, *rest[1:])
            else:
                method(self, *words[1:])
        except Exception:
            self.output(traceback.format_exc())

    # ------------------------------------------------------------------ commands

    def _cmd_help(self) -> bool:
        """Returns the help listing"""
        self.output(help_text())
        return True

    def _cmd_license(self) -> bool:
        """Returns the licensing information"""
        self.output(self.room.license_text)
        return True

    def _cmd_options(self) -> bool:
        """List all current options. Warning: lists password."""
        self.output("Current options:")
        room = self.room
        for option in _SIMPLE_OPTIONS:
            if option == "server_password":  # hidden from clients, set or not
                self.output(f"Option server_password is set to {'*' * random.randint(4, 16)}")
            else:
                self.output(f"Option {option} is set to {getattr(room, option)}")
        return True

    @_raw
    def _cmd_admin(self, command: str = "") -> bool:
        """Allow remote administration of the multiworld server
        Usage: "!admin login <password>" in order to log in to the remote interface.
        Once logged in, you can then use "!admin <command>" to issue commands.
        If you need further help once logged in.  use "!admin /help" """
        shown = f"!admin {command}"
        for secret in ("!admin login", "!admin /option server_password"):
            if shown.lower().startswith(secret):
                shown = f"{secret} {'*' * self.room.random.randint(4, 16)}"
                break
        self.room.broadcast_text(
            f"{self.room.aliased_name(self.slot)}: {shown}",
            type="Chat",
            team=TEAM,
            slot=self.slot,
            message=shown,
        )
        self.output("Sorry, Remote administration is disabled")
        return False

    def _cmd_players(self) -> bool:
        """Get information about connected and missing players."""
        text = _players_text(self.room)
        if len(self.room.slots) < 10:
            self.room.broadcast_text(text, type="CommandResult")
        else:
            self.output(text)
        return True

    def _cmd_status(self, tag: str = "") -> bool:
        """Get status information about your team.
        Optionally mention a Tag name and get information on who has that Tag.
        For example: DeathLink or EnergyLink."""
        self.output(_status_text(self.room, tag))
        return True

    def _cmd_release(self) -> bool:
        """Sends remaining items in your world to their recipients."""
        return self._by_mode(
            self.room.release_mode,
            self.room.release,
            "Sorry, client item releasing has been disabled on this server. "
            "You can ask the server admin for a /release",
            "Sorry, client item releasing requires you to have beaten the game on this server. "
            "You can ask the server admin for a /release",
        )

    def _cmd_collect(self) -> bool:
        """Send your remaining items to yourself"""
        return self._by_mode(
            self.room.collect_mode,
            self.room.collect,
            "Sorry, client collecting has been disabled on this server. "
            "You can ask the server admin for a /collect",
            "Sorry, client collecting requires you to have beaten the game on this server. "
            "You can ask the server admin for a /collect",
        )

    def _by_mode(self, mode: str, action: Callable[[int], None], off: str, goal: str) -> bool:
        if "enabled" in mode:
            action(self.slot)
            return True
        if "disabled" in mode:
            self.output(off)
            return False
        if self.room.status[self.slot] == ClientStatus.CLIENT_GOAL:
            action(self.slot)
            return True
        self.output(goal)
        return False

    def _cmd_countdown(self, seconds: str = "10") -> bool:
        """Start a countdown in seconds"""
        mode = self.room.countdown_mode
        if mode == "disabled" or (mode == "auto" and len(self.room.slots) >= 30):
            self.output(
                "Sorry, client countdowns have been disabled on this server. "
                "You can ask the server admin for a /countdown"
            )
            return False
        try:
            timer = int(seconds, 10)
        except ValueError:
            timer = 10
        else:
            if timer > 60 * 60:
                raise ValueError(f"{timer} is invalid. Maximum is 1 hour.")
        self.room.countdown(timer)
        return True

    def _cmd_remaining(self) -> bool:
        """List remaining items in your game, but not their location or recipient"""
        mode = self.room.remaining_mode
        if mode == "disabled":
            self.output("Sorry, !remaining has been disabled on this server.")
            return False
        if mode != "enabled" and self.room.status[self.slot] != ClientStatus.CLIENT_GOAL:
            self.output("Sorry, !remaining requires you to have beaten the game on this server")
            return False
        own = self.room.slots[self.slot - 1].locations
        checked = self.room.checked[self.slot]
        rest = sorted((v[1], v[0]) for loc, v in own.items() if loc not in checked)
        if rest:
            names = ", ".join(self.room.item_name(slot, item) for slot, item in rest)
            self.output("Remaining items: " + names)
        else:
            self.output("No remaining items found.")
        return True

    @_raw
    def _cmd_missing(self, filter_text: str = "") -> bool:
        """List all missing location checks from the server's perspective.
        Can be given text, which will be used as filter."""
        return self._locations(filter_text, checked=False)

    @_raw
    def _cmd_checked(self, filter_text: str = "") -> bool:
        """List all done location checks from the server's perspective.
        Can be given text, which will be used as filter."""
        return self._locations(filter_text, checked=True)

    def _locations(self, filter_text: str, *, checked: bool) -> bool:
        room, slot = self.room, self.slot
        done = room.checked[slot]
        locations = [loc for loc in room.slots[slot - 1].locations if (loc in done) == checked]
        word, label = ("Checked", "done") if checked else ("Missing", "missing")
        if not locations:
            self.output(f"No {label} location checks found.")
            return True
        names = [room.location_name(slot, loc) for loc in locations]
        if filter_text:
            groups = room.games[room.slots[slot - 1].game].location_name_groups
            if filter_text in groups:
                names = [name for name in names if name in groups[filter_text]]
            else:
                names = [name for name in names if filter_text in name]
        texts = [f"{word}: {name}" for name in names]
        summary = f"Found {len(locations)} {label} location checks"
        if filter_text:
            summary += f", displaying {len(names)} of them."
        texts.append(summary)
        room.notify_client(self.client, texts, type="CommandResult")
        return True

    @_raw
    def _cmd_alias(self, alias_name: str = "") -> bool:
        """Set your alias to the passed name."""
        if alias_name:
            alias = alias_name[:16].strip()
            self.room.aliases[self.slot] = alias
            self.output(f"Hello, {alias}")
            self.room.update_aliases()
            return True
        if self.slot in self.room.aliases:
            del self.room.aliases[self.slot]
            self.output("Removed Alias")
            self.room.update_aliases()
            return True
        return False

    @_raw
    def _cmd_getitem(self, item_name: str) -> bool:
        """Cheat in an item, if it is enabled on this server"""
        room, slot = self.room, self.slot
        if not room.item_cheat:
            self.output("Cheating is disabled.")
            return False
        names = room.games[room.slots[slot - 1].game].items
        name, usable, response = intended_text(item_name, names)
        if not usable:
            self.output(response)
            return False
        room.cheat_item(slot, name, names[name])
        return True

    @_raw
    def _cmd_hint(self, item_name: str = "") -> bool:
        """Use !hint {item_name},
        for example !hint Lamp to get a spoiler peek for that item.
        If hint costs are on, this will only give you one new result,
        you can rerun the command to get more in that case."""
        return self._hints(item_name, for_location=False)

    @_raw
    def _cmd_hint_location(self, location: str = "") -> bool:
        """Use !hint_location {location_name},
        for example !hint_location atomic-bomb to get a spoiler peek for that location."""
        return self._hints(location, for_location=True)

    def _hints(self, text: str, *, for_location: bool) -> bool:
        room, slot = self.room, self.slot
        points = room.points(slot)
        cost = room.hint_cost_of(slot)
        if not text:
            kept = {_hints.recheck_one(room, h) for h in room.hints[slot]}
            room.hints[slot] = kept
            _hints.notify(room, list(kept), recipients=(slot,))
            self.output(f"A hint costs {cost} points. You have {points} points.")
            return True
        hints, name = self._find(text, for_location=for_location)
        if name is None:
            return False
        if hints:
            return self._pay(hints, points, cost)
        if points >= cost:
            kind = "location" if for_location else "item"
            self.output(
                f'Nothing found for recognized {kind} name "{name}". '
                f"{kind.capitalize()} appears to not exist in this multiworld."
            )
        else:
            self.output(
                f"You can't afford the hint. You have {points} points and need at least {cost}."
            )
        return False

    def _find(self, text: str, *, for_location: bool) -> tuple[list[Hint], str | None]:
        room, slot = self.room, self.slot
        game = room.games[room.slots[slot - 1].game]
        if text.isnumeric():
            number = int(text)
            if for_location:
                name = room.location_name(slot, number)
                return _hints.for_location(room, slot, number), name
            return _hints.for_item(room, slot, number), room.item_name(slot, number)
        if for_location:
            candidates = set(game.locations) | set(game.location_name_groups)
        else:
            candidates = set(game.items) | set(game.item_name_groups)
        name, usable, response = intended_text(text, candidates)
        if not usable:
            self.output(response)
            return [], None
        hints: list[Hint] = []
        if not for_location and name in game.item_name_groups:
            for item in game.item_name_groups[name]:
                if item in game.items:
                    hints += _hints.for_item(room, slot, game.items[item])
        elif not for_location and name in game.items:
            hints = _hints.for_item(room, slot, game.items[name])
        elif name in game.location_name_groups:
            for location in game.location_name_groups[name]:
                if location in game.locations:
                    hints += _hints.for_location(room, slot, game.locations[location])
        elif name in game.locations:
            hints = _hints.for_location(room, slot, game.locations[name])
        return hints, name

    def _pay(self, hints: list[Hint], points: int, cost: int) -> bool:
        room, slot = self.room, self.slot
        new_hints = set(hints) - room.hints[slot]
        old_hints = list(set(hints) - new_hints)
        if old_hints and not new_hints:
            _hints.notify(room, old_hints)
            self.output("Hint was previously used, no points deducted.")
            return False
        found = [h for h in new_hints if h.found]
        not_found = [h for h in new_hints if not h.found]
        can_pay = 1000 if not not_found or not cost else int(points // cost > 0)
        room.random.shuffle(not_found)
        # the reference's two "popular votes" (MultiServer get_hints): non-local
        # placements first, then the earliest sphere (pop() takes the last)
        not_found.sort(key=lambda h: int(h.receiving_player != h.finding_player))
        not_found.sort(key=lambda h: room.sphere_of(h.finding_player, h.location), reverse=True)
        chosen = found + old_hints
        while can_pay > 0 and not_found:
            chosen.append(not_found.pop())
            can_pay -= 1
            room.hints_used[slot] += 1
        _hints.notify(room, chosen)
        if not_found:
            points = room.points(slot)
            if chosen and cost and points // cost == 0:
                self.output(
                    "There may be more hintables, however, you cannot afford to pay for any "
                    f"more.  You have {points} and need at least {cost}."
                )
            elif chosen:
                self.output("There may be more hintables, you can rerun the command to find more.")
            else:
                self.output(
                    f"You can't afford the hint. You have {points} points and need at least {cost}."
                )
        return True


def _players_text(room: Room) -> str:
    online = {c.slot for c in room._authed()}
    text = f":: Team #{TEAM + 1}: "
    players = [(n, s) for n, s in enumerate(room.slots, 1) if s.slot_type == 1]
    for number, slot in players:
        text += f"{slot.name} " if number in online else f"({slot.name}) "
    return f"{len(online)} players of {len(players)} connected " + text[:-1]


def _status_text(room: Room, tag: str) -> str:
    text = f"Player Status on team {TEAM}:"
    for number, slot in enumerate(room.slots, 1):
        clients = room._clients_of(number)
        tagged = len([c for c in clients if tag in c.tags])
        completion = f"({len(room.checked[number])}/{len(slot.locations)})"
        tag_text = f" {tagged} of which are tagged {tag}" if clients and tag else ""
        status = room.status[number]
        state = (
            " and has finished."
            if status == ClientStatus.CLIENT_GOAL
            else " and is ready."
            if status == ClientStatus.CLIENT_READY
            else "."
        )
        plural = "" if len(clients) == 1 else "s"
        name = room.aliased_name(number)
        text += f"\n{name} has {len(clients)} connection{plural}{tag_text}{state} {completion}"
    return text


COMMANDS: dict[str, Callable[..., bool]] = {
    name[len("_cmd_") :]: method
    for name, method in vars(_Processor).items()
    if name.startswith("_cmd_")
}
"""The ``!`` commands the room answers, in the order ``!help`` lists them."""


def help_text() -> str:
    """``!help``'s text, built as the reference builds it (arguments, docstrings)."""
    text = ""
    for name, method in COMMANDS.items():
        arguments = ""
        for argument, parameter in inspect.signature(method).parameters.items():
            if argument == "self":
                continue
            shown = argument
            if isinstance(parameter.default, str):
                shown = f"{argument}={parameter.default}" if parameter.default else f"[{argument}]"
            arguments += shown + " "
        doc = "\n    ".join((inspect.getdoc(method) or "(missing help text)").split("\n"))
        text += f"!{name} {arguments}\n    {doc}\n"
    return text
