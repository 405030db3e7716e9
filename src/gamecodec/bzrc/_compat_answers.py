"""The objects :class:`gamecodec.bzrc.compat.BZRC` returns, typed.

The reference client ``bzrc.py`` returns plain ``Answer`` objects and sets
their attributes one by one; these classes declare those attributes (same
names, same types), so a type checker knows ``tank.x`` is a float. They stay
plain objects: attributes can be set on them (``tank.goal = ...``), ``vars``
gives their fields, and they compare and hash by identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Answer",
    "BaseAnswer",
    "FlagAnswer",
    "MyTankAnswer",
    "OtherTankAnswer",
    "ShotAnswer",
    "TeamAnswer",
]


class Answer:
    """One item of a reply (a tank, a flag ...), its fields as attributes
    named as in the reference client. Compared and hashed by identity, as the
    reference's plain objects are (agents key dicts and sets by them). The
    ``get_*`` methods return its typed subclasses."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({fields})"


@dataclass(eq=False, repr=False, kw_only=True)
class MyTankAnswer(Answer):
    """One of our tanks (``get_mytanks``)."""

    index: int
    callsign: str
    status: str
    shots_avail: int
    time_to_reload: float
    flag: str
    x: float
    y: float
    angle: float
    vx: float
    vy: float
    angvel: float


@dataclass(eq=False, repr=False, kw_only=True)
class OtherTankAnswer(Answer):
    """Another team's tank (``get_othertanks``)."""

    callsign: str
    color: str
    status: str
    flag: str
    x: float
    y: float
    angle: float


@dataclass(eq=False, repr=False, kw_only=True)
class FlagAnswer(Answer):
    """A flag (``get_flags``): ``poss_color`` is the team holding it, or ``none``."""

    color: str
    poss_color: str
    x: float
    y: float


@dataclass(eq=False, repr=False, kw_only=True)
class ShotAnswer(Answer):
    """A shot in flight (``get_shots``)."""

    x: float
    y: float
    vx: float
    vy: float


@dataclass(eq=False, repr=False, kw_only=True)
class TeamAnswer(Answer):
    """A team (``get_teams``): ``count`` is a float and ``base`` empty, as in
    the reference (bzrflag sends no base corners on the team line)."""

    color: str
    count: float
    base: list[tuple[float, float]] = field(default_factory=list)


@dataclass(eq=False, repr=False, kw_only=True)
class BaseAnswer(Answer):
    """A team's base (``get_bases``): its four corners."""

    color: str
    corner1_x: float
    corner1_y: float
    corner2_x: float
    corner2_y: float
    corner3_x: float
    corner3_y: float
    corner4_x: float
    corner4_y: float
