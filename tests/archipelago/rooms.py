"""The small multiworld the room/client tests play in."""

from __future__ import annotations

from gamecodec.archipelago.testing import Game, Room, RoomSlot

CLIQUE = Game(
    "Clique",
    items={"Button Activation": 1, "Feeling of Satisfaction": 2, "Cake": 3},
    locations={"The Big Red Button": 1001, "The Item on the Desk": 1002, "The Lamp": 1003},
)
QUEST = Game(
    "Quest",
    items={"Sword": 501, "Shield": 502, "Key": 503},
    locations={"Chest": 2001, "Door": 2002, "Altar": 2003},
)


def make_room(**options: object) -> Room:
    """JSPlayer (slot 1, Clique) and PyBuddy (slot 2, Quest)."""
    return Room(
        games=[CLIQUE, QUEST],
        slots=[
            RoomSlot(
                "JSPlayer",
                "Clique",
                {1001: (3, 1, 0), 1002: (501, 2, 1), 1003: (502, 2, 0)},
                slot_data={"color": "red", "hard_mode": False},
            ),
            RoomSlot("PyBuddy", "Quest", {2001: (1, 1, 1), 2002: (503, 2, 0), 2003: (2, 1, 0)}),
        ],
        **options,  # type: ignore[arg-type]
    )
